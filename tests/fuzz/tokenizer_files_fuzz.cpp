// Fuzz harness: hostile tokenizer files. The first byte picks the layout: even = one tokenizer.json,
// odd = vocab.json and merges.txt separated by the first NUL byte. A file that loads is then used:
// a fixed text and the input's tail are encoded, decoded, and every token shown as text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "io/tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        std::shared_ptr<const attnviz::Tokenizer> tok;
        if (data[0] & 1) {
            const auto nul = in.find('\0');
            const std::string_view vocab = in.substr(0, nul);
            const std::string_view merges =
                nul == std::string_view::npos ? std::string_view() : in.substr(nul + 1);
            tok = attnviz::Tokenizer::from_gpt2(vocab, merges);
        } else {
            tok = attnviz::Tokenizer::from_tokenizer_json(in);
        }
        (void)tok->description();
        (void)tok->vocab_size();
        (void)tok->token_id("<|endoftext|>");
        for (std::string_view text :
             {std::string_view("Hello world! I'm   here.\n\n 123 \xe4\xbd\xa0\xe5\xa5\xbd "
                               "\xf0\x9f\x98\x80<|endoftext|>"),
              in.substr(0, 256)}) {
            try {
                const auto ids = tok->encode(text);
                (void)tok->decode(ids);
                for (const auto& piece : tok->encode_pieces(text)) (void)piece;
            } catch (const attnviz::TextError&) {
            }
        }
    } catch (const attnviz::Error&) {
    }
    return 0;
}

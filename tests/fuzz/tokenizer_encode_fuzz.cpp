// Fuzz harness: hostile text through a fixed Qwen2-style tokenizer (NFC + Split regex + ByteLevel,
// real merges incl. CJK bytes, added special tokens). Invalid UTF-8 must be a TextError; valid text
// must encode, decode back to its NFC form's bytes, and show every token as text.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "io/tokenizer.hpp"
#include "tests/common/gpt2_bytes.hpp"

namespace {

using attnviz::test::byte_char;

std::string json_string(const std::string& s) {
    std::string r = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') r += '\\';
        r += c;
    }
    return r + "\"";
}

std::shared_ptr<const attnviz::Tokenizer> make_tokenizer() {
    std::string vocab, merges;
    int id = 0;
    for (int b = 0; b < 256; ++b)
        vocab += (b ? "," : "") + json_string(byte_char(b)) + ":" + std::to_string(id++);
    const char* pairs[][2] = {{" ", "t"},           {"h", "e"},       {" t", "he"},         {"\xe4", "\xbd"},
                              {"\xe4\xbd", "\xa0"}, {"\xe5", "\xa5"}, {"\xe5\xa5", "\xbd"}, {"\xf0", "\x9f"},
                              {"l", "l"},           {" ", " "}};
    for (const auto& p : pairs) {
        std::string a, b;
        for (unsigned char c : std::string(p[0])) a += byte_char(c);
        for (unsigned char c : std::string(p[1])) b += byte_char(c);
        merges += (merges.empty() ? "" : ",") + json_string(a + " " + b);
        vocab += "," + json_string(a + b) + ":" + std::to_string(id++);
    }
    const std::string pattern =
        R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+)";
    const std::string json =
        R"({"added_tokens": [{"id": 300, "content": "<|endoftext|>", "special": true},
                             {"id": 301, "content": "<|im_start|>", "special": true, "lstrip": true}],
            "normalizer": {"type": "NFC"},
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": ")" +
        pattern + R"("}, "behavior": "Isolated", "invert": false},
                {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]},
            "decoder": {"type": "ByteLevel"},
            "model": {"type": "BPE", "vocab": {)" +
        vocab + "}, \"merges\": [" + merges + "]}}";
    return attnviz::Tokenizer::from_tokenizer_json(json, "fuzz tokenizer.json");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::shared_ptr<const attnviz::Tokenizer> tok = make_tokenizer();
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const auto ids = tok->encode(text);
        const std::string back = tok->decode(ids);
        if (back.size() > 4 * text.size() + 64) __builtin_trap();  // NFC grows text by at most 3x
        for (int id : ids) (void)tok->token_text(id);
    } catch (const attnviz::TextError&) {
    }
    return 0;
}

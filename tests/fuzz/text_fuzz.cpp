// Fuzz harness: the tokenizer of typed text (core/tokenize). Any bytes: either TextError (invalid
// UTF-8) or tokens whose byte ranges are ordered, non-empty and inside the input; valid UTF-8
// decodes and re-encodes to exactly the input.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/tokenize.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    bool decoded = false;
    try {
        const std::u32string cps = attnviz::decode_utf8(text);
        decoded = true;
        std::string again;
        for (const char32_t cp : cps) again += attnviz::encode_utf8(cp);
        FUZZ_CHECK(again == text);
    } catch (const attnviz::Error&) {
    }
    try {
        const std::vector<attnviz::Token> tokens = attnviz::tokenize(text);
        FUZZ_CHECK(decoded);  // tokenize accepts exactly what decode_utf8 accepts
        std::size_t prev_end = 0;
        for (const attnviz::Token& t : tokens) {
            FUZZ_CHECK(!t.text.empty());
            FUZZ_CHECK(t.byte_begin >= prev_end && t.byte_begin < t.byte_end && t.byte_end <= size);
            prev_end = t.byte_end;
        }
        FUZZ_CHECK(attnviz::tokenize_strings(text).size() == tokens.size());
    } catch (const attnviz::Error&) {
        FUZZ_CHECK(!decoded);
    }
    return 0;
}

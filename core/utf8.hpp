// UTF-8, decoded in one place for the whole app: strictly (RFC 3629, Unicode's Table 3-7): overlong
// forms, UTF-16 surrogates (U+D800..U+DFFF), code points above U+10FFFF, truncated sequences, stray
// continuation bytes and the bytes C0, C1, F5..FF are all refused. What a caller does with a refused
// sequence is its own choice: throw (decode_utf8, the tokenizers), replace it by U+FFFD (figures'
// labels, a tokenizer's decode) or leave the string out (the file chooser's D-Bus strings).
// In core/ because core/tokenize.cpp needs it and core includes nothing from io/.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace attnviz {

/// The sequence that starts at one byte.
struct Utf8Step {
    char32_t cp = 0;         // the code point (valid sequences only)
    int length = 0;          // its bytes (1..4); 0 when the bytes there are not UTF-8
    int invalid_length = 1;  // when invalid: the maximal subpart (1..3), what a lossy decoder replaces
                             // by one U+FFFD (as Python's errors="replace" and Rust's from_utf8_lossy)
};

/// Decodes the sequence starting at s[i] (i < s.size()).
inline Utf8Step decode_utf8_step(std::string_view s, std::size_t i) {
    const unsigned char b0 = static_cast<unsigned char>(s[i]);
    Utf8Step r;
    if (b0 < 0x80) {
        r.cp = b0;
        r.length = 1;
        return r;
    }
    int len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte (Table 3-7)
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        len = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        len = 3;
        if (b0 == 0xE0) lo = 0xA0;  // below: overlong
        if (b0 == 0xED) hi = 0x9F;  // above: surrogates
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        len = 4;
        if (b0 == 0xF0) lo = 0x90;  // below: overlong
        if (b0 == 0xF4) hi = 0x8F;  // above: beyond U+10FFFF
    } else {
        return r;  // a continuation byte, or C0, C1, F5..FF
    }
    char32_t cp = b0 & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
    for (int k = 1; k < len; ++k) {
        if (i + std::size_t(k) >= s.size()) return r;
        const unsigned char b = static_cast<unsigned char>(s[i + std::size_t(k)]);
        if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return r;
        cp = (cp << 6) | (b & 0x3F);
        if (k + 1 < len) r.invalid_length = k + 1;
    }
    r.cp = cp;
    r.length = len;
    r.invalid_length = 1;
    return r;
}

/// Why the bytes at s[i] are not UTF-8, in the learner's words: "invalid UTF-8 at byte 17: overlong
/// encoding of U+002F", "... truncated sequence (3-byte character has only 2 bytes)". Only for an
/// invalid step.
std::string utf8_error(std::string_view s, std::size_t i);

/// Byte offset of the first sequence that is not UTF-8, or std::string_view::npos.
std::size_t first_invalid_utf8(std::string_view s);
inline bool is_valid_utf8(std::string_view s) {
    return first_invalid_utf8(s) == std::string_view::npos;
}

/// Decodes UTF-8 into code points. Throws TextError("invalid UTF-8 at byte 17: ...") on overlong
/// forms, surrogates, truncated sequences, stray continuation bytes or code points > U+10FFFF.
std::u32string decode_utf8(std::string_view text);

/// Encodes one code point as UTF-8 (throws TextError for a surrogate or a code point > U+10FFFF).
std::string encode_utf8(char32_t cp);

/// Walks bytes as UTF-8: on_valid(sequence) for each valid sequence; at an invalid one,
/// on_invalid(maximal invalid subpart) returns how many bytes to skip (1 or the subpart's length).
template <typename OnValid, typename OnInvalid>
void walk_utf8(std::string_view bytes, OnValid on_valid, OnInvalid on_invalid) {
    for (std::size_t i = 0; i < bytes.size();) {
        const Utf8Step step = decode_utf8_step(bytes, i);
        if (step.length > 0) {
            on_valid(bytes.substr(i, std::size_t(step.length)));
            i += std::size_t(step.length);
        } else {
            i += on_invalid(bytes.substr(i, std::size_t(step.invalid_length)));
        }
    }
}

}  // namespace attnviz

// GPT-2's byte → character table, written out here from its definition (printable Latin-1 bytes
// stand for themselves; the others take U+0100 upwards in byte order), independently of
// io/tokenizer's own table, so tests and fuzz harnesses that build vocabularies check it.
#pragma once

#include <string>
#include <string_view>

namespace attnviz::test {

/// The UTF-8 spelling of byte b in GPT-2's byte-level vocabulary.
inline std::string byte_char(unsigned char b) {
    const auto printable = [](int c) { return (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || c >= 174; };
    int cp = b;
    if (!printable(b)) {
        cp = 256;
        for (int c = 0; c < b; ++c) cp += printable(c) ? 0 : 1;
    }
    std::string s;
    if (cp < 0x80) {
        s += char(cp);
    } else {
        s += char(0xC0 | (cp >> 6));
        s += char(0x80 | (cp & 0x3F));
    }
    return s;
}

/// Bytes spelled as a vocabulary entry (each byte through byte_char).
inline std::string byte_chars(std::string_view bytes) {
    std::string s;
    for (unsigned char b : bytes) s += byte_char(b);
    return s;
}

}  // namespace attnviz::test

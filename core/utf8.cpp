#include "core/utf8.hpp"

#include <cstdio>

#include "core/error.hpp"

namespace attnviz {

namespace {

std::string hex(const char* format, unsigned value) {
    char buf[16];
    std::snprintf(buf, sizeof buf, format, value);
    return buf;
}

std::string problem(std::string_view s, std::size_t i) {
    // Read the sequence the lead byte announces, checking only the continuation bytes' 10xxxxxx form,
    // then name what is wrong with the value it spells.
    const unsigned char b0 = static_cast<unsigned char>(s[i]);
    int len = 0;
    char32_t cp = 0, min_cp = 0;
    if ((b0 & 0xE0) == 0xC0) {
        len = 2, cp = b0 & 0x1F, min_cp = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
        len = 3, cp = b0 & 0x0F, min_cp = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
        len = 4, cp = b0 & 0x07, min_cp = 0x10000;
    } else if ((b0 & 0xC0) == 0x80) {
        return "stray continuation byte " + hex("0x%02X", b0) + " does not follow a lead byte";
    } else {
        return "byte " + hex("0x%02X", b0) + " never appears in UTF-8";
    }
    for (int k = 1; k < len; ++k) {
        if (i + std::size_t(k) >= s.size())
            return "truncated sequence (" + std::to_string(len) + "-byte character cut off at the end)";
        const unsigned char b = static_cast<unsigned char>(s[i + std::size_t(k)]);
        if ((b & 0xC0) != 0x80)
            return "truncated sequence (" + std::to_string(len) + "-byte character has only " +
                   std::to_string(k) + " byte" + (k == 1 ? "" : "s") + ")";
        cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min_cp) return "overlong encoding of U+" + hex("%04X", unsigned(cp));
    if (cp >= 0xD800 && cp <= 0xDFFF) return "UTF-16 surrogate code point encoded in UTF-8";
    if (cp > 0x10FFFF) return "code point above U+10FFFF";
    return "not UTF-8";  // (unreachable for an invalid step: both readings refuse the same bytes)
}

}  // namespace

std::string utf8_error(std::string_view s, std::size_t i) {
    return "invalid UTF-8 at byte " + std::to_string(i) + ": " + problem(s, i);
}

std::size_t first_invalid_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const Utf8Step step = decode_utf8_step(s, i);
        if (step.length == 0) return i;
        i += std::size_t(step.length);
    }
    return std::string_view::npos;
}

std::u32string decode_utf8(std::string_view text) {
    std::u32string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const Utf8Step step = decode_utf8_step(text, i);
        if (step.length == 0) throw TextError(utf8_error(text, i));
        out.push_back(step.cp);
        i += std::size_t(step.length);
    }
    return out;
}

std::string encode_utf8(char32_t cp) {
    std::string out;
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        if (cp >= 0xD800 && cp <= 0xDFFF) throw TextError("cannot encode a UTF-16 surrogate as UTF-8");
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp <= 0x10FFFF) {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        throw TextError("cannot encode a code point above U+10FFFF as UTF-8");
    }
    return out;
}

}  // namespace attnviz

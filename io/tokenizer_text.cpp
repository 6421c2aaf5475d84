// Character classes and normalizers of Hugging Face tokenizers: see io/tokenizer_text.hpp.
#include "io/tokenizer_text.hpp"

#include <unicode/brkiter.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utext.h>

#include <memory>

#include "core/error.hpp"
#include "core/utf8.hpp"

namespace attnviz::tokenizer_text {

namespace {

std::uint32_t gc_mask(char32_t c) {
    return std::uint32_t(U_GET_GC_MASK(UChar32(c)));
}

/// Calls f(code point, byte offset, byte length) for every character of valid UTF-8.
template <class F>
void for_each_char(std::string_view s, F f) {
    for (std::size_t i = 0; i < s.size();) {
        const Utf8Step step = decode_utf8_step(s, i);
        const std::size_t n = step.length > 0 ? std::size_t(step.length) : 1;
        f(step.cp, i, n);
        i += n;
    }
}

}  // namespace

std::string unicode_normalize(std::string_view s, NormForm form) {
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* n = nullptr;
    switch (form) {
        case NormForm::NFC:
            n = icu::Normalizer2::getNFCInstance(status);
            break;
        case NormForm::NFD:
            n = icu::Normalizer2::getNFDInstance(status);
            break;
        case NormForm::NFKC:
            n = icu::Normalizer2::getNFKCInstance(status);
            break;
        case NormForm::NFKD:
            n = icu::Normalizer2::getNFKDInstance(status);
            break;
    }
    if (U_FAILURE(status) || !n) throw Error("Unicode normalization is not available (ICU data missing)");
    const icu::UnicodeString in = icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), int32_t(s.size())));
    if (n->isNormalized(in, status) && U_SUCCESS(status)) return std::string(s);
    status = U_ZERO_ERROR;
    const icu::UnicodeString out = n->normalize(in, status);
    if (U_FAILURE(status)) throw TextError("cannot normalize this text to Unicode normal form");
    std::string r;
    out.toUTF8String(r);
    return r;
}

bool is_white_space(char32_t c) {
    return u_isUWhiteSpace(UChar32(c)) != 0;
}

bool is_bert_punctuation(char32_t c) {
    if (c < 0x80)
        return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
    return (gc_mask(c) & U_GC_P_MASK) != 0;
}

bool is_numeric(char32_t c) {
    return (gc_mask(c) & U_GC_N_MASK) != 0;
}

bool is_chinese_char(char32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) ||
           (c >= 0x2B920 && c <= 0x2CEAF) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

std::string lowercase(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for_each_char(s, [&](char32_t c, std::size_t i, std::size_t n) {
        if (c < 0x80) {
            out += char(c >= 'A' && c <= 'Z' ? c + 32 : c);
        } else if (c == 0x130) {  // the one character whose full lower case is two: i + combining dot
            out += "i\xCC\x87";
        } else {
            const char32_t l = char32_t(u_tolower(UChar32(c)));
            if (l == c)
                out.append(s.substr(i, n));
            else
                out += encode_utf8(l);
        }
    });
    return out;
}

std::string remove_marks(std::string_view s, bool nonspacing_only) {
    const std::uint32_t mask = nonspacing_only ? U_GC_MN_MASK : U_GC_M_MASK;
    std::string out;
    out.reserve(s.size());
    for_each_char(s, [&](char32_t c, std::size_t i, std::size_t n) {
        if (c < 0x300 || !(gc_mask(c) & mask)) out.append(s.substr(i, n));
    });
    return out;
}

std::string strip_white_space(std::string_view s, bool left, bool right) {
    std::size_t a = 0, b = s.size();
    if (left)
        while (a < b) {
            const Utf8Step st = decode_utf8_step(s, a);
            if (st.length <= 0 || !is_white_space(st.cp)) break;
            a += std::size_t(st.length);
        }
    if (right)
        while (b > a) {
            std::size_t k = b - 1;
            while (k > a && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
            const Utf8Step st = decode_utf8_step(s, k);
            if (st.length <= 0 || !is_white_space(st.cp)) break;
            b = k;
        }
    return std::string(s.substr(a, b - a));
}

std::string bert_normalize(std::string_view s, const BertNormalizerOptions& o) {
    std::string out;
    out.reserve(s.size() + 16);
    for_each_char(s, [&](char32_t c, std::size_t i, std::size_t n) {
        if (o.clean_text) {
            const bool ws = c == '\t' || c == '\n' || c == '\r' || is_white_space(c);
            if (ws) {
                out += ' ';
                return;
            }
            if (c == 0 || c == 0xFFFD || (gc_mask(c) & U_GC_C_MASK)) return;  // controls, format, ...
        }
        if (o.handle_chinese_chars && is_chinese_char(c)) {
            out += ' ';
            out.append(s.substr(i, n));
            out += ' ';
            return;
        }
        out.append(s.substr(i, n));
    });
    if (o.strip_accents) out = remove_marks(unicode_normalize(out, NormForm::NFD), true);
    if (o.lowercase) out = lowercase(out);
    return out;
}

namespace {
// Unicode White_Space, as the body of a PCRE2 character class.
constexpr const char* kWhiteSpaceClass =
    R"(\t-\r\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";
}  // namespace

std::string white_space_pattern(std::string_view p, const std::string& where) {
    std::string out;
    out.reserve(p.size() + 64);
    bool in_class = false;
    std::size_t class_body = 0;  // where a class's members start (a ']' there is a literal)
    for (std::size_t i = 0; i < p.size();) {
        const char c = p[i];
        if (c == '\\' && i + 1 < p.size()) {
            const char d = p[i + 1];
            if (d == 's' || d == 'S') {
                if (in_class && d == 'S') throw Error(where + ": \\S inside a [...] class is not supported");
                out += in_class ? std::string(kWhiteSpaceClass)
                                : std::string(d == 's' ? "[" : "[^") + kWhiteSpaceClass + "]";
                i += 2;
                continue;
            }
            if (d == 'Q') {  // \Q...\E: a literal, copied as it is
                const std::size_t e = p.find("\\E", i + 2);
                const std::size_t end = e == std::string_view::npos ? p.size() : e + 2;
                out.append(p.substr(i, end - i));
                i = end;
                continue;
            }
            out += c;
            out += d;
            i += 2;
            continue;
        }
        if (!in_class && c == '[') {
            in_class = true;
            out += c;
            ++i;
            if (i < p.size() && p[i] == '^') out += p[i++];
            class_body = i;
            continue;
        }
        if (in_class && c == '[' && i + 1 < p.size() && p[i + 1] == ':') {  // [:alpha:]
            const std::size_t e = p.find(":]", i + 2);
            const std::size_t end = e == std::string_view::npos ? p.size() : e + 2;
            out.append(p.substr(i, end - i));
            i = end;
            continue;
        }
        if (in_class && c == ']' && i != class_body) in_class = false;
        out += c;
        ++i;
    }
    return out;
}

// ------------------------------------------------------------------------------------------------
// Precompiled charsmap
// ------------------------------------------------------------------------------------------------

namespace {

std::string base64_decode(std::string_view in, const std::string& where) {
    static const auto value = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    std::string out;
    out.reserve(in.size() / 4 * 3);
    std::uint32_t acc = 0;
    int bits = 0;
    for (char c : in) {
        if (c == '=') break;
        const int v = value(c);
        if (v < 0) throw Error(where + " is not base64");
        acc = (acc << 6) | std::uint32_t(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += char((acc >> bits) & 0xFF);
        }
    }
    return out;
}

// darts-clone's unit layout.
bool unit_has_leaf(std::uint32_t u) {
    return (u >> 8) & 1;
}
std::uint32_t unit_value(std::uint32_t u) {
    return u & 0x7FFFFFFFu;
}
std::uint32_t unit_label(std::uint32_t u) {
    return u & (0x80000000u | 0xFFu);
}
std::uint32_t unit_offset(std::uint32_t u) {
    return (u >> 10) << ((u & (1u << 9)) >> 6);
}

}  // namespace

PrecompiledCharsmap::PrecompiledCharsmap(std::string_view base64, const std::string& where) {
    const std::string bytes = base64_decode(base64, where);
    if (bytes.size() < 4) throw Error(where + " is too short for a precompiled charsmap");
    const std::uint32_t trie_bytes = std::uint32_t(static_cast<unsigned char>(bytes[0])) |
                                     std::uint32_t(static_cast<unsigned char>(bytes[1])) << 8 |
                                     std::uint32_t(static_cast<unsigned char>(bytes[2])) << 16 |
                                     std::uint32_t(static_cast<unsigned char>(bytes[3])) << 24;
    if (trie_bytes % 4 != 0 || trie_bytes > bytes.size() - 4 || trie_bytes == 0)
        throw Error(where + ": the trie size " + std::to_string(trie_bytes) + " does not fit the " +
                    std::to_string(bytes.size()) + " bytes of the charsmap");
    units_.resize(trie_bytes / 4);
    for (std::size_t k = 0; k < units_.size(); ++k) {
        const std::size_t o = 4 + 4 * k;
        units_[k] = std::uint32_t(static_cast<unsigned char>(bytes[o])) |
                    std::uint32_t(static_cast<unsigned char>(bytes[o + 1])) << 8 |
                    std::uint32_t(static_cast<unsigned char>(bytes[o + 2])) << 16 |
                    std::uint32_t(static_cast<unsigned char>(bytes[o + 3])) << 24;
    }
    blob_ = bytes.substr(4 + trie_bytes);
}

bool PrecompiledCharsmap::lookup(std::string_view s, std::string_view& replacement) const {
    std::size_t pos = 0;
    std::uint32_t unit = units_[0];
    pos ^= unit_offset(unit);
    for (unsigned char c : s) {
        if (c == 0) return false;
        pos ^= c;
        if (pos >= units_.size()) return false;
        unit = units_[pos];
        if (unit_label(unit) != c) return false;
        pos ^= unit_offset(unit);
        if (pos >= units_.size()) return false;
        if (unit_has_leaf(unit)) {  // the shortest key that matches, as Hugging Face takes
            const std::size_t at = unit_value(units_[pos]);
            if (at >= blob_.size()) return false;
            const std::size_t end = blob_.find('\0', at);
            replacement =
                std::string_view(blob_).substr(at, (end == std::string::npos ? blob_.size() : end) - at);
            return true;
        }
    }
    return false;
}

std::string PrecompiledCharsmap::normalize(std::string_view s) const {
    std::string out;
    out.reserve(s.size());
    UErrorCode status = U_ZERO_ERROR;
    UText* text = utext_openUTF8(nullptr, s.data(), std::int64_t(s.size()), &status);
    std::unique_ptr<icu::BreakIterator> it(
        icu::BreakIterator::createCharacterInstance(icu::Locale::getRoot(), status));
    if (U_FAILURE(status) || !it) {
        utext_close(text);
        throw Error("grapheme segmentation is not available (ICU data missing)");
    }
    it->setText(text, status);
    std::string_view rep;
    for (std::int32_t a = it->first(), b = it->next(); b != icu::BreakIterator::DONE; a = b, b = it->next()) {
        const std::string_view g = s.substr(std::size_t(a), std::size_t(b - a));
        if (g.size() < 6 && lookup(g, rep)) {
            out.append(rep);
            continue;
        }
        for_each_char(g, [&](char32_t, std::size_t i, std::size_t n) {
            const std::string_view one = g.substr(i, n);
            if (lookup(one, rep))
                out.append(rep);
            else
                out.append(one);
        });
    }
    utext_close(text);
    return out;
}

}  // namespace attnviz::tokenizer_text

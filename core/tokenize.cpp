// Tokenizer. Deliberately simple and predictable, because the learner sees every token as a row of
// the heatmaps: words stay whole, punctuation stands alone, and Chinese/Japanese text (which has no
// spaces) becomes one token per character.
// GCC 12 with -march=native (AVX-512) reports false "may be used uninitialized" warnings inside
// Eigen's vectorised kernels (in the compiler's own intrinsics headers); they are not our code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "core/tokenize.hpp"

#include <cstdint>

#include "core/error.hpp"

namespace attnviz {

namespace {

struct CodePoint {
    char32_t cp;
    std::size_t begin;  // byte offset of the first byte
    std::size_t end;    // one past the last byte
};

// The text as code points with their byte ranges (core/utf8.hpp's strict decoder); throws
// TextError("invalid UTF-8 at byte N: ...") at the first sequence that is not UTF-8.
std::vector<CodePoint> decode_with_offsets(std::string_view text) {
    std::vector<CodePoint> out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const Utf8Step step = decode_utf8_step(text, i);
        if (step.length == 0) throw TextError(utf8_error(text, i));
        out.push_back({step.cp, i, i + std::size_t(step.length)});
        i += std::size_t(step.length);
    }
    return out;
}

bool in(char32_t cp, char32_t lo, char32_t hi) {
    return cp >= lo && cp <= hi;
}

bool is_space(char32_t cp) {
    if (cp == ' ' || (cp >= 0x09 && cp <= 0x0D)) return true;
    // Other C0/C1 control characters separate like whitespace (they have no glyph to show).
    if (cp < 0x20 || in(cp, 0x7F, 0x9F)) return true;
    return cp == 0xA0 || cp == 0x1680 || in(cp, 0x2000, 0x200B) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202F || cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
}

// Combining marks and joiners: they belong to whatever character precedes them.
bool is_attaching(char32_t cp) {
    return in(cp, 0x0300, 0x036F) || in(cp, 0x0483, 0x0489) || in(cp, 0x0591, 0x05BD) ||
           in(cp, 0x0610, 0x061A) || in(cp, 0x064B, 0x065F) || in(cp, 0x0900, 0x0903) ||
           in(cp, 0x093A, 0x094F) || in(cp, 0x1AB0, 0x1AFF) || in(cp, 0x1DC0, 0x1DFF) ||
           in(cp, 0x20D0, 0x20FF) || in(cp, 0x3099, 0x309A) || in(cp, 0xFE00, 0xFE0F) ||
           in(cp, 0xFE20, 0xFE2F) || cp == 0x200C || cp == 0x200D || in(cp, 0x1F3FB, 0x1F3FF) ||
           in(cp, 0xE0100, 0xE01EF);
}

// Punctuation and symbols outside ASCII: each is a token of its own.
bool is_punct_or_symbol(char32_t cp) {
    if (cp < 0x80) {
        return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) || (cp >= 0x5B && cp <= 0x60) ||
               (cp >= 0x7B && cp <= 0x7E);
    }
    // Latin-1: ¡ ¢ £ ... ¿ (except the letters ª µ º and the digits ² ³ ¹), × and ÷.
    if (in(cp, 0xA1, 0xBF))
        return cp != 0xAA && cp != 0xB5 && cp != 0xBA && cp != 0xB2 && cp != 0xB3 && cp != 0xB9;
    if (cp == 0xD7 || cp == 0xF7) return true;
    // Punctuation of alphabetic scripts (Greek ; · Armenian, Hebrew, Arabic, Devanagari danda, ...).
    if (cp == 0x037E || cp == 0x0387 || in(cp, 0x055A, 0x055F) || cp == 0x0589 || cp == 0x05BE ||
        cp == 0x05C0 || cp == 0x05C3 || cp == 0x05C6 || in(cp, 0x05F3, 0x05F4) || in(cp, 0x0609, 0x060D) ||
        cp == 0x061B || in(cp, 0x061D, 0x061F) || in(cp, 0x066A, 0x066D) || cp == 0x06D4 ||
        in(cp, 0x0964, 0x0965) || cp == 0x0970 || cp == 0x0E4F || in(cp, 0x0E5A, 0x0E5B) ||
        in(cp, 0x104A, 0x104F) || cp == 0x10FB || in(cp, 0x1360, 0x1368) || in(cp, 0x166D, 0x166E) ||
        in(cp, 0x16EB, 0x16ED) || in(cp, 0x17D4, 0x17DA) || in(cp, 0x1800, 0x180A))
        return true;
    // General punctuation (dashes, quotes ‘’“”, …, ‰), super/subscript signs, currency, letterlike
    // symbols, number forms, arrows, maths, technical, box drawing, shapes, dingbats, braille, ...
    if (in(cp, 0x2010, 0x2027) || in(cp, 0x2030, 0x205E) || in(cp, 0x207A, 0x207E) ||
        in(cp, 0x208A, 0x208E) || in(cp, 0x20A0, 0x20CF) || in(cp, 0x2100, 0x214F) ||
        in(cp, 0x2190, 0x2BFF) || in(cp, 0x2E00, 0x2E7F))
        return true;
    // CJK symbols and punctuation (、。〈〉《》「」『』【】〜 ...), except the ideographic iteration
    // marks 々 〆 〇 which behave like ideographs; the katakana middle dot ・ and double hyphen ゠.
    if (in(cp, 0x3001, 0x3004) || in(cp, 0x3008, 0x3020) || cp == 0x3030 || cp == 0x303D ||
        in(cp, 0x303E, 0x303F) || cp == 0x30A0 || cp == 0x30FB)
        return true;
    // Vertical forms, CJK compatibility forms, small forms.
    if (in(cp, 0xFE10, 0xFE19) || in(cp, 0xFE30, 0xFE4F) || in(cp, 0xFE50, 0xFE6F)) return true;
    // Full-width ASCII punctuation (，！？：；（）［］｛｝ ...) and half-width CJK punctuation (｡｢｣､･).
    if (in(cp, 0xFF01, 0xFF0F) || in(cp, 0xFF1A, 0xFF20) || in(cp, 0xFF3B, 0xFF40) ||
        in(cp, 0xFF5B, 0xFF65) || in(cp, 0xFFE0, 0xFFEE))
        return true;
    // Emoji and other pictographs, playing cards, mahjong tiles ...
    if (in(cp, 0x1F000, 0x1FAFF)) return true;
    return false;
}

enum class Kind { Space, Word, Single, Attach };

Kind classify(char32_t cp) {
    if (is_space(cp)) return Kind::Space;
    if (is_attaching(cp)) return Kind::Attach;
    if (is_cjk_ideograph(cp) || is_punct_or_symbol(cp)) return Kind::Single;
    // Everything else -- ASCII letters and digits, accented Latin, Greek, Cyrillic, Arabic, Hangul,
    // private-use characters -- is part of a word.
    return Kind::Word;
}

// Apostrophes and hyphens stay inside a word when a word character follows ("don't", "well-known").
bool is_joiner(char32_t cp) {
    return cp == '\'' || cp == '-' || cp == 0x2019 || cp == 0x2010 || cp == 0x2011;
}

}  // namespace

bool is_cjk_ideograph(char32_t cp) {
    return in(cp, 0x2E80, 0x2FDF) ||    // CJK radicals supplement, Kangxi radicals
           in(cp, 0x3005, 0x3007) ||    // 々 〆 〇
           in(cp, 0x3021, 0x3029) ||    // Hangzhou numerals
           in(cp, 0x3031, 0x3035) ||    // kana repeat marks
           in(cp, 0x303B, 0x303C) ||    // 〻 〼
           in(cp, 0x3041, 0x3096) ||    // hiragana
           in(cp, 0x309B, 0x309F) ||    // ゛ ゜ ゝ ゞ ゟ
           in(cp, 0x30A1, 0x30FA) ||    // katakana
           in(cp, 0x30FC, 0x30FF) ||    // ー ヽ ヾ ヿ
           in(cp, 0x3190, 0x319F) ||    // kanbun
           in(cp, 0x31C0, 0x31EF) ||    // CJK strokes
           in(cp, 0x31F0, 0x31FF) ||    // katakana phonetic extensions
           in(cp, 0x3400, 0x4DBF) ||    // CJK extension A
           in(cp, 0x4E00, 0x9FFF) ||    // CJK unified ideographs
           in(cp, 0xF900, 0xFAFF) ||    // CJK compatibility ideographs
           in(cp, 0xFF66, 0xFF9F) ||    // half-width katakana
           in(cp, 0x1B000, 0x1B16F) ||  // kana supplement / extended
           in(cp, 0x20000, 0x2FA1F) ||  // CJK extensions B..F, compatibility supplement
           in(cp, 0x30000, 0x323AF);    // CJK extensions G, H
}

std::vector<Token> tokenize(std::string_view text) {
    const std::vector<CodePoint> cps = decode_with_offsets(text);
    std::vector<Token> tokens;
    // The token being built: [begin, end) bytes, and whether it is a word (which can grow).
    bool open = false;
    bool open_is_word = false;
    std::size_t begin = 0, end = 0;
    auto flush = [&] {
        if (open) tokens.push_back({std::string(text.substr(begin, end - begin)), begin, end});
        open = false;
    };
    auto start = [&](const CodePoint& c, bool word) {
        flush();
        open = true;
        open_is_word = word;
        begin = c.begin;
        end = c.end;
    };
    for (std::size_t k = 0; k < cps.size(); ++k) {
        const CodePoint& c = cps[k];
        switch (classify(c.cp)) {
            case Kind::Space:
                flush();
                break;
            case Kind::Attach:
                // A combining mark or joiner extends the token before it ("e" + U+0301, emoji + ZWJ).
                // After a zero-width joiner the next character belongs to the same token as well.
                if (open) {
                    end = c.end;
                    if (c.cp == 0x200D && k + 1 < cps.size() && classify(cps[k + 1].cp) != Kind::Space) {
                        end = cps[k + 1].end;
                        ++k;
                    }
                } else {
                    start(c, true);
                }
                break;
            case Kind::Word:
                if (open && open_is_word)
                    end = c.end;
                else
                    start(c, true);
                break;
            case Kind::Single:
                // Intra-word apostrophe or hyphen: keep "don't" and "well-known" whole.
                if (is_joiner(c.cp) && open && open_is_word && k + 1 < cps.size() &&
                    classify(cps[k + 1].cp) == Kind::Word) {
                    end = c.end;
                    break;
                }
                // Left open only so that a following combining mark can attach to it.
                start(c, false);
                break;
        }
    }
    flush();
    return tokens;
}

std::vector<std::string> tokenize_strings(std::string_view text) {
    std::vector<std::string> out;
    for (Token& t : tokenize(text)) out.push_back(std::move(t.text));
    return out;
}

}  // namespace attnviz

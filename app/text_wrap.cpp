#include "app/text_wrap.hpp"

#include <imgui.h>

#include <algorithm>
#include <cfloat>

namespace attnviz::app {

namespace {

/// The code point at text[i] and its length in bytes (a malformed byte counts as one character).
std::pair<char32_t, std::size_t> decode(const std::string& text, std::size_t i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const std::size_t len = c < 0x80           ? 1
                            : (c >> 5) == 0x6  ? 2
                            : (c >> 4) == 0xE  ? 3
                            : (c >> 3) == 0x1E ? 4
                                               : 1;
    if (len == 1 || i + len > text.size()) return {char32_t(c), 1};
    char32_t cp = c & (0x7F >> len);
    for (std::size_t k = 1; k < len; ++k) {
        const unsigned char d = static_cast<unsigned char>(text[i + k]);
        if ((d & 0xC0) != 0x80) return {char32_t(c), 1};
        cp = (cp << 6) | (d & 0x3F);
    }
    return {cp, len};
}

bool is_cjk(char32_t c) {
    return (c >= 0x2E80 && c <= 0x9FFF) ||  // radicals, CJK symbols and punctuation, kana, Han
           (c >= 0xAC00 && c <= 0xD7AF) ||  // Hangul syllables
           (c >= 0xF900 && c <= 0xFAFF) ||  // compatibility ideographs
           (c >= 0xFF00 && c <= 0xFFEF) ||  // full-width forms (，！？：；（）)
           (c >= 0x20000 && c <= 0x3FFFF);  // supplementary ideographs
}

bool is_closing(char32_t c) {
    static const char32_t marks[] = {U'，', U'。', U'、', U'；', U'：', U'！', U'？', U'）',
                                     U'」', U'』', U'】', U'》', U'〉', U'”',  U'’',  U'…',
                                     U',',  U'.',  U';',  U':',  U'!',  U'?',  U')'};
    return std::find(std::begin(marks), std::end(marks), c) != std::end(marks);
}

bool is_opening(char32_t c) {
    static const char32_t marks[] = {U'（', U'「', U'『', U'【', U'《', U'〈', U'“', U'‘', U'('};
    return std::find(std::begin(marks), std::end(marks), c) != std::end(marks);
}

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> wrap_lines(const std::string& text, float width,
                                                            const MeasureText& measure) {
    constexpr std::size_t none = std::string::npos;
    std::vector<std::pair<std::size_t, std::size_t>> lines;
    std::size_t start = 0;        // the line's first byte
    float w = 0;                  // width of [start, i)
    std::size_t brk_end = none;   // the latest place the line may end ...
    std::size_t brk_next = none;  // ... and where the next line then starts
    float w_next = 0;             // width of [start, brk_next)
    char32_t prev = 0;
    for (std::size_t i = 0; i < text.size();) {
        const auto [c, len] = decode(text, i);
        const std::size_t next = i + len;
        if (c == U'\n') {
            lines.emplace_back(start, i);
            start = next, w = 0, brk_end = brk_next = none, prev = 0;
            i = next;
            continue;
        }
        const float a = measure(text.data() + i, text.data() + next);
        if (c == U' ') {  // the line may end before the first of these spaces; the next begins after them
            if (prev != U' ') brk_end = i;
            brk_next = next, w_next = w + a;
            w += a, prev = c, i = next;
            continue;
        }
        if (i > start && prev != U' ' && prev != 0 && (is_cjk(prev) || is_cjk(c)) && !is_closing(c) &&
            !is_opening(prev))
            brk_end = brk_next = i, w_next = w;
        if (w + a > width && i > start) {
            if (brk_end != none && brk_end > start) {  // end at the last break; carry what follows it
                lines.emplace_back(start, brk_end);
                start = brk_next, w -= w_next;
            } else {  // nothing to break at: cut here
                lines.emplace_back(start, i);
                start = i, w = 0;
            }
            brk_end = brk_next = none;
            if (w + a > width && i > start) {  // what was carried still does not fit with c: cut
                lines.emplace_back(start, i);
                start = i, w = 0;
            }
        }
        w += a, prev = c, i = next;
    }
    lines.emplace_back(start, text.size());
    return lines;
}

void text_wrapped(const std::string& text) {
    ImFont* font = ImGui::GetFont();
    const float size = ImGui::GetFontSize();
    const float width = std::max(1.0f, ImGui::GetContentRegionAvail().x);
    for (const auto& [b, e] : wrap_lines(text, width, [&](const char*p, const char*q) {
             return font->CalcTextSizeA(size, FLT_MAX, 0.0f, p, q).x;
         }))
        ImGui::TextUnformatted(text.data() + b, text.data() + e);
}

}  // namespace attnviz::app

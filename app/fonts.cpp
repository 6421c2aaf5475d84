#include "app/fonts.hpp"

#include <imgui.h>
#include <imgui_internal.h>

#include <cstdio>
#include <string>

#include "io/platform.hpp"

namespace attnviz::app {

namespace {

// Debian's fonts-dejavu-core and fonts-droid-fallback (shipped beside attnviz.exe on Windows).
const std::string kSansPath = platform::font_file("dejavu/DejaVuSans.ttf");
const std::string kSansBoldPath = platform::font_file("dejavu/DejaVuSans-Bold.ttf");
const std::string kMonoPath = platform::font_file("dejavu/DejaVuSansMono.ttf");
const std::string kFallbackPath = platform::font_file("droid/DroidSansFallbackFull.ttf");
const char* const kSans = kSansPath.c_str();
const char* const kSansBold = kSansBoldPath.c_str();
const char* const kMono = kMonoPath.c_str();
const char* const kFallback = kFallbackPath.c_str();

ImFont* g_fonts[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};

bool file_exists(const char* path) {
    if (FILE* f = std::fopen(path, "rb")) {
        std::fclose(f);
        return true;
    }
    return false;
}

// Ranges every build gets, whatever the texts: Latin, Greek (α, φ, σ), general punctuation (… – •),
// super/subscripts (ᵀ ² ₖ), letterlike symbols, arrows (→ ←), math operators (√ Σ ⊙ × ∞ ≤),
// geometric shapes (▶ ◀ ■), CJK punctuation and full-width forms, modifier letters (ᵀ is U+1D40).
const ImWchar kBaseRanges[] = {
    0x0020, 0x00FF,  // Basic Latin + Latin-1
    0x0100, 0x024F,  // Latin Extended-A/B
    0x02B0, 0x036F,  // spacing modifier letters (ˣ) + combining marks (the hat of f̂, ŷ-style)
    0x0370, 0x03FF,  // Greek
    0x1D00, 0x1DBF,  // phonetic extensions + modifier letters (ᵀ, ᵢ)
    0x2000, 0x206F,  // general punctuation
    0x2070, 0x209F,  // superscripts and subscripts
    0x2100, 0x214F,  // letterlike symbols
    0x2190, 0x21FF,  // arrows
    0x2200, 0x22FF,  // mathematical operators
    0x2300, 0x23FF,  // miscellaneous technical (⌈ ⌉)
    0x25A0, 0x25FF,  // geometric shapes
    0x2700, 0x27BF,  // dingbats (❚❚ pause)
    0x2C60, 0x2C7F,  // Latin Extended-C: subscript j (ⱼ) of Σⱼ
    0x3000, 0x303F,  // CJK symbols and punctuation (，。)
    0x3040, 0x30FF,  // hiragana and katakana (tokenized one per character, like Han)
    0xFF00, 0xFFEF,  // full-width forms
    0,
};

}  // namespace

bool in_base_glyph_ranges(unsigned int c) {
    for (const ImWchar* r = kBaseRanges; r[0]; r += 2)
        if (c >= r[0] && c <= r[1]) return true;
    return false;
}

const char* const* font_files(int* count) {
    static const char* const files[] = {kSans, kSansBold, kMono, kFallback};
    *count = 4;
    return files;
}

ImFont* app_font(FontRole role) {
    ImFont* f = g_fonts[int(role)];
    return f ? f : ImGui::GetFont();
}

FontManager::FontManager() : extra_(0x10000, false) {}

void FontManager::add_text(const std::string& utf8) {
    const char* p = utf8.data();
    const char* end = p + utf8.size();
    while (p < end) {
        unsigned int c = 0;
        const int len = ImTextCharFromUtf8(&c, p, end);
        if (len <= 0) break;
        p += len;
        if (c < 0x20 || c >= 0x10000) continue;  // ImWchar is 16-bit in Debian's build
        if (!extra_[c]) {
            extra_[c] = true;
            ++extra_count_;
            // Characters inside the base ranges are always there; only others need a rebuild.
            if (!in_base_glyph_ranges(c)) dirty_ = true;
        }
    }
}

void FontManager::set_scale(float scale) {
    if (scale < 0.5f) scale = 0.5f;
    if (scale > 3.0f) scale = 3.0f;
    if (scale != scale_) {
        scale_ = scale;
        dirty_ = true;
    }
}

bool FontManager::rebuild() {
    dirty_ = false;
    ImGuiIO& io = ImGui::GetIO();
    io.Fonts->Clear();
    for (auto& f : g_fonts) f = nullptr;

    ImFontGlyphRangesBuilder builder;
    builder.AddRanges(kBaseRanges);
    for (unsigned c = 0x20; c < 0x10000; ++c)
        if (extra_[c]) builder.AddChar(ImWchar(c));
    ImVector<ImWchar> built;
    builder.BuildRanges(&built);
    ranges_.assign(built.begin(), built.end());
    const ImWchar* ranges = ranges_.data();

    if (!file_exists(kSans)) {
        io.Fonts->AddFontDefault();
        io.Fonts->Build();
        return false;
    }
    const bool have_fallback = file_exists(kFallback);
    auto add = [&](const char* path, float px) -> ImFont* {
        ImFontConfig cfg;
        cfg.OversampleH = 2;
        ImFont* font =
            io.Fonts->AddFontFromFileTTF(file_exists(path) ? path : kSans, px * scale_, &cfg, ranges);
        if (have_fallback) {
            // Merged: characters DejaVu lacks (CJK, a few symbols) come from Droid Sans Fallback.
            ImFontConfig merge;
            merge.MergeMode = true;
            merge.OversampleH = 1;
            merge.PixelSnapH = true;
            // (its ideographs drawn at 1.12× the size: at the same size they looked a size smaller than
            // the Latin text beside them)
            io.Fonts->AddFontFromFileTTF(kFallback, px * scale_ * 1.12f, &merge, ranges);
        }
        return font;
    };
    g_fonts[int(FontRole::Regular)] = add(kSans, 16.0f);
    g_fonts[int(FontRole::Bold)] = add(kSansBold, 16.0f);
    g_fonts[int(FontRole::Large)] = add(kSans, 24.0f);
    g_fonts[int(FontRole::Mono)] = add(kMono, 15.0f);
    g_fonts[int(FontRole::Small)] = add(kSans, 13.0f);
    io.FontDefault = g_fonts[int(FontRole::Regular)];
    return io.Fonts->Build();
}

}  // namespace attnviz::app

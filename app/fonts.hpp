// Fonts: DejaVu Sans with Droid Sans Fallback merged in, so formulas (√ ⊤ Σ × ᵀ ⊙ −∞) and Chinese
// text render. ImGui bakes only the glyphs it is told about into its atlas, so the shell feeds every
// string the app shows (trace titles, formulas, explanations, tokens, typed text, scene notes) to
// add_text(); when a new character appears the atlas is rebuilt before the next frame (never inside
// one: ImGui's draw lists point into the atlas).
#pragma once

#include <string>
#include <vector>

struct ImFont;

namespace attnviz::app {

enum class FontRole { Regular, Bold, Large, Mono, Small };

/// The font for a role (the default font until fonts are built). Panels use this for emphasis:
/// ImGui::PushFont(app_font(FontRole::Large)).
ImFont* app_font(FontRole role);

/// True when code point `c` is in the glyph ranges every atlas bakes (Latin, Greek, combining
/// marks, sub/superscripts incl. ⱼ, maths, arrows, CJK punctuation, kana, full-width forms).
/// Characters outside them are baked only after add_text() has seen them.
bool in_base_glyph_ranges(unsigned int c);

/// The TrueType files the atlas is built from: DejaVu Sans (regular, bold, mono) and the Droid Sans
/// Fallback that fills in per glyph (CJK). Tests check glyph coverage against them.
const char* const* font_files(int* count);

class FontManager {
  public:
    FontManager();
    /// Records the characters of a UTF-8 string; marks the atlas stale if any is new.
    void add_text(const std::string& utf8);
    /// True when add_text() or set_scale() asked for glyphs/sizes the atlas does not have.
    bool needs_rebuild() const { return dirty_; }
    /// Pixel scale of every font (the UI scale setting).
    void set_scale(float scale);
    float scale() const { return scale_; }
    /// Rebuilds ImGui's font atlas (CPU side). The caller re-uploads the texture afterwards
    /// (ImGui_ImplOpenGL3_DestroyFontsTexture + CreateFontsTexture). Falls back to ImGui's built-in
    /// font if the TTF files are missing; returns false then.
    bool rebuild();
    /// Number of extra (non-range) characters collected so far, for tests/diagnostics.
    std::size_t extra_char_count() const { return extra_count_; }

  private:
    std::vector<bool> extra_;  // 0x10000 flags: characters seen in texts
    std::size_t extra_count_ = 0;
    std::vector<unsigned short> ranges_;  // ImWchar ranges, kept alive while the atlas uses them
    float scale_ = 1.0f;
    bool dirty_ = true;
};

}  // namespace attnviz::app

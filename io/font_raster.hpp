// CPU text for the PNG figures: anti-aliased glyphs from TrueType fonts via stb_truetype (Debian's
// libstb). DejaVu Sans covers Latin, Greek and the maths signs the formulas use (√ ⊤ Σ × ᵀ −∞);
// Droid Sans Fallback fills in per glyph for CJK tokens. No display, no GL.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/colormap.hpp"
#include "io/figure.hpp"

namespace attnviz {

enum class FontFace { Regular, Bold };

/// A rendered line of text as an 8-bit coverage mask, `baseline` pixels below its top row.
struct TextMask {
    int width = 0, height = 0;
    int baseline = 0;
    std::vector<std::uint8_t> alpha;  // width * height, row-major
};

/// Decodes UTF-8 into code points (core/utf8.hpp's strict decoder); each byte that starts no valid
/// sequence becomes U+FFFD (never throws: labels are shown, not validated, here).
std::vector<char32_t> utf8_decode(std::string_view s);

/// The loaded fonts. Read-only after construction, so one instance serves every thread.
class FontRaster {
  public:
    /// The process-wide instance (fonts are loaded on first use).
    static const FontRaster& get();

    /// False when DejaVu Sans could not be loaded: figures then have no text (never a crash).
    bool available() const { return !regular_.empty(); }

    /// Advance width of a line of text at `px` pixels per em.
    float width(std::string_view utf8, float px, FontFace face = FontFace::Regular) const;
    /// Distance from the baseline to the top / bottom of the line box (both positive).
    float ascent(float px) const;
    float descent(float px) const;

    /// Renders one line of text to a coverage mask.
    TextMask render(std::string_view utf8, float px, FontFace face = FontFace::Regular) const;

    /// Draws text with its baseline starting at (x, baseline_y), blending `color` over the image.
    void draw(Image& image, float x, float baseline_y, std::string_view utf8, float px, Rgb8 color,
              FontFace face = FontFace::Regular) const;
    /// Draws text rotated 90 degrees counter-clockwise (reads bottom to top): the text starts at
    /// y = `start_y` and runs upward; its baseline is the vertical line x = `baseline_x`.
    void draw_rotated(Image& image, float baseline_x, float start_y, std::string_view utf8, float px,
                      Rgb8 color, FontFace face = FontFace::Regular) const;

    FontRaster(const FontRaster&) = delete;
    FontRaster& operator=(const FontRaster&) = delete;
    ~FontRaster();

  private:
    FontRaster();
    struct Font;
    const Font* font_for(char32_t cp, FontFace face, int* glyph) const;
    /// Walks the pen along utf8 from x (kerning between glyphs of one font); for each glyph calls
    /// on_glyph(font, glyph, pen x, scale) before advancing. Returns the pen's end position.
    template <typename OnGlyph>
    float walk_glyphs(std::string_view utf8, float px, FontFace face, float x, OnGlyph&& on_glyph) const;
    std::vector<unsigned char> regular_, bold_, fallback_;  // file bytes (stbtt keeps pointers)
    Font* fonts_[3] = {nullptr, nullptr, nullptr};          // regular, bold, fallback
};

/// Blends a coverage mask onto an image at (x, y) (top-left), optionally rotated 90° CCW.
void blend_mask(Image& image, const TextMask& mask, int x, int y, Rgb8 color, bool rotated_ccw);

}  // namespace attnviz

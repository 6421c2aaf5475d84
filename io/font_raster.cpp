// Text rasterisation for the figures. stb_truetype's implementation lives in Debian's libstb.so, so
// we include only its declarations (no STB_TRUETYPE_IMPLEMENTATION here).
#include "io/font_raster.hpp"

#include <stb_truetype.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "core/utf8.hpp"
#include "io/platform.hpp"

namespace attnviz {

struct FontRaster::Font {
    stbtt_fontinfo info;
    float em_scale_1px;  // stbtt scale for 1 pixel per em
};

namespace {

std::vector<unsigned char> load_bytes(const char* path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Debian's fonts-dejavu-core and fonts-droid-fallback (shipped beside attnviz.exe on Windows).
const char* const kRegular[] = {"dejavu/DejaVuSans.ttf"};
const char* const kBold[] = {"dejavu/DejaVuSans-Bold.ttf"};
const char* const kFallback[] = {"droid/DroidSansFallbackFull.ttf",
                                 "../opentype/noto/NotoSansCJK-Regular.ttc"};

template <std::size_t N>
std::vector<unsigned char> load_first(const char* const (&paths)[N]) {
    for (const char* name : paths) {
        const std::string p = platform::font_file(name);
        auto bytes = load_bytes(p.c_str());
        if (!bytes.empty()) return bytes;
    }
    return {};
}

}  // namespace

std::vector<char32_t> utf8_decode(std::string_view s) {
    std::vector<char32_t> out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const Utf8Step step = decode_utf8_step(s, i);
        out.push_back(step.length > 0 ? step.cp : char32_t(0xFFFD));  // one U+FFFD per invalid byte
        i += std::size_t(step.length > 0 ? step.length : 1);
    }
    return out;
}

FontRaster::FontRaster() {
    regular_ = load_first(kRegular);
    bold_ = load_first(kBold);
    fallback_ = load_first(kFallback);
    auto init = [](std::vector<unsigned char>& bytes) -> Font* {
        if (bytes.empty()) return nullptr;
        auto* f = new Font;
        const int offset = stbtt_GetFontOffsetForIndex(bytes.data(), 0);
        if (offset < 0 || !stbtt_InitFont(&f->info, bytes.data(), offset)) {
            delete f;
            bytes.clear();
            return nullptr;
        }
        f->em_scale_1px = stbtt_ScaleForMappingEmToPixels(&f->info, 1.0f);
        return f;
    };
    fonts_[0] = init(regular_);
    fonts_[1] = init(bold_);
    fonts_[2] = init(fallback_);
    if (!fonts_[0]) {
        std::fprintf(stderr,
                     "attnviz: cannot load %s; figures will have no text (install fonts-dejavu-core)\n",
                     platform::font_file(kRegular[0]).c_str());
    }
}

FontRaster::~FontRaster() {
    for (Font* f : fonts_) delete f;
}

const FontRaster& FontRaster::get() {
    static const FontRaster instance;
    return instance;
}

const FontRaster::Font* FontRaster::font_for(char32_t cp, FontFace face, int* glyph) const {
    // Per glyph: the requested face, then regular DejaVu, then the CJK fallback, else DejaVu's
    // "missing glyph" box so an unknown character is visible rather than silently dropped.
    const Font* order[3] = {face == FontFace::Bold && fonts_[1] ? fonts_[1] : fonts_[0], fonts_[0],
                            fonts_[2]};
    for (const Font* f : order) {
        if (!f) continue;
        const int g = stbtt_FindGlyphIndex(&f->info, int(cp));
        if (g != 0) {
            *glyph = g;
            return f;
        }
    }
    *glyph = 0;
    return order[0];
}

float FontRaster::ascent(float px) const {
    if (!fonts_[0]) return px * 0.8f;
    int a = 0, d = 0, gap = 0;
    stbtt_GetFontVMetrics(&fonts_[0]->info, &a, &d, &gap);
    return float(a) * fonts_[0]->em_scale_1px * px;
}

float FontRaster::descent(float px) const {
    if (!fonts_[0]) return px * 0.2f;
    int a = 0, d = 0, gap = 0;
    stbtt_GetFontVMetrics(&fonts_[0]->info, &a, &d, &gap);
    return float(-d) * fonts_[0]->em_scale_1px * px;
}

template <typename OnGlyph>
float FontRaster::walk_glyphs(std::string_view utf8, float px, FontFace face, float x,
                              OnGlyph&& on_glyph) const {
    const Font* prev_font = nullptr;
    int prev_glyph = 0;
    for (char32_t cp : utf8_decode(utf8)) {
        int g = 0;
        const Font* f = font_for(cp, face, &g);
        const float scale = f->em_scale_1px * px;
        if (prev_font == f && prev_glyph)
            x += float(stbtt_GetGlyphKernAdvance(&f->info, prev_glyph, g)) * scale;
        on_glyph(f, g, x, scale);
        int adv = 0, lsb = 0;
        stbtt_GetGlyphHMetrics(&f->info, g, &adv, &lsb);
        x += float(adv) * scale;
        prev_font = f;
        prev_glyph = g;
    }
    return x;
}

float FontRaster::width(std::string_view utf8, float px, FontFace face) const {
    if (!available()) return 0.0f;
    return walk_glyphs(utf8, px, face, 0.0f, [](const Font*, int, float, float) {});
}

TextMask FontRaster::render(std::string_view utf8, float px, FontFace face) const {
    TextMask m;
    if (!available() || utf8.empty()) return m;
    const int asc = int(std::ceil(ascent(px)));
    // CJK glyphs of the fallback font may reach a little lower than DejaVu's descent.
    const int desc = int(std::ceil(descent(px) * 1.15f)) + 1;
    m.baseline = asc + 1;
    m.height = m.baseline + desc;
    m.width = int(std::ceil(width(utf8, px, face))) + 3;
    m.alpha.assign(std::size_t(m.width) * std::size_t(m.height), 0);

    std::vector<unsigned char> glyph_buf;
    walk_glyphs(utf8, px, face, 1.0f, [&](const Font* f, int g, float x, float scale) {
        const float shift_x = x - std::floor(x);
        int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
        stbtt_GetGlyphBitmapBoxSubpixel(&f->info, g, scale, scale, shift_x, 0.0f, &x0, &y0, &x1, &y1);
        const int gw = x1 - x0, gh = y1 - y0;
        if (gw <= 0 || gh <= 0) return;
        glyph_buf.assign(std::size_t(gw) * std::size_t(gh), 0);
        stbtt_MakeGlyphBitmapSubpixel(&f->info, glyph_buf.data(), gw, gh, gw, scale, scale, shift_x, 0.0f, g);
        const int ox = int(std::floor(x)) + x0, oy = m.baseline + y0;
        for (int r = 0; r < gh; ++r) {
            const int yy = oy + r;
            if (yy < 0 || yy >= m.height) continue;
            for (int c = 0; c < gw; ++c) {
                const int xx = ox + c;
                if (xx < 0 || xx >= m.width) continue;
                auto& dst = m.alpha[std::size_t(yy) * std::size_t(m.width) + std::size_t(xx)];
                dst = std::max(dst, glyph_buf[std::size_t(r) * std::size_t(gw) + std::size_t(c)]);
            }
        }
    });
    return m;
}

void blend_mask(Image& image, const TextMask& mask, int x, int y, Rgb8 color, bool rotated_ccw) {
    const int out_w = rotated_ccw ? mask.height : mask.width;
    const int out_h = rotated_ccw ? mask.width : mask.height;
    for (int oy = 0; oy < out_h; ++oy) {
        const int iy = y + oy;
        if (iy < 0 || iy >= image.height) continue;
        for (int ox = 0; ox < out_w; ++ox) {
            const int ix = x + ox;
            if (ix < 0 || ix >= image.width) continue;
            // Rotating CCW: the mask's column u becomes output row (out_h - 1 - u), its row v becomes
            // output column v.
            const int u = rotated_ccw ? out_h - 1 - oy : ox;
            const int v = rotated_ccw ? ox : oy;
            const int a = mask.alpha[std::size_t(v) * std::size_t(mask.width) + std::size_t(u)];
            if (a == 0) continue;
            std::uint8_t* p = &image.rgba[(std::size_t(iy) * std::size_t(image.width) + std::size_t(ix)) * 4];
            const int col[3] = {color.r, color.g, color.b};
            for (int k = 0; k < 3; ++k) p[k] = std::uint8_t((col[k] * a + p[k] * (255 - a) + 127) / 255);
            p[3] = 255;
        }
    }
}

void FontRaster::draw(Image& image, float x, float baseline_y, std::string_view utf8, float px, Rgb8 color,
                      FontFace face) const {
    const TextMask m = render(utf8, px, face);
    if (m.width == 0) return;
    blend_mask(image, m, int(std::lround(x)) - 1, int(std::lround(baseline_y)) - m.baseline, color, false);
}

void FontRaster::draw_rotated(Image& image, float baseline_x, float start_y, std::string_view utf8, float px,
                              Rgb8 color, FontFace face) const {
    const TextMask m = render(utf8, px, face);
    if (m.width == 0) return;
    // After rotation the mask's top edge is on the left: baseline at column `baseline`, and the
    // text's start (mask column 1) at the bottom row.
    const int left = int(std::lround(baseline_x)) - m.baseline;
    const int top = int(std::lround(start_y)) - (m.width - 2);
    blend_mask(image, m, left, top, color, true);
}

}  // namespace attnviz

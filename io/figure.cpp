// Publication figures on the CPU. Layout (scale 1; every size is multiplied by options.scale, and
// the glyphs are rasterised at the larger size, so scale 2/4 is a true hi-res render):
//
//      weights · head 2                                   <- title (bold)
//      A = softmax(S/T)        n×m = 8×8                  <- formula line, shape
//
//   q  token  ┌──────────────┐  ┌─┐ 1     w
//   u  token  │   heatmap    │  │ │ 0.5   e
//   e  ...    │ square cells │  │ │ 0     i   <- colour bar, ticks, meaning
//   r         └──────────────┘  └─┘       g
//             t  t  t  t  t                    <- column labels (rotated when they do not fit)
//              keys (columns)                  <- axis title
#include "io/figure.hpp"

#include <stb_image.h>
#include <stb_image_write.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string_view>

#include "core/error.hpp"
#include "io/colormap.hpp"
#include "io/files.hpp"
#include "io/font_raster.hpp"

namespace attnviz {
namespace {

/// Text drawn by a figure. While an SVG is made (t_text_sink set) text is recorded, not rasterised,
/// so the SVG writes it as vector <text> at exactly the positions of the PNG.
struct TextItem {
    float x, y;  // baseline start (rotated: baseline x, start y)
    std::string text;
    float px;
    Rgb8 color;
    bool bold, rotated;
};
thread_local std::vector<TextItem>* t_text_sink = nullptr;

void text_draw(Image& img, float x, float baseline_y, std::string_view text, float px, Rgb8 color,
               FontFace face = FontFace::Regular) {
    if (t_text_sink) {
        t_text_sink->push_back({x, baseline_y, std::string(text), px, color, face == FontFace::Bold, false});
        return;
    }
    FontRaster::get().draw(img, x, baseline_y, text, px, color, face);
}

void text_draw_rotated(Image& img, float baseline_x, float start_y, std::string_view text, float px,
                       Rgb8 color, FontFace face = FontFace::Regular) {
    if (t_text_sink) {
        t_text_sink->push_back(
            {baseline_x, start_y, std::string(text), px, color, face == FontFace::Bold, true});
        return;
    }
    FontRaster::get().draw_rotated(img, baseline_x, start_y, text, px, color, face);
}

constexpr Rgb8 kWhite{255, 255, 255};
constexpr Rgb8 kText{25, 25, 25};
constexpr Rgb8 kSubtle{90, 90, 90};
constexpr Rgb8 kFrame{60, 60, 60};

Image blank(int w, int h) {
    Image img;
    img.width = std::max(1, w);
    img.height = std::max(1, h);
    img.rgba.assign(std::size_t(img.width) * std::size_t(img.height) * 4, 255);  // white, opaque
    return img;
}

void put(Image& img, int x, int y, Rgb8 c) {
    if (x < 0 || y < 0 || x >= img.width || y >= img.height) return;
    std::uint8_t* p = &img.rgba[(std::size_t(y) * std::size_t(img.width) + std::size_t(x)) * 4];
    p[0] = c.r;
    p[1] = c.g;
    p[2] = c.b;
    p[3] = 255;
}

void fill(Image& img, int x, int y, int w, int h, Rgb8 c) {
    for (int yy = std::max(0, y); yy < std::min(img.height, y + h); ++yy)
        for (int xx = std::max(0, x); xx < std::min(img.width, x + w); ++xx) put(img, xx, yy, c);
}

/// A rectangle outline of thickness t drawn just OUTSIDE (x, y, w, h).
void frame(Image& img, int x, int y, int w, int h, int t, Rgb8 c) {
    fill(img, x - t, y - t, w + 2 * t, t, c);
    fill(img, x - t, y + h, w + 2 * t, t, c);
    fill(img, x - t, y, t, h, c);
    fill(img, x + w, y, t, h, c);
}

std::string axis_label(const Axis& axis, int i) {
    if (axis.tokens && i >= 0 && std::size_t(i) < axis.tokens->size()) {
        const std::string& t = (*axis.tokens)[std::size_t(i)];
        return t.empty() ? std::string("\u2423") : t;  // ␣ for an empty token
    }
    return std::to_string(i);
}

bool token_axis(const Axis& axis) {
    return axis.kind == Axis::Kind::QueryTokens || axis.kind == Axis::Kind::KeyTokens ||
           axis.kind == Axis::Kind::Vocabulary;
}

/// Shortens a label to at most `max_cp` code points, ending in "…".
std::string ellipsize(const std::string& s, std::size_t max_cp) {
    std::size_t count = 0, i = 0;
    while (i < s.size()) {
        if (count == max_cp - 1) {
            // Is there more than one code point left?
            std::size_t j = i + 1, rest = 1;
            while (j < s.size()) {
                if ((static_cast<unsigned char>(s[j]) & 0xC0) != 0x80) ++rest;
                ++j;
            }
            if (rest > 1) return s.substr(0, i) + "\u2026";
            return s;
        }
        ++i;
        while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
        ++count;
    }
    return s;
}

std::string axis_title(const Axis& axis, bool is_rows) {
    std::string base;
    switch (axis.kind) {
        case Axis::Kind::QueryTokens:
            base = "queries";
            break;
        case Axis::Kind::KeyTokens:
            base = "keys";
            break;
        case Axis::Kind::Vocabulary:
            base = "vocabulary";
            break;
        case Axis::Kind::Dimension:
            base = axis.name.empty() ? "dimension" : axis.name;
            break;
        case Axis::Kind::Single:
            return axis.name;
    }
    return base + (is_rows ? " (rows)" : " (columns)");
}

/// "0.5", "−1.23", "1.2e−05": %.3g with a real minus sign.
std::string format_number(float v) {
    if (v == 0.0f) return "0";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", double(v));
    std::string out;
    for (const char* p = buf; *p; ++p) {
        if (*p == '-')
            out += "\u2212";
        else
            out += *p;
    }
    return out;
}

std::string value_meaning(ValueKind kind, const ColorRange& range) {
    switch (kind) {
        case ValueKind::Probability:
            // Fixed keeps the short caption; the other modes say how the colours were scaled.
            return range.mode == ScaleMode::Fixed ? "weight 0\u20131"
                                                  : "weight \u00b7 " + scale_caption(range);
        case ValueKind::NonNegative:
            return "value \u2265 0";
        case ValueKind::Indicator:
            return "0 = no, 1 = yes";
        case ValueKind::Signed:
            return "value (0 = white)";
    }
    return "value";
}

/// A matrix reduced to at most `limit` entries per side: each block x block tile keeps the value of
/// largest magnitude (sign included), so a single bright cell survives. A tile is masked only when
/// all its cells are.
Mat downsample_max_abs(const Mat& M, int block) {
    if (block <= 1) return M;
    const int R = int((M.rows() + block - 1) / block), C = int((M.cols() + block - 1) / block);
    Mat D(R, C);  // ceil(rows/block) x ceil(cols/block)
    const float neg_inf = -std::numeric_limits<float>::infinity();
    for (int bi = 0; bi < R; ++bi) {
        for (int bj = 0; bj < C; ++bj) {
            float best = neg_inf;
            bool any = false;
            for (int i = bi * block; i < std::min<int>(int(M.rows()), (bi + 1) * block); ++i) {
                for (int j = bj * block; j < std::min<int>(int(M.cols()), (bj + 1) * block); ++j) {
                    const float v = M(i, j);
                    if (!std::isfinite(v)) continue;
                    if (!any || std::fabs(v) > std::fabs(best)) best = v;
                    any = true;
                }
            }
            D(bi, bj) = any ? best : neg_inf;
        }
    }
    return D;
}

bool has_masked(const Mat& M) {
    for (Eigen::Index i = 0; i < M.size(); ++i)
        if (!std::isfinite(M.data()[i])) return true;
    return false;
}

/// Sizes shared by the stage figure and the heads grid.
struct Metrics {
    int s;
    int margin, gap;
    float title_px, formula_px, label_px, tick_px, axis_px;
    explicit Metrics(int scale)
        : s(scale),
          margin(22 * scale),
          gap(6 * scale),
          title_px(21.0f * float(scale)),
          formula_px(16.0f * float(scale)),
          label_px(13.0f * float(scale)),
          tick_px(12.0f * float(scale)),
          axis_px(13.0f * float(scale)) {}
};

/// Where a matrix is drawn and at which resolution.
struct Heat {
    Mat D;          // the (possibly downsampled) matrix actually drawn
    int block = 1;  // original cells per drawn cell, per side
    int cell = 1;   // pixels per drawn cell
    int w() const { return int(D.cols()) * cell; }
    int h() const { return int(D.rows()) * cell; }
};

Heat plan_heat(const Mat& M, int scale, int target_px, int max_px, int max_cell) {
    Heat h;
    const int maxdim = std::max<int>(1, int(std::max(M.rows(), M.cols())));
    if (maxdim > max_px * scale) {
        h.block = (maxdim + max_px * scale - 1) / (max_px * scale);
        h.cell = 1;
    } else if (maxdim > max_px) {
        h.cell = 1;  // fits at 1 px per cell only thanks to the scale: show every cell
    } else {
        h.cell = std::clamp(target_px / maxdim, 1, max_cell) * scale;
    }
    h.D = downsample_max_abs(M, h.block);
    return h;
}

/// Values printed inside cells (slides): only when every drawn cell is one matrix cell and wide
/// enough for "−0.00" at a readable size; dark ink on bright cells, light ink on dark ones.
void draw_cell_values(Image& img, int x0, int y0, const Heat& heat, const Mat& values,
                      const ColorRange& range, int scale) {
    if (heat.block != 1) return;
    const FontRaster& font = FontRaster::get();
    const float px = std::min(12.0f * float(scale), float(heat.cell) * 0.34f);
    if (px < 9.0f * float(scale) || font.width("\u22120.00", px) + 4.0f * float(scale) > float(heat.cell))
        return;
    const ColorRange shown = display_range(range);
    for (int i = 0; i < int(values.rows()); ++i) {
        for (int j = 0; j < int(values.cols()); ++j) {
            const float v = values(i, j);
            if (!std::isfinite(v)) continue;  // masked: the hatch says it all
            const Rgb8 bg = value_rgb(shown, heat.D(i, j));
            const float lum = 0.2126f * float(bg.r) + 0.7152f * float(bg.g) + 0.0722f * float(bg.b);
            std::string text = format_number(v);
            if (font.width(text, px) + 2.0f * float(scale) > float(heat.cell)) {
                char buf[16];
                std::snprintf(buf, sizeof buf, "%.2g", double(v));
                text = format_number(float(std::atof(buf)));
                if (font.width(text, px) + 2.0f * float(scale) > float(heat.cell)) continue;
            }
            const float cx = float(x0) + (float(j) + 0.5f) * float(heat.cell);
            const float cy = float(y0) + (float(i) + 0.5f) * float(heat.cell);
            text_draw(img, cx - font.width(text, px) * 0.5f, cy + font.ascent(px) * 0.36f, text, px,
                      lum > 140.0f ? Rgb8{20, 20, 20} : Rgb8{245, 245, 245});
        }
    }
}

void draw_heat(Image& img, int x0, int y0, const Heat& heat, const ColorRange& range, int scale) {
    const int R = int(heat.D.rows()), C = int(heat.D.cols()), c = heat.cell;
    // Thin white separators between cells once cells are big enough to be read one by one.
    const int sep = c >= 12 * scale ? std::max(1, scale) : 0;
    for (int i = 0; i < R; ++i) {
        for (int j = 0; j < C; ++j) {
            const float v = heat.D(i, j);
            const bool masked = !std::isfinite(v);
            const Rgb8 col = masked ? Rgb8{} : value_rgb(range, v);
            for (int yy = 0; yy < c; ++yy) {
                const int py = y0 + i * c + yy;
                for (int xx = 0; xx < c; ++xx) {
                    const int px = x0 + j * c + xx;
                    const bool on_sep = sep > 0 && ((xx < sep && j > 0) || (yy < sep && i > 0));
                    // The hatch is anchored to the heatmap's corner and scaled with the figure.
                    put(img, px, py,
                        on_sep   ? kWhite
                        : masked ? masked_rgb((px - x0) / scale, (py - y0) / scale)
                                 : col);
                }
            }
        }
    }
    frame(img, x0, y0, heat.w(), heat.h(), std::max(1, scale), kFrame);
}

/// Which original indices get a label along an axis of `count` entries drawn over `span_px` pixels,
/// so that labels are at least `min_spacing_px` apart and at most max_count are shown.
int label_stride(int count, float span_px, float min_spacing_px, int max_count) {
    if (count <= 0) return 1;
    const float per = span_px / float(count);
    int k = std::max(1, (count + std::max(1, max_count) - 1) / std::max(1, max_count));
    while (float(k) * per < min_spacing_px && k < count) ++k;
    // Prefer "nice" strides (1, 2, 5, 10, ...) so the shown indices are easy to read.
    static const int nice[] = {1,  2,   4,   5,   8,   10,  16,  20,  25,   32,  50,
                               64, 100, 128, 200, 250, 256, 500, 512, 1000, 1024};
    for (int n : nice)
        if (n >= k) return n;
    return k;
}

struct AxisLabels {
    std::vector<int> index;
    std::vector<std::string> text;
    float max_width = 0;
};

AxisLabels collect_labels(const Axis& axis, int count, int stride, float px) {
    AxisLabels out;
    const FontRaster& font = FontRaster::get();
    for (int i = 0; i < count; i += stride) {
        out.index.push_back(i);
        // When labels are thinned out, a token alone is ambiguous (texts repeat words): prefix its
        // index so "250 blue" says which position the label marks.
        std::string text = ellipsize(axis_label(axis, i), 14);
        if (stride > 1 && token_axis(axis)) text = std::to_string(i) + " " + text;
        out.text.push_back(text);
        out.max_width = std::max(out.max_width, font.width(out.text.back(), px));
    }
    return out;
}

/// Vertical colour bar with min / mid / max ticks. Returns its total width (bar + ticks).
struct ColorBarPlan {
    std::string labels[3];
    float label_w = 0;
    int bar_w = 0;
    int width(const Metrics& m) const { return bar_w + m.gap + int(std::ceil(label_w)); }
};

ColorBarPlan plan_colorbar(const ColorRange& range, const Metrics& m) {
    ColorBarPlan p;
    p.bar_w = 16 * m.s;
    p.labels[0] = colorbar_tick(range, 1.0f);
    p.labels[1] = colorbar_tick(range, 0.5f);
    p.labels[2] = colorbar_tick(range, 0.0f);
    for (const auto& l : p.labels) p.label_w = std::max(p.label_w, FontRaster::get().width(l, m.tick_px));
    return p;
}

void draw_colorbar(Image& img, int x, int y, int h, const ColorRange& range, const ColorBarPlan& p,
                   const Metrics& m) {
    const FontRaster& font = FontRaster::get();
    for (int yy = 0; yy < h; ++yy) {
        const float t = 1.0f - (float(yy) + 0.5f) / float(h);  // top = hi
        fill(img, x, y + yy, p.bar_w, 1, colormap_rgb(range.map, t));
    }
    frame(img, x, y, p.bar_w, h, std::max(1, m.s / 2), kFrame);
    const int tick = 4 * m.s;
    const float cap = font.ascent(m.tick_px) * 0.72f;  // roughly the height of digits
    const int ys[3] = {y, y + h / 2, y + h - 1};
    for (int k = 0; k < 3; ++k) {
        fill(img, x + p.bar_w, ys[k] - m.s / 2, tick, std::max(1, m.s), kFrame);
        float ty = float(ys[k]) + cap * 0.5f;
        ty = std::clamp(ty, float(y) + cap, float(y + h) + cap * 0.5f);
        text_draw(img, float(x + p.bar_w + tick + 2 * m.s), ty, p.labels[k], m.tick_px, kText);
    }
}

/// Hatch swatch + "masked (−∞)". Returns the legend's size.
void draw_masked_legend(Image& img, int x, int y, const Metrics& m) {
    const int sw = 14 * m.s;
    for (int yy = 0; yy < sw; ++yy)
        for (int xx = 0; xx < sw; ++xx) put(img, x + xx, y + yy, masked_rgb(xx / m.s, yy / m.s));
    frame(img, x, y, sw, sw, std::max(1, m.s / 2), kFrame);
    text_draw(img, float(x + sw + m.gap), float(y) + float(sw) * 0.5f + m.tick_px * 0.36f,
              "masked (\u2212\u221e)", m.tick_px, kText);
}

int masked_legend_width(const Metrics& m) {
    return 14 * m.s + m.gap + int(std::ceil(FontRaster::get().width("masked (\u2212\u221e)", m.tick_px)));
}

std::string stage_title(const Stage& stage) {
    std::string t = stage.name;
    if (stage.head >= 0) t += " \u00b7 head " + std::to_string(stage.head);
    return t;
}

std::string shape_label(const Stage& stage) {
    return std::to_string(stage.n_rows()) + " \u00d7 " + std::to_string(stage.n_cols());
}

/// Row labels (right-aligned, ending `gap` left of x_right) and column labels under the map.
struct LabelPlan {
    AxisLabels rows, cols;
    bool cols_rotated = false;
    int col_band_h = 0;  // height of the column label band
};

LabelPlan plan_labels(const Stage& stage, const Heat& heat, const FigureOptions& o, const Metrics& m) {
    LabelPlan p;
    const FontRaster& font = FontRaster::get();
    const float line = font.ascent(m.label_px) + font.descent(m.label_px);
    const int R = stage.n_rows(), C = stage.n_cols();
    p.rows = collect_labels(stage.rows, R, label_stride(R, float(heat.h()), line * 1.05f, o.max_label_count),
                            m.label_px);
    // Columns: horizontal when every label fits in its cell, else rotated 90°.
    AxisLabels horiz;
    {
        const int k0 = label_stride(C, float(heat.w()), line * 1.05f, o.max_label_count);
        horiz = collect_labels(stage.cols, C, k0, m.label_px);
        const float per = float(heat.w()) / float(std::max(1, C)) * float(k0);
        if (horiz.max_width + 4.0f * float(m.s) <= per) {
            p.cols = horiz;
            p.col_band_h = int(std::ceil(line));
            return p;
        }
    }
    if (!token_axis(stage.cols)) {
        // Dimension indices stay horizontal; thin them out until they fit side by side.
        const float w = font.width(std::to_string(std::max(0, C - 1)), m.label_px) + 8.0f * float(m.s);
        const int k = label_stride(C, float(heat.w()), w, o.max_label_count);
        p.cols = collect_labels(stage.cols, C, k, m.label_px);
        p.col_band_h = int(std::ceil(line));
        return p;
    }
    p.cols = horiz;
    p.cols_rotated = true;
    p.col_band_h = int(std::ceil(horiz.max_width));
    return p;
}

void draw_row_labels(Image& img, const LabelPlan& p, int x_right, int y0, const Heat& heat, int count,
                     const Metrics& m) {
    const FontRaster& font = FontRaster::get();
    const float per = float(heat.h()) / float(std::max(1, count));
    const float cap = font.ascent(m.label_px) * 0.72f;
    for (std::size_t k = 0; k < p.rows.index.size(); ++k) {
        const float cy = float(y0) + (float(p.rows.index[k]) + 0.5f) * per;
        const float w = font.width(p.rows.text[k], m.label_px);
        text_draw(img, float(x_right) - w, cy + cap * 0.5f, p.rows.text[k], m.label_px, kText);
    }
}

void draw_col_labels(Image& img, const LabelPlan& p, int x0, int y_top, const Heat& heat, int count,
                     const Metrics& m) {
    const FontRaster& font = FontRaster::get();
    const float per = float(heat.w()) / float(std::max(1, count));
    for (std::size_t k = 0; k < p.cols.index.size(); ++k) {
        const float cx = float(x0) + (float(p.cols.index[k]) + 0.5f) * per;
        const float w = font.width(p.cols.text[k], m.label_px);
        if (p.cols_rotated) {
            // Reads bottom-to-top, ending just under the map: the label's end is nearest its column.
            const float cap = font.ascent(m.label_px) * 0.72f;
            text_draw_rotated(img, cx + cap * 0.5f, float(y_top) + w, p.cols.text[k], m.label_px, kText);
        } else {
            text_draw(img, cx - w * 0.5f, float(y_top) + font.ascent(m.label_px), p.cols.text[k], m.label_px,
                      kText);
        }
    }
}

}  // namespace

Image render_stage_figure(const Trace& trace, const Stage& stage, const FigureOptions& options) {
    FigureOptions o = options;
    o.scale = std::clamp(o.scale, 1, 8);
    const Metrics m(o.scale);
    const FontRaster& font = FontRaster::get();

    const Mat M = display_matrix(trace, stage);  // rows x cols, hidden keys of weights as −∞ (hatched)
    const ColorRange range = color_range_for(stage.kind, M, o.scale_mode);
    const Heat heat = plan_heat(prescale_for_display(M, range), o.scale, 640, 900, 72);
    const bool masked = has_masked(M);
    const LabelPlan labels = plan_labels(stage, heat, o, m);

    // --- horizontal layout ---
    const std::string title = stage_title(stage);
    const std::string formula = stage.formula;
    const std::string shape = shape_label(stage);
    const std::string row_title = axis_title(stage.rows, true);
    const std::string col_title = axis_title(stage.cols, false);
    const float axis_line = font.ascent(m.axis_px) + font.descent(m.axis_px);

    const int row_title_w = row_title.empty() ? 0 : int(std::ceil(axis_line)) + m.gap;
    const int heat_x = m.margin + row_title_w + int(std::ceil(labels.rows.max_width)) + m.gap;
    const ColorBarPlan cbar = plan_colorbar(range, m);
    const int cbar_x = heat_x + heat.w() + 24 * m.s;
    const int caption_w = int(std::ceil(axis_line));
    int right = o.show_colorbar ? cbar_x + cbar.width(m) + m.gap * 2 + caption_w : heat_x + heat.w();
    if (masked)
        right = std::max(right,
                         (o.show_colorbar ? cbar_x : heat_x + heat.w() + 24 * m.s) + masked_legend_width(m));
    const float title_w = font.width(title, m.title_px, FontFace::Bold);
    const float formula_w =
        font.width(formula, m.formula_px) + 24.0f * float(m.s) + font.width(shape, m.formula_px);
    const int width = std::max(
        {right + m.margin, int(std::ceil(title_w)) + 2 * m.margin, int(std::ceil(formula_w)) + 2 * m.margin,
         col_title.empty() ? 0 : heat_x + int(font.width(col_title, m.axis_px)) + m.margin});

    // --- vertical layout ---
    const float title_base = float(m.margin) + font.ascent(m.title_px);
    const float formula_base =
        title_base + font.descent(m.title_px) + 6.0f * float(m.s) + font.ascent(m.formula_px);
    const int heat_y = int(std::ceil(formula_base + font.descent(m.formula_px))) + 16 * m.s;
    const int cbar_h = std::max(heat.h(), 180 * m.s);
    const int col_label_y = heat_y + heat.h() + m.gap + std::max(1, m.s);
    const int col_title_y = col_label_y + labels.col_band_h + m.gap;
    int bottom =
        col_title.empty() ? col_label_y + labels.col_band_h : col_title_y + int(std::ceil(axis_line));
    const int legend_y = heat_y + (o.show_colorbar ? cbar_h + 14 * m.s : heat.h() + 14 * m.s);
    if (o.show_colorbar) bottom = std::max(bottom, heat_y + cbar_h + int(font.descent(m.tick_px)) + m.gap);
    if (masked) bottom = std::max(bottom, legend_y + 14 * m.s);
    const int height = bottom + m.margin;

    Image img = blank(width, height);
    text_draw(img, float(m.margin), title_base, title, m.title_px, kText, FontFace::Bold);
    text_draw(img, float(m.margin), formula_base, formula, m.formula_px, kText);
    text_draw(img, float(width - m.margin) - font.width(shape, m.formula_px), formula_base, shape,
              m.formula_px, kSubtle);

    draw_heat(img, heat_x, heat_y, heat, display_range(range), m.s);
    if (o.cell_values) draw_cell_values(img, heat_x, heat_y, heat, M, range, m.s);
    draw_row_labels(img, labels, heat_x - m.gap, heat_y, heat, stage.n_rows(), m);
    draw_col_labels(img, labels, heat_x, col_label_y, heat, stage.n_cols(), m);
    if (!row_title.empty()) {
        // Rotated, centred on the map's height, at the far left.
        const float w = font.width(row_title, m.axis_px);
        text_draw_rotated(img, float(m.margin) + font.ascent(m.axis_px),
                          float(heat_y) + float(heat.h()) * 0.5f + w * 0.5f, row_title, m.axis_px, kSubtle);
    }
    if (!col_title.empty()) {
        const float w = font.width(col_title, m.axis_px);
        text_draw(img, float(heat_x) + float(heat.w()) * 0.5f - w * 0.5f,
                  float(col_title_y) + font.ascent(m.axis_px), col_title, m.axis_px, kSubtle);
    }
    if (o.show_colorbar) {
        draw_colorbar(img, cbar_x, heat_y, cbar_h, range, cbar, m);
        const std::string meaning = value_meaning(stage.kind, range);
        const float w = font.width(meaning, m.axis_px);
        text_draw_rotated(img, float(cbar_x + cbar.width(m) + m.gap * 2) + font.ascent(m.axis_px),
                          float(heat_y) + float(cbar_h) * 0.5f + w * 0.5f, meaning, m.axis_px, kSubtle);
    }
    if (masked) draw_masked_legend(img, o.show_colorbar ? cbar_x : heat_x + heat.w() + 24 * m.s, legend_y, m);
    return img;
}

Image render_heads_grid_figure(const Trace& trace, const std::string& stage_name,
                               const FigureOptions& options) {
    FigureOptions o = options;
    o.scale = std::clamp(o.scale, 1, 8);
    const Metrics m(o.scale);
    const FontRaster& font = FontRaster::get();

    std::vector<const Stage*> heads;
    for (const Stage& st : trace.stages)
        if (st.name == stage_name && st.head >= 0) heads.push_back(&st);
    if (heads.empty()) throw Error("no per-head stage named '" + stage_name + "' to show as a heads grid");
    std::sort(heads.begin(), heads.end(), [](const Stage* a, const Stage* b) { return a->head < b->head; });

    // One shared colour range, so the panels compare directly.
    std::vector<Mat> mats;
    ColorRange range = color_range_for(heads[0]->kind, display_matrix(trace, *heads[0]), o.scale_mode);
    bool masked = false;
    for (const Stage* st : heads) {
        mats.push_back(display_matrix(trace, *st));
        const ColorRange r = color_range_for(st->kind, mats.back(), o.scale_mode);
        range.lo = std::min(range.lo, r.lo);
        range.hi = std::max(range.hi, r.hi);
        masked = masked || has_masked(mats.back());
    }
    const int count = int(heads.size());
    const int grid_cols = int(std::ceil(std::sqrt(double(count))));
    const int grid_rows = (count + grid_cols - 1) / grid_cols;

    std::vector<Heat> heats;
    for (const Mat& M : mats)
        heats.push_back(plan_heat(prescale_for_display(M, range), o.scale, 280, 400, 40));
    const Stage& first = *heads[0];
    const LabelPlan labels = plan_labels(first, heats[0], o, m);
    const int panel_w = heats[0].w(), panel_h = heats[0].h();
    const float cap_line = font.ascent(m.label_px) + font.descent(m.label_px);
    const int caption_h = int(std::ceil(cap_line)) + m.gap;
    const int pad = 18 * m.s;

    const std::string title = stage_name + " \u00b7 all " + std::to_string(count) + " heads";
    const float title_base = float(m.margin) + font.ascent(m.title_px);
    const float formula_base =
        title_base + font.descent(m.title_px) + 6.0f * float(m.s) + font.ascent(m.formula_px);
    const int grid_x = m.margin + int(std::ceil(labels.rows.max_width)) + m.gap;
    const int grid_y = int(std::ceil(formula_base + font.descent(m.formula_px))) + 14 * m.s;
    const int cell_w = panel_w + pad;
    const int cell_h = caption_h + panel_h + pad;  // column labels only under the bottom panels
    const int label_band = m.gap + std::max(1, m.s) + labels.col_band_h;
    const ColorBarPlan cbar = plan_colorbar(range, m);
    const int cbar_x = grid_x + grid_cols * cell_w + 8 * m.s;
    const int cbar_h = std::max(grid_rows * cell_h - pad - caption_h, 180 * m.s);
    int right = cbar_x + cbar.width(m) + m.gap * 2 + int(std::ceil(cap_line));
    if (masked) right = std::max(right, cbar_x + masked_legend_width(m));
    const int width = std::max({right + m.margin,
                                int(std::ceil(font.width(title, m.title_px, FontFace::Bold))) + 2 * m.margin,
                                int(std::ceil(font.width(first.formula, m.formula_px))) + 2 * m.margin});
    const int legend_y = grid_y + caption_h + cbar_h + 14 * m.s;
    const int height =
        std::max(grid_y + grid_rows * cell_h - pad + label_band, masked ? legend_y + 14 * m.s : 0) + m.margin;

    Image img = blank(width, height);
    text_draw(img, float(m.margin), title_base, title, m.title_px, kText, FontFace::Bold);
    text_draw(img, float(m.margin), formula_base, first.formula, m.formula_px, kText);
    for (int k = 0; k < count; ++k) {
        const int gr = k / grid_cols, gc = k % grid_cols;
        const int px = grid_x + gc * cell_w, py = grid_y + gr * cell_h;
        const std::string cap = "head " + std::to_string(heads[std::size_t(k)]->head);
        text_draw(img, float(px) + float(panel_w) * 0.5f - font.width(cap, m.label_px, FontFace::Bold) * 0.5f,
                  float(py) + font.ascent(m.label_px), cap, m.label_px, kText, FontFace::Bold);
        const int hy = py + caption_h;
        draw_heat(img, px, hy, heats[std::size_t(k)], display_range(range), m.s);
        if (o.cell_values)
            draw_cell_values(img, px, hy, heats[std::size_t(k)], mats[std::size_t(k)], range, m.s);
        // Token labels once per grid row / column: every head shares the same tokens.
        if (gc == 0) draw_row_labels(img, labels, px - m.gap, hy, heats[std::size_t(k)], first.n_rows(), m);
        const bool last_in_column = k + grid_cols >= count;
        if (last_in_column)
            draw_col_labels(img, labels, px, hy + panel_h + m.gap + std::max(1, m.s), heats[std::size_t(k)],
                            first.n_cols(), m);
    }
    draw_colorbar(img, cbar_x, grid_y + caption_h, cbar_h, range, cbar, m);
    const std::string meaning = value_meaning(first.kind, range);
    const float mw = font.width(meaning, m.axis_px);
    text_draw_rotated(img, float(cbar_x + cbar.width(m) + m.gap * 2) + font.ascent(m.axis_px),
                      float(grid_y + caption_h) + float(cbar_h) * 0.5f + mw * 0.5f, meaning, m.axis_px,
                      kSubtle);
    if (masked) draw_masked_legend(img, cbar_x, legend_y, m);
    return img;
}

namespace {

std::string base64(const std::string& bytes) {
    static const char* const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        const std::uint32_t a = std::uint8_t(bytes[i]);
        const std::uint32_t b = i + 1 < bytes.size() ? std::uint8_t(bytes[i + 1]) : 0u;
        const std::uint32_t c = i + 2 < bytes.size() ? std::uint8_t(bytes[i + 2]) : 0u;
        const std::uint32_t v = (a << 16) | (b << 8) | c;
        out += abc[(v >> 18) & 63];
        out += abc[(v >> 12) & 63];
        out += i + 1 < bytes.size() ? abc[(v >> 6) & 63] : '=';
        out += i + 2 < bytes.size() ? abc[v & 63] : '=';
    }
    return out;
}

std::string xml_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

/// The SVG of a figure drawn by `draw` (which rasterises everything but the text, recorded instead).
template <class Draw>
std::string figure_svg(Draw draw) {
    std::vector<TextItem> texts;
    t_text_sink = &texts;
    Image img;
    try {
        img = draw();
    } catch (...) {
        t_text_sink = nullptr;
        throw;
    }
    t_text_sink = nullptr;
    std::string out =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
        "xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"" +
        std::to_string(img.width) + "\" height=\"" + std::to_string(img.height) + "\" viewBox=\"0 0 " +
        std::to_string(img.width) + " " + std::to_string(img.height) + "\">\n";
    // The pixels (cells, colour bar, hatch, frames) at their exact size; then every text as text.
    out += "<image x=\"0\" y=\"0\" width=\"" + std::to_string(img.width) + "\" height=\"" +
           std::to_string(img.height) +
           "\" style=\"image-rendering:pixelated\" xlink:href=\"data:image/png;base64," +
           base64(png_bytes(img)) + "\"/>\n";
    out += "<g font-family=\"DejaVu Sans, Verdana, sans-serif\">\n";
    char buf[160];
    for (const TextItem& t : texts) {
        std::snprintf(buf, sizeof buf, "#%02x%02x%02x", t.color.r, t.color.g, t.color.b);
        const std::string fill = buf;
        if (t.rotated) {
            std::snprintf(buf, sizeof buf,
                          "<text transform=\"translate(%.2f %.2f) rotate(-90)\" font-size=\"%.2f\"",
                          double(t.x), double(t.y), double(t.px));
        } else {
            std::snprintf(buf, sizeof buf, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.2f\"", double(t.x),
                          double(t.y), double(t.px));
        }
        out += buf;
        out += " fill=\"" + fill + "\"" + (t.bold ? " font-weight=\"bold\"" : "") +
               " xml:space=\"preserve\">" + xml_escape(t.text) + "</text>\n";
    }
    out += "</g>\n</svg>\n";
    return out;
}

}  // namespace

std::string render_stage_figure_svg(const Trace& trace, const Stage& stage, const FigureOptions& options) {
    return figure_svg([&] { return render_stage_figure(trace, stage, options); });
}

std::string render_heads_grid_figure_svg(const Trace& trace, const std::string& stage_name,
                                         const FigureOptions& options) {
    return figure_svg([&] { return render_heads_grid_figure(trace, stage_name, options); });
}

bool is_svg_path(const std::string& path) {
    if (path.size() < 4) return false;
    std::string ext = path.substr(path.size() - 4);
    for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
    return ext == ".svg";
}

std::string png_bytes(const Image& image) {
    if (image.width <= 0 || image.height <= 0 ||
        image.rgba.size() != std::size_t(image.width) * std::size_t(image.height) * 4)
        throw Error("cannot encode an empty or inconsistent image as PNG");
    std::string out;
    // stbi_write_png_to_func streams the encoded bytes to our callback (the _to_mem variant is not
    // part of the library's public header).
    auto append = [](void* context, void* data, int size) {
        static_cast<std::string*>(context)->append(static_cast<const char*>(data), std::size_t(size));
    };
    if (!stbi_write_png_to_func(append, &out, image.width, image.height, 4, image.rgba.data(),
                                image.width * 4) ||
        out.empty())
        throw Error("cannot encode the figure as PNG (out of memory?)");
    return out;
}

void write_png(const std::string& path, const Image& image) {
    write_file_atomic(path, png_bytes(image));
}

Image read_png(const std::string& path) {
    const std::string bytes = read_file(path);
    int w = 0, h = 0, comp = 0;
    unsigned char* data = stbi_load_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()),
                                                int(bytes.size()), &w, &h, &comp, 4);
    if (!data) throw Error("cannot read " + path + ": not a PNG image (" + stbi_failure_reason() + ")");
    Image img;
    img.width = w;
    img.height = h;
    img.rgba.assign(data, data + std::size_t(w) * std::size_t(h) * 4);
    stbi_image_free(data);
    return img;
}

}  // namespace attnviz

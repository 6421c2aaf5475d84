// The pure half of the heatmap widget (heatmap_widget.hpp): view-window maths for zoom and pan,
// label thinning, image layout, value formatting and thumbnail downsampling. No ImGui calls, no
// OpenGL, so tests/app/heatmap_widget_test.cpp can check them without a display.
// GCC 12 false positive inside its AVX-512 intrinsics when Eigen multiplies (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "app/panels/heatmap_widget.hpp"

namespace attnviz::app {

render::ViewWindow full_view(int rows, int cols) {
    render::ViewWindow v;
    v.x0 = 0;
    v.y0 = 0;
    v.x1 = float(std::max(cols, 1));
    v.y1 = float(std::max(rows, 1));
    return v;
}

namespace {

// Clamps one axis [a0, a1) of a window into [0, extent): size first, then position.
void clamp_axis(float& a0, float& a1, int extent_cells) {
    const float extent = float(std::max(extent_cells, 1));
    const float min_w = std::min(kMinVisibleCells, extent);
    float w = a1 - a0;
    if (!(w == w) || w <= 0) w = extent;  // NaN or empty: show everything
    if (w < min_w || w > extent) {
        const float c = 0.5f * (a0 + a1);
        w = std::clamp(w, min_w, extent);
        a0 = c - 0.5f * w;
    }
    if (!(a0 == a0)) a0 = 0;
    a0 = std::clamp(a0, 0.0f, extent - w);
    a1 = a0 + w;
}

// Zooms one axis about `anchor` so the anchor keeps its relative position in the window.
void zoom_axis(float& a0, float& a1, int extent_cells, float factor, float anchor) {
    const float extent = float(std::max(extent_cells, 1));
    const float w = a1 - a0;
    const float w_new = std::clamp(w / factor, std::min(kMinVisibleCells, extent), extent);
    const float ratio = w > 0 ? w_new / w : 1.0f;
    a0 = anchor - (anchor - a0) * ratio;
    a1 = a0 + w_new;
    clamp_axis(a0, a1, extent_cells);
}

}  // namespace

render::ViewWindow clamp_view(render::ViewWindow v, int rows, int cols) {
    clamp_axis(v.x0, v.x1, cols);
    clamp_axis(v.y0, v.y1, rows);
    return v;
}

render::ViewWindow zoom_view(const render::ViewWindow& v, int rows, int cols, float factor, float ax,
                             float ay) {
    if (!(factor > 0) || !std::isfinite(factor)) return clamp_view(v, rows, cols);
    render::ViewWindow r = v;
    zoom_axis(r.x0, r.x1, cols, factor, ax);
    zoom_axis(r.y0, r.y1, rows, factor, ay);
    return r;
}

render::ViewWindow pan_view(const render::ViewWindow& v, int rows, int cols, float dx, float dy) {
    render::ViewWindow r = v;
    if (std::isfinite(dx)) r.x0 += dx, r.x1 += dx;
    if (std::isfinite(dy)) r.y0 += dy, r.y1 += dy;
    return clamp_view(r, rows, cols);
}

bool is_full_view(const render::ViewWindow& v, int rows, int cols) {
    const render::ViewWindow f = full_view(rows, cols);
    const float eps = 1e-4f;
    return std::abs(v.x0 - f.x0) < eps && std::abs(v.x1 - f.x1) < eps && std::abs(v.y0 - f.y0) < eps &&
           std::abs(v.y1 - f.y1) < eps;
}

void pixel_to_cell(const render::ViewWindow& v, float x, float y, float w, float h, float px, float py,
                   float* cx, float* cy) {
    *cx = v.x0 + (w > 0 ? (px - x) / w : 0.0f) * (v.x1 - v.x0);
    *cy = v.y0 + (h > 0 ? (py - y) / h : 0.0f) * (v.y1 - v.y0);
}

bool cell_at_pixel(const render::ViewWindow& v, int rows, int cols, float x, float y, float w, float h,
                   float px, float py, int* row, int* col) {
    if (px < x || py < y || px >= x + w || py >= y + h) return false;
    float cx = 0, cy = 0;
    pixel_to_cell(v, x, y, w, h, px, py, &cx, &cy);
    const int c = int(std::floor(cx)), r = int(std::floor(cy));
    if (r < 0 || c < 0 || r >= rows || c >= cols) return false;
    *row = r;
    *col = c;
    return true;
}

int label_stride(float px_per_cell, float min_label_px) {
    if (!(px_per_cell > 0)) return std::numeric_limits<int>::max() / 4;
    const float need = min_label_px / px_per_cell;  // cells between two labels
    if (need <= 1.0f) return 1;
    // 1, 2, 5, 10, 20, 50, ... : round indices, so panning keeps the same labels on screen.
    for (long long decade = 1; decade < (1LL << 40); decade *= 10) {
        for (int m : {1, 2, 5}) {
            if (float(decade * m) >= need) return int(std::min<long long>(decade * m, 1 << 30));
        }
    }
    return 1 << 30;
}

std::string single_character_label(const std::string& label) {
    std::size_t a = label.find_first_not_of(' ');
    if (a == std::string::npos) return {};
    const std::size_t b = label.find_last_not_of(' ') + 1;
    // One code point: a lead byte and only continuation bytes after it.
    for (std::size_t i = a + 1; i < b; ++i)
        if ((static_cast<unsigned char>(label[i]) & 0xC0) != 0x80) return {};
    return label.substr(a, b - a);
}

ColumnLabelFont single_character_font(float regular_w, float small_w, float px_per_col) {
    // (the room a row of upright labels keeps between neighbours, as for horizontal labels)
    constexpr float kGap = 3.0f;
    if (regular_w > 0 && regular_w + kGap <= px_per_col) return ColumnLabelFont::UprightRegular;
    if (small_w > 0 && small_w + kGap <= px_per_col) return ColumnLabelFont::UprightSmall;
    return ColumnLabelFont::Rotated;
}

ImageSize fit_image(float avail_w, float avail_h, float cells_w, float cells_h, float min_fill) {
    ImageSize s;
    if (avail_w <= 0 || avail_h <= 0 || cells_w <= 0 || cells_h <= 0) return s;
    const float cell = std::min(avail_w / cells_w, avail_h / cells_h);  // square cells
    s.w = std::max(cell * cells_w, std::min(1.0f, min_fill) * avail_w);
    s.h = std::max(cell * cells_h, std::min(1.0f, min_fill) * avail_h);
    s.w = std::min(s.w, avail_w);
    s.h = std::min(s.h, avail_h);
    return s;
}

bool same_rendering(const CachedMatrix::Rendered& r, const ColorRange& range,
                    const render::ViewWindow& window, int width, int height,
                    const render::Highlight& highlight) {
    return r.texture != 0 && r.range.lo == range.lo && r.range.hi == range.hi && r.range.map == range.map &&
           r.window.x0 == window.x0 && r.window.y0 == window.y0 && r.window.x1 == window.x1 &&
           r.window.y1 == window.y1 && r.width == width && r.height == height &&
           r.highlight.row == highlight.row && r.highlight.col == highlight.col &&
           r.highlight.dim_others == highlight.dim_others;
}

std::string format_value(float v, int digits) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v < 0 ? "\u2212\u221e" : "+\u221e";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*g", std::clamp(digits, 1, 9), double(v));
    std::string s = buf;
    if (s == "-0") s = "0";
    // A typographic minus sign reads better than a hyphen next to the formulas.
    if (!s.empty() && s[0] == '-') s = "\u2212" + s.substr(1);
    return s;
}

Mat downsample_max_abs(const Mat& M, int max_side) {
    if (max_side <= 0 || (M.rows() <= max_side && M.cols() <= max_side)) return M;
    const Eigen::Index out_r = std::min<Eigen::Index>(M.rows(), max_side);
    const Eigen::Index out_c = std::min<Eigen::Index>(M.cols(), max_side);
    Mat D(out_r, out_c);  // out_r x out_c
    const float neg_inf = -std::numeric_limits<float>::infinity();
    for (Eigen::Index bi = 0; bi < out_r; ++bi) {
        const Eigen::Index r0 = bi * M.rows() / out_r, r1 = (bi + 1) * M.rows() / out_r;
        for (Eigen::Index bj = 0; bj < out_c; ++bj) {
            const Eigen::Index c0 = bj * M.cols() / out_c, c1 = (bj + 1) * M.cols() / out_c;
            float best = neg_inf;
            bool any_finite = false;
            for (Eigen::Index i = r0; i < r1; ++i) {
                for (Eigen::Index j = c0; j < c1; ++j) {
                    const float x = M(i, j);
                    if (!std::isfinite(x)) continue;
                    if (!any_finite || std::abs(x) > std::abs(best)) best = x;
                    any_finite = true;
                }
            }
            D(bi, bj) = best;  // stays -inf when the whole block is masked
        }
    }
    return D;
}

std::vector<LayoutBox>& layout_records() {
    static std::vector<LayoutBox> boxes;
    return boxes;
}

ViewScale& view_scale() {
    static ViewScale scale;  // the GUI thread's choice; read by the views and the state log
    return scale;
}

}  // namespace attnviz::app

// CPU colour maps. The stop tables below are duplicated, number for number, in shaders/heatmap.frag;
// tests/io/colormap_test.cpp fails if the two ever differ.
#include "io/colormap.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.hpp"

namespace attnviz {
namespace {

// Sequential: viridis-like. Perceptually uniform (lightness rises steadily from dark purple to
// yellow), readable in greyscale and by colour-blind viewers, so "brighter = more attention".
constexpr std::array<Rgb8, kColorStops> kSequential = {{
    {68, 1, 84},     // t = 0.000
    {71, 45, 123},   // t = 0.125
    {59, 82, 139},   // t = 0.250
    {44, 114, 142},  // t = 0.375
    {33, 145, 140},  // t = 0.500
    {40, 174, 128},  // t = 0.625
    {94, 201, 98},   // t = 0.750
    {173, 220, 48},  // t = 0.875
    {253, 231, 37},  // t = 1.000
}};

// Diverging: blue - near-white - red, symmetric about the middle stop (value 0), so the sign of a
// signed number is its hue and its size is how saturated it is.
constexpr std::array<Rgb8, kColorStops> kDiverging = {{
    {5, 48, 97},      // -1.00
    {33, 102, 172},   // -0.75
    {67, 147, 195},   // -0.50
    {146, 197, 222},  // -0.25
    {247, 247, 247},  //  0
    {244, 165, 130},  // +0.25
    {214, 96, 77},    // +0.50
    {178, 24, 43},    // +0.75
    {103, 0, 31},     // +1.00
}};

std::uint8_t to_byte(float v) {
    // Round to nearest, like the GPU's float -> unorm8 conversion.
    return static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
}

}  // namespace

const std::array<Rgb8, kColorStops>& colormap_stops(ColorMap map) {
    return map == ColorMap::Sequential ? kSequential : kDiverging;
}

const char* scale_mode_name(ScaleMode mode) {
    switch (mode) {
        case ScaleMode::Auto:
            return "auto";
        case ScaleMode::Fixed:
            return "fixed";
        case ScaleMode::Max:
            return "max";
        case ScaleMode::Row:
            return "row";
        case ScaleMode::Log:
            return "log";
    }
    return "auto";
}

ScaleMode parse_scale_mode(const std::string& text, const std::string& what) {
    for (ScaleMode m : {ScaleMode::Auto, ScaleMode::Fixed, ScaleMode::Max, ScaleMode::Row, ScaleMode::Log})
        if (text == scale_mode_name(m)) return m;
    throw Error(what + ": expected auto, fixed, max, row or log, got '" + text + "'");
}

ScaleMode resolve_scale_mode(ScaleMode mode, ValueKind kind, Eigen::Index cols) {
    if (kind != ValueKind::Probability) return ScaleMode::Max;  // their natural 0..max or ±max
    if (mode != ScaleMode::Auto) return mode;
    return cols <= kAutoFixedMaxKeys ? ScaleMode::Fixed : ScaleMode::Row;
}

ColorRange color_range_for(ValueKind kind, const Mat& M, ScaleMode mode) {
    ColorRange r;
    r.mode = resolve_scale_mode(mode, kind, M.cols());
    // Largest finite magnitude / value; masked (-inf) cells do not stretch the range.
    float max_abs = 0.0f, max_val = 0.0f;
    const float* p = M.data();
    const Eigen::Index count = M.size();
    for (Eigen::Index i = 0; i < count; ++i) {
        const float v = p[i];
        if (!std::isfinite(v)) continue;
        max_abs = std::max(max_abs, std::fabs(v));
        max_val = std::max(max_val, v);
    }
    switch (kind) {
        case ValueKind::Probability:
            r.map = ColorMap::Sequential;
            r.lo = 0.0f;
            r.hi = 1.0f;  // Fixed: two weight heatmaps are comparable at a glance; Row: of the row max
            if (r.mode == ScaleMode::Max) r.hi = max_val > 0.0f ? max_val : 1.0f;
            if (r.mode == ScaleMode::Log) {
                r.hi = max_val > 0.0f ? max_val : 1.0f;
                r.lo = r.hi * std::pow(10.0f, -kLogDecades);
            }
            break;
        case ValueKind::NonNegative:
        case ValueKind::Indicator:
            r.map = ColorMap::Sequential;
            r.lo = 0.0f;
            r.hi = max_val > 0.0f ? max_val : 1.0f;
            break;
        case ValueKind::Signed:
            r.map = ColorMap::Diverging;
            r.hi = max_abs > 0.0f ? max_abs : 1.0f;
            r.lo = -r.hi;
            break;
    }
    return r;
}

float scale_t(const ColorRange& range, float v, float row_max) {
    if (!std::isfinite(v)) return 0.0f;
    float t = 0.5f;
    switch (range.mode) {
        case ScaleMode::Row:
            t = row_max > 0.0f ? v / row_max : 0.0f;
            break;
        case ScaleMode::Log:
            // Same expression as the shader: log2 ratios (the base cancels).
            t = (v > 0.0f && range.hi > range.lo && range.lo > 0.0f)
                    ? std::log2(v / range.lo) / std::log2(range.hi / range.lo)
                    : 0.0f;
            break;
        default: {
            const float span = range.hi - range.lo;
            t = span > 0.0f ? (v - range.lo) / span : 0.5f;
            break;
        }
    }
    return std::clamp(t, 0.0f, 1.0f);
}

std::vector<float> row_maxima(const Mat& M) {
    std::vector<float> out(std::size_t(M.rows()), 0.0f);  // [rows]
    for (Eigen::Index i = 0; i < M.rows(); ++i) {
        float best = -std::numeric_limits<float>::infinity();
        for (Eigen::Index j = 0; j < M.cols(); ++j) {
            const float v = M(i, j);
            if (std::isfinite(v)) best = std::max(best, v);
        }
        out[std::size_t(i)] = std::isfinite(best) ? best : 0.0f;
    }
    return out;
}

Mat prescale_for_display(const Mat& M, const ColorRange& range) {
    if (range.mode != ScaleMode::Row) return M;
    const std::vector<float> mx = row_maxima(M);  // [rows]
    Mat D = M;                                    // [rows, cols]
    for (Eigen::Index i = 0; i < D.rows(); ++i) {
        const float m = mx[std::size_t(i)];
        if (m > 0.0f) D.row(i) /= m;  // -inf stays -inf
    }
    return D;
}

ColorRange display_range(const ColorRange& range) {
    if (range.mode != ScaleMode::Row) return range;
    ColorRange r = range;
    r.mode = ScaleMode::Fixed;
    r.lo = 0.0f;
    r.hi = 1.0f;
    return r;
}

float colorbar_value(const ColorRange& range, float f) {
    if (range.mode == ScaleMode::Log && range.lo > 0.0f && range.hi > range.lo)
        return range.lo * std::pow(range.hi / range.lo, f);
    if (range.mode == ScaleMode::Row) return f;
    return range.lo + (range.hi - range.lo) * f;
}

std::string scale_caption(const ColorRange& range) {
    if (range.map != ColorMap::Sequential) return "";
    switch (range.mode) {
        case ScaleMode::Fixed:
            return "fixed 0\u20131";
        case ScaleMode::Max:
            return "0\u2026max";
        case ScaleMode::Row:
            return "per row: \u00f7 row max";
        case ScaleMode::Log:
            return "log scale, 4 decades";
        case ScaleMode::Auto:
            break;
    }
    return "";
}

std::string colorbar_tick(const ColorRange& range, float f) {
    if (range.mode == ScaleMode::Row) {
        if (f >= 1.0f) return "row max";
        if (f <= 0.0f) return "0";
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3g\u00b7max", double(f));
        return buf;
    }
    const float v = colorbar_value(range, f);
    if (v == 0.0f) return "0";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", double(v));
    std::string out;
    for (const char* c = buf; *c; ++c) out += (*c == '-') ? std::string("\u2212") : std::string(1, *c);
    return out;
}

Mat reduce_2x2(const Mat& M, ReduceMode mode) {
    const Eigen::Index R = (M.rows() + 1) / 2, C = (M.cols() + 1) / 2;
    Mat D(R, C);  // [ceil(rows/2), ceil(cols/2)]
    const float neg_inf = -std::numeric_limits<float>::infinity();
    for (Eigen::Index bi = 0; bi < R; ++bi) {
        const Eigen::Index r1 = std::min(M.rows(), 2 * bi + 2);
        for (Eigen::Index bj = 0; bj < C; ++bj) {
            const Eigen::Index c1 = std::min(M.cols(), 2 * bj + 2);
            float best = neg_inf, sum = 0.0f;
            int finite = 0;
            for (Eigen::Index i = 2 * bi; i < r1; ++i) {
                for (Eigen::Index j = 2 * bj; j < c1; ++j) {
                    const float v = M(i, j);
                    if (!std::isfinite(v)) continue;
                    if (finite == 0 || std::fabs(v) > std::fabs(best)) best = v;
                    sum += v;
                    ++finite;
                }
            }
            D(bi, bj) = finite == 0 ? neg_inf : (mode == ReduceMode::Max ? best : sum / float(finite));
        }
    }
    return D;
}

std::vector<Mat> reduction_levels(const Mat& M, ReduceMode mode) {
    std::vector<Mat> levels;
    const Mat* prev = &M;
    while (prev->rows() > 1 || prev->cols() > 1) {
        levels.push_back(reduce_2x2(*prev, mode));
        prev = &levels.back();
    }
    return levels;
}

int level_for(float cells_per_pixel, int max_level) {
    if (!(cells_per_pixel > 1.0f) || max_level <= 0) return 0;
    const int k = int(std::ceil(std::log2(cells_per_pixel) - 1e-4f));
    return std::clamp(k, 0, max_level);
}

Rgb8 colormap_rgb(ColorMap map, float t) {
    if (!(t >= 0.0f)) t = 0.0f;  // also catches NaN
    if (t > 1.0f) t = 1.0f;
    const auto& stops = colormap_stops(map);
    // Same arithmetic as the shader: segment index, then a linear blend inside the segment.
    const float x = t * float(kColorStops - 1);
    const int k = std::min(int(std::floor(x)), kColorStops - 2);
    const float f = x - float(k);
    const Rgb8 a = stops[std::size_t(k)], b = stops[std::size_t(k) + 1];
    return Rgb8{to_byte(float(a.r) + (float(b.r) - float(a.r)) * f),
                to_byte(float(a.g) + (float(b.g) - float(a.g)) * f),
                to_byte(float(a.b) + (float(b.b) - float(a.b)) * f)};
}

Rgb8 value_rgb(const ColorRange& range, float v, float row_max) {
    if (!std::isfinite(v)) return masked_rgb(0, 0);
    return colormap_rgb(range.map, scale_t(range, v, row_max));
}

Rgb8 masked_rgb(int x, int y) {
    // Stripes run from bottom-left to top-right ("/"): constant along x + y. The shader computes
    // the same expression from gl_FragCoord (its target stores the top row first).
    const int s = ((x + y) % 8 + 8) % 8;
    return s < 4 ? kHatchDark : kHatchLight;
}

}  // namespace attnviz

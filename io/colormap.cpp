// CPU colour maps. The stop tables below are duplicated, number for number, in shaders/heatmap.frag;
// tests/io/colormap_test.cpp fails if the two ever differ.
#include "io/colormap.hpp"

#include <algorithm>
#include <cmath>

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

ColorRange color_range_for(ValueKind kind, const Mat& M) {
    ColorRange r;
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
            // Fixed 0..1: two weight heatmaps are comparable at a glance.
            r.map = ColorMap::Sequential;
            r.lo = 0.0f;
            r.hi = 1.0f;
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

Rgb8 value_rgb(const ColorRange& range, float v) {
    if (!std::isfinite(v)) return masked_rgb(0, 0);
    const float span = range.hi - range.lo;
    const float t = span > 0.0f ? (v - range.lo) / span : 0.5f;
    return colormap_rgb(range.map, t);
}

Rgb8 masked_rgb(int x, int y) {
    // Stripes run from bottom-left to top-right ("/"): constant along x + y. The shader computes
    // the same expression from gl_FragCoord (its target stores the top row first).
    const int s = ((x + y) % 8 + 8) % 8;
    return s < 4 ? kHatchDark : kHatchLight;
}

}  // namespace attnviz

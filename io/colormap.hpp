// CPU colour maps, identical to shaders/heatmap.frag (tests/io/colormap_test.cpp parses the shader's
// stop tables and compares them with colormap_stops(); tests/app/shader_colormap_test.cpp renders
// through the GPU and compares every pixel). Both are piecewise-linear interpolation between the same
// 9 sRGB stops, no gamma tricks, so CPU and GPU agree to within 1/255.
#pragma once

#include <array>
#include <cstdint>

#include "core/shapes.hpp"
#include "core/trace.hpp"

namespace attnviz {

struct Rgb8 {
    std::uint8_t r, g, b;
    bool operator==(const Rgb8& o) const { return r == o.r && g == o.g && b == o.b; }
    bool operator!=(const Rgb8& o) const { return !(*this == o); }
};

enum class ColorMap {
    Sequential,  // for weights / non-negative values: dark (low) -> bright (high)
    Diverging,   // for signed values: blue (negative) - white (0) - red (positive)
};

/// The range a stage's colour bar uses. Probability: [0, 1]. NonNegative/Indicator: [0, max].
/// Signed: [-a, a] with a = max |finite value| (a = 1 if the matrix is all zero).
struct ColorRange {
    ColorMap map = ColorMap::Diverging;
    float lo = -1, hi = 1;
};
ColorRange color_range_for(ValueKind kind, const Mat& M);

/// Number of control points of every map; stop k sits at t = k / (kColorStops - 1).
inline constexpr int kColorStops = 9;
/// The control points (sRGB, 0..255) of a map, low to high. The shader holds the same numbers.
const std::array<Rgb8, kColorStops>& colormap_stops(ColorMap map);

/// Colour of t in [0, 1] (clamped) on a map.
Rgb8 colormap_rgb(ColorMap map, float t);
/// Colour of value v in a range; NaN/inf values (masked cells) are not coloured here, see
/// masked_rgb(). (Non-finite v returns masked_rgb(0, 0) so a caller that forgets still shows grey.)
Rgb8 value_rgb(const ColorRange& range, float v);
/// Hatch colour for a masked (-inf) cell at pixel (x, y) (x right, y down): diagonal grey stripes,
/// 8 px period, 4 px dark + 4 px light. Neither grey occurs in either colour map.
Rgb8 masked_rgb(int x, int y);
/// The two greys of the hatch (for legends).
inline constexpr Rgb8 kHatchDark{150, 150, 150};
inline constexpr Rgb8 kHatchLight{212, 212, 212};

}  // namespace attnviz

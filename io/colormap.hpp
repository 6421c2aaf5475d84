// CPU colour maps, identical to shaders/heatmap.frag (tests/render prove it). Both are built from the
// same table of control points in shaders/colormaps.glsl.inc semantics: piecewise-linear
// interpolation between 9 sRGB stops, no gamma tricks, so CPU and GPU agree to within 1/255.
#pragma once

#include <array>
#include <cstdint>

#include "core/shapes.hpp"
#include "core/trace.hpp"

namespace attnviz {

struct Rgb8 {
    std::uint8_t r, g, b;
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

/// Colour of t in [0, 1] (clamped) on a map.
Rgb8 colormap_rgb(ColorMap map, float t);
/// Colour of value v in a range; NaN/inf values (masked cells) are not coloured here, see
/// masked_rgb().
Rgb8 value_rgb(const ColorRange& range, float v);
/// Hatch colour for a masked (-inf) cell at pixel (x, y): diagonal grey stripes, 8 px period.
Rgb8 masked_rgb(int x, int y);

}  // namespace attnviz

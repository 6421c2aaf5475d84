// CPU colour maps, identical to shaders/heatmap.frag (tests/io/colormap_test.cpp parses the shader's
// stop tables and compares them with colormap_stops(); tests/app/shader_colormap_test.cpp renders
// through the GPU and compares every pixel). Both are piecewise-linear interpolation between the same
// 9 sRGB stops, no gamma tricks, so CPU and GPU agree to within 1/255.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

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

/// How values become colours (the weights' choice; other kinds always use their natural range).
///   Fixed: linear over 0..1 (two weight maps compare at a glance; flat at long n, where every
///          weight is about 1/n).
///   Max:   linear over 0..max of the matrix.
///   Row:   each row scaled to its own max (t = v / max_j v_ij): where every query looks, at any n.
///   Log:   log10 over [max·1e-4, max] (4 decades); smaller weights take the darkest colour.
///   Auto:  Fixed while rows have at most kAutoFixedMaxKeys keys, Row beyond (resolved per matrix).
enum class ScaleMode { Auto, Fixed, Max, Row, Log };
inline constexpr int kAutoFixedMaxKeys = 64;
/// Decades shown by ScaleMode::Log.
inline constexpr float kLogDecades = 4.0f;

/// "auto", "fixed", "max", "row", "log" (the values of `render --scale-mode`).
const char* scale_mode_name(ScaleMode mode);
/// Inverse of scale_mode_name; throws attnviz::Error naming `what` and the accepted values.
ScaleMode parse_scale_mode(const std::string& text, const std::string& what = "--scale-mode");
/// The mode actually used: non-probability kinds always get Max (linear 0..max, or ±max);
/// Auto becomes Fixed for rows of at most kAutoFixedMaxKeys keys, Row beyond.
ScaleMode resolve_scale_mode(ScaleMode mode, ValueKind kind, Eigen::Index cols);

/// The range a stage's colour bar uses. Probability: [0, 1] (Fixed), [0, max] (Max), [0, 1] of
/// each row's max (Row), [max·1e-4, max] on a log axis (Log). NonNegative/Indicator: [0, max].
/// Signed: [-a, a] with a = max |finite value| (a = 1 if the matrix is all zero). `mode` is always
/// resolved (never Auto) and `cols` is the row length it was resolved for.
struct ColorRange {
    ColorMap map = ColorMap::Diverging;
    float lo = -1, hi = 1;
    ScaleMode mode = ScaleMode::Fixed;
    bool operator==(const ColorRange& o) const {
        return map == o.map && lo == o.lo && hi == o.hi && mode == o.mode;
    }
    bool operator!=(const ColorRange& o) const { return !(*this == o); }
};
ColorRange color_range_for(ValueKind kind, const Mat& M, ScaleMode mode = ScaleMode::Auto);

/// Position t in [0, 1] on the colour map of value v; `row_max` is the largest finite value of v's
/// row (used by ScaleMode::Row only). Non-finite v gives 0.
float scale_t(const ColorRange& range, float v, float row_max = 1.0f);
/// Largest finite value of every row ([rows]); 0 for a row without finite values.
std::vector<float> row_maxima(const Mat& M);
/// The matrix the GPU colours linearly or on a log axis: for ScaleMode::Row every row divided by its
/// max (masked −∞ kept; a row whose max is ≤ 0 is left as is), otherwise M unchanged.
Mat prescale_for_display(const Mat& M, const ColorRange& range);
/// The range to colour prescale_for_display(M, range) with: Row becomes a linear 0..1 range.
ColorRange display_range(const ColorRange& range);
/// The value at fraction f (0 = bottom, 1 = top) of the colour bar; for Row a fraction of the row
/// max. Log ticks are geometric.
float colorbar_value(const ColorRange& range, float f);
/// A short caption of the scale for colour bars: "fixed 0–1", "0…max", "per row: ÷ row max",
/// "log scale, 4 decades", or "" for the diverging map (its ticks say it all).
std::string scale_caption(const ColorRange& range);
/// Tick label of the colour bar at fraction f: the number, or for Row "row max" / "½ row max" / "0".
std::string colorbar_tick(const ColorRange& range, float f);

/// How a zoomed-out view reduces the cells that share a screen pixel: Max keeps the value of largest
/// |value| (sign kept), so a single peak survives at any zoom; Mean averages the finite cells.
/// A reduced cell is −∞ (masked) only when every cell it covers is.
enum class ReduceMode { Max, Mean };
/// One level of a reduction pyramid: 2×2 blocks of M reduced into one cell; the result has
/// ceil(rows/2) × ceil(cols/2) cells (edge blocks cover what is left).
Mat reduce_2x2(const Mat& M, ReduceMode mode);
/// Level k of the chain covers 2^k × 2^k cells of level 0; levels go down to 1 cell on the long side.
/// Level 0 is not included (it is M itself): the result holds levels 1, 2, ...
std::vector<Mat> reduction_levels(const Mat& M, ReduceMode mode);
/// The level whose cells are at least as large as `cells_per_pixel` (ceil(log2)), so every level
/// cell is sampled by at least one pixel: 0 for ≤ 1 cell per pixel, clamped to max_level.
int level_for(float cells_per_pixel, int max_level);

/// Number of control points of every map; stop k sits at t = k / (kColorStops - 1).
inline constexpr int kColorStops = 9;
/// The control points (sRGB, 0..255) of a map, low to high. The shader holds the same numbers.
const std::array<Rgb8, kColorStops>& colormap_stops(ColorMap map);

/// Colour of t in [0, 1] (clamped) on a map.
Rgb8 colormap_rgb(ColorMap map, float t);
/// Colour of value v in a range; NaN/inf values (masked cells) are not coloured here, see
/// masked_rgb(). (Non-finite v returns masked_rgb(0, 0) so a caller that forgets still shows grey.)
Rgb8 value_rgb(const ColorRange& range, float v, float row_max = 1.0f);
/// Hatch colour for a masked (-inf) cell at pixel (x, y) (x right, y down): diagonal grey stripes,
/// 8 px period, 4 px dark + 4 px light. Neither grey occurs in either colour map.
Rgb8 masked_rgb(int x, int y);
/// The two greys of the hatch (for legends).
inline constexpr Rgb8 kHatchDark{150, 150, 150};
inline constexpr Rgb8 kHatchLight{212, 212, 212};

}  // namespace attnviz

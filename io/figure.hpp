// Publication figures rendered on the CPU (no display, no GL): a heatmap with a title (stage, head,
// formula), token/dimension labels on both axes, and a colour bar with its range. Used by the app's
// "Export PNG" and by `attnviz render`, so both give the same picture.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/trace.hpp"
#include "io/colormap.hpp"

namespace attnviz {

/// An 8-bit RGBA image, row-major, top row first.
struct Image {
    int width = 0, height = 0;
    std::vector<std::uint8_t> rgba;  // width * height * 4
};

struct FigureOptions {
    int scale = 1;             // 1, 2 or 4: multiplies every size (cells, fonts, margins)
    int max_label_count = 64;  // axes with more entries show every k-th label
    bool show_colorbar = true;
    ScaleMode scale_mode = ScaleMode::Auto;  // how weights map to colours (see io/colormap.hpp)
    bool cell_values = false;                // print each value in its cell when it fits (slides)
};

/// Renders one stage as a figure. Cells are nearest-neighbour squares (at least 1 px); masked cells
/// show the hatch. Large matrices (4096 x 4096) are downsampled to at most 2048 px per side, taking
/// the max |value| of each block so single bright cells survive.
Image render_stage_figure(const Trace& trace, const Stage& stage, const FigureOptions& options = {});

/// All heads' weights side by side ("heads grid"), one small heatmap per head with its index.
Image render_heads_grid_figure(const Trace& trace, const std::string& stage_name = "weights",
                               const FigureOptions& options = {});

/// The same figures as SVG for papers: identical layout, the coloured cells, colour bar and hatch
/// as an embedded PNG at their pixel size, and every text (title, formula, labels, ticks) as vector
/// <text> in DejaVu Sans at the positions the PNG uses.
std::string render_stage_figure_svg(const Trace& trace, const Stage& stage,
                                    const FigureOptions& options = {});
std::string render_heads_grid_figure_svg(const Trace& trace, const std::string& stage_name = "weights",
                                         const FigureOptions& options = {});
/// True when `path` ends in ".svg" (any case): `render --out x.svg` writes SVG.
bool is_svg_path(const std::string& path);

/// PNG bytes of an image (stbi_write_png_to_mem).
std::string png_bytes(const Image& image);
/// Writes a PNG atomically. Throws attnviz::Error with the path and reason.
void write_png(const std::string& path, const Image& image);
/// Decodes a PNG (for tests and goldens). Throws attnviz::Error.
Image read_png(const std::string& path);

}  // namespace attnviz

// The lines view (BertViz's head view): the query tokens in a left column, the key tokens in a right
// column, and a line from each query to each key whose width and opacity follow the attention weight,
// coloured by head. plan_lines() is the geometry (pure, unit-tested); the GUI draws its lines with
// ImGui, and render_lines_figure / render_lines_figure_svg export the same layout as a PNG (lines
// rasterised on the CPU, anti-aliased) or as an SVG of vector <line>s and <text>s.
#pragma once

#include <string>
#include <vector>

#include "core/shapes.hpp"
#include "core/trace.hpp"
#include "io/colormap.hpp"
#include "io/figure.hpp"

namespace attnviz {

/// What the lines show: every head's weights [n, m] (row i = query i, column j = key j) and the labels.
struct LinesInput {
    std::vector<Mat> weights;          // [h][n, m]
    std::vector<std::string> queries;  // [n]
    std::vector<std::string> keys;     // [m]
    std::string title;                 // e.g. "attention lines · layer 1" (figures only)
};

/// The weights of every head of `trace` (its "weights" stage, or `stage`: an encoder–decoder's
/// "cross_weights") with its token labels. Throws attnviz::Error when the trace has no such stage.
LinesInput lines_input(const Trace& trace, const std::string& title = "",
                       const std::string& stage = "weights");

/// Which side a hovered token is on.
enum class LinesSide { None, Query, Key };

struct LinesOptions {
    int head = -1;        // -1 = every head (each in its own colour), else only this head
    int front_head = -1;  // with every head: this one's lines drawn last, on top (the head in focus)
    LinesSide hover_side = LinesSide::None;
    int hover_token = -1;        // with hover: only the lines of this query (left) or key (right)
    float label_width = 110.0f;  // room for the labels of each column
    float gap = 220.0f;          // horizontal distance between the two columns' line ends
    float row_height = 20.0f;    // vertical distance between tokens
    float top = 0.0f;            // y of the first row's top edge
    float min_width = 0.5f;      // line width at weight 0 ...
    float max_width = 5.0f;      // ... and at weight 1 (linear between)
    float min_weight = 0.01f;    // lines of smaller weight are left out (near invisible)
};

/// One line: query `query` (left) to key `key` (right) of head `head`.
struct LineSegment {
    int query = 0, key = 0, head = 0;
    float weight = 0;
    float x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // left end (query row centre), right end (key row centre)
    float width = 0;                       // min_width + (max_width − min_width)·weight
    float opacity = 0;                     // = weight (clamped to [0, 1])
    Rgb8 colour{0, 0, 0};                  // head_colour(head)
};

struct LinesLayout {
    float left_x = 0, right_x = 0;      // x of the line ends at the query and key columns
    float width = 0, height = 0;        // the whole drawing: labels + gap + labels, rows
    std::vector<float> query_y, key_y;  // centre y of each token's row
    std::vector<LineSegment> lines;     // weakest first (the strongest drawn on top), ties in head,
                                        // query, key order
};

/// A categorical colour per head (Tableau 10, as BertViz's d3 palette; wraps after 10).
Rgb8 head_colour(int head);

/// The geometry of the lines view. Weights outside [0, 1] are clamped; masked (−∞) and NaN weights are
/// never drawn. Throws attnviz::Error for a head out of range or heads of different shapes.
LinesLayout plan_lines(const LinesInput& input, const LinesOptions& options);

/// The lines view as a figure: title, the two columns of tokens, the lines (heads chosen and hover as
/// in `lines`), and a legend of the heads' colours. options.scale multiplies every size.
Image render_lines_figure(const LinesInput& input, const LinesOptions& lines,
                          const FigureOptions& options = {});
/// The same figure as SVG: every line a vector <line> (stroke width and opacity from the weight),
/// every text a <text> in DejaVu Sans.
std::string render_lines_figure_svg(const LinesInput& input, const LinesOptions& lines,
                                    const FigureOptions& options = {});

}  // namespace attnviz

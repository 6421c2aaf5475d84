// Shared pieces of the teaching-lab windows (app/panels/lab_*.cpp):
//  - pure axis maths (nice ticks on linear and log axes, tick labels), unit-tested in
//    tests/app/lab_plot_test.cpp without ImGui;
//  - line/point plots and grouped bar charts drawn with ImDrawList (axes, ticks, log axes, reference
//    lines, legend) — the labs' curves are small, so one polyline per series is enough;
//  - heatmaps through the shared heatmap widget (app/panels/heatmap_widget.hpp);
//  - the lab page furniture (formula in large type, explanation, findings, error line);
//  - "Export PNG" of a lab window: the frame is read back when it has been drawn completely (an
//    ImDrawList callback at the very end of the frame) and the window's rectangle is cropped out.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/app_state.hpp"
#include "app/panels/heatmap_widget.hpp"
#include "core/error.hpp"
#include "core/trace.hpp"

namespace attnviz::app {

/// A width given in pixels at UI scale 1, at the current UI scale (the font size follows the scale):
/// controls keep room for their text and +/- buttons on a projector at scale 2.
inline float em(float px_at_scale_1) {
    return px_at_scale_1 * ImGui::GetFontSize() / 16.0f;
}

// ---------------------------------------------------------------------------------------------
// Pure axis maths (no ImGui)
// ---------------------------------------------------------------------------------------------

/// "Nice" tick values covering [lo, hi] on a linear axis: multiples of 1, 2 or 5 × 10^k, at most
/// `max_ticks` of them, all inside [lo, hi]. lo == hi gives the single value; lo > hi is swapped.
std::vector<double> linear_ticks(double lo, double hi, int max_ticks);

/// Ticks for a log axis over [lo, hi] (both > 0): powers of ten (every k-th decade when there are
/// too many); when the range spans less than two decades, 1-2-5 steps inside it (so a short log axis
/// still has labels). Empty when lo <= 0.
std::vector<double> log_ticks(double lo, double hi, int max_ticks);

/// Short tick label: "0", "0.5", "20", "1000", "1e+05", "1e-07" — at most ~6 characters.
std::string tick_label(double v);

/// Position of v on an axis as a fraction 0..1 of its length (log10 when `log`). Values outside the
/// range map outside 0..1; a degenerate range maps to 0.5; non-positive values on a log axis to -inf.
double axis_fraction(double v, double lo, double hi, bool log);

/// The data range [lo, hi] of the finite values (positive values only when `log`), padded by
/// `pad` of the span on a linear axis (a log axis is padded by a factor). No value: [0, 1] / [1, 10].
void auto_range(const std::vector<const std::vector<double>*>& values, bool log, double pad, double* lo,
                double* hi);

// ---------------------------------------------------------------------------------------------
// Plots (ImDrawList)
// ---------------------------------------------------------------------------------------------

/// Colour i of a qualitative palette (10 colours that stay apart on the dark background).
ImU32 palette(int i);

struct PlotSeries {
    std::string label;  // legend entry ("" = not in the legend)
    std::vector<double> x, y;
    ImU32 color = IM_COL32(255, 255, 255, 255);
    bool line = true;      // connect the points
    bool markers = false;  // draw a dot at each point
    float thickness = 2.0f;
    float marker_radius = 3.0f;
};

/// A labelled horizontal (y = value) or vertical (x = value) reference line, drawn dashed.
struct RefLine {
    bool horizontal = true;
    double value = 0;
    std::string label;
    ImU32 color = IM_COL32(200, 200, 200, 200);
};

struct PlotSpec {
    std::string title;
    std::string x_label, y_label;
    bool log_x = false, log_y = false;
    double x_min = NAN, x_max = NAN, y_min = NAN, y_max = NAN;  // NaN = from the data
    std::vector<RefLine> ref_lines;
    bool legend = true;
    // The preferred legend corner (top-right by default); the legend moves to the corner that hides
    // the fewest points of the curves when the preferred one would cover more.
    bool legend_right = true;
    bool legend_bottom = false;
};

/// Draws a line/point plot in a box of `size` at the cursor (advances the cursor like an item).
/// Hovering shows the nearest point of any series as "label: (x, y)".
void draw_line_plot(const char* id, const PlotSpec& spec, const std::vector<PlotSeries>& series, ImVec2 size);

struct BarGroupsSpec {
    std::string title, x_label, y_label;
    std::vector<std::string> group_labels;    // one per group along x (e.g. keys)
    std::vector<std::string> series_labels;   // one per bar inside a group (e.g. temperatures)
    std::vector<std::vector<double>> values;  // [series][group]
    double y_max = NAN;                       // NaN = from the data
};

/// Grouped bar chart: groups along x, one coloured bar per series inside each group, legend.
void draw_bar_groups(const char* id, const BarGroupsSpec& spec, ImVec2 size);

// ---------------------------------------------------------------------------------------------
// Heatmaps and page furniture
// ---------------------------------------------------------------------------------------------

/// An axis without token labels ("position", "dimension", ...): labels are indices.
Axis index_axis(const std::string& name, int size);
/// An axis whose labels are the given strings.
Axis label_axis(const std::string& name, const std::vector<std::string>& labels);

/// A lab heatmap through the shared widget. `key` names the matrix in the view cache and must
/// change whenever M's values change (labs append their result generation). `width`/`height` are
/// the region to use. `range` overrides the colour range (e.g. a shared scale). `min_fill` (see
/// fit_image) stretches a one-row matrix to more of the height, so its colour bar has room for its
/// three tick labels.
HeatmapResult lab_heatmap(const char* id, HeatmapViewState& view, const std::string& key, const Mat& M,
                          ValueKind kind, const Axis& rows, const Axis& cols, const char* title, float width,
                          float height, const ColorRange* range = nullptr, float min_fill = 0.3f);

/// A lab text as the UI shows it: combining sequences ImGui cannot place (f + U+0302) become a
/// precomposed character (ŷ). lab_formula() and lab_explanation() apply it.
std::string lab_display_text(const std::string& text);
/// Formula in the large font, accent colour, wrapped.
void lab_formula(const std::string& formula);
/// Explanation paragraph, wrapped, slightly dimmed.
void lab_explanation(const std::string& text);
/// "What the numbers say" list of the core's findings.
void lab_findings(const std::vector<std::string>& findings);
/// Height lab_findings() will take when wrapped at `width` pixels (reserve it below a plot).
float lab_findings_height(const std::vector<std::string>& findings, float width);
/// Colour range 0 … (largest finite weight) for a weight matrix with many keys: each weight is then
/// about 1/m, and the fixed 0–1 range of probabilities would paint everything the darkest colour.
/// Say so in the title ("colour 0 … max = 0.13") so the brightest colour is not read as weight 1.
ColorRange weights_range(const Mat& A);
/// A one-sentence error (bad input) in the error colour, wrapped.
void lab_error(const std::string& message);
/// Section heading in the bold font.
void lab_heading(const std::string& text);

/// Recomputes a lab when its parameters changed (or nothing was computed yet): `state` has members
/// params, computed_for, lab, have, error and gen; `compute(params)` returns the lab's result.
/// Bad input (a core Error) keeps the last good result on screen and stores the message to show.
template <class LabState, class Compute>
void refresh_lab(LabState& state, bool params_changed, Compute compute) {
    if (state.have && !params_changed) return;
    state.computed_for = state.params;
    try {
        state.lab = compute(state.params);
        state.error.clear();
        state.have = true;
        ++state.gen;
    } catch (const Error& e) {
        state.error = e.what();
    }
}

/// Draws an "Export PNG" button; when pressed, the current window is captured at the end of this
/// frame and written as <export_dir>/lab_<slug>_<timestamp>.png (atomic). The result (path or error)
/// goes to state.set_status and state.last_export_path.
void lab_export_button(AppState& state, const char* slug);

/// Crops the rectangle [x0, x1) × [y0, y1) (pixels, top row first) out of an RGBA image of
/// width × height, clipped to the image. Pure; unit-tested.
std::vector<unsigned char> crop_rgba(const std::vector<unsigned char>& rgba, int width, int height, int x0,
                                     int y0, int x1, int y1, int* out_w, int* out_h);

/// Name of a lab export file: "lab_<slug>_<timestamp>.png".
std::string lab_export_file_name(const std::string& slug, const std::string& timestamp);

// ---------------------------------------------------------------------------------------------
// The labs (one file each) and the registry (labs.cpp)
// ---------------------------------------------------------------------------------------------

/// Per-window context handed to a lab's draw function.
struct LabContext {
    int requested_tab = -1;  // >= 0: select this tab once (from `--lab NAME:TAB`)
    bool closing = false;    // the window was closed this frame: stop background work

    /// The lab's own state (its sliders, last results, background work), one object per lab window
    /// owned by the window's entry instead of a function-local static; created on first use.
    template <typename T>
    T& state() {
        if (!state_) state_ = std::make_shared<T>();
        return *static_cast<T*>(state_.get());
    }

  private:
    std::shared_ptr<void> state_;
};

void draw_lab_positional(AppState& state, LabContext& ctx);
void draw_lab_scoring(AppState& state, LabContext& ctx);
void draw_lab_temperature(AppState& state, LabContext& ctx);
void draw_lab_linear(AppState& state, LabContext& ctx);
void draw_lab_size(AppState& state, LabContext& ctx);
void draw_lab_heads(AppState& state, LabContext& ctx);
void draw_lab_training(AppState& state, LabContext& ctx);
void draw_lab_masks(AppState& state, LabContext& ctx);  // app/panels/lab_masks.cpp

/// Tab flags that select the tab when ctx asks for index `i` (and then clear the request).
int lab_tab_flags(LabContext& ctx, int i);

/// Labs with background work (the scaling sampler, the cost sweep) call this every frame while the
/// work runs, so the window keeps redrawing and `--screenshot` waits for the result.
void lab_mark_busy(AppState& state);

}  // namespace attnviz::app

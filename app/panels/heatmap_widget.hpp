// A reusable heatmap widget for the attnviz views (stage view, heads grid, compare view, labs).
//
// What it draws, in the region it is given:
//
//        ┌ column axis title ("key tokens") ┐
//        │   column labels (rotated when crowded, every k-th when very crowded)
//   row  │ ┌──────────────────────────────┐   ┌─┐ hi
//   axis │ │  the coloured matrix         │   │ │       colour bar with its range
//   title│ │  (GPU texture, zoom / pan)   │   │ │ lo
//        │ └──────────────────────────────┘   ▨ masked (−∞)
//
// Interaction: mouse wheel zooms about the cursor, left-drag pans, double-click resets the view.
// The widget reports the hovered cell and clicks; the caller decides what they mean (pin a row,
// toggle a custom-mask cell, focus a head, show a tooltip...). Masked (−∞) cells never show a number.
//
// Typical use (once per frame):
//
//     static HeatmapViewState view;                         // zoom/pan lives with the caller
//     const CachedMatrix& cm = cached_stage(*state.trace, state.trace_generation, stage_index);
//     HeatmapInput in = input_for(cm, &stage.rows, &stage.cols);
//     HeatmapResult r = heatmap_widget("main", view, in, HeatmapOptions{});
//     if (r.hovered) { ...tooltip for (r.row, r.col)... }
//
// Textures are cached by key (trace generation, stage index, variant) in a MatrixCache, so a matrix
// is uploaded once per trace, never per frame. One cache entry must not be shown twice in the same
// frame (each entry owns one offscreen colour target); use a different variant key for a second copy.
//
// The free functions at the top (view-window maths, label thinning, layout) are pure and unit-tested
// in tests/app/heatmap_widget_test.cpp; they need neither ImGui nor OpenGL.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/render/heatmap_texture.hpp"
#include "core/trace.hpp"
#include "io/colormap.hpp"

namespace attnviz::app {

// ---------------------------------------------------------------------------------------------
// Pure view maths (cell units: x = column, y = row; the window shows columns [x0, x1), rows [y0, y1))
// ---------------------------------------------------------------------------------------------

/// The whole matrix: columns [0, cols), rows [0, rows).
render::ViewWindow full_view(int rows, int cols);

/// Smallest number of cells a window may show along an axis (zooming stops there).
inline constexpr float kMinVisibleCells = 2.0f;

/// Keeps a window inside the matrix: each side at most the full extent and at least
/// min(kMinVisibleCells, extent); shifted (not shrunk) back inside when it pokes out.
render::ViewWindow clamp_view(render::ViewWindow v, int rows, int cols);

/// Zooms by `factor` (> 1 zooms in, < 1 zooms out) about the point (ax, ay) in cell units, which
/// stays under the cursor; the result is clamped with clamp_view().
render::ViewWindow zoom_view(const render::ViewWindow& v, int rows, int cols, float factor, float ax,
                             float ay);

/// Moves the window by (dx, dy) cells (positive = show cells further right / further down), clamped.
render::ViewWindow pan_view(const render::ViewWindow& v, int rows, int cols, float dx, float dy);

/// True when the window shows the whole matrix.
bool is_full_view(const render::ViewWindow& v, int rows, int cols);

/// The point in cell units under the pixel (px, py) of an image of size (w, h) whose top-left corner
/// is at (x, y) and which shows window v.
void pixel_to_cell(const render::ViewWindow& v, float x, float y, float w, float h, float px, float py,
                   float* cx, float* cy);

/// The cell (row, col) under a pixel, or false when the pixel is outside the image or the matrix.
bool cell_at_pixel(const render::ViewWindow& v, int rows, int cols, float x, float y, float w, float h,
                   float px, float py, int* row, int* col);

/// Label thinning: show every k-th label so that labels are at least `min_label_px` apart when one
/// cell is `px_per_cell` pixels. k is 1, 2, 5, 10, 20, 50, ... (labels stay on round indices, and
/// the same ones stay visible while panning).
int label_stride(float px_per_cell, float min_label_px);

/// A column label that is one character ("a", ".", "中"; the spaces around it aside): that character,
/// else "" (a word, or nothing but spaces).
std::string single_character_label(const std::string& label);

/// How a crowded column's label of one character is drawn, given the character's width in the
/// regular and the small font and the column's width in pixels: upright in the regular font when it
/// fits the column that way, else upright in the small font, else rotated like the words around it.
/// (A rotated ".", "," or "a" is hard to read, and a lone character needs no more room upright.)
enum class ColumnLabelFont { Rotated, UprightRegular, UprightSmall };
ColumnLabelFont single_character_font(float regular_w, float small_w, float px_per_col);

/// Size in pixels of the image for a window of (cells_w x cells_h) cells in an area of
/// (avail_w x avail_h) pixels. Cells are square when that leaves each side at least
/// `min_fill` of the area; otherwise the short side is stretched up to that fraction (a 4096 x 16
/// matrix would otherwise be a hairline).
struct ImageSize {
    float w = 0, h = 0;
};
ImageSize fit_image(float avail_w, float avail_h, float cells_w, float cells_h, float min_fill = 0.3f);

/// Text of a value for tooltips, colour-bar ticks and in-cell numbers: "−∞" for -inf, otherwise
/// `digits` significant digits with a typographic minus ("0.1235", "−12.5", "1.2e+04" for 4).
std::string format_value(float v, int digits = 4);

// ---------------------------------------------------------------------------------------------
// Cached matrices + GPU textures
// ---------------------------------------------------------------------------------------------

/// One matrix ready to draw: values (for hover and numbers), its colour range, and its texture.
struct CachedMatrix {
    std::shared_ptr<const Mat> M;  // rows x cols
    ColorRange range;              // from color_range_for (same as the exported figure)
    ValueKind kind = ValueKind::Signed;
    bool has_masked = false;           // any -inf cell
    std::shared_ptr<const Mat> shown;  // what the texture holds: M, or M with rows scaled (ScaleMode::Row)
    std::unique_ptr<render::HeatmapTexture> texture;
    bool uploaded = false;  // false: too large for the GPU (the widget says so)

    /// The reduction levels on the GPU (see HeatmapTexture::set_levels), computed off the UI thread
    /// for large matrices: `pending` holds the computation until a frame uploads it.
    struct Levels {
        bool uploaded = false;
        ReduceMode mode = ReduceMode::Max;
        std::future<std::vector<Mat>> pending;
        ReduceMode pending_mode = ReduceMode::Max;
    };
    mutable Levels levels;
    int last_used_frame = 0;

    /// What the colour target currently shows. The widget re-colours (runs the heatmap shader over
    /// every pixel of the image) only when one of these changes, not every frame: under software
    /// OpenGL that pass costs milliseconds per frame for a large image.
    struct Rendered {
        unsigned texture = 0;  // 0: nothing rendered yet
        ColorRange range;
        render::ViewWindow window;
        int width = 0, height = 0;
        render::Highlight highlight;
    };
    mutable Rendered rendered;
};

/// True when a colour target rendered with `r` can be shown again for these inputs.
bool same_rendering(const CachedMatrix::Rendered& r, const ColorRange& range,
                    const render::ViewWindow& window, int width, int height,
                    const render::Highlight& highlight);

/// Matrices keyed by a string; each entry is uploaded once when created. Entries not used for a
/// few frames are released (GPU memory follows what is on screen).
class MatrixCache {
  public:
    /// The entry for `key`, created with `make()` (and uploaded) on first use.
    /// `mode` chooses how weights map to colours (resolved per matrix; other kinds ignore it).
    CachedMatrix& get(const std::string& key, ValueKind kind,
                      const std::function<std::shared_ptr<const Mat>()>& make,
                      ScaleMode mode = ScaleMode::Auto);
    /// Releases entries unused for more than `max_idle_frames` frames (call once per frame).
    void evict(int current_frame, int max_idle_frames = 30);
    void clear() { entries_.clear(); }
    /// True while some entry's reduction levels are still being computed (a screenshot waits).
    bool busy() const;
    std::size_t size() const { return entries_.size(); }

  private:
    std::map<std::string, CachedMatrix> entries_;
};

/// Matrices with more cells than this get their reduction levels on a worker thread; smaller ones
/// at once (a few milliseconds).
inline constexpr Eigen::Index kSyncLevelCells = Eigen::Index(1) << 20;

/// Makes the texture of `cm` hold reduction levels of kind `mode`: starts their computation (on a
/// worker thread for large matrices) or uploads a finished one. Returns true when they are in place.
bool update_levels(const CachedMatrix& cm, ReduceMode mode);

/// The views' shared cache (released by shutdown_views()).
MatrixCache& view_cache();

/// The user's colour choices, shared by every view (the heatmap panel's selectors set them):
/// how weights map to colours, and how a zoomed-out view reduces the cells under one pixel.
struct ViewScale {
    ScaleMode mode = ScaleMode::Auto;
    ReduceMode reduce = ReduceMode::Max;
};
ViewScale& view_scale();

/// The app's own layout records (for the layout test): every labelled box a view draws this frame
/// (titles, axis titles, colour-bar captions, chart ticks), with the horizontal extent it must stay
/// inside. Cleared at the start of each frame (Shell), written to the state log as "layout".
struct LayoutBox {
    std::string id;
    float x = 0, y = 0, w = 0, h = 0;
    float clip_x0 = 0, clip_x1 = 0;  // the region the text belongs to
    /// The window it was drawn in: "main", or a lab's name (a lab window floats over the main
    /// view, so only boxes of one group may not overlap).
    std::string group = "main";
};
std::vector<LayoutBox>& layout_records();
inline void layout_record(const std::string& id, float x, float y, float w, float h, float clip_x0,
                          float clip_x1) {
    layout_records().push_back(LayoutBox{id, x, y, w, h, clip_x0, clip_x1});
}

/// A stage's matrix from view_cache(), keyed by (generation, stage index, variant). The weights of a
/// masked config come back with hidden keys as −∞ (drawn hatched, "masked"), not as plain zeros. `transposed`
/// shows the matrix transposed (Kᵀ for the linked view); `max_side` > 0 downsamples larger matrices
/// for thumbnails (block max of |value|, keeping -inf only when a whole block is masked).
const CachedMatrix& cached_stage(const Trace& trace, std::uint64_t generation, int stage_index,
                                 bool transposed = false, int max_side = 0);

/// Downsamples M so that no side exceeds max_side: each output cell is the value of largest |value|
/// in its block (a single bright cell survives); -inf only when the whole block is -inf.
Mat downsample_max_abs(const Mat& M, int max_side);

// ---------------------------------------------------------------------------------------------
// The widget
// ---------------------------------------------------------------------------------------------

/// Zoom/pan state, owned by the caller (one per on-screen heatmap). Reset automatically when the
/// matrix size changes.
struct HeatmapViewState {
    render::ViewWindow window;
    int rows = 0, cols = 0;
};

/// What to draw.
struct HeatmapInput {
    const CachedMatrix* matrix = nullptr;  // required
    const Axis* row_axis = nullptr;        // labels + title of rows (optional)
    const Axis* col_axis = nullptr;        // labels + title of columns (optional)
    bool transposed_axes = false;          // set when matrix is a transpose: labels swap
    const ColorRange* range = nullptr;     // colour range to use instead of matrix->range (a grid
                                           // of heads sharing one scale), optional
};

struct HeatmapOptions {
    float width = 0, height = 0;  // region to use; 0 = all available space
    bool labels = true;           // token/index labels on both axes
    bool row_labels = true;       // with labels: the row labels (left)
    bool col_labels = true;       // with labels: the column labels (top)
    bool axis_titles = true;
    bool colorbar = true;           // colour bar + masked legend
    bool compact_colorbar = false;  // narrower: no caption, the masked legend on two lines (presentation)
    bool numbers = true;            // values inside cells when they are large enough
    bool interactive = true;        // wheel zoom, drag pan, double-click reset
    float min_fill = 0.3f;          // see fit_image()
    bool row_label_click = true;    // row labels are clickable (reports row_label_clicked, "pin" tip)
    bool center = true;             // centre the picture horizontally when narrower than the region
    render::Highlight highlight;    // outline a row and/or column
    const char* title = nullptr;    // drawn above the image (e.g. "head 2"), optional
};

struct HeatmapResult {
    bool hovered = false;  // the mouse is over a cell (row, col valid)
    int row = -1, col = -1;
    bool clicked = false;        // left click (press+release without dragging) on cell (row, col)
    int row_label_clicked = -1;  // a row label was clicked (row index), else -1
    bool image_hovered = false;  // mouse over the widget's image area (also between cells)
    float img_x = 0, img_y = 0, img_w = 0, img_h = 0;  // where the image went (screen pixels)
    int labels_shown = 0, labels_cut = 0;  // axis labels drawn this frame, and those cut to fit ("…")
    int label_stride = 1;                  // every how many-th row label is drawn
    bool small_labels = false;             // the labels took the small font (all shown instead of every k-th)
    /// Crowded (rotated) column labels of one character drawn upright instead, in the regular / small
    /// font (single_character_font).
    int labels_upright = 0, labels_upright_small = 0;
};

/// Draws the heatmap in the current ImGui window and handles zoom/pan. Call once per frame.
HeatmapResult heatmap_widget(const char* id, HeatmapViewState& view, const HeatmapInput& input,
                             const HeatmapOptions& options);

/// A vertical colour bar (gradient + lo/mid/hi ticks) of size w x h at the cursor, plus the hatched
/// "masked (−∞)" swatch when `show_masked`. Used by the widget and by grids with a shared scale.
/// Its tick labels, caption and legend are layout records "<layout_id>.tick0", ".caption", ...
/// With `with_caption` false the scale's caption ("fixed 0–1") is left out (presentation mode).
void draw_colorbar(const ColorRange& range, float w, float h, bool show_masked,
                   const std::string& layout_id = "colorbar", bool with_caption = true);

/// Draws `text` rotated 90° counter-clockwise (reads bottom to top); `pos` is where the text starts
/// (its bottom-left corner once rotated, i.e. the text runs upwards from pos).
void add_text_vertical(ImDrawList* draw_list, ImVec2 pos, ImU32 color, const std::string& text);

}  // namespace attnviz::app

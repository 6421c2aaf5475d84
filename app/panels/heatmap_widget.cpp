// The heatmap widget: layout (labels, titles, colour bar), zoom/pan interaction and the texture
// cache. See heatmap_widget.hpp for the API; the pure maths is in heatmap_math.cpp.
// GCC 12 false positive inside its AVX-512 intrinsics when Eigen multiplies (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "app/panels/heatmap_widget.hpp"

#include "app/fonts.hpp"
#include "core/ops.hpp"

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>

#include <imgui.h>

namespace attnviz::app {

// ---------------------------------------------------------------------------------------------
// Cache
// ---------------------------------------------------------------------------------------------

CachedMatrix& MatrixCache::get(const std::string& key, ValueKind kind,
                               const std::function<std::shared_ptr<const Mat>()>& make, ScaleMode mode) {
    const std::string full_key = key + "|" + scale_mode_name(mode);
    auto it = entries_.find(full_key);
    if (it == entries_.end()) {
        CachedMatrix e;
        e.M = make();
        if (!e.M) e.M = std::make_shared<const Mat>(Mat::Zero(1, 1));
        e.kind = kind;
        e.range = color_range_for(kind, *e.M, mode);
        e.has_masked = (e.M->array() == -std::numeric_limits<float>::infinity()).any();
        e.texture = std::make_unique<render::HeatmapTexture>();
        // The one upload of this matrix: later frames only re-colour the window (render()). Per-row
        // scaling is applied here, so the GPU (and its reduction levels) colour rows already scaled.
        e.shown = e.range.mode == ScaleMode::Row
                      ? std::make_shared<const Mat>(prescale_for_display(*e.M, e.range))
                      : e.M;
        e.uploaded = e.texture->set_matrix(*e.shown);
        it = entries_.emplace(key, std::move(e)).first;
    }
    it->second.last_used_frame = ImGui::GetCurrentContext() ? ImGui::GetFrameCount() : 0;
    return it->second;
}

bool MatrixCache::busy() const {
    for (const auto& kv : entries_)
        if (kv.second.levels.pending.valid()) return true;
    return false;
}

bool update_levels(const CachedMatrix& cm, ReduceMode mode) {
    if (!cm.uploaded || !cm.texture || !cm.shown) return false;
    CachedMatrix::Levels& L = cm.levels;
    if (L.pending.valid()) {
        if (L.pending.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
        std::vector<Mat> levels = L.pending.get();  // levels 1, 2, ...
        if (L.pending_mode != mode) return false;   // the user switched meanwhile: start again below
        cm.texture->set_levels(levels);
        L.uploaded = true;
        L.mode = mode;
        cm.rendered.texture = 0;  // re-colour with the levels
        return true;
    }
    if (L.uploaded && L.mode == mode) return true;
    L.pending_mode = mode;
    if (cm.shown->size() <= kSyncLevelCells) {
        cm.texture->set_levels(reduction_levels(*cm.shown, mode));
        L.uploaded = true;
        L.mode = mode;
        cm.rendered.texture = 0;
        return true;
    }
    std::shared_ptr<const Mat> shown = cm.shown;
    L.pending = std::async(std::launch::async, [shown, mode] { return reduction_levels(*shown, mode); });
    return false;
}

void MatrixCache::evict(int current_frame, int max_idle_frames) {
    for (auto it = entries_.begin(); it != entries_.end();) {
        if (current_frame - it->second.last_used_frame > max_idle_frames) {
            it = entries_.erase(it);
        } else {
            ++it;
        }
    }
}

MatrixCache& view_cache() {
    static MatrixCache cache;
    return cache;
}

const CachedMatrix& cached_stage(const Trace& trace, std::uint64_t generation, int stage_index,
                                 bool transposed, int max_side) {
    const Stage& stage = trace.stages.at(std::size_t(stage_index));
    const std::string key = "stage:" + std::to_string(generation) + ":" + std::to_string(stage_index) +
                            (transposed ? ":T" : "") + ":" + std::to_string(max_side);
    return view_cache().get(
        key, stage.kind,
        [&]() -> std::shared_ptr<const Mat> {
            // Stored stages are shared without a copy; derived ones (scaled, masked) are computed once,
            // and weights with hidden keys get them as −∞ (hatched), as in the exported figure.
            const bool same_as_stored =
                stage.data && !(stage.name == "weights" && trace.config.mask != MaskKind::None);
            std::shared_ptr<const Mat> M =
                same_as_stored ? stage.data : std::make_shared<const Mat>(display_matrix(trace, stage));
            if (transposed) M = std::make_shared<const Mat>(M->transpose());
            if (max_side > 0 && (M->rows() > max_side || M->cols() > max_side)) {
                M = std::make_shared<const Mat>(downsample_max_abs(*M, max_side));
            }
            return M;
        },
        view_scale().mode);
}

// ---------------------------------------------------------------------------------------------
// Drawing helpers
// ---------------------------------------------------------------------------------------------

namespace {

ImU32 to_u32(Rgb8 c, int alpha = 255) {
    return IM_COL32(c.r, c.g, c.b, alpha);
}

// Truncates `s` (UTF-8) to fit `max_w` pixels, ending with "…" when cut.
std::string fit_text(const std::string& s, float max_w) {
    if (ImGui::CalcTextSize(s.c_str()).x <= max_w) return s;
    const char* ell = "\u2026";
    const float ell_w = ImGui::CalcTextSize(ell).x;
    std::size_t cut = s.size();
    while (cut > 0) {
        do {
            --cut;
        } while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80);  // stay on a code point
        if (ImGui::CalcTextSize(s.c_str(), s.c_str() + cut).x + ell_w <= max_w) break;
    }
    return s.substr(0, cut) + ell;
}

std::string axis_label(const Axis* axis, int i) {
    if (!axis) return std::to_string(i);
    return axis->label(i);
}

// When a long text's labels are thinned (every k-th), token labels get their index in front: the same
// word recurs, and "1400 the" says where we are. A short text (≤ kIndexedAxis tokens) keeps its words
// whole: max_label_width() leaves no room for an index there, which cut "brown" to "2 br…".
constexpr int kIndexedAxis = 32;
std::string thinned_label(const Axis* axis, int i, int stride) {
    std::string s = axis_label(axis, i);
    if (stride > 1 && axis && axis->size > kIndexedAxis && axis->kind != Axis::Kind::Dimension &&
        axis->kind != Axis::Kind::Single)
        s = std::to_string(i) + " " + s;
    return s;
}

std::string axis_title(const Axis* axis) {
    if (!axis) return {};
    return axis->name;
}

// Widest label of an axis (sampled for long axes so this stays cheap every frame), with room for an
// index prefix when the axis is long enough to be thinned.
float max_label_width(const Axis* axis, int count) {
    if (count <= 0) return 0;
    const int step = std::max(1, count / 256);
    float w = 0;
    // The first 128 labels, then a sample (a tiled text repeats, so the sample alone could miss words).
    for (int i = 0; i < std::min(count, 128); ++i)
        w = std::max(w, ImGui::CalcTextSize(axis_label(axis, i).c_str()).x);
    for (int i = 128; i < count; i += step)
        w = std::max(w, ImGui::CalcTextSize(axis_label(axis, i).c_str()).x);
    const bool tokens = axis && axis->kind != Axis::Kind::Dimension && axis->kind != Axis::Kind::Single;
    if (tokens && count > kIndexedAxis) w += ImGui::CalcTextSize((std::to_string(count) + " ").c_str()).x;
    return w;
}

// Light and dark colours of the hatch that marks masked cells (from the CPU colour map, so the
// legend matches the shader and the exported figures).
void hatch_colors(ImU32* light, ImU32* dark) {
    Rgb8 lo{255, 255, 255}, hi{0, 0, 0};
    int lo_l = 1 << 30, hi_l = -1;
    for (int x = 0; x < 8; ++x) {
        const Rgb8 c = masked_rgb(x, 0);
        const int l = int(c.r) + c.g + c.b;
        if (l < lo_l) lo_l = l, lo = c;
        if (l > hi_l) hi_l = l, hi = c;
    }
    *light = to_u32(hi);
    *dark = to_u32(lo);
}

void draw_hatch(ImDrawList* dl, ImVec2 a, ImVec2 b) {
    ImU32 light, dark;
    hatch_colors(&light, &dark);
    dl->AddRectFilled(a, b, light);
    dl->PushClipRect(a, b, true);
    const float h = b.y - a.y;
    for (float x = a.x - h; x < b.x; x += 8.0f) dl->AddLine(ImVec2(x, b.y), ImVec2(x + h, a.y), dark, 3.0f);
    dl->PopClipRect();
}

}  // namespace

void add_text_vertical(ImDrawList* dl, ImVec2 pos, ImU32 color, const std::string& text) {
    // Lay the glyphs out horizontally starting at pos, then rotate their vertices 90°
    // counter-clockwise about pos. RenderText with a huge clip rectangle keeps every glyph (the
    // usual culling would test the unrotated positions); the draw command keeps the current clip.
    const int start = dl->VtxBuffer.Size;
    ImGui::GetFont()->RenderText(dl, ImGui::GetFontSize(), pos, color, ImVec4(-1e6f, -1e6f, 1e6f, 1e6f),
                                 text.c_str(), text.c_str() + text.size());
    for (int i = start; i < dl->VtxBuffer.Size; ++i) {
        const ImVec2 p = dl->VtxBuffer[i].pos;
        const float dx = p.x - pos.x, dy = p.y - pos.y;
        dl->VtxBuffer[i].pos = ImVec2(pos.x + dy, pos.y - dx);
    }
}

void draw_colorbar(const ColorRange& range, float w, float h, bool show_masked, const std::string& layout_id,
                   bool with_caption) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float line = ImGui::GetTextLineHeight();
    const float bar_w = std::min(16.0f, w * 0.3f);
    // The masked legend on two lines ("masked" over "(−∞)") when one does not fit the bar's width.
    const char* legend = "masked (\u2212\u221e)";
    const bool two_lines = show_masked && bar_w + 6 + ImGui::CalcTextSize(legend).x > w + 0.5f;
    const float legend_h = show_masked ? line * (two_lines ? 2.6f : 1.6f) : 0.0f;
    const float bar_h = std::max(20.0f, h - legend_h - line);
    const float top = p.y + line * 0.5f;  // room for the top tick's text
    const int segments = 48;
    for (int s = 0; s < segments; ++s) {
        // s = 0 at the top (hi) ... segments-1 at the bottom (lo).
        const float t0 = 1.0f - float(s) / segments, t1 = 1.0f - float(s + 1) / segments;
        const ImU32 c0 = to_u32(colormap_rgb(range.map, t0)), c1 = to_u32(colormap_rgb(range.map, t1));
        const float y0 = top + bar_h * float(s) / segments, y1 = top + bar_h * float(s + 1) / segments;
        dl->AddRectFilledMultiColor(ImVec2(p.x, y0), ImVec2(p.x + bar_w, y1 + 0.5f), c0, c0, c1, c1);
    }
    const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
    dl->AddRect(ImVec2(p.x, top), ImVec2(p.x + bar_w, top + bar_h), ImGui::GetColorU32(ImGuiCol_Border));
    float ticks_w = 0.0f;
    for (int k = 0; k < 3; ++k) {
        const float y = top + bar_h * 0.5f * float(k);
        dl->AddLine(ImVec2(p.x + bar_w, y), ImVec2(p.x + bar_w + 4, y), text_col);
        const float f = 1.0f - 0.5f * float(k);
        const std::string tick =
            range.mode == ScaleMode::Row ? colorbar_tick(range, f) : format_value(colorbar_value(range, f));
        dl->AddText(ImVec2(p.x + bar_w + 6, y - line * 0.5f), text_col, tick.c_str());
        const float tick_w = ImGui::CalcTextSize(tick.c_str()).x;
        ticks_w = std::max(ticks_w, tick_w);
        // (a bar shorter than its three tick labels shows as overlapping records)
        layout_record(layout_id + ".tick" + std::to_string(k), p.x + bar_w + 6, y - line * 0.5f, tick_w, line,
                      p.x, p.x + w + 0.5f);
    }
    // Which scale is in use, written vertically beside the ticks ("per row: ÷ row max", "log ...").
    const std::string caption = with_caption ? scale_caption(range) : std::string();
    if (!caption.empty()) {
        // Never longer than the bar: "per row: ÷ row m…" rather than text over the legend below.
        const std::string fitted = fit_text(caption, bar_h);
        const float tw = ImGui::CalcTextSize(fitted.c_str()).x;
        const float cx = std::min(p.x + bar_w + 10 + ticks_w, p.x + w - line);
        const float bottom = top + std::min(bar_h, (bar_h + tw) * 0.5f);
        add_text_vertical(dl, ImVec2(cx, bottom), ImGui::GetColorU32(ImGuiCol_TextDisabled), fitted);
        layout_record(layout_id + ".caption", cx, bottom - tw, line, tw, p.x, p.x + w + 0.5f);
    }
    if (show_masked) {
        const float y = top + bar_h + line * 0.6f;
        draw_hatch(dl, ImVec2(p.x, y), ImVec2(p.x + bar_w, y + line));
        dl->AddRect(ImVec2(p.x, y), ImVec2(p.x + bar_w, y + line), ImGui::GetColorU32(ImGuiCol_Border));
        if (two_lines) {
            dl->AddText(ImVec2(p.x + bar_w + 6, y), text_col, "masked");
            dl->AddText(ImVec2(p.x + bar_w + 6, y + line), text_col, "(\u2212\u221e)");
            layout_record(layout_id + ".masked", p.x, y, bar_w + 6 + ImGui::CalcTextSize("masked").x,
                          2 * line, p.x, p.x + w + 0.5f);
        } else {
            dl->AddText(ImVec2(p.x + bar_w + 6, y), text_col, legend);
            layout_record(layout_id + ".masked", p.x, y, bar_w + 6 + ImGui::CalcTextSize(legend).x, line, p.x,
                          p.x + w + 0.5f);
        }
    }
    ImGui::Dummy(ImVec2(w, h));
}

// ---------------------------------------------------------------------------------------------
// The widget
// ---------------------------------------------------------------------------------------------

HeatmapResult heatmap_widget(const char* id, HeatmapViewState& view, const HeatmapInput& input,
                             const HeatmapOptions& opt) {
    HeatmapResult result;
    if (!input.matrix || !input.matrix->M) return result;
    const CachedMatrix& cm = *input.matrix;
    const Mat& M = *cm.M;  // rows x cols
    const ColorRange& range = input.range ? *input.range : cm.range;
    const int rows = int(M.rows()), cols = int(M.cols());
    const Axis* row_axis = input.transposed_axes ? input.col_axis : input.row_axis;
    const Axis* col_axis = input.transposed_axes ? input.row_axis : input.col_axis;
    // A downsampled thumbnail has fewer cells than its axes: labels would be wrong, so hide them.
    const bool labels_match = (!row_axis || row_axis->size == rows) && (!col_axis || col_axis->size == cols);

    if (view.rows != rows || view.cols != cols) {
        view.rows = rows;
        view.cols = cols;
        view.window = full_view(rows, cols);
    }
    view.window = clamp_view(view.window, rows, cols);

    ImGui::PushID(id);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImGuiStyle& style = ImGui::GetStyle();
    const float line = ImGui::GetTextLineHeight();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const ImVec2 region(opt.width > 0 ? opt.width : avail.x, opt.height > 0 ? opt.height : avail.y);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
    const ImU32 dim_col = ImGui::GetColorU32(ImGuiCol_TextDisabled);

    const bool row_labels = opt.labels && opt.row_labels && labels_match;
    const bool col_labels = opt.labels && opt.col_labels && labels_match;
    const float win_w = view.window.x1 - view.window.x0, win_h = view.window.y1 - view.window.y0;

    // --- margins ---------------------------------------------------------------------------
    const float title_h = opt.title ? line + style.ItemSpacing.y : 0.0f;
    const float row_title_w = (opt.axis_titles && row_axis) ? line + 4 : 0.0f;
    const float col_title_h = (opt.axis_titles && col_axis) ? line + 4 : 0.0f;
    // Label bands grow with the text (a word of 8 letters at UI scale 2 is twice as wide), up to a cap.
    const float fs = ImGui::GetFontSize();
    const float row_label_w =
        row_labels ? std::min(max_label_width(row_axis, rows) + 8, std::max(120.0f, 8.0f * fs)) : 0.0f;
    // The colour bar's width: its bar, the widest tick (or the masked legend when it shows) and the
    // caption beside them -- what draw_colorbar draws, so a wide screen gives the rest to the picture.
    float colorbar_w = 0;
    if (opt.colorbar) {
        float text_w = cm.has_masked
                           ? ImGui::CalcTextSize(opt.compact_colorbar ? "masked" : "masked (\u2212\u221e)").x
                           : 0.0f;
        for (float f : {1.0f, 0.5f, 0.0f}) {
            const std::string tick = range.mode == ScaleMode::Row ? colorbar_tick(range, f)
                                                                  : format_value(colorbar_value(range, f));
            text_w = std::max(text_w, ImGui::CalcTextSize(tick.c_str()).x);
        }
        colorbar_w = std::max(60.0f, text_w + 34) +
                     (opt.compact_colorbar || scale_caption(range).empty() ? 0.0f : line + 8.0f);
    }
    const float max_col_label = col_labels ? max_label_width(col_axis, cols) : 0.0f;

    // First pass with one line of horizontal column labels; if they do not fit their cells, the
    // labels are turned vertical and the top margin grows.
    float col_label_h = col_labels ? line + 4 : 0.0f;
    auto image_area = [&](float top_margin) {
        return ImVec2(std::max(1.0f, region.x - row_title_w - row_label_w - colorbar_w - 8),
                      std::max(1.0f, region.y - title_h - top_margin - 4));
    };
    ImVec2 area = image_area(col_title_h + col_label_h);
    ImageSize img = fit_image(area.x, area.y, win_w, win_h, opt.min_fill);
    bool vertical_cols = false;
    if (col_labels && img.w / win_w < max_col_label + 3) {
        vertical_cols = true;
        col_label_h = std::min(max_col_label, std::max(90.0f, 6.0f * fs)) + 8;
        area = image_area(col_title_h + col_label_h);
        img = fit_image(area.x, area.y, win_w, win_h, opt.min_fill);
    }
    img.w = std::max(1.0f, std::floor(img.w));
    img.h = std::max(1.0f, std::floor(img.h));

    const float px_col = img.w / win_w, px_row = img.h / win_h;  // pixels per cell
    // Centre the whole picture (labels + image + colour bar) when it is narrower than the region.
    const float used_w = row_title_w + row_label_w + img.w + colorbar_w + 8;
    const float shift_x = opt.center ? std::max(0.0f, std::floor((region.x - used_w) * 0.5f)) : 0.0f;
    const ImVec2 left(origin.x + shift_x, origin.y);
    const ImVec2 img_min(left.x + row_title_w + row_label_w, origin.y + title_h + col_title_h + col_label_h);
    const ImVec2 img_max(img_min.x + img.w, img_min.y + img.h);
    result.img_x = img_min.x;
    result.img_y = img_min.y;
    result.img_w = img.w;
    result.img_h = img.h;

    // --- title -----------------------------------------------------------------------------
    if (opt.title) {
        // Centred over the image but kept inside the widget's own region (two widgets side by side
        // must not write over each other's titles at small sizes or large UI scales): "…" when cut.
        const std::string title = fit_text(opt.title, region.x);
        const float tw = ImGui::CalcTextSize(title.c_str()).x;
        const float x = std::clamp(img_min.x + (img.w - tw) * 0.5f, origin.x, origin.x + region.x - tw);
        dl->AddText(ImVec2(x, origin.y), text_col, title.c_str());
        layout_record(std::string(id) + ".title", x, origin.y, tw, line, origin.x, origin.x + region.x);
    }

    // --- the image -------------------------------------------------------------------------
    const ImVec2 fb_scale = ImGui::GetIO().DisplayFramebufferScale;
    if (cm.uploaded && cm.texture) {
        const int tw = std::max(1, int(std::lround(img.w * fb_scale.x)));
        const int th = std::max(1, int(std::lround(img.h * fb_scale.y)));
        update_levels(cm, view_scale().reduce);
        CachedMatrix::Rendered& done = cm.rendered;
        if (!same_rendering(done, range, view.window, tw, th, opt.highlight)) {
            done.texture = cm.texture->render(display_range(range), view.window, tw, th, opt.highlight);
            done.range = range;
            done.window = view.window;
            done.width = tw;
            done.height = th;
            done.highlight = opt.highlight;
        }
        const unsigned tex = done.texture;
        dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(tex)), img_min, img_max);
    } else {
        dl->AddRectFilled(img_min, img_max, ImGui::GetColorU32(ImGuiCol_FrameBg));
        dl->AddText(ImVec2(img_min.x + 6, img_min.y + 6), text_col,
                    "This matrix is larger than the GPU's texture limit; export it as .npy instead.");
    }
    dl->AddRect(ImVec2(img_min.x - 1, img_min.y - 1), ImVec2(img_max.x + 1, img_max.y + 1),
                ImGui::GetColorU32(ImGuiCol_Border));

    // --- interaction on the image -----------------------------------------------------------
    ImGui::SetCursorScreenPos(img_min);
    ImGui::InvisibleButton("##cells", ImVec2(img.w, img.h));
    const bool item_hovered = ImGui::IsItemHovered();
    const ImGuiIO& io = ImGui::GetIO();
    result.image_hovered = item_hovered;
    if (item_hovered) {
        result.hovered = cell_at_pixel(view.window, rows, cols, img_min.x, img_min.y, img.w, img.h,
                                       io.MousePos.x, io.MousePos.y, &result.row, &result.col);
        if (!result.hovered) result.row = result.col = -1;
    }
    if (opt.interactive) {
        if (item_hovered && io.MouseWheel != 0.0f) {
            float ax = 0, ay = 0;
            pixel_to_cell(view.window, img_min.x, img_min.y, img.w, img.h, io.MousePos.x, io.MousePos.y, &ax,
                          &ay);
            view.window = zoom_view(view.window, rows, cols, std::pow(1.25f, io.MouseWheel), ax, ay);
        }
        if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
            ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeAll);
            view.window =
                pan_view(view.window, rows, cols, -io.MouseDelta.x / px_col, -io.MouseDelta.y / px_row);
        }
        if (item_hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left))
            view.window = full_view(rows, cols);
    }
    if (ImGui::IsItemDeactivated() && result.hovered) {
        const ImVec2 drag = ImGui::GetMouseDragDelta(ImGuiMouseButton_Left, 0.0f);
        if (drag.x * drag.x + drag.y * drag.y < 16.0f) result.clicked = true;  // a click, not a pan
    }

    const render::ViewWindow& w = view.window;
    const int c_first = std::max(0, int(std::floor(w.x0))),
              c_last = std::min(cols - 1, int(std::ceil(w.x1)) - 1);
    const int r_first = std::max(0, int(std::floor(w.y0))),
              r_last = std::min(rows - 1, int(std::ceil(w.y1)) - 1);
    auto cell_x = [&](float c) { return img_min.x + (c - w.x0) * px_col; };
    auto cell_y = [&](float r) { return img_min.y + (r - w.y0) * px_row; };

    // --- numbers inside cells (never for masked cells) --------------------------------------
    if (opt.numbers) {
        const float need_w = ImGui::CalcTextSize("\u22120.00").x + 6;
        if (px_col >= need_w && px_row >= line + 2 &&
            (c_last - c_first + 1) * (r_last - r_first + 1) <= 4096) {
            dl->PushClipRect(img_min, img_max, true);
            auto row_max = [&](int r) {
                float best = 0.0f;
                for (int c = 0; c < cols; ++c)
                    if (std::isfinite(M(r, c))) best = std::max(best, M(r, c));
                return best;
            };
            for (int r = r_first; r <= r_last; ++r) {
                for (int c = c_first; c <= c_last; ++c) {
                    const float v = M(r, c);
                    if (std::isinf(v) && v < 0) continue;  // masked: the hatch says it all
                    const Rgb8 bg = value_rgb(range, v, range.mode == ScaleMode::Row ? row_max(r) : 1.0f);
                    const float lum = 0.2126f * bg.r + 0.7152f * bg.g + 0.0722f * bg.b;
                    const ImU32 ink = lum > 140 ? IM_COL32(20, 20, 20, 255) : IM_COL32(245, 245, 245, 255);
                    std::string s = format_value(v, 3);
                    ImVec2 ts = ImGui::CalcTextSize(s.c_str());
                    if (ts.x + 4 > px_col) {  // "0.00896" in a narrow cell: fewer digits, or none
                        s = format_value(v, 2);
                        ts = ImGui::CalcTextSize(s.c_str());
                        if (ts.x + 2 > px_col) continue;
                    }
                    dl->AddText(ImVec2(cell_x(c + 0.5f) - ts.x * 0.5f, cell_y(r + 0.5f) - ts.y * 0.5f), ink,
                                s.c_str());
                }
            }
            dl->PopClipRect();
        }
    }

    // --- hovered cell outline ---------------------------------------------------------------
    if (result.hovered) {
        const ImVec2 a(cell_x(float(result.col)), cell_y(float(result.row)));
        const ImVec2 b(cell_x(float(result.col + 1)), cell_y(float(result.row + 1)));
        dl->PushClipRect(img_min, img_max, true);
        dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), IM_COL32(0, 0, 0, 255), 0, 0, 3.0f);
        dl->AddRect(a, b, IM_COL32(255, 255, 255, 255), 0, 0, 1.5f);
        dl->PopClipRect();
    }

    // --- labels ----------------------------------------------------------------------------
    const ImU32 hot_col = ImGui::GetColorU32(ImGuiCol_PlotHistogramHovered);
    // With every k-th label shown, the pinned (highlighted) row and column keep theirs: a learner told
    // to look at a word finds it. Their neighbours closer than k give way, so no two labels meet.
    auto labelled = [](int i, int stride, int hot) {
        if (stride <= 1 || hot < 0) return i % std::max(1, stride) == 0;
        if (i == hot) return true;
        return i % stride == 0 && std::abs(i - hot) >= stride;
    };
    // When the regular font would label only every other row (or column) and the small one labels
    // every one, the labels take the small font: a learner told to look at "fluffy" finds its column.
    // (A label needs about 0.85 of its font's size: the glyphs do not fill the line.)
    ImFont* small_font = app_font(FontRole::Small);
    const float small_px = small_font ? 0.85f * small_font->FontSize : line;
    auto small_helps = [&](bool shown, float px) {
        return shown && label_stride(px, line) > 1 && label_stride(px, small_px) == 1;
    };
    const bool small_labels =
        small_font && (small_helps(row_labels, px_row) || small_helps(col_labels && vertical_cols, px_col));
    const float label_px = small_labels ? small_px : line;  // a label's spacing
    const float label_line = small_labels ? small_font->FontSize : line;
    // (column labels that stand upright are drawn in a font of their own, whichever is pushed)
    ImFont* const regular_font = ImGui::GetFont();
    const float regular_size = ImGui::GetFontSize();
    auto text_w = [](ImFont* font, float size, const std::string& s) {
        return font ? font->CalcTextSizeA(size, FLT_MAX, 0.0f, s.c_str()).x : 0.0f;
    };
    if (small_labels) ImGui::PushFont(small_font);
    result.small_labels = small_labels;
    if (row_labels) {
        // Row labels, right-aligned against the image; every k-th when rows are small.
        const int rs = label_stride(px_row, label_px);
        result.label_stride = rs;
        const ImVec2 clip_a(left.x, img_min.y - line), clip_b(img_min.x, img_max.y + line);
        dl->PushClipRect(clip_a, clip_b, true);
        for (int r = r_first; r <= r_last; ++r) {
            if (!labelled(r, rs, opt.highlight.row)) continue;
            const std::string full = thinned_label(row_axis, r, rs);
            const std::string s = fit_text(full, row_label_w - 8);
            ++result.labels_shown;
            if (s != full) ++result.labels_cut;
            const ImVec2 ts = ImGui::CalcTextSize(s.c_str());
            const bool hot = r == result.row || r == opt.highlight.row;
            dl->AddText(ImVec2(img_min.x - 6 - ts.x, cell_y(r + 0.5f) - ts.y * 0.5f),
                        hot ? hot_col : text_col, s.c_str());
        }
        dl->PopClipRect();
    }
    if (col_labels) {
        // Column labels above the image.
        const int cs = vertical_cols ? label_stride(px_col, label_px) : 1;
        const ImVec2 top_a(img_min.x - line, img_min.y - col_label_h), top_b(img_max.x + line, img_min.y);
        dl->PushClipRect(top_a, top_b, true);
        for (int c = c_first; c <= c_last; ++c) {
            if (!labelled(c, cs, opt.highlight.col)) continue;
            const bool hot = c == result.col || c == opt.highlight.col;
            const ImU32 col = hot ? hot_col : text_col;
            if (vertical_cols) {
                const std::string full = thinned_label(col_axis, c, cs);
                // One character stands upright, in the largest font its column holds.
                const std::string ch = single_character_label(full);
                const ColumnLabelFont upright =
                    ch.empty() ? ColumnLabelFont::Rotated
                               : single_character_font(
                                     text_w(regular_font, regular_size, ch),
                                     text_w(small_font, small_font ? small_font->FontSize : 0, ch), px_col);
                ++result.labels_shown;
                if (upright != ColumnLabelFont::Rotated) {
                    const bool regular = upright == ColumnLabelFont::UprightRegular;
                    ImFont* font = regular ? regular_font : small_font;
                    const float size = regular ? regular_size : small_font->FontSize;
                    const float w = text_w(font, size, ch);
                    dl->AddText(font, size, ImVec2(cell_x(c + 0.5f) - w * 0.5f, img_min.y - 4 - size), col,
                                ch.c_str());
                    ++(regular ? result.labels_upright : result.labels_upright_small);
                    continue;
                }
                const std::string s = fit_text(full, col_label_h - 8);
                if (s != full) ++result.labels_cut;
                add_text_vertical(dl, ImVec2(cell_x(c + 0.5f) - label_line * 0.5f, img_min.y - 4), col, s);
            } else {
                // (horizontal labels fit their columns in the regular font, whatever the rows need)
                const std::string s = axis_label(col_axis, c);
                ++result.labels_shown;
                const float w = text_w(regular_font, regular_size, s);
                dl->AddText(regular_font, regular_size,
                            ImVec2(cell_x(c + 0.5f) - w * 0.5f, img_min.y - 2 - regular_size), col,
                            s.c_str());
            }
        }
        dl->PopClipRect();
    }
    if (small_labels) ImGui::PopFont();
    if (row_labels) {
        // Clicking a row label reports that row (pinning works in every mode, even mask editing).
        ImGui::SetCursorScreenPos(ImVec2(img_min.x - row_label_w, img_min.y));
        ImGui::InvisibleButton("##rowlabels", ImVec2(std::max(1.0f, row_label_w), img.h));
        if (opt.row_label_click && ImGui::IsItemHovered()) {
            int r = -1, c = -1;
            if (cell_at_pixel(view.window, rows, cols, img_min.x, img_min.y, img.w, img.h, img_min.x + 1,
                              io.MousePos.y, &r, &c)) {
                ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
                if (ImGui::IsItemClicked(ImGuiMouseButton_Left)) result.row_label_clicked = r;
                ImGui::SetTooltip("row %d \u201c%s\u201d \u2014 click to %s this row", r,
                                  axis_label(row_axis, r).c_str(), r == opt.highlight.row ? "unpin" : "pin");
            }
        }
    }

    // --- axis titles -----------------------------------------------------------------------
    // Each kept inside its own extent ("…" when cut): the column title within the widget's region
    // right of the row labels, the vertical row title along the image's height.
    if (opt.axis_titles && col_axis) {
        std::string t = axis_title(col_axis) + "  (" + std::to_string(cols) + ")";
        if (!is_full_view(view.window, rows, cols)) t += "   zoomed \u2014 double-click to reset";
        const float room = origin.x + region.x - img_min.x;
        t = fit_text(t, room);
        const float tw = ImGui::CalcTextSize(t.c_str()).x;
        const float x = img_min.x + std::clamp((img.w - tw) * 0.5f, 0.0f, std::max(0.0f, room - tw));
        dl->AddText(ImVec2(x, origin.y + title_h), dim_col, t.c_str());
        layout_record(std::string(id) + ".col_title", x, origin.y + title_h, tw, line, origin.x,
                      origin.x + region.x);
    }
    if (opt.axis_titles && row_axis) {
        const std::string t = fit_text(axis_title(row_axis) + "  (" + std::to_string(rows) + ")", img.h);
        const float tw = ImGui::CalcTextSize(t.c_str()).x;
        const float bottom = img_min.y + std::min(img.h, (img.h + tw) * 0.5f);
        add_text_vertical(dl, ImVec2(left.x, bottom), dim_col, t);
        layout_record(std::string(id) + ".row_title", left.x, bottom - tw, line, tw, origin.x,
                      origin.x + region.x);
    }
    // The image with its column labels above it (the labels' band, vertical or not).
    layout_record(std::string(id) + ".image", img_min.x, img_min.y - col_label_h, img.w, img.h + col_label_h,
                  origin.x, origin.x + region.x);

    // --- colour bar ------------------------------------------------------------------------
    // As tall as the image, but never too short for its three tick labels (and the masked legend):
    // beside a short, wide image it reaches below it.
    float colorbar_h = 0.0f;
    if (opt.colorbar) {
        colorbar_h = std::max(
            img.h, 3.5f * line + (cm.has_masked ? (opt.compact_colorbar ? 2.6f : 1.6f) * line : 0.0f));
        ImGui::SetCursorScreenPos(ImVec2(img_max.x + 12, img_min.y));
        draw_colorbar(range, colorbar_w - 12, colorbar_h, cm.has_masked, std::string(id) + ".colorbar",
                      !opt.compact_colorbar);
    }

    // Reserve the whole region so the caller's layout continues below it.
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(ImVec2(region.x, title_h + col_title_h + col_label_h + std::max(img.h, colorbar_h) + 4));
    ImGui::PopID();
    return result;
}

}  // namespace attnviz::app

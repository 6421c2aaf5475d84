// The main view: a switch between the stage heatmap, the heads grid and the softmax-vs-linear
// compare view; and the stage heatmap itself with hover derivations, a pinned query row (bar chart
// of its weights plus the Q row and Kᵀ column that made them), and custom-mask editing.
// GCC 12 false positive inside its AVX-512 intrinsics when Eigen multiplies (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <future>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/compute_worker.hpp"
#include "app/head_labels.hpp"
#include "app/panels/heatmap_widget.hpp"
#include "app/panels/panels.hpp"
#include "app/panels/view_state.hpp"
#include "app/panels/views_internal.hpp"
#include "core/explain.hpp"
#include "core/ops.hpp"

namespace attnviz::app {

int current_stage_index(const AppState& state) {
    if (!state.trace) return -1;
    const Stage* s = current_stage(state);
    if (!s || state.trace->stages.empty()) return -1;
    const std::ptrdiff_t i = s - state.trace->stages.data();
    return (i >= 0 && i < std::ptrdiff_t(state.trace->stages.size())) ? int(i) : -1;
}

bool go_to_stage(AppState& state, const std::string& name) {
    return select_stage(state, name);
}

namespace {

// The stages whose cells are (query i, key j) attention scores or weights: where custom-mask
// clicks make sense.
bool is_attention_matrix(const Stage& st) {
    return (st.name == "scores" || st.name == "scaled" || st.name == "masked" || st.name == "weights") &&
           st.rows.kind == Axis::Kind::QueryTokens && st.cols.kind == Axis::Kind::KeyTokens;
}

// "query 3 “creature”", "key 1 “fluffy”", "d_k 5".
std::string describe(const Axis& axis, int i) {
    const std::string idx = std::to_string(i);
    switch (axis.kind) {
        case Axis::Kind::QueryTokens:
            return "query " + idx + " \u201c" + axis.label(i) + "\u201d";
        case Axis::Kind::KeyTokens:
            return "key " + idx + " \u201c" + axis.label(i) + "\u201d";
        case Axis::Kind::Vocabulary:
            return "vocabulary " + idx + " \u201c" + axis.label(i) + "\u201d";
        case Axis::Kind::Dimension:
            return axis.name + " " + idx;
        case Axis::Kind::Single:
            return axis.name.empty() ? std::string("value") : axis.name;
    }
    return idx;
}

// explain_cell() for the hovered cell, computed once per (trace, stage, cell) rather than per frame,
// and off the GUI thread: for a 4096-token trace it copies whole n×m matrices (tens of ms), which
// would stall every frame while the mouse sweeps over cells. A request waits a moment for its
// answer (small traces answer within it, so their tooltip never flickers); otherwise the tooltip
// says it is working and a later frame shows the lines. `*pending` is set while an answer is due.
const std::vector<std::string>& explain_cached(AppState& state, int stage_index, int i, int j,
                                               bool* pending) {
    struct Key {
        std::uint64_t gen = ~0ull;
        int si = -1, i = -1, j = -1;
        bool operator==(const Key& o) const { return gen == o.gen && si == o.si && i == o.i && j == o.j; }
    };
    static Key shown_key, running_key;
    static std::vector<std::string> shown;
    static std::future<std::vector<std::string>> running;
    static const std::vector<std::string> working = {"(working out how this cell was made\u2026)"};
    const Key want{state.trace_generation, stage_index, i, j};
    *pending = false;
    if (want == shown_key) return shown;

    if (!running.valid()) {
        running_key = want;
        std::shared_ptr<const Trace> trace = state.trace;  // kept alive while the thread reads it
        running = std::async(std::launch::async, [trace, stage_index, i, j] {
            lower_priority_of_this_thread("attnviz-explain");
            try {
                return explain_cell(*trace, stage_index, i, j);
            } catch (const std::exception& e) {
                return std::vector<std::string>{std::string("(no derivation: ") + e.what() + ")"};
            }
        });
    }
    if (running.wait_for(std::chrono::milliseconds(3)) == std::future_status::ready) {
        std::vector<std::string> lines = running.get();
        if (running_key == want) {
            shown_key = want;
            shown = std::move(lines);
            return shown;
        }
        // The mouse moved on while it was computed: ask for the current cell next frame.
    }
    *pending = true;
    return working;
}

void cell_tooltip(AppState& state, int stage_index, const Stage& st, const Mat& M, int i, int j) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36.0f);
    ImGui::Text("%s  \u2192  %s", describe(st.rows, i).c_str(), describe(st.cols, j).c_str());
    const float v = M(i, j);
    const std::string where = st.name + "[" + std::to_string(i) + ", " + std::to_string(j) + "]";
    const ImVec4 warm(1.0f, 0.75f, 0.4f, 1.0f);
    if (std::isinf(v) && v < 0) {
        if (st.name == "weights") {
            ImGui::TextColored(warm, "%s = 0   masked: score \u2212\u221e \u2192 weight exactly 0",
                               where.c_str());
        } else {
            ImGui::TextColored(warm, "%s  masked: \u2212\u221e \u2192 weight 0", where.c_str());
        }
    } else {
        ImGui::Text("%s = %.6g", where.c_str(), double(v));
        if (is_attention_matrix(st) && masked(state.trace->config, i, j)) {
            ImGui::TextColored(
                warm, "the mask hides this key from this query: the next stage sets it to \u2212\u221e");
        }
    }
    bool pending = false;
    const std::vector<std::string>& lines = explain_cached(state, stage_index, i, j, &pending);
    if (pending) state.redraw_soon = true;  // keep drawing until the answer can be shown
    if (!lines.empty()) {
        ImGui::Separator();
        for (const std::string& l : lines) ImGui::TextUnformatted(l.c_str());
    }
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
}

// Bar chart of one row of a matrix (the pinned query's weights over the keys), in a w x h box at the
// cursor. Returns the column under the mouse, or -1.
int draw_row_chart(const Stage& st, const CachedMatrix& cm, int row, float w, float h, int emphasise_col) {
    const Mat& M = *cm.M;  // n x m
    const int m = int(M.cols());
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float line = ImGui::GetTextLineHeight();
    const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
    const ImU32 dim_col = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    const ImU32 hot_col = ImGui::GetColorU32(ImGuiCol_PlotHistogramHovered);

    // Value axis: from min(0, row min) to max(0, row max), so bars grow from a visible zero line.
    float lo = 0, hi = 0;
    for (int j = 0; j < m; ++j) {
        const float v = M(row, j);
        if (!std::isfinite(v)) continue;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    if (hi <= lo) hi = lo + 1.0f;
    const float tick_hi = hi, tick_lo = lo;
    // Headroom for the value printed above the tallest bar (and below the lowest).
    const float pad = 0.15f * (hi - lo);
    if (hi > 0) hi += pad;
    if (lo < 0) lo -= pad;

    // Key labels below the bars: horizontal when they fit, vertical (and thinned) otherwise.
    const ImVec2 p = ImGui::GetCursorScreenPos();
    // Room for the value ticks at any UI scale ("0.665" must not run off the left edge).
    const float left = 10.0f + std::max({ImGui::CalcTextSize(format_value(tick_hi, 3).c_str()).x,
                                         ImGui::CalcTextSize(format_value(tick_lo, 3).c_str()).x,
                                         ImGui::CalcTextSize("0.00").x});
    const float bw = (w - left - 8) / float(std::max(m, 1));
    float max_w = 0;
    for (int j = 0; j < m; j += std::max(1, m / 256))
        max_w = std::max(max_w, ImGui::CalcTextSize(st.cols.label(j).c_str()).x);
    const bool vertical = max_w + 4 > bw;
    const float label_h = vertical ? std::min(max_w, 80.0f) + 6 : line + 4;
    const ImVec2 a(p.x + left, p.y + line * 0.5f), b(p.x + w - 8, p.y + h - label_h);
    if (b.x - a.x < 20 || b.y - a.y < 20) {
        ImGui::Dummy(ImVec2(w, h));
        return -1;
    }
    auto y_of = [&](float v) { return b.y - (v - lo) / (hi - lo) * (b.y - a.y); };
    const float zero_y = y_of(0.0f);

    dl->AddRectFilled(a, b, ImGui::GetColorU32(ImGuiCol_FrameBg));
    dl->AddLine(ImVec2(a.x, zero_y), ImVec2(b.x, zero_y), dim_col);
    for (float t : {tick_lo, tick_hi}) {
        const std::string s = format_value(t, 3);
        const float tw = ImGui::CalcTextSize(s.c_str()).x;
        dl->AddText(ImVec2(a.x - 6 - tw, y_of(t) - line * 0.5f), dim_col, s.c_str());
        layout_record(t == tick_lo ? "chart.tick_lo" : "chart.tick_hi", a.x - 6 - tw, y_of(t) - line * 0.5f,
                      tw, line, p.x, p.x + w);
    }

    const ImVec2 mouse = ImGui::GetIO().MousePos;
    int hovered = -1;
    if (ImGui::IsWindowHovered() && mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < p.y + h) {
        hovered = std::clamp(int((mouse.x - a.x) / bw), 0, m - 1);
    }
    // When keys outnumber pixels, each pixel column shows the largest bar it covers.
    const int step = bw >= 1.0f ? 1 : int(std::ceil(1.0f / bw));
    dl->PushClipRect(ImVec2(a.x, a.y - line * 0.5f), ImVec2(b.x, b.y + 1), true);
    for (int j0 = 0; j0 < m; j0 += step) {
        float v = 0;
        bool any = false;
        for (int j = j0; j < std::min(m, j0 + step); ++j) {
            const float x = M(row, j);
            if (std::isfinite(x) && (!any || std::abs(x) > std::abs(v))) v = x, any = true;
        }
        const float x0 = a.x + float(j0) * bw, x1 = a.x + float(j0 + step) * bw - (bw > 4 ? 1.0f : 0.0f);
        if (!any) {  // masked key: a hatched stub instead of a bar
            const Rgb8 c = masked_rgb(0, 0);
            dl->AddRectFilled(ImVec2(x0, zero_y - 5), ImVec2(x1, zero_y), IM_COL32(c.r, c.g, c.b, 255));
            continue;
        }
        const Rgb8 c = value_rgb(cm.range, v);
        const ImVec2 r0(x0, std::min(zero_y, y_of(v))), r1(x1, std::max(zero_y, y_of(v)) + 0.5f);
        dl->AddRectFilled(r0, r1, IM_COL32(c.r, c.g, c.b, 255));
        const bool hot =
            (hovered >= j0 && hovered < j0 + step) || (emphasise_col >= j0 && emphasise_col < j0 + step);
        if (hot) dl->AddRect(ImVec2(r0.x - 1, r0.y - 1), ImVec2(r1.x + 1, r1.y + 1), hot_col, 0, 0, 2.0f);
        // The value above (or below, if negative) the bar when it fits the bar's width.
        const std::string s = st.kind == ValueKind::Probability ? [&] {
            char buf[16];
            std::snprintf(buf, sizeof buf, "%.2f", double(v));
            return std::string(buf);
        }()
                                                                : format_value(v, 3);
        const float tw = ImGui::CalcTextSize(s.c_str()).x;
        if (tw + 4 <= x1 - x0) {
            const float ty = v >= 0 ? y_of(v) - line - 1 : y_of(v) + 1;
            dl->AddText(ImVec2(0.5f * (x0 + x1) - tw * 0.5f, std::clamp(ty, a.y - line * 0.5f, b.y - line)),
                        text_col, s.c_str());
        }
    }
    dl->PopClipRect();
    dl->AddRect(a, b, ImGui::GetColorU32(ImGuiCol_Border));

    const int stride = vertical ? label_stride(bw, line) : 1;
    dl->PushClipRect(ImVec2(a.x - line, b.y), ImVec2(b.x + line, p.y + h), true);
    for (int j = 0; j < m; j += stride) {
        const ImU32 col = (j == hovered || j == emphasise_col) ? hot_col : text_col;
        const std::string s = st.cols.label(j);
        const float cx = a.x + (float(j) + 0.5f) * bw;
        if (vertical) {
            const float tw = std::min(ImGui::CalcTextSize(s.c_str()).x, label_h - 6);
            add_text_vertical(dl, ImVec2(cx - line * 0.5f, b.y + 4 + tw), col, s);
        } else {
            const float tw = ImGui::CalcTextSize(s.c_str()).x;
            dl->AddText(ImVec2(cx - tw * 0.5f, b.y + 3), col, s.c_str());
        }
    }
    dl->PopClipRect();

    if (hovered >= 0) {
        const float v = M(row, hovered);
        if (std::isinf(v) && v < 0) {
            ImGui::SetTooltip("%s: masked (\u2212\u221e \u2192 weight 0)",
                              describe(st.cols, hovered).c_str());
        } else {
            ImGui::SetTooltip("%s: %.6g", describe(st.cols, hovered).c_str(), double(v));
        }
    }
    ImGui::Dummy(ImVec2(w, h));
    return hovered;
}

// Q with the pinned row outlined and Kᵀ with the key's column outlined: S[i, j] = q_i · k_j.
void draw_linked_qk(const AppState& state, int head, int row, int key, float w, float h) {
    const Trace& tr = *state.trace;
    int qi = tr.find("Q_rot", head), ki = tr.find("K_rot", head);
    if (qi < 0 || ki < 0) qi = tr.find("Q", head), ki = tr.find("K", head);
    if (qi < 0 || ki < 0) return;
    const Stage& Qs = tr.stages[std::size_t(qi)];
    const Stage& Ks = tr.stages[std::size_t(ki)];
    StageView& sv = views(state).stage;
    const CachedMatrix& Qc = cached_stage(tr, state.trace_generation, qi);
    const CachedMatrix& Kc = cached_stage(tr, state.trace_generation, ki, /*transposed=*/true);
    HeatmapOptions o;
    o.width = std::floor(w * 0.5f) - 4;
    o.height = h;
    o.colorbar = false;
    o.axis_titles = false;
    o.numbers = false;
    o.interactive = false;
    o.row_label_click = false;
    o.min_fill = 0.9f;  // fill the box: these point at a row/column, they are not read cell by cell
    o.highlight.dim_others = true;
    const ImVec2 start = ImGui::GetCursorScreenPos();
    const std::string q_title = "row " + std::to_string(row) + " of " + Qs.name;
    const std::string k_title = "column " + std::to_string(key) + " of " + Ks.name + "\u1d40";
    o.highlight.row = row;
    o.title = q_title.c_str();
    o.col_labels = false;  // dimensions 0..d_k-1: the tooltip says which
    heatmap_widget("linkedQ", sv.q_zoom, HeatmapInput{&Qc, &Qs.rows, &Qs.cols, false}, o);
    ImGui::SetCursorScreenPos(ImVec2(start.x + std::floor(w * 0.5f) + 4, start.y));
    o.highlight.row = -1;
    o.highlight.col = key;
    o.title = k_title.c_str();
    o.col_labels = true;
    o.row_labels = false;
    heatmap_widget("linkedK", sv.k_zoom, HeatmapInput{&Kc, &Ks.rows, &Ks.cols, true}, o);
}

void draw_mask_tools(AppState& state, const Trace& tr) {
    ImGui::TextColored(ImVec4(1.0f, 0.8f, 0.35f, 1.0f), "Custom mask: click cells to hide/show keys");
    ImGui::SameLine();
    if (ImGui::SmallButton("clear mask")) state.config.custom_mask = MaskGrid{};
    ImGui::SameLine();
    if (ImGui::SmallButton("causal preset")) {
        MaskGrid g;
        for (int i = 0; i < tr.n; ++i)
            for (int j = 0; j < tr.m; ++j) g.set_blocked(i, j, j > i);
        state.config.custom_mask = g;
    }
    ImGui::SameLine();
    help_marker(
        "With mask = custom you draw the mask yourself: each click hides key j from query i (its score "
        "becomes \u2212\u221e, so its weight after softmax is exactly 0) or shows it again. The other "
        "weights in the row grow to fill the gap: every row still sums to 1. \"causal preset\" hides "
        "every future key (j > i), like a decoder.");
}

/// The colour choices above the heatmap: how weights map to colours (auto / fixed / max / per row /
/// log) and how a zoomed-out view reduces the cells under one pixel (max keeps every peak, mean
/// averages). Both apply to every view (view_scale()).
void draw_scale_selectors(AppState& state, const Stage& st) {
    ViewScale& vs = view_scale();
    static const char* const names[] = {"auto", "fixed 0\u20131", "0\u2026max", "per row", "log"};
    static const ScaleMode modes[] = {ScaleMode::Auto, ScaleMode::Fixed, ScaleMode::Max, ScaleMode::Row,
                                      ScaleMode::Log};
    int current = 0;
    for (int k = 0; k < 5; ++k)
        if (modes[k] == vs.mode) current = k;
    const bool weights = st.kind == ValueKind::Probability;
    std::string preview = names[current];
    if (vs.mode == ScaleMode::Auto && weights) {
        const ScaleMode r = resolve_scale_mode(ScaleMode::Auto, st.kind, st.n_cols());
        preview += r == ScaleMode::Row ? " (per row)" : " (fixed 0\u20131)";
    }
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("colours");
    record_item_layout("stage.colours");
    const float combo_w = ImGui::CalcTextSize("auto (fixed 0\u20131)").x + ImGui::GetFrameHeight() * 1.5f;
    same_line_if_fits(combo_w);
    ImGui::BeginDisabled(!weights);
    ImGui::SetNextItemWidth(combo_w);
    if (ImGui::BeginCombo("##scale_mode", preview.c_str())) {
        for (int k = 0; k < 5; ++k)
            if (ImGui::Selectable(names[k], k == current)) vs.mode = modes[k];
        ImGui::EndCombo();
    }
    {
        const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
        state.widget_rects["scale_mode"] = AppState::WidgetRect{a.x, a.y, b.x - a.x, b.y - a.y};
        record_item_layout("stage.scale_mode");
    }
    ImGui::EndDisabled();
    if (!weights && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip(
            "Only weights have a choice of scale; %s uses its own range (shown on the colour bar).",
            st.name.c_str());
    // "zoomed out (o) max (o) mean (?)" stays together: on this line if it fits, else on the next
    const ImGuiStyle& style = ImGui::GetStyle();
    auto radio_w = [&](const char* label) {
        return ImGui::GetFrameHeight() + style.ItemInnerSpacing.x + ImGui::CalcTextSize(label).x;
    };
    same_line_if_fits(ImGui::CalcTextSize("zoomed out").x + radio_w("max") + radio_w("mean") +
                      ImGui::CalcTextSize("(?)").x + 3 * style.ItemSpacing.x);
    ImGui::TextUnformatted("zoomed out");
    record_item_layout("stage.zoomed_out");
    ImGui::SameLine();
    int reduce = vs.reduce == ReduceMode::Max ? 0 : 1;
    if (ImGui::RadioButton("max", &reduce, 0)) vs.reduce = ReduceMode::Max;
    record_item_layout("stage.reduce_max");
    ImGui::SameLine();
    if (ImGui::RadioButton("mean", &reduce, 1)) vs.reduce = ReduceMode::Mean;
    record_item_layout("stage.reduce_mean");
    ImGui::SameLine();
    help_marker(
        "How weights become colours.\n"
        "auto: fixed 0\u20131 while rows have at most 64 keys; beyond that every weight is about 1/n and "
        "a fixed scale shows one flat colour, so auto scales each row to its own largest weight (per row).\n"
        "fixed 0\u20131: the same scale for every matrix, to compare two heatmaps at a glance.\n"
        "0\u2026max: linear up to the largest weight of the matrix.\n"
        "per row: each query's row divided by its own largest weight: brightest = where that query looks "
        "most, at any length. The colour bar then reads \"row max\".\n"
        "log: four decades below the largest weight, so weights of 0.001 and 0.0001 differ visibly.\n"
        "Zoomed out, several cells share one screen pixel: max shows the largest of them (a single "
        "sharp peak never disappears), mean their average.");
}

void draw_stage_view(AppState& state) {
    const Trace& tr = *state.trace;
    const int si = current_stage_index(state);
    if (si < 0) {
        ImGui::TextDisabled("No stage selected.");
        return;
    }
    const Stage& st = tr.stages[std::size_t(si)];

    // The view scrolls when the window is too small for its header, a heatmap of a readable size and
    // the pinned row's charts (a projector at UI scale 2): the mouse wheel scrolls it outside the
    // heatmap and zooms the heatmap over it.
    ImGui::BeginChild("##stage_scroll", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollWithMouse);
    const float fs = ImGui::GetFontSize();  // 16 px at UI scale 1: minimum sizes grow with the text

    // Header: title, shape, head (the shape wraps to its own line when the title leaves no room).
    // (a title wider than the view wraps at its edge: large UI scales on a small screen)
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(st.title.c_str());
    ImGui::PopTextWrapPos();
    record_item_layout("stage.title");
    std::string shape = st.shape_text();
    if (st.head >= 0) shape += "   head " + std::to_string(st.head) + " of " + std::to_string(tr.heads);
    // The head's type on this text (core/head_types.hpp), as the heads grid and model view show it.
    const std::vector<HeadLabel>& types = head_labels_of(state, state.trace);
    const bool cross = st.name.rfind("cross_", 0) == 0;  // (the types describe self-attention heads)
    const HeadLabel* type =
        !cross && st.head >= 0 && st.head < int(types.size()) ? &types[std::size_t(st.head)] : nullptr;
    if (type) shape += ": " + head_label_text(*type);
    same_line_if_fits(ImGui::CalcTextSize(shape.c_str()).x + ImGui::GetStyle().ItemSpacing.x +
                      ImGui::CalcTextSize("(?)").x);  // the shape keeps its (?) beside it
    ImGui::TextDisabled("%s", shape.c_str());
    record_item_layout("stage.shape");
    if (type && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", head_label_tooltip(*type).c_str());
    const bool presenting = state.presentation;
    help_marker(
        "The current stage as a heatmap: one cell per matrix entry, rows are the first axis (usually the "
        "query tokens), columns the second. Colours: weights use the scale chosen under \"colours\" (auto: "
        "fixed 0\u20131 for short rows, each row "
        "scaled to its own max for long ones; the colour bar says which); signed values "
        "(Q, K, scores, outputs) are blue below 0, white at 0, red above; hatched cells are masked "
        "(\u2212\u221e).\n"
        "Hover a cell to see how its number was made. Click a query row to pin it (bar chart of its weights "
        "and the Q row / K\u1d40 column behind them). Mouse wheel zooms about the cursor, drag pans, "
        "double-click resets.");

    // Presentation mode (F11) gives the picture every line it can: no colour-scale choices, no hints.
    if (!presenting) draw_scale_selectors(state, st);
    const bool mask_edit = state.config.mask == MaskKind::Custom && is_attention_matrix(st);
    if (mask_edit) {
        draw_mask_tools(state, tr);
    } else if (!presenting && ImGui::GetContentRegionAvail().y > 30.0f * fs) {
        // (on a short view the heatmap gets these lines; the (?) beside the shape says the same)
        hint_line("stage.hint", {"hover: how a cell was made", "click a row: pin it", "wheel: zoom",
                                 "drag: pan", "double-click: reset"});
    }

    const bool rows_are_queries = st.rows.kind == Axis::Kind::QueryTokens;
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    // In presentation mode on a short screen (a projector at a large UI scale) the picture keeps the
    // room: the pinned row stays outlined on it, and its bar chart comes back on a taller window.
    const bool room_for_pin = !presenting || avail.y >= 36.0f * fs;
    const bool show_pin = rows_are_queries && state.pinned_row >= 0 && state.pinned_row < st.n_rows();
    const bool show_pin_strip = show_pin && room_for_pin;
    const float strip_h = !show_pin_strip ? 0.0f
                          : presenting    ? std::min(avail.y * 0.3f, 16.0f * fs)
                                          : std::clamp(avail.y * 0.4f, 12.5f * fs, 22.5f * fs);

    std::map<std::string, HeatmapViewState>& zoom = views(state).stage.zoom;  // per stage name
    const CachedMatrix& cm = cached_stage(tr, state.trace_generation, si);
    HeatmapOptions opt;
    opt.height = std::max((presenting ? 10.0f : 14.0f) * fs, avail.y - strip_h);  // 224 px at UI scale 1
    opt.highlight.row = show_pin ? state.pinned_row : -1;
    if (presenting) {
        opt.min_fill = 1.0f;      // cells stretch to fill a wide projector screen
        opt.axis_titles = false;  // (the tokens say what the axes are)
        opt.compact_colorbar = true;
    }
    const HeatmapResult r =
        heatmap_widget("stage", zoom[st.name], HeatmapInput{&cm, &st.rows, &st.cols, false}, opt);

    state.widget_rects["heatmap"] = AppState::WidgetRect{r.img_x, r.img_y, r.img_w, r.img_h};
    state.label_stats["heatmap"] = {r.labels_shown, r.labels_cut, r.label_stride, r.labels_upright,
                                    r.labels_upright_small};
    state.hover_row = r.hovered ? r.row : -1;
    state.hover_col = r.hovered ? r.col : -1;
    if (r.hovered && !ImGui::IsMouseDragging(ImGuiMouseButton_Left) && cm.M->rows() == st.n_rows() &&
        cm.M->cols() == st.n_cols()) {
        cell_tooltip(state, si, st, *cm.M, r.row, r.col);
    }
    auto toggle_pin = [&](int row) { state.pinned_row = state.pinned_row == row ? -1 : row; };
    if (r.clicked) {
        if (mask_edit) {
            MaskGrid& g = state.config.custom_mask;
            g.set_blocked(r.row, r.col, !g.is_blocked(r.row, r.col));  // the worker recomputes
        } else if (rows_are_queries) {
            toggle_pin(r.row);
        }
    }
    if (r.row_label_clicked >= 0 && rows_are_queries) toggle_pin(r.row_label_clicked);

    if (show_pin_strip && state.pinned_row < int(cm.M->rows())) {
        const int row = state.pinned_row;
        const bool linked = is_attention_matrix(st) && st.head >= 0;
        // The key the linked Kᵀ view outlines: the hovered one, else the strongest for this query.
        int key = (r.hovered && r.row == row) ? r.col : -1;
        int& chart_hover = views(state).stage.chart_hover;  // last frame's bar under the mouse
        if (key < 0) key = chart_hover;
        if (key < 0 || key >= int(cm.M->cols())) {
            Eigen::Index best = 0;
            cm.M->row(row).maxCoeff(&best);
            key = int(best);
        }

        // Strip header: what is pinned, and (for weights) that the row sums to 1.
        std::string head = "Pinned " + describe(st.rows, row) + ": its row of " + st.name;
        if (st.kind == ValueKind::Probability) {
            char buf[64];
            std::snprintf(
                buf, sizeof buf, "  (\u03a3 = %.4f)",
                double(cm.M->row(row).unaryExpr([](float x) { return std::isfinite(x) ? x : 0.0f; }).sum()));
            head += buf;
        }
        // (each part wraps to the next line as a whole when the view is narrow)
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextUnformatted(head.c_str());
        ImGui::PopTextWrapPos();
        record_item_layout("pin.title");
        same_line_if_fits(ImGui::CalcTextSize("unpin").x + 2 * ImGui::GetStyle().FramePadding.x);
        if (ImGui::SmallButton("unpin")) state.pinned_row = -1;
        record_item_layout("pin.unpin");
        if (linked) {
            char dot[96];
            std::snprintf(dot, sizeof dot, "S[%d, %d] = q_%d \u00b7 k_%d", row, key, row, key);
            same_line_if_fits(ImGui::CalcTextSize(dot).x + ImGui::GetStyle().ItemSpacing.x +
                              ImGui::CalcTextSize("(?)").x);
            ImGui::TextDisabled("%s", dot);
            record_item_layout("pin.dot_product");
            help_marker(
                "Every score is a dot product: S[i, j] = q_i \u00b7 k_j (then divided by \u221ad_k). "
                "Right: the pinned query's row of Q, and the column of K\u1d40 for the key under the mouse "
                "(or, when the mouse is elsewhere, the key this query attends to most).");
        }
        const float w = ImGui::GetContentRegionAvail().x;
        // What is left of the view, but never less than a chart with its rotated token labels.
        const float h = std::max(10.0f * fs, ImGui::GetContentRegionAvail().y - 2);
        // The Q row / Kᵀ column view sits beside the chart when the view is wide enough for both
        // (their labels need about 16 text heights), else below it at the full width.
        const bool beside = linked && w - std::floor(w * 0.55f) - 8 >= 16.0f * fs;
        const float chart_w = beside ? std::floor(w * 0.55f) : w;
        const ImVec2 start = ImGui::GetCursorScreenPos();
        chart_hover = draw_row_chart(st, cm, row, chart_w, h, key);
        if (linked && state.pinned_row == row) {
            if (beside) {
                ImGui::SetCursorScreenPos(ImVec2(start.x + chart_w + 8, start.y));
                draw_linked_qk(state, st.head, row, key, w - chart_w - 8, h);
            } else {
                ImGui::SetCursorScreenPos(ImVec2(start.x, start.y + h + ImGui::GetStyle().ItemSpacing.y));
                draw_linked_qk(state, st.head, row, key, w, h);
            }
        }
    }
    scroll_with_wheel(r.image_hovered);
    ImGui::EndChild();
}

void draw_view_switch(AppState& state) {
    struct Item {
        const char* label;
        MainView view;
        const char* tip;
        const char* widget;  // its widget rectangle in the state log (the GUI tests click it)
    };
    static const Item items[] = {
        {"Stage", MainView::Stage, "The current stage of the pipeline as a heatmap", "view_stage"},
        {"Heads grid", MainView::HeadsGrid, "Every head's attention weights side by side", "view_heads"},
        {"Softmax vs linear", MainView::Compare, "The same Q, K, V through softmax and linear attention",
         "view_compare"},
        {"Model view", MainView::Model, "Every layer × head of the model as small weight maps", "view_model"},
        {"Interventions", MainView::Interventions,
         "Knock out heads and watch the prediction and the loss; patch a head from another text; which "
         "heads wrote the next token",
         "view_interventions"},
        {"Lines", MainView::Lines, "Each query joined to each key by a line as strong as its weight",
         "view_lines"},
    };
    bool first = true;
    // A folded side panel comes back from here (or View ▸ Controls panel, Ctrl+B); presentation mode
    // ends here (or F11).
    auto small_button = [&](const char* label, const char* widget, const char* tip) {
        if (!first) same_line_if_fits(ImGui::CalcTextSize(label).x + 2 * ImGui::GetStyle().FramePadding.x);
        first = false;
        const bool pressed = ImGui::Button(label);
        const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
        state.widget_rects[widget] = {a.x, a.y, b.x - a.x, b.y - a.y};
        record_item_layout(widget);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
        return pressed;
    };
    if (state.presentation) {
        if (small_button("◀ Exit presentation", "exit_presentation",
                         "Back to the side panels, the pipeline strip and the status bar (F11)"))
            state.presentation = false;
    } else if (!state.show_controls) {
        if (small_button("▶ Controls", "show_controls", "Show the controls panel again (Ctrl+B)"))
            state.show_controls = true;
    }
    for (const Item& it : items) {
        // A real model has no linear attention to compare; the single layer has no other layers.
        const bool model_only = it.view == MainView::Model || it.view == MainView::Interventions;
        if ((it.view == MainView::Compare && state.model.active) || (model_only && !state.model.active))
            continue;
        // (an encoder fills masks: the interventions measure a next-token prediction it does not make)
        if (it.view == MainView::Interventions && state.model.encoder) continue;
        // (a button that would cross the view's right edge starts the next row)
        if (!first) same_line_if_fits(ImGui::CalcTextSize(it.label).x + 2 * ImGui::GetStyle().FramePadding.x);
        first = false;
        const bool on = state.view == it.view;
        if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
        if (ImGui::Button(it.label)) state.view = it.view;
        if (on) ImGui::PopStyleColor();
        {
            const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
            state.widget_rects[it.widget] = {a.x, a.y, b.x - a.x, b.y - a.y};
        }
        record_item_layout(it.widget);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", it.tip);
    }
    if (!state.presentation && !state.show_explanation) {
        if (small_button("Explanation \u25c0", "show_explanation",
                         "Show the explanation and export panels again (Ctrl+Alt+B)"))
            state.show_explanation = true;
    }
    // "updating…" beside the buttons when there is room (never on a row of its own: the view below
    // would jump down and up with every computation).
    const char* busy = "updating\u2026";
    const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    if (state.updating &&
        ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + ImGui::CalcTextSize(busy).x <= right) {
        ImGui::SameLine();
        ImGui::TextDisabled("%s", busy);
    }
}

}  // namespace

void draw_main_view(AppState& state) {
    // Release textures of matrices no longer on screen: all of them when a new trace arrives (every
    // key carries the generation), otherwise those of stages not shown for a while.
    static std::uint64_t shown_generation = ~0ull;
    if (state.trace_generation != shown_generation) {
        view_cache().clear();
        shown_generation = state.trace_generation;
    }
    view_cache().evict(ImGui::GetFrameCount(), 90);

    ImGui::BeginChild("##main_view", ImVec2(0, 0), false,
                      ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_NoScrollbar);
    // (presenting a stage, the menu bar holds the way out: the picture gets the row)
    if (!state.presentation || state.view != MainView::Stage || !state.trace) draw_view_switch(state);
    if (!state.trace) {
        ImGui::Spacing();
        if (!state.issues.empty()) {
            ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "This configuration cannot be computed:");
            for (const ConfigIssue& issue : state.issues) ImGui::BulletText("%s", issue.message.c_str());
        } else if (state.model.active && state.model.run_failed && state.status_is_error) {
            // (an encoder–decoder's target has its own box: the message says which one to edit)
            const bool target = state.status.rfind("the target: ", 0) == 0;
            ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), target ? "The model cannot read the target:"
                                                                       : "The model cannot read this text:");
            ImGui::PushTextWrapPos(0.0f);
            ImGui::TextUnformatted(target ? state.status.c_str() + 12 : state.status.c_str());
            ImGui::PopTextWrapPos();
            ImGui::TextDisabled(target ? "Edit the Target box on the left." : "Edit the text on the left.");
        } else {
            ImGui::TextDisabled("Computing the first trace\u2026");
        }
        ImGui::EndChild();
        return;
    }
    switch (state.view) {
        case MainView::Stage:
            if (state.model.active && current_stage_name(state) == "probs")
                draw_next_token_view(state);
            else
                draw_stage_view(state);
            break;
        case MainView::HeadsGrid:
            draw_heads_grid(state);
            break;
        case MainView::Compare:
            draw_compare_view(state);
            break;
        case MainView::Model:
            draw_model_view(state);
            break;
        case MainView::Lines:
            draw_lines_view(state);
            break;
        case MainView::Interventions:
            draw_interventions_panel(state);
            break;
    }
    ImGui::EndChild();
}

}  // namespace attnviz::app

// Softmax vs linear attention on the SAME Q, K, V (the current head of the trace): the two weight
// matrices side by side, their difference, and how far apart the outputs end up. Computed with the
// core's compare_softmax_linear (core/compare.hpp) off the GUI thread, once per
// (trace generation, head, φ) -- never per frame.
// GCC 12 false positive inside its AVX-512 intrinsics when Eigen multiplies (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <future>
#include <limits>
#include <memory>
#include <string>

#include <imgui.h>

#include "app/panels/heatmap_widget.hpp"
#include "app/panels/panels.hpp"
#include "app/panels/view_state.hpp"
#include "app/panels/views_internal.hpp"
#include "core/compare.hpp"
#include "core/error.hpp"
#include "core/ops.hpp"

namespace attnviz::app {

namespace {

struct CompareKey {
    std::uint64_t generation = ~0ull;
    int head = -1;
    PhiKind phi = PhiKind::Elu1;
    bool operator==(const CompareKey& o) const {
        return generation == o.generation && head == o.head && phi == o.phi;
    }
};

struct CompareResult {
    CompareKey key;
    std::shared_ptr<const Mat> A_soft;  // n x m  softmax(mask(QKᵀ/√d_k) / T)
    std::shared_ptr<const Mat> A_lin;   // n x m  φ(q_i)·φ(k_j) / Σ_j' φ(q_i)·φ(k_j')
    std::shared_ptr<const Mat> D;       // n x m  A_soft − A_lin
    double out_diff = 0;                // ‖O_soft − O_lin‖_F
    double out_rel = 0;                 // out_diff / ‖O_soft‖_F
    double max_abs_d = 0;               // max |D|
    std::string q_name, k_name;         // "Q" or "Q_rot" ...
    std::string error;
};

CompareResult compute_compare(std::shared_ptr<const Trace> trace, CompareKey key) {
    CompareResult r;
    r.key = key;
    try {
        const Trace& tr = *trace;
        const Stage* Qs = tr.get("Q_rot", key.head);
        const Stage* Ks = tr.get("K_rot", key.head);
        if (!Qs || !Ks) Qs = tr.get("Q", key.head), Ks = tr.get("K", key.head);
        const Stage* Vs = tr.get("V", key.head);
        if (!Qs || !Ks || !Vs) throw Error("this trace has no Q, K, V for head " + std::to_string(key.head));
        r.q_name = Qs->name;
        r.k_name = Ks->name;
        const Mat Q = Qs->matrix();                                                  // [n, d_k]
        const Mat K = Ks->matrix();                                                  // [m, d_k]
        const Mat V = Vs->matrix();                                                  // [m, d_v]
        const BoolMat allowed = make_mask(tr.config, int(Q.rows()), int(K.rows()));  // [n, m]
        // For display, hidden keys become −∞ (hatched, "masked") rather than a plain 0.
        SoftmaxLinearComparison c = compare_softmax_linear(Q, K, V, allowed, tr.config.temperature, key.phi,
                                                           /*hide_masked=*/tr.config.mask != MaskKind::None);
        r.out_diff = c.out_diff;
        r.out_rel = c.out_rel;
        r.max_abs_d = c.max_abs_d;
        r.A_soft = std::make_shared<const Mat>(std::move(c.A_soft));
        r.A_lin = std::make_shared<const Mat>(std::move(c.A_lin));
        r.D = std::make_shared<const Mat>(std::move(c.D));
    } catch (const std::exception& e) {
        r.error = e.what();
    }
    return r;
}

struct CompareCache {
    std::unique_ptr<CompareResult> ready;
    std::future<CompareResult> pending;
    CompareKey pending_key;
};

CompareCache& compare_cache() {
    static CompareCache c;
    return c;
}

const char* phi_label(PhiKind p) {
    switch (p) {
        case PhiKind::Elu1:
            return "elu(x) + 1";
        case PhiKind::Relu:
            return "relu(x)";
        case PhiKind::Softmax:
            return "softmax (Q over features, K over tokens)";
    }
    return "?";
}

void draw_compare_body(AppState& state, const Trace& tr, CompareView& cv, int head);

}  // namespace

void shutdown_compare_view() {
    CompareCache& c = compare_cache();
    if (c.pending.valid()) c.pending.wait();
    c.pending = {};
    c.ready.reset();
}

void draw_compare_view(AppState& state) {
    const Trace& tr = *state.trace;
    CompareView& cv = views(state).compare;
    if (!cv.phi_chosen) cv.phi = tr.config.phi;
    const int head = std::clamp(state.head, 0, std::max(0, tr.heads - 1));

    // The whole view scrolls when the window is too small for readable pictures (a projector at UI
    // scale 2); the mouse wheel scrolls it outside the pictures and zooms them over them.
    ImGui::BeginChild("##compare_scroll", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollWithMouse);
    draw_compare_body(state, tr, cv, head);
    scroll_with_wheel(cv.images_hovered);
    ImGui::EndChild();
}

namespace {

void draw_compare_body(AppState& state, const Trace& tr, CompareView& cv, int head) {
    PhiKind& phi = cv.phi;
    cv.images_hovered = false;
    // Header: the sentence wraps at the view's edge; φ and its menu follow on the same row if they fit.
    char intro[96];
    std::snprintf(intro, sizeof intro, "Head %d: the same Q, K, V through softmax and linear attention.",
                  head);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(intro);
    ImGui::PopTextWrapPos();
    record_item_layout("compare.title");
    const float combo_w = std::min(ImGui::CalcTextSize(phi_label(PhiKind::Softmax)).x + 40,
                                   ImGui::GetContentRegionAvail().x * 0.8f);
    // ("φ =", its menu and the (?) after it move to the next row together)
    same_line_if_fits(ImGui::CalcTextSize("\u03c6 =").x + combo_w + ImGui::CalcTextSize("(?)").x +
                      2 * ImGui::GetStyle().ItemSpacing.x);
    ImGui::TextUnformatted("\u03c6 =");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(combo_w);
    if (ImGui::BeginCombo("##phi", phi_label(phi))) {
        for (PhiKind p : {PhiKind::Elu1, PhiKind::Relu, PhiKind::Softmax})
            if (ImGui::Selectable(phi_label(p), p == phi)) phi = p, cv.phi_chosen = true;
        ImGui::EndCombo();
    }
    record_item_layout("compare.phi");
    help_marker(
        "Softmax attention weighs key j for query i by exp(q_i\u00b7k_j/\u221ad_k), normalised over the row; "
        "it needs the whole n\u00d7m matrix: O(n\u00b2) time and memory.\n"
        "Linear attention replaces the exponential by a feature map: sim(q, k) = \u03c6(q)\u00b7\u03c6(k). "
        "Then "
        "O = \u03c6(Q)(\u03c6(K)\u1d40V) / (\u03c6(Q)\u03a3\u03c6(k_j)) can be computed right to left: "
        "\u03c6(K)\u1d40V is only "
        "d_k\u00d7d_v, so the cost is O(n). The middle picture is the n\u00d7m matrix it implies (never "
        "formed "
        "when computing it for real).\n"
        "The right picture is softmax \u2212 linear: red where softmax attends more, blue where linear does. "
        "Linear weights are usually flatter: without the exponential, large scores are not amplified.\n"
        "Mask and temperature come from the current configuration; the scores here are always scaled dot "
        "products (other scoring functions and ALiBi are not applied).");

    // Result for (generation, head, φ): computed in the background, once.
    const CompareKey key{state.trace_generation, head, phi};
    CompareCache& cache = compare_cache();
    if (cache.pending.valid() &&
        cache.pending.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
        cache.ready = std::make_unique<CompareResult>(cache.pending.get());
    }
    const bool have = cache.ready && cache.ready->key == key;
    if (!have && !cache.pending.valid()) {
        cache.pending_key = key;
        cache.pending = std::async(std::launch::async, compute_compare, state.trace, key);
    }
    if (!have) {
        ImGui::TextDisabled("computing softmax and linear weights\u2026");
        state.redraw_soon = true;  // keep drawing until the answer can be shown
        return;
    }
    const CompareResult& res = *cache.ready;
    if (!res.error.empty()) {
        ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "%s", res.error.c_str());
        return;
    }

    // The three matrices, cached as textures under the same key.
    const std::string base = "cmp:" + std::to_string(key.generation) + ":" + std::to_string(head) + ":" +
                             std::to_string(int(phi)) + ":";
    const CachedMatrix& cs = view_cache().get(
        base + "soft", ValueKind::Probability, [&] { return res.A_soft; }, view_scale().mode);
    const CachedMatrix& cl = view_cache().get(
        base + "lin", ValueKind::Probability, [&] { return res.A_lin; }, view_scale().mode);
    const CachedMatrix& cd = view_cache().get(base + "diff", ValueKind::Signed, [&] { return res.D; });

    const Stage* ws = tr.get("weights", head);
    const Axis* rows_axis = ws ? &ws->rows : nullptr;
    const Axis* cols_axis = ws ? &ws->cols : nullptr;

    // Layout: a 2 x 2 grid (softmax | linear on top, their difference and the numbers below), or one
    // column on a narrow view.
    // One zoom/pan state for all three pictures: they always show the same cells.
    HeatmapViewState& shared_view = cv.zoom;
    int& hover_r = cv.hover_r;  // last frame's hovered cell, outlined in all three
    int& hover_c = cv.hover_c;
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float gap = 14, fs = ImGui::GetFontSize(), line = ImGui::GetTextLineHeight();
    // Two pictures a row when each gets 14 text heights of width, else one under the other (narrow
    // views, large UI scales); never shorter than a readable heatmap (the view scrolls instead).
    const bool two_cols = (avail.x - gap) * 0.5f >= 14.0f * fs;
    const float w = two_cols ? std::floor((avail.x - gap) * 0.5f) : std::floor(avail.x);
    const float h = std::max(14.0f * fs, std::floor((avail.y - gap) * 0.5f));
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    HeatmapOptions o;
    o.width = w;
    o.height = h;
    o.axis_titles = false;
    o.colorbar = false;  // two shared colour bars in the fourth quadrant
    o.row_label_click = false;
    o.highlight.row = hover_r;
    o.highlight.col = hover_c;

    int new_r = -1, new_c = -1;
    auto tile = [&](float x, float y, const char* id, const char* title, const CachedMatrix& cm) {
        ImGui::SetCursorScreenPos(ImVec2(x, y));
        o.title = title;
        const HeatmapResult r =
            heatmap_widget(id, shared_view, HeatmapInput{&cm, rows_axis, cols_axis, false}, o);
        if (r.hovered) new_r = r.row, new_c = r.col;
        if (r.image_hovered) cv.images_hovered = true;
        // (the GUI tests wait for the pictures: they appear once the background comparison is done)
        state.widget_rects[id] = AppState::WidgetRect{r.img_x, r.img_y, r.img_w, r.img_h};
    };
    // The softmax side divides by T too (the trace's temperature): the title says so.
    char soft_title[96];
    std::snprintf(soft_title, sizeof soft_title, "softmax weights  softmax(QK\u1d40/\u221ad_k / T), T = %.3g",
                  tr.config.temperature);
    tile(origin.x, origin.y, "cmp_soft", soft_title, cs);
    const float step = h + gap;  // one picture's height and the gap below it
    tile(two_cols ? origin.x + w + gap : origin.x, two_cols ? origin.y : origin.y + step, "cmp_lin",
         "linear weights  \u03c6(q_i)\u00b7\u03c6(k_j), row-normalised", cl);
    tile(origin.x, origin.y + (two_cols ? step : 2 * step), "cmp_diff", "difference  softmax \u2212 linear",
         cd);

    // Fourth quadrant (or, in one column, below the pictures): colour bars and the numbers that
    // summarise the comparison. Each bar is wide enough for its tick labels and caption.
    const float qx = two_cols ? origin.x + w + gap + 8 : origin.x,
                qy = origin.y + (two_cols ? step : 3 * step);
    const float bar_w = std::max(16 + 10 + ImGui::CalcTextSize("\u22120.000").x + line + 8,
                                 16 + 6 + ImGui::CalcTextSize("masked (\u2212\u221e)").x + 4);
    const float bar_h = std::max(5.2f * line, std::min(9.5f * fs, h * 0.45f));
    ImGui::SetCursorScreenPos(ImVec2(qx, qy));
    ImGui::TextDisabled("weights");
    record_item_layout("compare.weights_bar");
    ImGui::SetCursorScreenPos(ImVec2(qx + bar_w, qy));
    ImGui::TextDisabled("difference");
    record_item_layout("compare.difference_bar");
    ImGui::SetCursorScreenPos(ImVec2(qx, qy + ImGui::GetTextLineHeightWithSpacing()));
    draw_colorbar(cs.range, bar_w, bar_h, cs.has_masked || cl.has_masked, "compare.weights_bar");
    ImGui::SetCursorScreenPos(ImVec2(qx + bar_w, qy + ImGui::GetTextLineHeightWithSpacing()));
    draw_colorbar(cd.range, bar_w, bar_h, false, "compare.difference_bar");
    ImGui::SetCursorScreenPos(ImVec2(qx, qy + ImGui::GetTextLineHeightWithSpacing() + bar_h + 10));
    ImGui::BeginGroup();
    ImGui::PushTextWrapPos(qx + w - 16 - ImGui::GetWindowPos().x + ImGui::GetScrollX());  // local coordinates
    ImGui::Text("outputs O = A V differ by \u2016\u0394O\u2016_F = %.4g", res.out_diff);
    ImGui::SameLine();
    help_marker(
        "O = A V for each: the n\u00d7d_v outputs the two kinds of attention would pass on. The Frobenius "
        "norm \u2016X\u2016_F = \u221a(\u03a3 x\u00b2) adds up the whole difference.");
    ImGui::Text("= %.1f%% of \u2016O_softmax\u2016_F", 100.0 * res.out_rel);
    ImGui::Text("largest weight difference |\u0394A| = %.3g", res.max_abs_d);
    ImGui::TextDisabled(
        "Red: softmax attends more; blue: linear does. Without exp, linear weights are flatter.");
    ImGui::PopTextWrapPos();
    ImGui::EndGroup();

    hover_r = new_r;
    hover_c = new_c;
    state.hover_row = new_r;
    state.hover_col = new_c;
    if (new_r >= 0 && new_c >= 0 && new_r < res.A_soft->rows() && new_c < res.A_soft->cols()) {
        const std::string q = rows_axis ? rows_axis->label(new_r) : std::to_string(new_r);
        const std::string k = cols_axis ? cols_axis->label(new_c) : std::to_string(new_c);
        const float a_s = (*res.A_soft)(new_r, new_c), a_l = (*res.A_lin)(new_r, new_c);
        if (std::isinf(a_s) || std::isinf(a_l)) {
            ImGui::SetTooltip(
                "query %d \u201c%s\u201d \u2192 key %d \u201c%s\u201d\n  masked: weight 0 in both", new_r,
                q.c_str(), new_c, k.c_str());
        } else {
            ImGui::SetTooltip(
                "query %d \u201c%s\u201d \u2192 key %d \u201c%s\u201d\n  softmax     %.5f\n  linear      "
                "%.5f\n  "
                "difference  %+.5f",
                new_r, q.c_str(), new_c, k.c_str(), double(a_s), double(a_l), double((*res.D)(new_r, new_c)));
        }
    }
    // Reserve the pictures' area (the numbers' group below them reserves its own lines).
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(ImVec2(avail.x, two_cols ? 2 * h + gap : 3 * step));
}

}  // namespace

}  // namespace attnviz::app

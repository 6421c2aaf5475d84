// Lab: masks — one head's scaled scores (the main view's sentence) under the masks of the model
// families side by side: causal (GPT), bidirectional (BERT), a sliding window (Mistral), a padded
// batch and a prefix LM. Hidden cells are hatched; each row's weights sum to 1 over what it sees
// (core/mask_lab).
#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

#include <imgui.h>

#include "app/panels/lab_common.hpp"
#include "app/panels/panels.hpp"
#include "core/mask_lab.hpp"

namespace attnviz::app {

namespace {

struct MasksState {
    int head = 0;
    MaskLabParams params;  // scaled is filled from the trace
    std::array<int, 3> computed_for = {-1, -1, -1};
    std::uint64_t computed_generation = ~std::uint64_t(0);
    int computed_head = -1;
    MaskLab lab;
    bool have = false;
    std::string error;
    int gen = 0;
    std::array<HeatmapViewState, 5> views;
};

// Hatches the hidden cells of one panel on top of its heatmap image, following the zoom window.
void hatch_hidden(const HeatmapResult& r, const HeatmapViewState& view, const Mat& visible) {
    if (r.img_w <= 0) return;
    const render::ViewWindow& v = view.window;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->PushClipRect(ImVec2(r.img_x, r.img_y), ImVec2(r.img_x + r.img_w, r.img_y + r.img_h), true);
    const float cw = r.img_w / (v.x1 - v.x0), ch = r.img_h / (v.y1 - v.y0);
    const ImU32 line = IM_COL32(150, 150, 160, 200);
    for (int i = 0; i < int(visible.rows()); ++i)
        for (int j = 0; j < int(visible.cols()); ++j) {
            if (visible(i, j) > 0.5f) continue;
            const ImVec2 a(r.img_x + (float(j) - v.x0) * cw, r.img_y + (float(i) - v.y0) * ch);
            dl->AddRectFilled(a, ImVec2(a.x + cw, a.y + ch), IM_COL32(25, 25, 30, 255));
            dl->AddLine(ImVec2(a.x + 2, a.y + ch - 2), ImVec2(a.x + cw - 2, a.y + 2), line, 1.0f);
        }
    dl->PopClipRect();
}

}  // namespace

void draw_lab_masks(AppState& state, LabContext& ctx) {
    MasksState& s = ctx.state<MasksState>();
    if (ctx.closing) return;
    ctx.requested_tab = -1;

    lab_export_button(state, "masks");
    ImGui::SameLine();
    lab_explanation(
        "Before softmax, a mask hides some keys from some queries (score −∞, weight exactly 0). Which keys "
        "is the difference between a decoder that writes text left to right (GPT: no peeking at the "
        "future), an encoder that reads a whole sentence at once (BERT), and the tricks in between. "
        "Below, the same scores of one head of the main view under five masks: hatched cells are hidden.");
    lab_formula("A = softmax(S / √d_k + M),   M_ij = 0 where query i may see key j, −∞ where it may not");

    const Trace* tr = state.trace.get();
    if (!tr) {
        ImGui::TextDisabled("computing the main view's layer…");
        return;
    }
    const int heads = std::max(1, tr->config.heads);
    s.head = std::clamp(s.head, 0, heads - 1);
    const Stage* scaled = tr->get("scaled", s.head);
    if (!scaled || tr->config.cross_attention()) {
        lab_error(tr->config.cross_attention()
                      ? "The main view computes cross-attention (queries from one text, keys from another): "
                        "masks between two different texts are not about the future. Clear the source text."
                      : "The main view's attention has no scaled-score stage (linear attention?): switch "
                        "Attention to softmax.");
        return;
    }
    const Mat S = scaled->matrix();  // [n, n]
    const int n = int(S.rows());

    ImGui::PushItemWidth(em(140));
    ImGui::SliderInt("head", &s.head, 0, heads - 1);
    ImGui::SameLine();
    ImGui::SliderInt("window w", &s.params.window, 1, std::max(1, n));
    ImGui::SameLine();
    ImGui::SliderInt("[PAD] keys", &s.params.padding, 0, std::max(0, n - 1));
    ImGui::SameLine();
    ImGui::SliderInt("prefix k", &s.params.prefix, 0, n);
    ImGui::PopItemWidth();
    help_marker(
        "Sliding window: each query sees itself and the w − 1 keys before it. [PAD]: the last keys "
        "are padding of a batch (their rows are computed but thrown away). Prefix k: the first k "
        "keys are seen by every query, the rest causally.");
    s.params.window = std::clamp(s.params.window, 1, std::max(1, n));
    s.params.padding = std::clamp(s.params.padding, 0, std::max(0, n - 1));
    s.params.prefix = std::clamp(s.params.prefix, 0, n);

    const std::array<int, 3> knobs = {s.params.window, s.params.padding, s.params.prefix};
    if (!s.have || knobs != s.computed_for || s.computed_generation != state.trace_generation ||
        s.computed_head != s.head) {
        s.computed_for = knobs;
        s.computed_generation = state.trace_generation;
        s.computed_head = s.head;
        try {
            s.params.scaled = S;
            s.lab = mask_lab(s.params);
            s.error.clear();
            s.have = true;
            ++s.gen;
        } catch (const Error& e) {
            s.error = e.what();
        }
    }
    if (!s.error.empty()) lab_error(s.error);
    if (!s.have) return;

    const float avail_w = ImGui::GetContentRegionAvail().x;
    const float findings_h = lab_findings_height(s.lab.findings, avail_w) + 8;
    const float grid_h = std::max(360.0f, ImGui::GetContentRegionAvail().y - findings_h);
    // Up to three panels a row, each tall enough for its labels and colour bar at any UI scale (the
    // lab window scrolls when they do not all fit).
    const int per_row = std::clamp(int(avail_w / em(300)), 1, 3);
    const int rows = (int(s.lab.panels.size()) + per_row - 1) / per_row;
    const float cell_w = avail_w / float(per_row) - 6;
    const float cell_h = std::max(em(300), grid_h / float(rows) - 6);
    for (std::size_t k = 0; k < s.lab.panels.size(); ++k) {
        const MaskPanel& p = s.lab.panels[k];
        if (k % std::size_t(per_row) != 0) ImGui::SameLine();
        ImGui::BeginChild(lab_mask_name(p.mask), ImVec2(cell_w, cell_h), false);
        char title[160];
        std::snprintf(title, sizeof title, "%s — %s  (%d of %d pairs)", lab_mask_name(p.mask),
                      lab_mask_example(p.mask), p.visible_pairs, n * n);
        const std::string key = "masks/" + std::to_string(s.gen) + "/" + std::to_string(k);
        const ImVec2 room = ImGui::GetContentRegionAvail();  // the child's inside, below its padding
        const HeatmapResult r =
            lab_heatmap(lab_mask_name(p.mask), s.views[k], key, p.weights, ValueKind::Probability,
                        scaled->rows, scaled->cols, title, room.x, room.y - 4);
        hatch_hidden(r, s.views[k], p.visible);
        if (r.hovered && r.row >= 0 && r.col >= 0) {
            ImGui::BeginTooltip();
            if (p.visible(r.row, r.col) > 0.5f)
                ImGui::Text("query %d sees key %d: score %.3f, weight %.3f", r.row, r.col,
                            double(S(r.row, r.col)), double(p.weights(r.row, r.col)));
            else
                ImGui::Text("query %d may not see key %d: score −∞, weight exactly 0", r.row, r.col);
            ImGui::EndTooltip();
        }
        ImGui::EndChild();
    }
    lab_findings(s.lab.findings);
}

}  // namespace attnviz::app

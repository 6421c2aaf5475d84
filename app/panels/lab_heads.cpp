// Lab 6: designed heads — pick a hand-built W_Q, W_K for head 0 (core/presets); the main view
// recomputes with it, and this window shows how the weights were built (the trace's W_Q/W_K stage
// explanations), head 0's attention weights, and where the construction promises the peaks to be,
// with the measured share of query rows that keep the promise.
#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/panels/lab_common.hpp"
#include "app/panels/panels.hpp"
#include "core/error.hpp"
#include "core/presets.hpp"

namespace attnviz::app {

namespace {

struct PresetInfo {
    HeadPreset preset;
    const char* label;
    const char* promise;  // where the peaks should be, in words
};

const PresetInfo kPresets[] = {
    {HeadPreset::None, "none (random W_Q, W_K)", "no promise: random weights give an arbitrary pattern"},
    {HeadPreset::PreviousToken, "previous token", "row i peaks at key i − 1 (just below the diagonal)"},
    {HeadPreset::FirstToken, "first token", "every row peaks at key 0 (the first column)"},
    {HeadPreset::SameToken, "same token",
     "row i peaks at keys holding the same word as query i (the diagonal)"},
    {HeadPreset::AdjectiveNoun, "adjective → noun",
     "a noun's row peaks at the adjectives right before it ('blue creature', 'verdant forest')"},
};

// The keys each query row is promised to peak at (empty set = no promise for that row).
std::vector<std::set<int>> promised_keys(HeadPreset preset, const std::vector<std::string>& q,
                                         const std::vector<std::string>& k) {
    const int n = int(q.size()), m = int(k.size());
    std::vector<std::set<int>> out(n);
    for (int i = 0; i < n; ++i) {
        switch (preset) {
            case HeadPreset::PreviousToken:
                if (i >= 1 && i - 1 < m) out[i].insert(i - 1);
                break;
            case HeadPreset::FirstToken:
                if (m > 0) out[i].insert(0);
                break;
            case HeadPreset::SameToken:
                for (int j = 0; j < m; ++j)
                    if (k[j] == q[i]) out[i].insert(j);
                break;
            case HeadPreset::AdjectiveNoun:
                if (word_class(q[i]) == WordClass::Noun)
                    for (int j = std::min(i, m) - 1; j >= 0 && word_class(k[j]) == WordClass::Adjective; --j)
                        out[i].insert(j);
                break;
            case HeadPreset::None:
                break;
        }
    }
    return out;
}

struct HeadsState {
    HeatmapViewState view;
};

}  // namespace

void draw_lab_heads(AppState& state, LabContext& ctx) {
    HeadsState& s = ctx.state<HeadsState>();
    if (ctx.closing) return;
    (void)ctx.requested_tab;
    ctx.requested_tab = -1;

    lab_export_button(state, "designed_heads");
    ImGui::SameLine();
    lab_explanation(
        "A trained head's W_Q and W_K are learned; here head 0 gets weights built by hand, so that its "
        "pattern means something you can check. The embedding keeps a few dimensions free of word content "
        "(fast positional pairs, a constant, is-adjective and is-noun flags) and W_Q, W_K read them. The "
        "other heads stay random, for contrast. Picking a head changes the main view too.");
    lab_formula("S = (X W_Q)(X W_K)ᵀ / √d_k,   A = softmax(S):  the pattern is designed through W_Q and W_K");

    // --- preset picker -----------------------------------------------------------------------------
    for (const PresetInfo& p : kPresets) {
        if (ImGui::RadioButton(p.label, state.config.preset == p.preset)) {
            state.config.preset = p.preset;
            // The adjective → noun head needs adjectives and nouns from the built-in lexicon.
            if (p.preset == HeadPreset::AdjectiveNoun) state.config.text = kDefaultSentence;
        }
        ImGui::SameLine();
    }
    help_marker(
        "The preset is a Config knob (preset = previous_token, ...): scenes save it and "
        "`attnviz dump --set preset=first_token` uses it too.");
    HeadPreset preset = state.config.preset;
    const PresetInfo* info = &kPresets[0];
    for (const PresetInfo& p : kPresets)
        if (p.preset == preset) info = &p;

    // --- can it be built with this config? -------------------------------------------------------
    try {
        check_preset(state.config);
    } catch (const Error& e) {
        lab_error(e.what());
        if (ImGui::Button("Fix it: sinusoidal PE, d_model 64, 4 heads")) {
            state.config.positional = Positional::Sinusoidal;
            state.config.d_model = std::max(state.config.d_model, 64);
            state.config.heads = 4;
            state.config.d_k = state.config.d_v = 0;
        }
        return;
    }
    const bool designed_for = state.config.scoring == Scoring::ScaledDot && state.config.temperature == 1.0 &&
                              state.config.attention == AttentionKind::Softmax;
    if (preset != HeadPreset::None && !designed_for) {
        ImGui::TextColored(ImVec4(1, 0.8f, 0.4f, 1),
                           "These heads are designed for softmax with scaled dot-product scores at T = 1.");
        ImGui::SameLine();
        if (ImGui::SmallButton("use those")) {
            state.config.scoring = Scoring::ScaledDot;
            state.config.temperature = 1.0;
            state.config.attention = AttentionKind::Softmax;
        }
    }

    const Trace* tr = state.trace.get();
    if (!tr || tr->config.preset != preset) {
        ImGui::TextDisabled("computing the trace with this head…");
        return;
    }
    const Stage* wq = tr->get("W_Q", kPresetHead);
    const Stage* wk = tr->get("W_K", kPresetHead);
    const Stage* weights = tr->get("weights", kPresetHead);
    if (!weights) {
        lab_error("this trace has no weight stage for head 0");
        return;
    }

    const float avail_w = ImGui::GetContentRegionAvail().x;
    // --- left: the construction ------------------------------------------------------------------
    ImGui::BeginChild("explain", ImVec2(avail_w * 0.40f, 0), false);
    lab_heading(std::string("Head 0: ") + info->label);
    ImGui::TextWrapped("Promise: %s.", info->promise);
    ImGui::Spacing();
    if (preset == HeadPreset::None) {
        // Opened without a preset: say what to click, and what each choice will show, before the
        // (unremarkable) random construction below.
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.5f, 0.85f, 1.0f, 1.0f));
        ImGui::TextWrapped(
            "Head 0 is random now, so its pattern (right) means nothing. Click a designed head in the "
            "row above; the heatmap then outlines the cells it promises and counts the rows that keep "
            "the promise:");
        ImGui::PopStyleColor();
        for (const PresetInfo& p : kPresets) {
            if (p.preset == HeadPreset::None) continue;
            ImGui::Bullet();
            ImGui::SameLine();
            ImGui::TextWrapped("%s: %s.", p.label, p.promise);
        }
        ImGui::Spacing();
    }
    if (wq) {
        lab_heading("W_Q");
        lab_explanation(wq->explanation);
    }
    if (wk && (!wq || wk->explanation != wq->explanation)) {
        lab_heading("W_K");
        lab_explanation(wk->explanation);
    }
    ImGui::Spacing();
    if (ImGui::Button("Show head 0's weights in the main view")) {
        select_stage(state, "weights");
        state.head = kPresetHead;
        state.view = MainView::Stage;
    }
    ImGui::EndChild();
    ImGui::SameLine();

    // --- right: head 0's weights with the promised cells outlined --------------------------------
    ImGui::BeginChild("pattern", ImVec2(0, 0), false);
    const Mat A = weights->matrix();  // n x m
    const std::vector<std::set<int>> promise =
        promised_keys(preset, tr->query_tokens ? *tr->query_tokens : std::vector<std::string>{},
                      tr->key_tokens ? *tr->key_tokens : std::vector<std::string>{});
    int rows_promised = 0, rows_kept = 0;
    for (int i = 0; i < int(A.rows()) && i < int(promise.size()); ++i) {
        if (promise[i].empty()) continue;
        ++rows_promised;
        Eigen::Index j = 0;
        A.row(i).maxCoeff(&j);
        if (promise[i].count(int(j))) ++rows_kept;
    }
    if (rows_promised > 0) {
        ImGui::TextColored(
            rows_kept == rows_promised ? ImVec4(0.5f, 0.9f, 0.6f, 1) : ImVec4(1, 0.8f, 0.4f, 1),
            "%d of %d promised rows peak where promised (outlined cells)", rows_kept, rows_promised);
    } else {
        ImGui::TextDisabled(preset == HeadPreset::None
                                ? "random head: nothing is promised (pick a designed head above)"
                                : "no row of this text has a promise (no noun after an "
                                  "adjective?)");
    }
    const float h = std::max(260.0f, ImGui::GetContentRegionAvail().y - 10);
    const std::string key = "heads/" + std::to_string(state.trace_generation) + "/w0";
    HeatmapResult r = lab_heatmap("w0", s.view, key, A, ValueKind::Probability, weights->rows, weights->cols,
                                  "head 0: attention weights A", ImGui::GetContentRegionAvail().x, h);
    // Outline the promised cells on top of the image, following the widget's zoom window.
    if (r.img_w > 0 && rows_promised > 0) {
        const render::ViewWindow& v = s.view.window;
        ImDrawList* dl = ImGui::GetWindowDrawList();
        dl->PushClipRect(ImVec2(r.img_x, r.img_y), ImVec2(r.img_x + r.img_w, r.img_y + r.img_h), true);
        const float cw = r.img_w / (v.x1 - v.x0), ch = r.img_h / (v.y1 - v.y0);
        for (int i = 0; i < int(promise.size()); ++i)
            for (int j : promise[i]) {
                const ImVec2 a(r.img_x + (j - v.x0) * cw, r.img_y + (i - v.y0) * ch);
                dl->AddRect(ImVec2(a.x + 1, a.y + 1), ImVec2(a.x + cw - 1, a.y + ch - 1),
                            IM_COL32(0, 230, 255, 255), 0, 0, 2.0f);
            }
        dl->PopClipRect();
    }
    ImGui::EndChild();
}

}  // namespace attnviz::app

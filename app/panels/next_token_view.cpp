// The last stage of a model, drawn as what it is: the next-token distribution. The most likely tokens
// as bars of softmax(logits / T), with the raw model's (T = 1) as ghosts when T differs; the tokens
// sampling can draw (top-k, then top-p) in colour, those it cannot greyed, and the cut-off marked with
// the share it keeps. The knobs are the next-token panel's, so both always agree.
// GCC 12 false positive inside its AVX-512 intrinsics when Eigen multiplies (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>

#include "app/fonts.hpp"
#include "app/panels/panels.hpp"
#include "app/panels/view_state.hpp"
#include "app/panels/views_internal.hpp"
#include "core/model.hpp"

namespace attnviz::app {

namespace {

// Spaces and line breaks made visible, so " the" and "the" differ on screen.
std::string shown_token(const std::string& s) {
    std::string out;
    for (char c : s) out += c == ' ' ? std::string("·") : c == '\n' ? std::string("⏎") : std::string(1, c);
    return out;
}

}  // namespace

void draw_next_token_view(AppState& state) {
    ModelUi& m = state.model;
    const Stage* logits_stage = state.trace->get("logits", -1);
    const Stage* probs_stage = state.trace->get("probs", -1);
    if (!logits_stage || !probs_stage || !logits_stage->stored_matrix()) {
        ImGui::TextDisabled("No logits in this run.");
        return;
    }
    NextTokenViewState& v = views(state).next_token;
    const float T = std::max(0.05f, m.temperature);
    if (v.generation != state.trace_generation || v.temperature != T || v.top_k != m.top_k ||
        v.top_p != m.top_p) {
        try {
            v.dist = sampling_distribution(logits_stage->stored_matrix()->row(0), double(T),
                                           std::max(0, m.top_k), double(std::clamp(m.top_p, 0.01f, 1.0f)));
        } catch (const std::exception& e) {
            ImGui::TextDisabled("%s", e.what());
            return;
        }
        v.kept_mass = 0;
        for (int r = 0; r < v.dist.kept; ++r) v.kept_mass += v.dist.tempered(v.dist.order[std::size_t(r)]);
        v.generation = state.trace_generation;
        v.temperature = T;
        v.top_k = m.top_k;
        v.top_p = m.top_p;
    }
    const SamplingDistribution& cut = v.dist;
    const int V = int(cut.order.size());

    // --- title and knobs --------------------------------------------------------------------------
    ImGui::PushFont(app_font(FontRole::Bold));
    ImGui::TextUnformatted(m.encoder ? "The masked word: p = softmax(z / T), then top-k, then top-p"
                                     : "Next token: p = softmax(z / T), then top-k, then top-p");
    ImGui::PopFont();
    if (m.encoder)
        help_marker(
            "The model's last stage. z are the logits at the [MASK] (the one chosen in the Fill the mask "
            "panel); dividing by T before the softmax sharpens (T < 1) or flattens (T > 1) the distribution; "
            "the outlined ghost bars are T = 1. Top-k and top-p cut the list as for a next token.");
    else
        help_marker(
            "The model's last stage. z are the logits of the last token's position; dividing by T before the "
            "softmax sharpens (T < 1) or flattens (T > 1) the distribution; the outlined ghost bars are T = "
            "1. "
            "Sampling keeps the k most likely tokens (top-k), then, of those, the fewest whose share reaches "
            "p "
            "(top-p), and draws among them in proportion to their bars. Greyed tokens can never be drawn; "
            "the "
            "line marks the cut.");
    const float knob_w = ImGui::GetFontSize() * 8.0f;
    ImGui::SetNextItemWidth(knob_w);
    ImGui::SliderFloat("##nt_T", &m.temperature, 0.05f, 5.0f, "T = %.2f", ImGuiSliderFlags_Logarithmic);
    remember_item_rect(state, "next_token_T");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(knob_w);
    ImGui::SliderInt("##nt_k", &m.top_k, 0, 100, m.top_k == 0 ? "top-k off" : "top-k = %d");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(knob_w);
    ImGui::SliderFloat("##nt_p", &m.top_p, 0.05f, 1.0f, m.top_p >= 1.0f ? "top-p off" : "top-p = %.2f");
    remember_item_rect(state, "next_token_top_p");
    char summary[160];
    std::snprintf(summary, sizeof summary, "sampling can draw %d of %d tokens, %.1f %% of the probability",
                  cut.kept, V, v.kept_mass * 100.0);
    ImGui::TextDisabled("%s", summary);

    // --- the bars ---------------------------------------------------------------------------------
    ImGui::BeginChild("##next_token_bars", ImVec2(0, 0), false);
    const float row_h = ImGui::GetTextLineHeight() + 4.0f;
    const int rows = std::clamp(int(ImGui::GetContentRegionAvail().y / row_h) - 1, 5,
                                std::min(V, std::max(40, cut.kept + 5)));
    ImFont* mono = app_font(FontRole::Mono);
    float label_w = ImGui::GetFontSize() * 4.0f;
    const auto& vocab = logits_stage->cols;
    for (int r = 0; r < rows && r < V; ++r)
        label_w =
            std::max(label_w, mono->CalcTextSizeA(mono->FontSize, 1e9f, 0,
                                                  shown_token(vocab.label(cut.order[std::size_t(r)])).c_str())
                                      .x +
                                  10.0f);
    const float pct_w = ImGui::CalcTextSize("100.0 %  Σ 100 %").x + 10.0f;
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float bar_x = origin.x + label_w,
                bar_w = std::max(60.0f, ImGui::GetContentRegionAvail().x - label_w - pct_w);
    double top = 0;
    for (int r = 0; r < rows && r < V; ++r) {
        const int id = cut.order[std::size_t(r)];
        top = std::max({top, double(cut.tempered(id)), double(cut.model(id))});
    }
    top = std::max(top, 1e-9);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    double cum = 0;
    for (int r = 0; r < rows && r < V; ++r) {
        const int id = cut.order[std::size_t(r)];
        const bool kept = r < cut.kept;
        const double p = cut.tempered(id), p1 = cut.model(id);
        cum += p;
        const float y = origin.y + float(r) * row_h;
        const ImU32 text_col = ImGui::GetColorU32(kept ? ImGuiCol_Text : ImGuiCol_TextDisabled);
        const std::string label = shown_token(vocab.label(id));
        const float tw = mono->CalcTextSizeA(mono->FontSize, 1e9f, 0, label.c_str()).x;
        dl->AddText(mono, mono->FontSize, ImVec2(bar_x - 8.0f - tw, y + 2.0f), text_col, label.c_str());
        const float w = float(p / top) * bar_w;
        dl->AddRectFilled(ImVec2(bar_x, y + 2.0f), ImVec2(bar_x + std::max(1.0f, w), y + row_h - 2.0f),
                          kept ? IM_COL32(64, 168, 168, 255) : IM_COL32(90, 92, 100, 255), 2.0f);
        if (T != 1.0f) {
            const float w1 = float(p1 / top) * bar_w;
            dl->AddRect(ImVec2(bar_x, y + 2.0f), ImVec2(bar_x + std::max(1.0f, w1), y + row_h - 2.0f),
                        IM_COL32(230, 230, 230, 150), 2.0f);
        }
        char pct[48];
        std::snprintf(pct, sizeof pct, "%5.1f %%  Σ %3.0f %%", p * 100.0, cum * 100.0);
        dl->AddText(ImVec2(bar_x + bar_w + 8.0f, y + 2.0f), text_col, pct);
        ImGui::SetCursorScreenPos(ImVec2(origin.x, y));
        ImGui::InvisibleButton(("##nt_row" + std::to_string(r)).c_str(), ImVec2(label_w + bar_w, row_h));
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("token %d \"%s\": p = %.4f at T = %.2f (%.4f at T = 1)%s", id, label.c_str(), p,
                              double(T), p1, kept ? "" : "\nsampling cannot draw it");
        if (r + 1 == cut.kept) {  // the cut-off: below this line sampling never draws
            const float ly = y + row_h;
            dl->AddLine(ImVec2(origin.x, ly), ImVec2(bar_x + bar_w + pct_w, ly), IM_COL32(255, 200, 80, 255),
                        2.0f);
            char cut_text[96];
            const bool by_p = cut.cut == SamplingCut::TopP;
            std::snprintf(cut_text, sizeof cut_text, "%s cut: %d token%s, %.1f %%",
                          by_p ? "top-p" : (cut.cut == SamplingCut::TopK ? "top-k" : "no"), cut.kept,
                          cut.kept == 1 ? "" : "s", v.kept_mass * 100.0);
            const ImVec2 ts = ImGui::CalcTextSize(cut_text);
            dl->AddRectFilled(ImVec2(bar_x + bar_w - ts.x - 6.0f, ly - ts.y - 2.0f),
                              ImVec2(bar_x + bar_w, ly), IM_COL32(40, 40, 46, 230));
            dl->AddText(ImVec2(bar_x + bar_w - ts.x - 3.0f, ly - ts.y - 1.0f), IM_COL32(255, 200, 80, 255),
                        cut_text);
            state.widget_rects["next_token_cut"] = {origin.x, ly - 1.0f, bar_x + bar_w - origin.x, 2.0f};
        }
    }
    ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + float(std::min(rows, V)) * row_h + 4.0f));
    if (V > rows) ImGui::TextDisabled("… %d more tokens, %.2f %% together", V - rows, (1.0 - cum) * 100.0);
    ImGui::EndChild();
}

}  // namespace attnviz::app

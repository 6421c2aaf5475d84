// The next-token panel: what the model predicts after the text — the ten most likely tokens with
// their probabilities as bars, the sampling knobs (temperature, top-k, top-p) and two buttons that
// append the greedy or a sampled token to the text, so a learner steps through generation and sees
// the new token's attention in every layer.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "app/fonts.hpp"
#include "app/panels/panels.hpp"

namespace attnviz::app {

namespace {

// Spaces and line breaks made visible, so " the" and "the" differ on screen.
std::string visible(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == ' ')
            out += "·";
        else if (c == '\n')
            out += "⏎";
        else
            out += c;
    }
    return out;
}

}  // namespace

void draw_next_token_panel(AppState& state) {
    ModelUi& m = state.model;
    ImGui::Spacing();
    ImGui::PushFont(app_font(FontRole::Bold));
    ImGui::TextUnformatted("Next token");
    ImGui::PopFont();
    help_marker(
        "The model's prediction for the token after your text: softmax(logits / T) over the whole "
        "vocabulary, the ten most likely shown (· is a space). T < 1 sharpens the distribution, T > 1 "
        "flattens it. Sampling keeps only the top-k tokens (0 = all), then the smallest set whose "
        "probability reaches top-p, renormalises and draws one. 'Append greedy' always takes the most "
        "likely token; 'Append sampled' draws one. The text grows by that token and every layer is "
        "recomputed: look at the new last row of the weights to see what it attended to.");
    ImGui::Separator();
    if (m.top.empty()) {
        ImGui::TextDisabled(state.updating ? "Computing…" : "No prediction yet.");
    } else {
        const float text_w = ImGui::GetFontSize() * 7.0f;
        const float bar_w = std::max(40.0f, ImGui::GetContentRegionAvail().x - text_w - 8.0f);
        for (const ModelUi::Candidate& c : m.top) {
            ImGui::PushFont(app_font(FontRole::Mono));
            const std::string label = visible(c.text);
            ImGui::TextUnformatted(label.c_str());
            ImGui::PopFont();
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("token id %d", c.id);
            ImGui::SameLine(text_w);
            char pct[32];
            std::snprintf(pct, sizeof pct, "%.1f%%", c.p * 100.0);
            ImGui::ProgressBar(float(c.p), ImVec2(bar_w, ImGui::GetTextLineHeight()), pct);
        }
    }
    ImGui::Spacing();
    const float label_w = ImGui::GetFontSize() * 5.0f;
    ImGui::PushItemWidth(-label_w);
    ImGui::SliderFloat("T", &m.temperature, 0.05f, 5.0f, "%.2f", ImGuiSliderFlags_Logarithmic);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Temperature of softmax(logits / T)");
    ImGui::SliderInt("top-k", &m.top_k, 0, 100, m.top_k == 0 ? "off" : "%d");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Sample among the k most likely tokens (0 = all)");
    ImGui::SliderFloat("top-p", &m.top_p, 0.05f, 1.0f, m.top_p >= 1.0f ? "off" : "%.2f");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Sample among the smallest set of tokens whose probability reaches p (1 = off)");
    ImGui::PopItemWidth();
    ImGui::BeginDisabled(m.top.empty() || state.updating);
    if (ImGui::Button("Append greedy")) m.append_request = 1;
    remember_item_rect(state, "append_greedy");
    ImGui::SameLine();
    if (ImGui::Button("Append sampled")) m.append_request = 2;
    remember_item_rect(state, "append_sampled");
    ImGui::EndDisabled();
    if (!m.last_appended.empty()) {
        ImGui::SameLine();
        ImGui::TextDisabled("last: \"%s\"", visible(m.last_appended).c_str());
    }
}

}  // namespace attnviz::app

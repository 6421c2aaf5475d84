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

// `s` cut to fit `width` pixels at the current font, ending in "…" when cut (whole UTF-8 characters).
std::string elide(const std::string& s, float width) {
    if (ImGui::CalcTextSize(s.c_str()).x <= width) return s;
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        std::size_t j = i + 1;
        while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
        const std::string next = out + s.substr(i, j - i);
        if (ImGui::CalcTextSize((next + "…").c_str()).x > width) break;
        out = next;
        i = j;
    }
    return out + "…";
}

}  // namespace

void draw_next_token_panel(AppState& state) {
    ModelUi& m = state.model;
    ImGui::Spacing();
    ImGui::PushFont(app_font(FontRole::Bold));
    ImGui::TextUnformatted("Next token");
    ImGui::PopFont();
    help_marker(
        "The model's prediction for the token after your text, the ten most likely shown (· is a "
        "space). The bar is the chance that sampling draws the token: softmax(logits / T), then only "
        "the top-k tokens (0 = all), then only the smallest most-likely-first set whose probability "
        "reaches top-p, renormalised so the kept tokens sum to 100 %. Greyed tokens cannot be drawn; "
        "the line marks the cut. The number on the right is the model's own probability, softmax(logits) "
        "at T = 1. T < 1 sharpens the distribution, T > 1 flattens it. 'Append greedy' always takes the "
        "most likely token; 'Append sampled' draws one from the bars. The text grows by that token and "
        "every layer is recomputed: look at the new last row of the weights to see what it attended to.");
    if (m.seq2seq) {  // an encoder–decoder: the decoder's next token, appended to the target
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextDisabled(
            "The decoder's next target token: Append adds it to the target and pins its row of "
            "cross-attention (which source tokens it read).");
        ImGui::PopTextWrapPos();
    }
    ImGui::Separator();
    if (m.top.empty()) {
        ImGui::TextDisabled(state.updating ? "Computing…" : "No prediction yet.");
    } else {
        const float em = ImGui::GetFontSize();
        const float gap = ImGui::GetStyle().ItemSpacing.x;
        // Columns: token, the sampling chance as a bar, the model's own probability. A narrow panel
        // (a large UI scale) gives each token two rows: the token and its model probability, then the bar.
        const float avail = ImGui::GetContentRegionAvail().x;
        const float raw_w = ImGui::CalcTextSize("100.0%").x;
        const bool raw_column = avail - em * 6.0f - raw_w - 2.0f * gap >= em * 5.0f;
        const float text_w = raw_column ? em * 6.0f : std::max(1.0f, avail - raw_w - gap);
        const float bar_w = std::max(1.0f, raw_column ? avail - text_w - raw_w - 2.0f * gap : avail);
        const float x_head = ImGui::GetCursorPosX();
        ImGui::TextDisabled("token");
        if (raw_column) {
            ImGui::SameLine(x_head + text_w);
            ImGui::TextDisabled("%s", elide("chance when sampling", bar_w).c_str());
            ImGui::SameLine(x_head + text_w + bar_w + gap);
        } else {
            ImGui::SameLine(x_head + text_w + gap);
        }
        ImGui::TextDisabled("model");
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip(
                "softmax(logits): the model's probability at T = 1; the bars: the chance that "
                "sampling draws the token");
        for (std::size_t r = 0; r < m.top.size(); ++r) {
            const ModelUi::Candidate& c = m.top[r];
            const bool pickable = c.p_sample > 0;
            if (int(r) == m.sample_kept) {
                // The cut: everything below cannot be drawn.
                char cut[96];
                std::snprintf(cut, sizeof cut, "cut by %s: %d token%s can be drawn",
                              m.sample_cut.empty() ? "the knobs" : m.sample_cut.c_str(), m.sample_kept,
                              m.sample_kept == 1 ? "" : "s");
                ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.95f, 0.70f, 0.35f, 1.0f));
                ImGui::PushTextWrapPos(0.0f);  // (a narrow panel wraps it)
                ImGui::TextUnformatted(cut);
                ImGui::PopTextWrapPos();
                ImGui::PopStyleColor();
                record_item_layout("next_token.cut");
            }
            const float x0 = ImGui::GetCursorPosX();
            ImGui::PushFont(app_font(FontRole::Mono));
            const std::string full = visible(c.text);
            const std::string label = elide(full, text_w - gap);
            if (pickable)
                ImGui::TextUnformatted(label.c_str());
            else
                ImGui::TextDisabled("%s", label.c_str());
            ImGui::PopFont();
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip("\"%s\"  token id %d\nmodel %.2f%%, at T %.2f%%, when sampling %.2f%%",
                                  full.c_str(), c.id, c.p_model * 100.0, c.p * 100.0, c.p_sample * 100.0);
            record_item_layout("next_token.label" + std::to_string(r));
            if (!raw_column) {  // the model's probability on the token's row, the bar below
                ImGui::SameLine(x0 + text_w + gap);
                ImGui::TextDisabled("%.1f%%", c.p_model * 100.0);
                record_item_layout("next_token.model" + std::to_string(r));
            } else {
                ImGui::SameLine(x0 + text_w);
            }
            char pct[48];
            std::snprintf(pct, sizeof pct, pickable ? "%.1f%%" : "not drawn", c.p_sample * 100.0);
            if (!pickable) ImGui::PushStyleVar(ImGuiStyleVar_Alpha, 0.45f);
            ImGui::ProgressBar(float(c.p_sample), ImVec2(bar_w, ImGui::GetTextLineHeight()), pct);
            if (!pickable) ImGui::PopStyleVar();
            record_item_layout("next_token.bar" + std::to_string(r));
            if (raw_column) {
                ImGui::SameLine(x0 + text_w + bar_w + gap);
                ImGui::TextDisabled("%.1f%%", c.p_model * 100.0);
                record_item_layout("next_token.model" + std::to_string(r));
            }
        }
        if (m.sample_kept > int(m.top.size())) {
            double shown = 0;
            for (const auto& c : m.top) shown += c.p_sample;
            ImGui::PushTextWrapPos(0.0f);
            ImGui::TextDisabled("+ %d more tokens can be drawn (%.1f%% together)",
                                m.sample_kept - int(m.top.size()), std::max(0.0, 1.0 - shown) * 100.0);
            ImGui::PopTextWrapPos();
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

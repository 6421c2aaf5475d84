// The Interventions panel, beside the model view: the decisive experiment on a head is to remove it and
// watch the prediction. Click heads in the grid to knock them out (zero or mean ablation): the text's
// loss, its repeat loss and the next-token bars change, the unablated values stay as ghosts. The grid
// itself is each head's importance (Δloss when it alone is knocked out), computed in the background.
// A patching tab runs a corrupt text with one head's output taken from a clean text; the direct logit
// attribution splits the next token's logit by head and MLP; the logit lens reads the residual stream
// after every layer. All numbers come from app/interventions_worker.hpp (core/interventions.hpp).
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "app/fonts.hpp"
#include "app/panels/panels.hpp"
#include "app/panels/views_internal.hpp"
#include "io/colormap.hpp"

namespace attnviz::app {

namespace {

constexpr const char* kInterventionsHelp =
    "Does a head matter? Knock it out and look. A head's output z (n × d_head, before W_O) is set to 0 at "
    "every position (zero ablation) or to its mean over the positions (mean ablation: keeps its average "
    "contribution, removes what depends on the token); every later layer is recomputed.\n\n"
    "The grid: each head's importance, the change of the text's loss when that head alone is knocked out "
    "(red: the loss rises, the head helped). Click heads to knock them out together; click again to "
    "restore.\n\nloss = mean over i of −ln p(token i+1 | tokens 0..i). The repeat loss is the same mean over "
    "the predictions whose pair of tokens already occurred earlier in the text: exactly what an induction "
    "head copies (… A B … A → B).";

ImU32 rgb(Rgb8 c, int alpha = 255) {
    return IM_COL32(c.r, c.g, c.b, alpha);
}

std::string signed_text(double v, int digits = 2) {
    char b[32];
    std::snprintf(b, sizeof b, "%+.*f", digits, v);
    return b;
}

std::string shown_text(const std::string& s) {
    std::string out;
    for (char c : s) out += c == ' ' ? std::string("·") : c == '\n' ? std::string("⏎") : std::string(1, c);
    return out;
}

bool is_ablated(const InterventionsUi& iv, const std::string& name) {
    return std::find(iv.ablated.begin(), iv.ablated.end(), name) != iv.ablated.end();
}

void toggle(InterventionsUi& iv, const std::string& name) {
    auto it = std::find(iv.ablated.begin(), iv.ablated.end(), name);
    if (it != iv.ablated.end())
        iv.ablated.erase(it);
    else
        iv.ablated.push_back(name);
    std::sort(iv.ablated.begin(), iv.ablated.end());
}

// A layers × heads grid of numbers, coloured by `range`; returns the head clicked ("" = none).
std::string head_grid(AppState& state, const char* id, const std::vector<std::vector<double>>& values,
                      const ColorRange& range, bool clickable, float width,
                      const std::vector<std::vector<double>>* repeat = nullptr) {
    const ModelUi& m = state.model;
    const InterventionsUi& iv = state.interventions;
    const int L = m.n_layer, H = m.n_head;
    const float label_w = ImGui::CalcTextSize("layer 00 ").x;
    const float cell = std::clamp((width - label_w) / float(std::max(1, H)) - 3.0f, 26.0f, 96.0f);
    const float cell_h = std::max(cell * 0.62f, ImGui::GetTextLineHeight() * 2.0f + 4.0f);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 o = ImGui::GetCursorScreenPos();
    std::string clicked;
    ImFont* small = app_font(FontRole::Small);
    for (int h = 0; h < H; ++h) {
        const std::string t = std::to_string(h);
        dl->AddText(
            ImVec2(o.x + label_w + h * (cell + 3.0f) + cell * 0.5f - ImGui::CalcTextSize(t.c_str()).x * 0.5f,
                   o.y),
            ImGui::GetColorU32(ImGuiCol_TextDisabled), t.c_str());
    }
    const float top = o.y + ImGui::GetTextLineHeightWithSpacing();
    for (int l = 0; l < L; ++l) {
        const float y = top + l * (cell_h + 3.0f);
        const std::string row = "layer " + std::to_string(l);
        dl->AddText(ImVec2(o.x, y + cell_h * 0.5f - ImGui::GetTextLineHeight() * 0.5f),
                    ImGui::GetColorU32(ImGuiCol_TextDisabled), row.c_str());
        for (int h = 0; h < H; ++h) {
            const ImVec2 p0(o.x + label_w + h * (cell + 3.0f), y), p1(p0.x + cell, y + cell_h);
            const std::string name = std::to_string(l) + "." + std::to_string(h);
            const bool known =
                std::size_t(l) < values.size() && std::size_t(h) < values[std::size_t(l)].size();
            const double v = known ? values[std::size_t(l)][std::size_t(h)] : 0.0;
            const bool finite = known && std::isfinite(v);
            dl->AddRectFilled(p0, p1, finite ? rgb(value_rgb(range, float(v))) : IM_COL32(50, 52, 60, 255),
                              3.0f);
            const bool dark_text =
                finite && std::fabs(float(v)) < 0.55f * std::max(std::fabs(range.lo), std::fabs(range.hi)) &&
                range.map == ColorMap::Diverging;
            const ImU32 ink = dark_text ? IM_COL32(20, 20, 20, 255) : IM_COL32(240, 240, 240, 255);
            dl->AddText(small, small->FontSize, ImVec2(p0.x + 4.0f, p0.y + 2.0f), ink, name.c_str());
            // The Δ repeat loss in the corner, where known and where it fits.
            if (repeat && std::size_t(l) < repeat->size() &&
                std::size_t(h) < (*repeat)[std::size_t(l)].size()) {
                const std::string r = "rep " + signed_text((*repeat)[std::size_t(l)][std::size_t(h)]);
                const float rw = small->CalcTextSizeA(small->FontSize, 1e9f, 0, r.c_str()).x;
                if (rw + ImGui::CalcTextSize(name.c_str()).x + 10.0f < cell)
                    dl->AddText(small, small->FontSize, ImVec2(p1.x - rw - 3.0f, p0.y + 2.0f), ink,
                                r.c_str());
            }
            const std::string num = !known ? "…" : finite ? signed_text(v) : "n/a";
            dl->AddText(ImVec2(p0.x + 4.0f, p1.y - ImGui::GetTextLineHeight() - 2.0f), ink, num.c_str());
            ImGui::SetCursorScreenPos(p0);
            const std::string bid = std::string("##") + id + name;
            if (ImGui::InvisibleButton(bid.c_str(), ImVec2(cell, cell_h)) && clickable) clicked = name;
            state.widget_rects[std::string(id) + "_" + std::to_string(l) + "_" + std::to_string(h)] = {
                p0.x, p0.y, cell, cell_h};
            const bool off = clickable && is_ablated(iv, name);
            if (off) {
                dl->AddRect(ImVec2(p0.x - 1, p0.y - 1), ImVec2(p1.x + 1, p1.y + 1),
                            IM_COL32(255, 210, 80, 255), 3.0f, 0, 3.0f);
                dl->AddLine(p0, p1, IM_COL32(255, 210, 80, 200), 2.0f);
                dl->AddLine(ImVec2(p1.x, p0.y), ImVec2(p0.x, p1.y), IM_COL32(255, 210, 80, 200), 2.0f);
            }
            if (ImGui::IsItemHovered()) {
                dl->AddRect(p0, p1, IM_COL32(255, 255, 255, 220), 3.0f, 0, 1.5f);
                if (clickable) {
                    std::string rep;
                    if (repeat && std::size_t(l) < repeat->size() &&
                        std::size_t(h) < (*repeat)[std::size_t(l)].size())
                        rep = ", repeat loss " + signed_text((*repeat)[std::size_t(l)][std::size_t(h)], 3);
                    ImGui::SetTooltip("head %s: loss %s%s when knocked out alone.\nClick to %s it.",
                                      name.c_str(), finite ? signed_text(v, 3).c_str() : "not known yet",
                                      rep.c_str(), off ? "restore" : "knock out");
                } else
                    ImGui::SetTooltip(
                        "head %s: %s of the clean-vs-corrupt difference restored by patching it",
                        name.c_str(), finite ? signed_text(v, 3).c_str() : "n/a");
            }
        }
    }
    ImGui::SetCursorScreenPos(ImVec2(o.x, top + L * (cell_h + 3.0f)));
    ImGui::Dummy(ImVec2(label_w + H * (cell + 3.0f), 2.0f));
    return clicked;
}

void loss_line(const char* what, double base, double now, bool ablated, const char* tip) {
    if (!std::isfinite(base)) {
        ImGui::TextDisabled("%s: —", what);
        return;
    }
    ImGui::Text("%s: %.3f", what, base);
    if (ablated && std::isfinite(now)) {
        ImGui::SameLine(0, 4);
        ImGui::Text("→ %.3f", now);
        ImGui::SameLine(0, 6);
        const double d = now - base;
        ImGui::TextColored(d > 0.005    ? ImVec4(1.0f, 0.45f, 0.4f, 1)
                           : d < -0.005 ? ImVec4(0.45f, 0.75f, 1.0f, 1)
                                        : ImVec4(0.7f, 0.7f, 0.7f, 1),
                           "(%s)", signed_text(d).c_str());
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
}

void intervention_bars(const InterventionsUi& iv, bool ablated) {
    ImGui::PushFont(app_font(FontRole::Bold));
    ImGui::TextUnformatted("Next token");
    ImGui::PopFont();
    ImGui::SameLine();
    ImGui::TextDisabled(ablated ? "(outlines: without the ablation)" : "(the model as it is)");
    const float label_w = ImGui::GetFontSize() * 5.0f;
    const float pct_w = ImGui::CalcTextSize(ablated ? "100.0% (100.0%)" : "100.0%").x + 8.0f;
    const float bar_w = std::max(40.0f, ImGui::GetContentRegionAvail().x - label_w - pct_w);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* mono = app_font(FontRole::Mono);
    for (const InterventionsUi::Bar& b : iv.bars) {
        const ImVec2 p = ImGui::GetCursorScreenPos();
        const float h = ImGui::GetTextLineHeight();
        dl->AddText(mono, mono->FontSize, ImVec2(p.x, p.y), ImGui::GetColorU32(ImGuiCol_Text),
                    shown_text(b.text).c_str());
        const float x0 = p.x + label_w;
        dl->AddRectFilled(ImVec2(x0, p.y + 1), ImVec2(x0 + std::max(1.0f, float(b.p) * bar_w), p.y + h - 1),
                          IM_COL32(64, 168, 168, 255), 2.0f);
        if (ablated)
            dl->AddRect(ImVec2(x0, p.y + 1),
                        ImVec2(x0 + std::max(1.0f, float(b.p_base) * bar_w), p.y + h - 1),
                        IM_COL32(235, 235, 235, 170), 2.0f, 0, 1.5f);
        char pct[48];
        if (ablated)
            std::snprintf(pct, sizeof pct, "%.1f%% (%.1f%%)", b.p * 100.0, b.p_base * 100.0);
        else
            std::snprintf(pct, sizeof pct, "%.1f%%", b.p * 100.0);
        dl->AddText(ImVec2(x0 + bar_w + 6.0f, p.y), ImGui::GetColorU32(ImGuiCol_TextDisabled), pct);
        ImGui::Dummy(ImVec2(label_w + bar_w, h + 2.0f));
    }
}

void attribution_chart(AppState& state) {
    InterventionsUi& iv = state.interventions;
    ImGui::PushFont(app_font(FontRole::Bold));
    ImGui::TextUnformatted("Who wrote the next token?");
    ImGui::PopFont();
    help_marker(
        "Direct logit attribution at the last position: the final residual is a sum of parts (the "
        "embeddings, each head's output through its rows of W_O, each attention bias, each MLP). Each part "
        "goes through the final norm with the whole residual's scale and is dotted with the chosen token's "
        "unembedding row: the parts add up to the token's logit. A long bar to the right: that part pushes "
        "this token up directly (heads that act through later layers show little here).");
    if (iv.parts.empty()) {
        ImGui::TextDisabled(iv.busy ? "computing…" : "—");
        return;
    }
    // The token attributed: any of the next-token bars (default: the most likely).
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9.0f);
    if (ImGui::BeginCombo("##dla_target", shown_text(iv.target_text).c_str())) {
        for (const InterventionsUi::Bar& b : iv.bars)
            if (ImGui::Selectable(shown_text(b.text).c_str(), b.text == iv.target_text)) iv.target = b.id;
        ImGui::EndCombo();
    }
    ImGui::SameLine();
    ImGui::TextDisabled("logit %.3f = Σ parts %.3f", iv.target_logit, iv.parts_sum);
    double top = 1e-9;
    for (const auto& p : iv.parts) top = std::max(top, std::fabs(p.second));
    const float label_w = ImGui::CalcTextSize("attn_bias.00 ").x;
    const float half =
        std::max(40.0f, (ImGui::GetContentRegionAvail().x - label_w - ImGui::GetFontSize() * 3.5f) * 0.5f);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    for (const auto& [name, value] : iv.parts) {
        const ImVec2 p = ImGui::GetCursorScreenPos();
        const float h = ImGui::GetTextLineHeight();
        dl->AddText(ImVec2(p.x, p.y), ImGui::GetColorU32(ImGuiCol_TextDisabled), name.c_str());
        const float mid = p.x + label_w + half;
        const float w = float(value / top) * half;
        dl->AddRectFilled(ImVec2(std::min(mid, mid + w), p.y + 2),
                          ImVec2(std::max(mid, mid + w), p.y + h - 2),
                          value >= 0 ? IM_COL32(214, 96, 77, 255) : IM_COL32(67, 147, 195, 255));
        dl->AddLine(ImVec2(mid, p.y), ImVec2(mid, p.y + h), IM_COL32(200, 200, 200, 120));
        char num[24];
        std::snprintf(num, sizeof num, "%+.2f", value);
        dl->AddText(ImVec2(mid + half + 6.0f, p.y), ImGui::GetColorU32(ImGuiCol_Text), num);
        ImGui::Dummy(ImVec2(label_w + 2 * half, h));
    }
}

void logit_lens_table(const InterventionsUi& iv) {
    ImGui::PushFont(app_font(FontRole::Bold));
    ImGui::TextUnformatted("Logit lens");
    ImGui::PopFont();
    help_marker(
        "The residual stream after the embeddings and after each layer, put through the final norm and the "
        "unembedding as if the model stopped there: its five most likely next tokens. Watch the answer "
        "appear, layer by layer.");
    if (iv.lens.empty()) {
        ImGui::TextDisabled("—");
        return;
    }
    if (ImGui::BeginTable("##lens", 6, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingStretchSame)) {
        ImGui::TableSetupColumn("after", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 4.0f);
        for (int k = 1; k <= 5; ++k) ImGui::TableSetupColumn(("#" + std::to_string(k)).c_str());
        ImGui::TableHeadersRow();
        for (const auto& row : iv.lens) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(row.layer == "embed" ? "embed" : ("layer " + row.layer).c_str());
            for (const auto& [tok, p] : row.top) {
                ImGui::TableNextColumn();
                const int a = int(std::lround(40 + 160 * std::clamp(p, 0.0, 1.0)));
                ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, IM_COL32(64, 168, 168, a));
                ImGui::PushFont(app_font(FontRole::Mono));
                ImGui::TextUnformatted(shown_text(tok).c_str());
                ImGui::PopFont();
                ImGui::PushFont(app_font(FontRole::Small));
                ImGui::TextDisabled("%.1f%%", p * 100.0);
                ImGui::PopFont();
            }
        }
        ImGui::EndTable();
    }
}

void ablate_tab(AppState& state) {
    InterventionsUi& iv = state.interventions;
    const float total = ImGui::GetContentRegionAvail().x;
    const float left_w = std::max(260.0f, total * 0.55f);
    ImGui::BeginChild("##interv_left", ImVec2(left_w, 0), false);
    ImGui::PushFont(app_font(FontRole::Bold));
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted("Head importance: Δloss, each head knocked out alone");
    ImGui::PopTextWrapPos();
    ImGui::PopFont();
    record_item_layout("interv.grid_title");
    double a = 0.05;
    for (const auto& row : iv.importance)
        for (double v : row)
            if (std::isfinite(v)) a = std::max(a, std::fabs(v));
    const ColorRange range{ColorMap::Diverging, -float(a), float(a), ScaleMode::Max};
    const std::string clicked =
        head_grid(state, "interv_head", iv.importance, range, true, ImGui::GetContentRegionAvail().x,
                  iv.importance_repeat.empty() ? nullptr : &iv.importance_repeat);
    if (!clicked.empty()) toggle(iv, clicked);
    if (iv.importance.empty()) {
        ImGui::TextDisabled("computing every head's Δloss…");
    } else {
        // The head whose absence costs the most (on the repeated pairs when the text repeats itself:
        // the induction circuit): the one to try first.
        const bool by_repeat = !iv.importance_repeat.empty();
        const auto& grid = by_repeat ? iv.importance_repeat : iv.importance;
        std::string best;
        double best_v = -1e300;
        for (std::size_t l = 0; l < grid.size(); ++l)
            for (std::size_t h = 0; h < grid[l].size(); ++h)
                if (std::isfinite(grid[l][h]) && grid[l][h] > best_v) {
                    best_v = grid[l][h];
                    best = std::to_string(l) + "." + std::to_string(h);
                }
        ImGui::PushTextWrapPos(0.0f);
        if (iv.ablated.empty() && !best.empty())
            ImGui::TextColored(ImVec4(1.0f, 0.83f, 0.4f, 1.0f),
                               "Try head %s: knocked out alone, it raises the %s by %.2f. Click it.",
                               best.c_str(), by_repeat ? "repeat loss" : "loss", best_v);
        ImGui::TextDisabled("%s ablation%s; grid computed in %.1f ms in the background",
                            iv.importance_mode.c_str(), by_repeat ? " (corner: Δ repeat loss)" : "",
                            iv.importance_ms);
        ImGui::PopTextWrapPos();
    }
    ImGui::Spacing();
    ImGui::Separator();
    const bool ablated = !iv.ablated.empty();
    if (ablated) {
        std::string list;
        for (const std::string& h : iv.ablated) list += (list.empty() ? "" : ", ") + h;
        ImGui::TextColored(ImVec4(1.0f, 0.83f, 0.4f, 1.0f), "Knocked out: %s", list.c_str());
        ImGui::SameLine();
        if (ImGui::SmallButton("Restore all")) iv.ablated.clear();
        remember_item_rect(state, "interv_restore");
    } else {
        ImGui::TextDisabled("No head knocked out.");
    }
    loss_line("loss of the text", iv.base_loss, iv.loss, ablated,
              "mean over the text of −ln p(next token): lower is better");
    if (iv.repeat_count > 0) {
        const std::string label = "repeat loss (" + std::to_string(iv.repeat_count) + " repeated pairs)";
        loss_line(label.c_str(), iv.base_repeat_loss, iv.repeat_loss, ablated,
                  "the loss on the predictions whose pair of tokens occurred earlier in the text: what an "
                  "induction "
                  "head can copy");
    } else {
        ImGui::TextDisabled("repeat loss: no pair of tokens repeats in this text");
    }
    ImGui::Spacing();
    intervention_bars(iv, ablated);
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("##interv_right", ImVec2(0, 0), false);
    attribution_chart(state);
    ImGui::Spacing();
    logit_lens_table(iv);
    ImGui::EndChild();
}

void patch_tab(AppState& state) {
    InterventionsUi& iv = state.interventions;
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled(
        "Activation patching: run the corrupt text, but take one head's output z from the clean text's run. "
        "If that restores the answer (m = logit(answer) − logit(wrong) at the last position), the head "
        "carries "
        "what differs. Both texts must have the same number of tokens.");
    ImGui::PopTextWrapPos();
    const float label_w = ImGui::GetFontSize() * 6.5f;
    ImGui::PushItemWidth(-label_w);
    ImGui::InputText("clean text", &iv.clean_text);
    remember_item_rect(state, "interv_clean");
    ImGui::InputText("corrupt text", &iv.corrupt_text);
    remember_item_rect(state, "interv_corrupt");
    ImGui::PopItemWidth();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8.0f);
    ImGui::InputText("answer", &iv.answer);
    remember_item_rect(state, "interv_answer");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8.0f);
    ImGui::InputText("wrong", &iv.wrong);
    remember_item_rect(state, "interv_wrong");
    if (!iv.patch_error.empty()) {
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "%s", iv.patch_error.c_str());
        ImGui::PopTextWrapPos();
    }
    if (iv.corrupt_text.empty() || iv.answer.empty() || iv.wrong.empty()) {
        ImGui::TextDisabled("Type a corrupt text and the two single-token answers to patch.");
        if (iv.patched.empty()) return;
    }
    if (iv.patched.empty()) {
        ImGui::TextDisabled(iv.busy ? "patching every head…" : "—");
        return;
    }
    ImGui::Text("m clean %.3f, m corrupt %.3f", iv.m_clean, iv.m_corrupt);
    ImGui::TextDisabled(
        "each cell: (m patched − m corrupt) / (m clean − m corrupt); 1 = the head restores it all");
    const ColorRange range{ColorMap::Diverging, -1.0f, 1.0f, ScaleMode::Max};
    head_grid(state, "interv_patch", iv.patched, range, false, ImGui::GetContentRegionAvail().x * 0.6f);
}

}  // namespace

void draw_interventions_panel(AppState& state) {
    InterventionsUi& iv = state.interventions;
    if (!state.model.active) {
        ImGui::TextDisabled("Open a model (File ▸ Open model…) to intervene on its heads.");
        return;
    }
    if (state.model.seq2seq) {  // (ablate, patch and attribute run decoder-only models)
        ImGui::TextDisabled("Interventions read decoder-only models; %s is an encoder–decoder.",
                            state.model.name.c_str());
        return;
    }
    ImGui::PushFont(app_font(FontRole::Bold));
    ImGui::TextUnformatted("Interventions");
    ImGui::PopFont();
    help_marker(kInterventionsHelp);
    ImGui::SameLine(0, ImGui::GetFontSize() * 1.5f);
    if (ImGui::RadioButton("Ablate", !iv.patching)) iv.patching = false;
    remember_item_rect(state, "interv_tab_ablate");
    ImGui::SameLine();
    if (ImGui::RadioButton("Patch", iv.patching)) iv.patching = true;
    remember_item_rect(state, "interv_tab_patch");
    ImGui::SameLine(0, ImGui::GetFontSize() * 1.5f);
    ImGui::TextDisabled("knock out as");
    ImGui::SameLine();
    if (ImGui::RadioButton("zero", !iv.mean_mode)) iv.mean_mode = false;
    remember_item_rect(state, "interv_zero");
    ImGui::SameLine();
    if (ImGui::RadioButton("mean", iv.mean_mode)) iv.mean_mode = true;
    remember_item_rect(state, "interv_mean");
    if (!iv.error.empty()) {
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "%s", iv.error.c_str());
        ImGui::PopTextWrapPos();
    }
    ImGui::Separator();
    if (iv.patching)
        patch_tab(state);
    else
        ablate_tab(state);
}

}  // namespace attnviz::app

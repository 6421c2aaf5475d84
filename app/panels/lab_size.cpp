// Lab 5: how big is attention — parameters of one layer from its shape (4·d_model² in the usual
// case), GPT-3's numbers from the notes, and the attention pattern's memory against context length
// (core: size_lab).
#include <cmath>
#include <cstdio>
#include <string>

#include <imgui.h>

#include "app/panels/lab_common.hpp"
#include "app/panels/panels.hpp"
#include "core/error.hpp"
#include "core/labs.hpp"

namespace attnviz::app {

namespace {

struct SizeState {
    SizeLabParams params;
    bool have = false;
    SizeLab lab;
    std::string error;
    int computed_key[7] = {-1, -1, -1, -1, -1, -1, -1};
};

void row(const char* what, const std::string& value, const char* how = nullptr) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(what);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(value.c_str());
    ImGui::TableNextColumn();
    if (how) ImGui::TextDisabled("%s", how);
}

}  // namespace

void draw_lab_size(AppState& state, LabContext& ctx) {
    SizeState& s = ctx.state<SizeState>();
    if (ctx.closing) return;
    const LabText& text = lab_text(LabId::Size);

    lab_export_button(state, "size");
    ImGui::SameLine();
    lab_explanation(text.intro);

    LayerSize& ls = s.params.layer;
    ImGui::PushItemWidth(em(120));
    ImGui::InputInt("d_model", &ls.d_model, 64);
    ImGui::SameLine();
    ImGui::InputInt("heads h", &ls.heads, 1);
    ImGui::SameLine();
    ImGui::InputInt("d_k", &ls.d_k, 8);
    ImGui::SameLine();
    ImGui::InputInt("d_v", &ls.d_v, 8);
    ImGui::SameLine();
    ImGui::Checkbox("biases", &ls.bias);
    ImGui::SameLine();
    if (ImGui::Button("d_k = d_v = d_model/h") && ls.heads > 0) ls.d_k = ls.d_v = ls.d_model / ls.heads;
    ImGui::SameLine();
    if (ImGui::Button("GPT-3 layer")) ls = LayerSize{12288, 96, 128, 128, false};
    ImGui::PopItemWidth();
    help_marker(
        "Type any shape. With h·d_k = h·d_v = d_model and no biases the count is exactly 4·d_model²; "
        "otherwise the general formula applies.");

    const int k[7] = {ls.d_model, ls.heads, ls.d_k, ls.d_v, ls.bias ? 1 : 0, s.params.pattern_heads, 0};
    if (!s.have || !std::equal(k, k + 7, s.computed_key)) {
        std::copy(k, k + 7, s.computed_key);
        try {
            s.lab = size_lab(s.params);
            s.error.clear();
            s.have = true;
        } catch (const Error& e) {
            s.error = e.what();
        }
    }
    if (!s.error.empty()) lab_error(s.error);
    if (!s.have) return;
    const SizeLab& L = s.lab;
    const float avail_w = ImGui::GetContentRegionAvail().x;

    // --- left column: the counts --------------------------------------------------------------
    ImGui::BeginChild("counts", ImVec2(avail_w * 0.46f, 0), false);
    lab_heading(text.sections[0].heading);
    lab_formula(text.sections[0].formula);
    lab_explanation(text.sections[0].explanation);
    const ParamCount& P = L.layer;
    if (ImGui::BeginTable("params", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) {
        ImGui::TableSetupColumn("matrix", ImGuiTableColumnFlags_WidthFixed, 110);
        ImGui::TableSetupColumn("parameters", ImGuiTableColumnFlags_WidthFixed, 150);
        ImGui::TableSetupColumn("how");
        ImGui::TableHeadersRow();
        char how[96];
        std::snprintf(how, sizeof how, "h·d_model·d_k = %d·%d·%d%s", ls.heads, ls.d_model, ls.d_k,
                      ls.bias ? " + bias" : "");
        row("W_Q (all heads)", format_thousands(P.w_q), how);
        row("W_K (all heads)", format_thousands(P.w_k), how);
        std::snprintf(how, sizeof how, "h·d_model·d_v = %d·%d·%d%s", ls.heads, ls.d_model, ls.d_v,
                      ls.bias ? " + bias" : "");
        row("W_V (all heads)", format_thousands(P.w_v), how);
        std::snprintf(how, sizeof how, "h·d_v·d_model = %d·%d·%d%s", ls.heads, ls.d_v, ls.d_model,
                      ls.bias ? " + bias" : "");
        row("W_O", format_thousands(P.w_o), how);
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        lab_heading("total");
        ImGui::TableNextColumn();
        lab_heading(format_thousands(P.total));
        ImGui::TableNextColumn();
        ImGui::TextWrapped("%s", P.formula.c_str());
        ImGui::EndTable();
    }
    if (L.standard_shape) {
        ImGui::TextColored(ImVec4(0.5f, 0.9f, 0.6f, 1),
                           "h·d_k = h·d_v = d_model, no biases: total = 4·d_model² = %s",
                           format_thousands(L.four_d_model_sq).c_str());
    } else if (L.standard_layer.total > 0) {
        ImGui::TextWrapped(
            "Not the usual shape. For comparison, d_k = d_v = d_model/h = %d without biases gives "
            "4·d_model² = %s.",
            ls.heads > 0 ? ls.d_model / ls.heads : 0, format_thousands(L.standard_layer.total).c_str());
    } else {
        ImGui::TextWrapped(
            "h does not divide d_model, so there is no standard d_model/h layout to compare with.");
    }
    ImGui::Spacing();
    ImGui::Separator();
    lab_heading(text.sections[1].heading);
    lab_formula(text.sections[1].formula);
    lab_explanation(text.sections[1].explanation);
    if (ImGui::BeginTable("gpt3", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) {
        ImGui::TableSetupColumn("GPT-3 175B", ImGuiTableColumnFlags_WidthFixed, 170);
        ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthFixed, 150);
        ImGui::TableSetupColumn("how");
        ImGui::TableHeadersRow();
        const ModelPreset& g = L.gpt3;
        char how[96];
        std::snprintf(how, sizeof how, "vocab × d_model = %s × %s", format_thousands(g.vocab).c_str(),
                      format_thousands(g.d_model).c_str());
        row("embedding", format_thousands(L.gpt3_embedding), how);
        row("unembedding", format_thousands(L.gpt3_unembedding), "the same shape, transposed");
        row("both tables", format_thousands(L.gpt3_embed_sum), nullptr);
        std::snprintf(how, sizeof how, "h × d_k = %d × %d = d_model", g.heads, g.d_k);
        row("heads × head width", format_thousands(L.gpt3_heads_times_dk), how);
        row("one attention layer", format_thousands(L.gpt3_attention_layer.total), "4·d_model² = 4·12,288²");
        std::snprintf(how, sizeof how, "× %d layers", g.layers);
        row("attention, all layers", format_thousands(L.gpt3_attention_all_layers), how);
        row("whole model (GPT-3 paper, Table 2.1)", format_thousands(L.gpt3_total_params),
            "attention + MLP + embeddings");
        ImGui::EndTable();
    }
    ImGui::EndChild();
    ImGui::SameLine();

    // --- right column: the quadratic wall -----------------------------------------------------
    ImGui::BeginChild("wall", ImVec2(0, 0), false);
    lab_heading(text.sections[2].heading);
    lab_formula(text.sections[2].formula);
    lab_explanation(text.sections[2].explanation);
    ImGui::PushItemWidth(em(140));
    ImGui::SliderInt("heads whose patterns are kept", &s.params.pattern_heads, 1, 128);
    ImGui::PopItemWidth();
    PlotSeries mem;
    char lab[64];
    std::snprintf(lab, sizeof lab, "%d heads · n² · 4 bytes (one layer)", s.params.pattern_heads);
    mem.label = lab;
    for (std::size_t i = 0; i < L.context_n.size(); ++i) {
        mem.x.push_back(double(L.context_n[i]));
        mem.y.push_back(L.pattern_bytes[i]);
    }
    mem.color = palette(3);
    mem.markers = true;
    PlotSpec spec;
    spec.title = "memory of the attention pattern vs context length";
    spec.x_label = "context length n";
    spec.y_label = "bytes";
    spec.log_x = spec.log_y = true;
    spec.legend_right = false;
    const ImU32 cols[] = {IM_COL32(150, 220, 90, 220), IM_COL32(255, 200, 90, 220),
                          IM_COL32(255, 110, 110, 220)};
    int ci = 0;
    for (const MemoryCrossing& c : L.crossings) {
        char b[160];
        std::snprintf(b, sizeof b, "%s — crossed at n ≈ %s", c.label.c_str(),
                      format_thousands(std::int64_t(c.n_exact)).c_str());
        spec.ref_lines.push_back({true, c.bytes, b, cols[ci++ % 3]});
    }
    draw_line_plot("wall", spec, {mem}, ImVec2(0, std::max(300.0f, ImGui::GetContentRegionAvail().y - 170)));
    lab_findings(L.findings);
    ImGui::EndChild();
}

}  // namespace attnviz::app

// Lab 1: positional encoding — the PE matrix, similarity of positions, columns as curves, the shift
// = rotation property, and RoPE's relative-position dot product (core: positional_encoding_lab).
#include <cstdio>
#include <string>

#include <imgui.h>

#include "app/panels/lab_common.hpp"
#include "app/panels/panels.hpp"
#include "core/error.hpp"
#include "core/labs.hpp"

namespace attnviz::app {

namespace {

struct PeState {
    PeLabParams params;
    PeLabParams computed_for;
    bool have = false;
    PeLab lab;
    std::string error;
    std::uint64_t gen = 0;
    HeatmapViewState v_pe, v_sim, v_rows, v_diff, v_R, v_rope, v_add;
};

bool same(const PeLabParams& a, const PeLabParams& b) {
    return a.positions == b.positions && a.dims == b.dims && a.base == b.base &&
           a.curve_dims == b.curve_dims && a.p == b.p && a.delta == b.delta &&
           a.rope_positions == b.rope_positions && a.seed == b.seed;
}

std::string key(const PeState& s, const char* what) {
    return "pe/" + std::to_string(s.gen) + "/" + what;
}

void controls(PeState& s) {
    PeLabParams& p = s.params;
    ImGui::PushItemWidth(em(150));
    ImGui::SliderInt("positions n", &p.positions, 2, 256);
    ImGui::SameLine();
    ImGui::SliderInt("dims d", &p.dims, 2, 128);
    ImGui::SameLine();
    float base = float(p.base);
    if (ImGui::SliderFloat("base", &base, 1.5f, 100000.0f, "%.0f", ImGuiSliderFlags_Logarithmic))
        p.base = base;
    help_marker(
        "ωᵢ = base^(−2i/d): the base sets how slowly the last dimensions turn. 10000 is the "
        "Transformer's choice; a small base makes every column repeat quickly.");
    ImGui::PopItemWidth();
}

}  // namespace

void draw_lab_positional(AppState& state, LabContext& ctx) {
    PeState& s = ctx.state<PeState>();
    if (ctx.closing) return;
    const LabText& text = lab_text(LabId::PositionalEncoding);

    lab_export_button(state, "positional_encoding");
    ImGui::SameLine();
    lab_explanation(text.intro);
    controls(s);

    refresh_lab(s, !same(s.params, s.computed_for), positional_encoding_lab);
    if (!s.error.empty()) lab_error(s.error);
    if (!s.have) return;
    const PeLab& L = s.lab;
    const int P = int(L.PE.rows()), D = int(L.PE.cols());
    const float avail_w = ImGui::GetContentRegionAvail().x;

    if (!ImGui::BeginTabBar("pe_tabs")) return;
    // --- 0: the PE matrix and the similarity of positions ---------------------------------------
    if (ImGui::BeginTabItem("PE matrix & similarity", nullptr, lab_tab_flags(ctx, 0))) {
        lab_formula(text.sections[0].formula);
        lab_explanation(text.sections[0].explanation);
        lab_formula(text.sections[1].formula);
        lab_explanation(text.sections[1].explanation);
        const float h = std::max(
            260.0f, ImGui::GetContentRegionAvail().y - lab_findings_height(L.findings, avail_w) - 8.0f);
        const Axis pos = index_axis("position p", P), dim = index_axis("dimension", D),
                   pos2 = index_axis("position s", P);
        // Each heatmap lives in a fixed-size child region so its labels can never spill onto the
        // findings below (a tall, narrow PE matrix is stretched and its labels overhang otherwise).
        const ImVec2 cell(avail_w * 0.5f - 8, h);
        const ImGuiWindowFlags flags = ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse;
        if (ImGui::BeginChild("pe_region", cell, false, flags)) {
            lab_heatmap("pe", s.v_pe, key(s, "PE"), L.PE, ValueKind::Signed, pos, dim,
                        "PE (positions × dims)", cell.x, cell.y - 24);
        }
        ImGui::EndChild();
        ImGui::SameLine();
        if (ImGui::BeginChild("sim_region", cell, false, flags)) {
            lab_heatmap("sim", s.v_sim, key(s, "sim"), L.similarity, ValueKind::Signed, pos, pos2,
                        "PE·PEᵀ  (similarity of positions)", cell.x, cell.y - 24);
        }
        ImGui::EndChild();
        lab_findings(L.findings);
        ImGui::EndTabItem();
    }
    // --- 1: columns over positions ----------------------------------------------------------
    if (ImGui::BeginTabItem("Dimensions over positions", nullptr, lab_tab_flags(ctx, 1))) {
        lab_formula(text.sections[2].formula);
        lab_explanation(text.sections[2].explanation);
        ImGui::PushItemWidth(em(110));
        for (std::size_t c = 0; c < s.params.curve_dims.size(); ++c) {
            ImGui::PushID(int(c));
            if (c) ImGui::SameLine();
            char label[32];
            std::snprintf(label, sizeof label, "curve %zu", c + 1);
            ImGui::SliderInt(label, &s.params.curve_dims[c], 0, std::max(0, D - 1));
            ImGui::PopID();
        }
        ImGui::PopItemWidth();
        help_marker(
            "Pick which columns of PE to draw. Low columns oscillate fast, high columns slowly: "
            "the frequency falls with the dimension index.");
        std::vector<PlotSeries> series;
        std::vector<double> xs(P);
        for (int p = 0; p < P; ++p) xs[p] = p;
        for (int c = 0; c < int(L.curve_dims.size()); ++c) {
            PlotSeries ser;
            char label[96];
            std::snprintf(label, sizeof label, "dim %d (%s, wavelength %.1f)", L.curve_dims[c],
                          L.curve_dims[c] % 2 == 0 ? "sin" : "cos", L.curve_wavelengths[c]);
            ser.label = label;
            ser.x = xs;
            ser.y.resize(P);
            for (int p = 0; p < P; ++p) ser.y[p] = L.curves(p, c);
            ser.color = palette(c);
            ser.markers = P <= 80;
            series.push_back(std::move(ser));
        }
        PlotSpec spec;
        spec.title = "PE(p, dim) over positions";
        spec.x_label = "position p";
        spec.y_label = "PE value";
        spec.y_min = -1.15;
        spec.y_max = 1.6;  // room for the legend above the curves
        draw_line_plot("curves", spec, series,
                       ImVec2(avail_w, std::max(280.0f, ImGui::GetContentRegionAvail().y - 120)));
        lab_findings(L.findings);
        ImGui::EndTabItem();
    }
    // --- 2: shift = rotation --------------------------------------------------------------
    if (ImGui::BeginTabItem("Shift = rotation", nullptr, lab_tab_flags(ctx, 2))) {
        lab_formula(text.sections[3].formula);
        lab_explanation(text.sections[3].explanation);
        ImGui::PushItemWidth(em(160));
        ImGui::SliderInt("p", &s.params.p, 0, std::max(0, P - 1));
        ImGui::SameLine();
        ImGui::SliderInt("δ (shift)", &s.params.delta, -P + 1, P - 1);
        ImGui::PopItemWidth();
        help_marker("R(δ) depends on δ only, never on p: the same matrix moves every position δ steps.");
        char buf[160];
        std::snprintf(buf, sizeof buf,
                      "max |R(δ)·PE(p)ᵀ − PE(p+δ)ᵀ| = %.2e   (float rounding: the two are equal)",
                      L.rotation_max_abs_diff);
        lab_heading(buf);
        Mat rows(3, D);  // 3 x dims: PE(p), R(δ)·PE(p), PE(p+δ)
        rows.row(0) = L.pe_p;
        rows.row(1) = L.rotated;
        rows.row(2) = L.pe_p_delta;
        const Axis dim = index_axis("dimension", D);
        const Axis rlab = label_axis("vector", {"PE(p)", "R(δ)·PE(p)", "PE(p+δ)"});
        const float top_h = 190;
        lab_heatmap("rows", s.v_rows, key(s, "rows"), rows, ValueKind::Signed, rlab, dim,
                    "rows 2 and 3 are identical", avail_w, top_h);
        Mat diff = L.difference;  // 1 x dims
        const Axis dlab = label_axis("", {"difference"});
        lab_heatmap("diff", s.v_diff, key(s, "diff"), diff, ValueKind::Signed, dlab, dim,
                    "R(δ)·PE(p) − PE(p+δ)  (its own colour scale: ~1e−7)", avail_w, 150, nullptr, 1.0f);
        const float rh = std::max(220.0f, ImGui::GetContentRegionAvail().y - 10);
        lab_heatmap("R", s.v_R, key(s, "R"), L.R, ValueKind::Signed, index_axis("row", D), dim,
                    "R(δ): one 2×2 rotation per sin/cos pair", std::min(avail_w, rh + 200), rh);
        ImGui::EndTabItem();
    }
    // --- 3: RoPE -----------------------------------------------------------------------------
    if (ImGui::BeginTabItem("RoPE vs additive", nullptr, lab_tab_flags(ctx, 3))) {
        lab_formula(text.sections[4].formula);
        lab_explanation(text.sections[4].explanation);
        ImGui::PushItemWidth(em(160));
        ImGui::SliderInt("positions for the check", &s.params.rope_positions, 2, 64);
        ImGui::PopItemWidth();
        help_marker(
            "q and k are fixed random vectors; only their positions p (row) and s (column) change. "
            "RoPE needs an even d.");
        char buf[200];
        std::snprintf(
            buf, sizeof buf,
            "RoPE: largest spread along one offset %.2e (rounding);  additive PE: %.3g (not constant)",
            L.rope_max_spread, L.additive_max_spread);
        lab_heading(buf);
        const float h = std::max(240.0f, ImGui::GetContentRegionAvail().y * 0.55f);
        const int R = int(L.rope_dots.rows());
        const Axis qp = index_axis("query position p", R), kp = index_axis("key position s", R);
        lab_heatmap("rope", s.v_rope, key(s, "rope"), L.rope_dots, ValueKind::Signed, qp, kp,
                    "RoPE (R_p q)·(R_s k): constant diagonals", avail_w * 0.5f - 8, h);
        ImGui::SameLine();
        lab_heatmap("add", s.v_add, key(s, "add"), L.additive_dots, ValueKind::Signed, qp, kp,
                    "additive (q+PE_p)·(k+PE_s): not constant", avail_w * 0.5f - 8, h);
        if (ImGui::BeginTable("rope_table", 5,
                              ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY |
                                  ImGuiTableFlags_SizingStretchSame,
                              ImVec2(0, std::max(140.0f, ImGui::GetContentRegionAvail().y - 4)))) {
            ImGui::TableSetupScrollFreeze(0, 1);
            ImGui::TableSetupColumn("offset s − p");
            ImGui::TableSetupColumn("pairs");
            ImGui::TableSetupColumn("RoPE q·k (mean)");
            ImGui::TableSetupColumn("RoPE spread (max − min)");
            ImGui::TableSetupColumn("additive spread");
            ImGui::TableHeadersRow();
            for (const auto& row : L.rope_table) {
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::Text("%+d", row.offset);
                ImGui::TableNextColumn();
                ImGui::Text("%d", row.pairs);
                ImGui::TableNextColumn();
                ImGui::Text("%.5f", row.mean);
                ImGui::TableNextColumn();
                ImGui::Text("%.1e", row.spread);
                ImGui::TableNextColumn();
                ImGui::Text("%.4f", row.additive_spread);
            }
            ImGui::EndTable();
        }
        ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Findings", nullptr, lab_tab_flags(ctx, 4))) {
        lab_findings(L.findings);
        ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
}

}  // namespace attnviz::app

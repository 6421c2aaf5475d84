// Lab 3: temperature and 1/√d scaling — one score row's weights at several temperatures, entropy
// against T, and the sampled variance / saturation with and without 1/√d (core: temperature_lab,
// instant; scaling_lab, ~0.5 s, run once on a background thread).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <sstream>
#include <string>

#include <imgui.h>

#include "app/panels/lab_common.hpp"
#include "app/panels/panels.hpp"
#include "core/error.hpp"
#include "core/labs.hpp"

namespace attnviz::app {

namespace {

struct TempState {
    char scores_text[256] = "2, 1, 0.5, 3, -1, 0, 1.5, -0.5";
    char temps_text[128] = "0.1, 0.5, 1, 2, 10";
    std::string computed_scores, computed_temps;
    bool have = false;
    TemperatureLab lab;
    std::string error;

    std::future<ScalingLab> scaling_future;
    bool scaling_started = false, scaling_done = false;
    ScalingLab scaling;
    std::string scaling_error;
};

// "2, 1, -0.5" -> {2, 1, -0.5}; throws ConfigError naming the bad entry.
template <class T>
std::vector<T> parse_list(const std::string& text, const char* what) {
    std::vector<T> out;
    std::string item;
    std::stringstream ss(text);
    while (std::getline(ss, item, ',')) {
        const auto b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
        if (b == std::string::npos) continue;
        item = item.substr(b, e - b + 1);
        char* end = nullptr;
        const double v = std::strtod(item.c_str(), &end);
        if (end == item.c_str() || *end != '\0' || !std::isfinite(v))
            throw ConfigError(std::string(what) + ": '" + item +
                              "' is not a number; write numbers separated by commas");
        out.push_back(T(v));
    }
    if (out.empty()) throw ConfigError(std::string(what) + ": give at least one number");
    return out;
}

}  // namespace

void draw_lab_temperature(AppState& state, LabContext& ctx) {
    TempState& s = ctx.state<TempState>();
    if (ctx.closing) return;  // the sampler finishes on its own in well under a second
    const LabText& text = lab_text(LabId::Temperature);

    // The slow √d sampling runs once, in the background, as soon as the lab is first drawn.
    if (!s.scaling_started) {
        s.scaling_started = true;
        s.scaling_future = std::async(std::launch::async, [] { return scaling_lab(ScalingLabParams{}); });
    }
    if (!s.scaling_done && s.scaling_future.valid() &&
        s.scaling_future.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
        try {
            s.scaling = s.scaling_future.get();
        } catch (const std::exception& e) {
            s.scaling_error = e.what();
        }
        s.scaling_done = true;
    }
    if (!s.scaling_done) lab_mark_busy(state);

    lab_export_button(state, "temperature");
    ImGui::SameLine();
    lab_explanation(text.intro);

    ImGui::PushItemWidth(em(300));
    ImGui::InputText("scores s (one query row)", s.scores_text, sizeof s.scores_text);
    ImGui::SameLine();
    ImGui::PushItemWidth(em(200));
    ImGui::InputText("temperatures T", s.temps_text, sizeof s.temps_text);
    ImGui::PopItemWidth();
    ImGui::PopItemWidth();
    help_marker("Edit the scores of one query over m keys, and the temperatures to compare (all > 0).");

    if (!s.have || s.computed_scores != s.scores_text || s.computed_temps != s.temps_text) {
        s.computed_scores = s.scores_text;
        s.computed_temps = s.temps_text;
        try {
            TemperatureLabParams p;
            p.scores = parse_list<float>(s.scores_text, "scores");
            p.temperatures = parse_list<double>(s.temps_text, "temperatures");
            s.lab = temperature_lab(p);
            s.error.clear();
            s.have = true;
        } catch (const Error& e) {
            s.error = e.what();
        }
    }
    if (!s.error.empty()) lab_error(s.error);
    const float avail_w = ImGui::GetContentRegionAvail().x;

    if (!ImGui::BeginTabBar("t_tabs")) return;
    if (ImGui::BeginTabItem("Temperature & entropy", nullptr, lab_tab_flags(ctx, 0))) {
        if (s.have) {
            const TemperatureLab& L = s.lab;
            lab_formula(text.sections[0].formula);
            lab_explanation(text.sections[0].explanation);
            const float h = std::max(260.0f, (ImGui::GetContentRegionAvail().y - 200) * 0.5f + 40);
            BarGroupsSpec bars;
            bars.title = "softmax(s/T) of one query row, for each T";
            bars.x_label = "key j  (its score s_j)";
            bars.y_label = "weight a_j";
            for (int j = 0; j < int(L.scores.size()); ++j) {
                char b[48];
                std::snprintf(b, sizeof b, "%d (%.3g)", j, double(L.scores(j)));
                bars.group_labels.push_back(b);
            }
            for (int t = 0; t < int(L.temperatures.size()); ++t) {
                char b[64];
                std::snprintf(b, sizeof b, "T = %g  (H = %.2f nats)", L.temperatures[t], L.weight_entropy(t));
                bars.series_labels.push_back(b);
                std::vector<double> row(L.weights.cols());
                for (int j = 0; j < int(L.weights.cols()); ++j) row[j] = L.weights(t, j);
                bars.values.push_back(row);
            }
            bars.y_max = 1.0;
            draw_bar_groups("bars", bars, ImVec2(avail_w, h));

            lab_formula(text.sections[1].formula);
            lab_explanation(text.sections[1].explanation);
            PlotSeries curve;
            curve.label = "H(softmax(s/T))";
            curve.x.assign(L.entropy_T.data(), L.entropy_T.data() + L.entropy_T.size());
            curve.y.assign(L.entropy.data(), L.entropy.data() + L.entropy.size());
            curve.color = palette(0);
            PlotSeries marks;
            marks.label = "the temperatures above";
            marks.x = L.temperatures;
            marks.y.assign(L.weight_entropy.data(), L.weight_entropy.data() + L.weight_entropy.size());
            marks.line = false;
            marks.markers = true;
            marks.marker_radius = 5;
            marks.color = palette(1);
            PlotSpec spec;
            spec.title = "entropy of the weights against T";
            spec.x_label = "temperature T";
            spec.y_label = "entropy H (nats)";
            spec.log_x = true;
            spec.y_min = 0;
            spec.y_max = L.max_entropy * 1.4;  // room for the legend above ln m
            char lnm[64];
            std::snprintf(lnm, sizeof lnm, "ln m = %.3f (uniform over %d keys)", L.max_entropy,
                          int(L.scores.size()));
            spec.ref_lines.push_back({true, L.max_entropy, lnm, IM_COL32(255, 200, 90, 220)});
            spec.ref_lines.push_back({false, 1.0, "T = 1", IM_COL32(180, 180, 180, 160)});
            spec.legend_right = true;
            draw_line_plot("entropy", spec, {curve, marks},
                           ImVec2(avail_w, std::max(240.0f, ImGui::GetContentRegionAvail().y - 110)));
            lab_findings(L.findings);
        }
        ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Why 1/√d_k", nullptr, lab_tab_flags(ctx, 1))) {
        lab_formula(text.sections[2].formula);
        lab_explanation(text.sections[2].explanation);
        lab_formula(text.sections[3].formula);
        lab_explanation(text.sections[3].explanation);
        if (!s.scaling_done) {
            ImGui::Spacing();
            const char* spin = "|/-\\";
            ImGui::Text("computing… sampling millions of q·k products  %c",
                        spin[(ImGui::GetFrameCount() / 8) % 4]);
        } else if (!s.scaling_error.empty()) {
            lab_error(s.scaling_error);
        } else {
            const ScalingLab& S = s.scaling;
            std::vector<double> d(S.dims.begin(), S.dims.end());
            const float w = avail_w * 0.5f - 8;
            const float h = std::max(260.0f, ImGui::GetContentRegionAvail().y - 150);
            PlotSeries un, sc, ref;
            un.label = "Var(q·k)  (≈ d)";
            un.x = d;
            un.y.assign(S.var_unscaled.data(), S.var_unscaled.data() + S.var_unscaled.size());
            un.color = palette(3);
            un.markers = true;
            sc.label = "Var(q·k/√d)  (≈ 1)";
            sc.x = d;
            sc.y.assign(S.var_scaled.data(), S.var_scaled.data() + S.var_scaled.size());
            sc.color = palette(0);
            sc.markers = true;
            ref.label = "y = d";
            ref.x = d;
            ref.y = d;
            ref.color = IM_COL32(200, 200, 200, 90);
            ref.thickness = 1.0f;
            PlotSpec spec;
            spec.title = "variance of the score, q, k ~ N(0, I_d)";
            spec.x_label = "d_k";
            spec.y_label = "variance";
            spec.log_x = spec.log_y = true;
            spec.legend_bottom = true;
            draw_line_plot("var", spec, {ref, un, sc}, ImVec2(w, h));
            ImGui::SameLine();
            PlotSeries mu, ms;
            mu.label = "without 1/√d";
            mu.x = d;
            mu.y.assign(S.mean_max_unscaled.data(), S.mean_max_unscaled.data() + S.mean_max_unscaled.size());
            mu.color = palette(3);
            mu.markers = true;
            ms.label = "with 1/√d";
            ms.x = d;
            ms.y.assign(S.mean_max_scaled.data(), S.mean_max_scaled.data() + S.mean_max_scaled.size());
            ms.color = palette(0);
            ms.markers = true;
            PlotSpec sat;
            char title[96];
            std::snprintf(title, sizeof title, "saturation: mean largest weight over %d keys",
                          S.saturation_keys);
            sat.title = title;
            sat.x_label = "d_k";
            sat.y_label = "mean max weight";
            sat.log_x = true;
            sat.y_min = 0;
            sat.y_max = 1.05;
            char uni[64];
            std::snprintf(uni, sizeof uni, "uniform 1/%d", S.saturation_keys);
            sat.ref_lines.push_back({true, 1.0, "one-hot", IM_COL32(255, 120, 100, 200)});
            sat.ref_lines.push_back(
                {true, 1.0 / std::max(1, S.saturation_keys), uni, IM_COL32(200, 200, 200, 160)});
            sat.legend_bottom = true;
            draw_line_plot("sat", sat, {mu, ms}, ImVec2(w, h));
            lab_findings(S.findings);
        }
        ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
}

}  // namespace attnviz::app

// Lab 2: scoring — Nadaraya–Watson kernel regression as attention (fit + weight matrix), the three
// kernels side by side, additive vs scaled-dot-product scores on the same Q, K, and the Gaussian
// kernel hiding inside the dot product (core: nadaraya_watson_lab).
#include <algorithm>
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

const Scoring kKernels[] = {Scoring::Gaussian, Scoring::Boxcar, Scoring::Epanechnikov};
const char* kKernelNames[] = {"Gaussian", "boxcar", "Epanechnikov"};
const NwTarget kTargets[] = {NwTarget::D2l, NwTarget::Sin, NwTarget::Step, NwTarget::Linear};
const char* kTargetNames[] = {"2·sin x + x^0.8 (d2l)", "sin x", "step at 2.5", "x"};

struct NwState {
    NwLabParams params;
    int target = 0, kernel = 0;
    NwLabParams computed_for;
    bool have = false;
    NwLab lab;
    NwLab per_kernel[3];  // the same data fitted with each kernel
    std::string error;
    std::uint64_t gen = 0;
    HeatmapViewState v_A, v_sa, v_sd, v_aa, v_ad, v_ag, v_au;
};

bool same(const NwLabParams& a, const NwLabParams& b) {
    return a.train == b.train && a.target == b.target && a.noise == b.noise && a.kernel == b.kernel &&
           a.bandwidth == b.bandwidth && a.seed == b.seed && a.score_queries == b.score_queries &&
           a.score_keys == b.score_keys && a.score_dim == b.score_dim &&
           a.equal_norm_keys == b.equal_norm_keys;
}

std::string key(const NwState& s, const char* what) {
    return "nw/" + std::to_string(s.gen) + "/" + what;
}

std::vector<double> to_vec(const Vec& v) {
    return std::vector<double>(v.data(), v.data() + v.size());
}

std::string mse_text(double mse) {
    char buf[64];
    if (std::isnan(mse))
        std::snprintf(buf, sizeof buf, "n/a (no query covered)");
    else
        std::snprintf(buf, sizeof buf, "%.4f", mse);
    return buf;
}

}  // namespace

void draw_lab_scoring(AppState& state, LabContext& ctx) {
    NwState& s = ctx.state<NwState>();
    if (ctx.closing) return;
    const LabText& text = lab_text(LabId::NadarayaWatson);

    lab_export_button(state, "scoring");
    ImGui::SameLine();
    lab_explanation(text.intro);

    // --- controls (shared by the tabs) ---------------------------------------------------------
    ImGui::PushItemWidth(em(190));
    ImGui::Combo("target f(x)", &s.target, kTargetNames, 4);
    ImGui::SameLine();
    ImGui::Combo("kernel", &s.kernel, kKernelNames, 3);
    ImGui::SameLine();
    float bw = float(s.params.bandwidth);
    if (ImGui::SliderFloat("bandwidth h", &bw, 0.02f, 5.0f, "%.3f", ImGuiSliderFlags_Logarithmic))
        s.params.bandwidth = bw;
    help_marker(
        "h is the distance at which a training point stops counting (boxcar, Epanechnikov) or "
        "counts e^(−1/2) as much (Gaussian). Try 0.05 and 3.");
    ImGui::SliderInt("training points m", &s.params.train, 1, 200);
    ImGui::SameLine();
    float noise = float(s.params.noise);
    if (ImGui::SliderFloat("noise σ", &noise, 0.0f, 2.0f, "%.2f")) s.params.noise = noise;
    ImGui::SameLine();
    int seed = int(s.params.seed);
    if (ImGui::InputInt("seed", &seed)) s.params.seed = std::uint64_t(std::max(0, seed));
    ImGui::PopItemWidth();
    s.params.target = kTargets[s.target];
    s.params.kernel = kKernels[s.kernel];

    if (!s.have || !same(s.params, s.computed_for)) {
        s.computed_for = s.params;
        try {
            s.lab = nadaraya_watson_lab(s.params);
            for (int k = 0; k < 3; ++k) {
                NwLabParams p = s.params;
                p.kernel = kKernels[k];
                s.per_kernel[k] = nadaraya_watson_lab(p);
            }
            s.error.clear();
            s.have = true;
            ++s.gen;
        } catch (const Error& e) {
            s.error = e.what();
        }
    }
    if (!s.error.empty()) lab_error(s.error);
    if (!s.have) return;
    const NwLab& L = s.lab;
    const float avail_w = ImGui::GetContentRegionAvail().x;

    if (!ImGui::BeginTabBar("nw_tabs")) return;
    if (ImGui::BeginTabItem("Kernel regression = attention", nullptr, lab_tab_flags(ctx, 0))) {
        lab_formula(text.sections[0].formula);
        lab_explanation(text.sections[0].explanation);
        char buf[200];
        std::snprintf(buf, sizeof buf, "MSE of the fit %s   (noise floor of the data: %.4f)%s",
                      mse_text(L.mse).c_str(), L.train_noise_mse,
                      L.uncovered ? "  — some queries have no training point within h" : "");
        lab_heading(buf);
        const float h = std::max(300.0f, ImGui::GetContentRegionAvail().y - 130);
        std::vector<PlotSeries> series(3);
        series[0].label = "training points (xᵢ, yᵢ)";
        series[0].x = to_vec(L.x_train);
        series[0].y = to_vec(L.y_train);
        series[0].line = false;
        series[0].markers = true;
        series[0].color = IM_COL32(200, 200, 200, 200);
        series[1].label = "true f(x)";
        series[1].x = to_vec(L.x_query);
        series[1].y = to_vec(L.y_true);
        series[1].color = palette(2);
        series[2].label = std::string("fit ŷ = A·y (") + kKernelNames[s.kernel] + ")";
        series[2].x = to_vec(L.x_query);
        series[2].y = to_vec(L.y_hat);
        for (int i = 0; i < int(L.covered.size()); ++i)
            if (!L.covered[i]) series[2].y[i] = NAN;  // no weights: a gap, not a fake 0
        series[2].color = palette(1);
        series[2].thickness = 2.5f;
        PlotSpec spec;
        spec.title = "Nadaraya–Watson fit";
        spec.x_label = "x";
        spec.y_label = "y";
        spec.legend_right = false;
        draw_line_plot("fit", spec, series, ImVec2(avail_w * 0.5f - 8, h));
        ImGui::SameLine();
        const Axis q = index_axis("query xq (index)", int(L.A.rows())),
                   k = index_axis("training key xᵢ (sorted)", int(L.A.cols()));
        // Each row spreads its weight over many training points (≈ 1/m each), so a fixed 0–1 range
        // would show a dark rectangle: colour from 0 to this matrix's largest weight instead, and
        // say so in the title.
        const ColorRange a_range = weights_range(L.A);
        char a_title[128];
        std::snprintf(a_title, sizeof a_title, "weights A (queries × keys), colour 0 … max = %.2g",
                      a_range.hi);
        lab_heatmap("A", s.v_A, key(s, "A"), L.A, ValueKind::Probability, q, k, a_title, avail_w * 0.5f - 8,
                    h, &a_range);
        lab_findings(L.findings);
        ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Three kernels", nullptr, lab_tab_flags(ctx, 1))) {
        lab_formula(text.sections[1].formula);
        lab_explanation(text.sections[1].explanation);
        std::vector<PlotSeries> series;
        PlotSeries pts;
        pts.label = "training points";
        pts.x = to_vec(L.x_train);
        pts.y = to_vec(L.y_train);
        pts.line = false;
        pts.markers = true;
        pts.color = IM_COL32(200, 200, 200, 170);
        series.push_back(pts);
        PlotSeries truth;
        truth.label = "true f(x)";
        truth.x = to_vec(L.x_query);
        truth.y = to_vec(L.y_true);
        truth.color = palette(2);
        truth.thickness = 1.5f;
        series.push_back(truth);
        for (int k = 0; k < 3; ++k) {
            const NwLab& K = s.per_kernel[k];
            PlotSeries f;
            f.label = std::string(kKernelNames[k]) + "  MSE " + mse_text(K.mse) +
                      (K.uncovered ? "  (" + std::to_string(K.uncovered) + " queries uncovered)" : "");
            f.x = to_vec(K.x_query);
            f.y = to_vec(K.y_hat);
            for (int i = 0; i < int(K.covered.size()); ++i)
                if (!K.covered[i]) f.y[i] = NAN;
            f.color = palette(k == 0 ? 0 : k == 1 ? 3 : 4);
            series.push_back(f);
        }
        PlotSpec spec;
        spec.title = "same data, same h, three kernels";
        spec.x_label = "x";
        spec.y_label = "y";
        spec.legend_right = false;
        draw_line_plot("kernels", spec, series,
                       ImVec2(avail_w, std::max(300.0f, ImGui::GetContentRegionAvail().y - 10)));
        ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Additive vs dot product", nullptr, lab_tab_flags(ctx, 2))) {
        lab_formula(text.sections[2].formula);
        lab_explanation(text.sections[2].explanation);
        ImGui::PushItemWidth(em(140));
        ImGui::SliderInt("queries n", &s.params.score_queries, 1, 16);
        ImGui::SameLine();
        ImGui::SliderInt("keys m", &s.params.score_keys, 1, 16);
        ImGui::SameLine();
        ImGui::SliderInt("d", &s.params.score_dim, 1, 64);
        ImGui::PopItemWidth();
        help_marker(
            "The same random Q (n×d) and K (m×d) go into both scorers; compare the patterns row by row.");
        const Axis q = index_axis("query", int(L.S_dot.rows())), k = index_axis("key", int(L.S_dot.cols()));
        const float w = avail_w * 0.5f - 8;
        const float h = std::max(180.0f, (ImGui::GetContentRegionAvail().y - 20) * 0.5f);
        lab_heatmap("sa", s.v_sa, key(s, "S_add"), L.S_additive, ValueKind::Signed, q, k,
                    "additive scores w_vᵀtanh(W_q q + W_k k)", w, h);
        ImGui::SameLine();
        lab_heatmap("sd", s.v_sd, key(s, "S_dot"), L.S_dot, ValueKind::Signed, q, k,
                    "scaled dot scores QKᵀ/√d", w, h);
        lab_heatmap("aa", s.v_aa, key(s, "A_add"), L.A_additive, ValueKind::Probability, q, k,
                    "softmax(additive)", w, h);
        ImGui::SameLine();
        lab_heatmap("ad", s.v_ad, key(s, "A_dot"), L.A_dot, ValueKind::Probability, q, k, "softmax(QKᵀ/√d)",
                    w, h);
        ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Dot product = Gaussian kernel", nullptr, lab_tab_flags(ctx, 3))) {
        lab_formula(text.sections[3].formula);
        lab_explanation(text.sections[3].explanation);
        ImGui::Checkbox("equal-norm keys (every ‖k‖ = √d)", &s.params.equal_norm_keys);
        help_marker(
            "LayerNorm makes keys roughly the same length; then −½‖k‖² is the same for every key and "
            "cancels in the softmax.");
        char buf[128];
        std::snprintf(buf, sizeof buf, "max |A_gaussian − softmax(QKᵀ)| = %.2e", L.gaussian_vs_dot_max_diff);
        lab_heading(buf);
        const Axis q = index_axis("query", int(L.A_gaussian.rows())),
                   k = index_axis("key", int(L.A_gaussian.cols()));
        const float h = std::max(240.0f, ImGui::GetContentRegionAvail().y - 120);
        lab_heatmap("ag", s.v_ag, key(s, "A_gauss"), L.A_gaussian, ValueKind::Probability, q, k,
                    "Gaussian kernel softmax(−½‖q−k‖²)", avail_w * 0.5f - 8, h);
        ImGui::SameLine();
        lab_heatmap("au", s.v_au, key(s, "A_dotu"), L.A_dot_unscaled, ValueKind::Probability, q, k,
                    "dot product softmax(QKᵀ)", avail_w * 0.5f - 8, h);
        lab_findings(L.findings);
        ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
}

}  // namespace attnviz::app

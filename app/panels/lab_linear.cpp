// Lab 4: softmax vs linear attention — the weights linear attention implies next to softmax's, their
// difference, output differences for every φ; and the cost measured live on this machine (core:
// softmax_vs_linear_lab, measure_cost on a background thread, one measurement at a time so closing
// the window or pressing Stop ends the sweep quickly).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include <imgui.h>

#include "app/panels/lab_common.hpp"
#include "app/panels/panels.hpp"
#include "core/error.hpp"
#include "core/labs.hpp"

namespace attnviz::app {

namespace {

const char* phi_name(PhiKind k) {
    switch (k) {
        case PhiKind::Elu1:
            return "φ = elu + 1";
        case PhiKind::Relu:
            return "φ = ReLU";
        case PhiKind::Softmax:
            return "softmax₂(Q)·softmax₁(K)ᵀ (Shen et al.)";
    }
    return "?";
}

// The live cost sweep: a worker thread appends samples; the GUI copies them every frame.
class CostSweep {
  public:
    ~CostSweep() { stop_and_join(); }

    void start(int softmax_max, int linear_max) {
        stop_and_join();
        samples_.clear();
        error_.clear();
        cancel_ = false;
        running_ = true;
        total_ = 0;
        std::vector<std::pair<CostKind, int>> plan;
        std::vector<int> ns;
        for (int n : default_cost_sweep(CostKind::Linear)) ns.push_back(n);
        for (int n : default_cost_sweep(CostKind::Softmax)) ns.push_back(n);
        std::sort(ns.begin(), ns.end());
        ns.erase(std::unique(ns.begin(), ns.end()), ns.end());
        // Interleaved by n, so both curves grow together while the user watches.
        for (int n : ns) {
            if (n <= softmax_max) plan.emplace_back(CostKind::Softmax, n);
            if (n <= linear_max) plan.emplace_back(CostKind::Linear, n);
        }
        total_ = int(plan.size());
        thread_ = std::thread([this, plan] {
            for (const auto& [kind, n] : plan) {
                if (cancel_) break;
                try {
                    const CostSample c = measure_cost(kind, n);
                    std::lock_guard<std::mutex> lock(mutex_);
                    samples_.push_back(c);
                } catch (const std::exception& e) {
                    std::lock_guard<std::mutex> lock(mutex_);
                    error_ = e.what();
                    break;
                }
            }
            running_ = false;
        });
    }
    void cancel() { cancel_ = true; }
    void stop_and_join() {
        cancel_ = true;
        if (thread_.joinable()) thread_.join();
        running_ = false;
    }
    /// Joins a finished thread (never blocks).
    void reap() {
        if (!running_ && thread_.joinable()) thread_.join();
    }
    bool running() const { return running_; }
    bool cancelling() const { return running_ && cancel_; }
    int total() const { return total_; }
    std::vector<CostSample> samples() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return samples_;
    }
    std::string error() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return error_;
    }

  private:
    std::thread thread_;
    std::atomic<bool> cancel_{false}, running_{false};
    int total_ = 0;
    mutable std::mutex mutex_;
    std::vector<CostSample> samples_;
    std::string error_;
};

struct LinState {
    LinearLabParams params;
    LinearLabParams computed_for;
    int phi = 0;
    bool have = false;
    LinearLab lab;
    std::string error;
    std::uint64_t gen = 0;
    HeatmapViewState v_s, v_l, v_d;
    CostSweep sweep;
    bool auto_started = false;
};

bool same(const LinearLabParams& a, const LinearLabParams& b) {
    return a.n == b.n && a.d == b.d && a.causal == b.causal && a.seed == b.seed;
}

std::string key(const LinState& s, const char* what) {
    return "lin/" + std::to_string(s.gen) + "/" + what;
}

void draw_cost(LinState& s, AppState& state, float avail_w) {
    const LabText& text = lab_text(LabId::SoftmaxVsLinear);
    lab_formula(text.sections[4].formula);
    lab_explanation(text.sections[4].explanation);
    s.sweep.reap();
    // A short sweep starts by itself the first time this tab is shown (well under a second of work),
    // so the learner sees the two slopes at once; the full sweep is a button because it takes a while.
    if (!s.auto_started) {
        s.auto_started = true;
        s.sweep.start(2048, 8192);
    }
    if (s.sweep.running()) {
        lab_mark_busy(state);
        if (ImGui::Button(s.sweep.cancelling() ? "Stopping…" : "Stop")) s.sweep.cancel();
    } else {
        if (ImGui::Button("Run full sweep (softmax to n = 16384, linear to 65536)"))
            s.sweep.start(16384, 65536);
        ImGui::SameLine();
        if (ImGui::Button("Quick sweep")) s.sweep.start(2048, 8192);
    }
    help_marker(
        "Each point is the fastest of 3 forward passes with d = 64 on this machine, measured now on a "
        "background thread. The full sweep takes tens of seconds and about 1 GiB of memory for the largest "
        "softmax (16384² floats); the GUI stays responsive, and closing the lab stops it.");
    const std::vector<CostSample> samples = s.sweep.samples();
    ImGui::SameLine();
    if (s.sweep.running())
        ImGui::Text("measuring… %zu / %d", samples.size(), s.sweep.total());
    else
        ImGui::TextDisabled("%zu measurements", samples.size());
    const std::string err = s.sweep.error();
    if (!err.empty()) lab_error(err);

    PlotSeries t_soft, t_lin, m_soft, m_lin;
    for (const CostSample& c : samples) {
        PlotSeries& t = c.kind == CostKind::Softmax ? t_soft : t_lin;
        PlotSeries& m = c.kind == CostKind::Softmax ? m_soft : m_lin;
        t.x.push_back(c.n);
        t.y.push_back(c.seconds * 1000.0);
        m.x.push_back(c.n);
        m.y.push_back(c.matrix_bytes);
    }
    auto slope_text = [](const PlotSeries& p) -> std::string {
        if (p.x.size() < 2) return "slope: needs 2 points";
        try {
            char b[48];
            std::snprintf(b, sizeof b, "slope %.2f", fit_loglog_slope(p.x, p.y));
            return b;
        } catch (const Error&) {
            return "slope: n/a";
        }
    };
    t_soft.label = "softmax, " + slope_text(t_soft) + " (O(n²))";
    t_lin.label = "linear, " + slope_text(t_lin) + " (O(n))";
    m_soft.label = "softmax: n×n weights, " + slope_text(m_soft);
    m_lin.label = "linear: d² + n·d, " + slope_text(m_lin);
    for (PlotSeries* p : {&t_soft, &m_soft}) p->color = palette(3);
    for (PlotSeries* p : {&t_lin, &m_lin}) p->color = palette(0);
    for (PlotSeries* p : {&t_soft, &m_soft, &t_lin, &m_lin}) p->markers = true;
    const float w = avail_w * 0.5f - 8;
    const float h = std::max(280.0f, ImGui::GetContentRegionAvail().y - 10);
    PlotSpec ts;
    ts.title = "time of one forward pass (measured)";
    ts.x_label = "tokens n";
    ts.y_label = "milliseconds";
    ts.log_x = ts.log_y = true;
    ts.x_min = 200;
    ts.x_max = 80000;
    ts.legend_bottom = true;
    draw_line_plot("time", ts, {t_soft, t_lin}, ImVec2(w, h));
    ImGui::SameLine();
    PlotSpec ms;
    ms.title = "largest matrix the method needs";
    ms.x_label = "tokens n";
    ms.y_label = "bytes";
    ms.log_x = ms.log_y = true;
    ms.x_min = 200;
    ms.x_max = 80000;
    ms.legend_bottom = true;
    ms.ref_lines.push_back({true, 1024.0 * 1024 * 1024, "1 GiB", IM_COL32(255, 200, 90, 200)});
    draw_line_plot("mem", ms, {m_soft, m_lin}, ImVec2(w, h));
}

}  // namespace

void draw_lab_linear(AppState& state, LabContext& ctx) {
    LinState& s = ctx.state<LinState>();
    if (ctx.closing) {
        s.sweep.cancel();  // the thread stops after its current measurement; joined later or at exit
        return;
    }
    const LabText& text = lab_text(LabId::SoftmaxVsLinear);

    lab_export_button(state, "softmax_vs_linear");
    ImGui::SameLine();
    lab_explanation(text.intro);

    const float avail_w = ImGui::GetContentRegionAvail().x;
    if (!ImGui::BeginTabBar("lin_tabs")) return;
    if (ImGui::BeginTabItem("Weights & outputs", nullptr, lab_tab_flags(ctx, 0))) {
        ImGui::PushItemWidth(em(150));
        ImGui::SliderInt("tokens n", &s.params.n, 1, 64);
        ImGui::SameLine();
        ImGui::SliderInt("d", &s.params.d, 1, 64);
        ImGui::SameLine();
        ImGui::Checkbox("causal", &s.params.causal);
        ImGui::SameLine();
        int seed = int(s.params.seed);
        if (ImGui::InputInt("seed", &seed)) s.params.seed = std::uint64_t(std::max(0, seed));
        ImGui::PopItemWidth();
        refresh_lab(s, !same(s.params, s.computed_for), softmax_vs_linear_lab);
        if (!s.error.empty()) lab_error(s.error);
        if (s.have) {
            const LinearLab& L = s.lab;
            s.phi = std::clamp(s.phi, 0, int(L.phis.size()) - 1);
            const PhiComparison& P = L.phis[s.phi];
            lab_formula(text.sections[0].formula + "      " + text.sections[1].formula);
            lab_explanation(text.sections[1].explanation);
            lab_formula(text.sections[3].formula);
            lab_explanation(text.sections[3].explanation);
            ImGui::TextUnformatted("feature map:");
            for (int i = 0; i < int(L.phis.size()); ++i) {
                ImGui::SameLine();
                ImGui::RadioButton(phi_name(L.phis[i].phi), &s.phi, i);
            }
            help_marker(text.sections[2].explanation.c_str());
            const int n = int(L.A_softmax.rows());
            const Axis q = index_axis("query i", n), k = index_axis("key j", n);
            const float w = avail_w / 3.0f - 8;
            // Room below the heatmaps for the table (header + one row per feature map) and the findings.
            const ImGuiStyle& style = ImGui::GetStyle();
            const float table_h =
                float(L.phis.size() + 1) * (ImGui::GetTextLineHeight() + 2 * style.CellPadding.y + 1) +
                style.ItemSpacing.y;
            const float below = table_h + lab_findings_height(L.findings, avail_w) + style.ItemSpacing.y;
            const float h = std::max(220.0f, ImGui::GetContentRegionAvail().y - below);
            // With n keys each weight is about 1/n, so a fixed 0–1 range would paint both matrices
            // nearly black. Both weight matrices share one range 0 … (largest of either), so the
            // same colour means the same weight in the two pictures.
            ColorRange w_range = weights_range(L.A_softmax);
            w_range.hi = std::max(w_range.hi, weights_range(P.A_linear).hi);
            char soft_title[96], lin_title[96];
            std::snprintf(soft_title, sizeof soft_title, "softmax(QKᵀ/√d)   colour 0 … %.2g (shared)",
                          w_range.hi);
            std::snprintf(lin_title, sizeof lin_title, "implied linear weights   colour 0 … %.2g",
                          w_range.hi);
            lab_heatmap("soft", s.v_s, key(s, "soft"), L.A_softmax, ValueKind::Probability, q, k, soft_title,
                        w, h, &w_range);
            ImGui::SameLine();
            const std::string suffix = std::to_string(s.phi);
            lab_heatmap("lin", s.v_l, key(s, ("lin" + suffix).c_str()), P.A_linear, ValueKind::Probability, q,
                        k, lin_title, w, h, &w_range);
            ImGui::SameLine();
            lab_heatmap("diff", s.v_d, key(s, ("diff" + suffix).c_str()), P.A_diff, ValueKind::Signed, q, k,
                        "A_linear − A_softmax", w, h);
            if (ImGui::BeginTable("phis", 5, ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders)) {
                ImGui::TableSetupColumn("feature map");
                ImGui::TableSetupColumn("‖ΔA‖_F (weights)");
                ImGui::TableSetupColumn("max |ΔA|");
                ImGui::TableSetupColumn("‖ΔO‖_F (outputs), relative");
                ImGui::TableSetupColumn("A_linear·V vs O(n) route");
                ImGui::TableHeadersRow();
                for (const PhiComparison& c : L.phis) {
                    ImGui::TableNextRow();
                    ImGui::TableNextColumn();
                    ImGui::TextUnformatted(phi_name(c.phi));
                    ImGui::TableNextColumn();
                    ImGui::Text("%.4f", c.weight_diff_norm);
                    ImGui::TableNextColumn();
                    ImGui::Text("%.4f", c.weight_max_abs);
                    ImGui::TableNextColumn();
                    ImGui::Text("%.4f  (%.1f%%)", c.output_diff_norm, 100.0 * c.output_rel);
                    ImGui::TableNextColumn();
                    ImGui::Text("%.1e", c.weights_vs_output);
                }
                ImGui::EndTable();
            }
            lab_findings(L.findings);
        }
        ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Measured cost", nullptr, lab_tab_flags(ctx, 1))) {
        draw_cost(s, state, avail_w);
        ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
}

}  // namespace attnviz::app

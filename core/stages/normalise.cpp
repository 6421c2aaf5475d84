// Phase "normalise": scores become weights that sum to 1 along each row. Softmax (with temperature),
// a kernel's row sum, or linear attention's normaliser and the weights it implies.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/ops.hpp"
#include "core/stages/common.hpp"
#include "core/stages/layer_run.hpp"

namespace attnviz {
namespace {

using namespace stages;

// --- normalizer (linear attention) ----------------------------------------------------------------

StageText normalizer_text(const LayerWords& w) {
    return StageText{"Normaliser  φ(q_i)·Σⱼφ(k_j)" + w.H(), "z_i = φ(q_i) · Σⱼ φ(k_j)",
                     "The row sum of the implied weights before normalising: dividing by z_i "
                     "makes each query's "
                     "weights "
                     "sum to 1, like softmax's denominator. Also computed in O(n) from the "
                     "column sums of φ(K)."};
}

void normalizer_explain(const CellQuery& q, Lines& L) {
    const Trace& t = q.t;
    const int h = q.h, i = q.i;
    const Mat PQ = stage_matrix(t, "phi_Q", h), PK = stage_matrix(t, "phi_K", h);
    double z = 0;
    int terms = 0;
    for (int k = 0; k < t.m; ++k) {
        if (!q.visible(i, k)) continue;
        z += PQ.row(i).cast<double>().dot(PK.row(k).cast<double>());
        ++terms;
    }
    L.push_back("z" + sub(i) + " = Σⱼ φ(q" + sub(i) + ")·φ(k_j) over the " + std::to_string(terms) +
                " keys '" + q.ri + "' may see = φ(q" + sub(i) + ")·(Σⱼ φ(k_j))");
    L.push_back(final_line(z));
}

void normalizer_record(LayerRecorder& r, int hd) {
    const LayerRun& x = r.run;
    if (!x.modes.linear) return;
    Axis z;
    z.kind = Axis::Kind::Single;
    z.name = "z";
    z.size = 1;
    r.add(x.q_ax, z, ValueKind::NonNegative, 2 * x.nf * x.dkf + x.mf * x.dkf,
          x.heads[std::size_t(hd)].normalizer);
}

// --- weights --------------------------------------------------------------------------------------

StageText weights_text(const LayerWords& w) {
    const Config& cfg = w.cfg;
    if (w.modes.linear) {
        if (!w.x.implied_weights) return StageText{"weights", "", ""};
        return StageText{
            "Implied weights (display only)" + w.H(), "A_ij = φ(q_i)·φ(k_j) / z_i",
            "Linear attention never needs this n×m matrix; it is formed here only so you can "
            "compare "
            "the "
            "pattern with softmax attention's. The weights are non-negative and each row sums to "
            "1, "
            "but "
            "they are flatter than softmax's: φ(q)·φ(k) grows linearly, not exponentially."};
    }
    if (w.modes.kernel)
        return StageText{"Weights  A = normalise(kernel)" + w.H(), "A_ij = S_ij / Σⱼ S_ij",
                         "Each row of kernel values divided by its sum, so the weights are non-negative and "
                         "sum "
                         "to 1 (a "
                         "row whose keys are all out of reach stays all zero). Temperature is not used by "
                         "kernels: the "
                         "bandwidth " +
                             text_num(cfg.bandwidth) + " plays its role (small = sharp, large = flat)."};
    const std::string t = text_num(cfg.temperature);
    return StageText{
        w.tr("Weights  A = softmax(masked / T)" + w.H(), "注意力权重  A = softmax(masked / T)" + w.H_zh()),
        "A_ij = exp(masked_ij/T) / Σⱼ exp(masked_ij/T),   T = " + t,
        w.tr("Softmax turns each row of scores into probabilities: exp makes every "
             "value positive and "
             "keeps "
             "the order, dividing by the row sum makes the row sum to 1 (the row max "
             "is subtracted "
             "first so "
             "exp never overflows). Temperature T = " +
                 t +
                 " divides the scores first: T → 0 approaches argmax (all weight on "
                 "the best key), T "
                 "→ ∞ "
                 "approaches uniform weights. Read row i as 'how much token i "
                 "listens to each key'.",
             "softmax 把每一行分数变成概率：exp 使每个值都变为正数并保持大小顺序，再除以行和，使"
             "该行之和为 1（先减去该行的最大值，exp 就不会溢出）。分数先除以温度 T = " +
                 t +
                 "：T → 0 时趋近 argmax（全部权重落在最好的键上），T → ∞ 时趋近均匀的"
                 "权重。第 i 行可以读作“词元 i 对每个键各听取多少”。")};
}

StageText weights_model_text(const ModelWords& w) {
    if (!w.s.causal)
        return {"Attention weights A" + w.h, "A" + w.h + " = softmax(S / √d_h)",
                "Scores divided by √d_h = √" + std::to_string(w.s.d_head) +
                    ", then softmax along each row, so each row sums to 1. No mask: in an encoder every "
                    "token sees every token, the ones after it too."};
    return {"Attention weights A" + w.h, "A" + w.h + " = softmax(causal(S / √d_h))",
            "Scores divided by √d_h = √" + std::to_string(w.s.d_head) +
                ", later keys hidden by the causal mask (a token never sees the future: hatched, "
                "exactly 0), then softmax along each row, so each row sums to 1."};
}

void weights_explain(const CellQuery& q, Lines& L) {
    const Trace& t = q.t;
    const Config& c = q.c;
    const int h = q.h, i = q.i, j = q.j;
    const std::string& cell = q.cell;
    if (!q.visible(i, j)) {
        L.push_back("A" + cell + " = 0: key '" + q.cj + "' is hidden from query '" + q.ri + "' by " +
                    mask_reason(c));
        L.push_back(c.attention == AttentionKind::Softmax && !is_kernel(c.scoring)
                        ? "(its masked score is −∞ and exp(−∞) = 0 exactly)"
                        : "(it is left out of the sum)");
        L.push_back(final_line(0.0));
    } else if (c.attention == AttentionKind::Linear) {
        const Mat PQ = stage_matrix(t, "phi_Q", h), PK = stage_matrix(t, "phi_K", h);
        double num = 0, z = 0;
        int terms = 0;
        for (int k = 0; k < t.m; ++k) {
            if (!q.visible(i, k)) continue;
            const double v = double(PQ.row(i).cast<double>().dot(PK.row(k).cast<double>()));
            z += v, ++terms;
            if (k == j) num = v;
        }
        L.push_back("A" + cell + " = φ(q" + sub(i) + ")·φ(k" + sub(j) + ") / Σⱼ φ(q" + sub(i) + ")·φ(kⱼ)");
        L.push_back("= " + f(num, 4) + " / (Σ of " + std::to_string(terms) + " terms = " + f(z, 4) + ")");
        L.push_back(final_line(z > 0 ? num / z : 0.0));
    } else if (is_kernel(c.scoring)) {
        const Mat S = stage_matrix(t, "scores", h);
        double z = 0;
        int terms = 0;
        for (int k = 0; k < t.m; ++k)
            if (q.visible(i, k)) z += S(i, k), ++terms;
        L.push_back("A" + cell + " = S" + cell + " / Σⱼ S[" + q.ri +
                    ", j]   (kernel values normalised; no temperature)");
        L.push_back("= " + f(S(i, j), 4) + " / (Σ of " + std::to_string(terms) + " terms = " + f(z, 4) + ")");
        L.push_back(final_line(z > 0 ? S(i, j) / z : 0.0));
    } else {
        const Mat M = stage_matrix(t, "masked", h);
        const double T = c.temperature;
        double mx = -std::numeric_limits<double>::infinity();
        for (int k = 0; k < t.m; ++k) mx = std::max(mx, double(M(i, k)));
        const bool shift = std::abs(mx / T) > 80;  // raw exp would overflow: show the shifted form
        const double off = shift ? mx : 0.0;
        double z = 0;
        int terms = 0;
        for (int k = 0; k < t.m; ++k)
            if (q.visible(i, k)) z += std::exp((double(M(i, k)) - off) / T), ++terms;
        const double e = std::exp((double(M(i, j)) - off) / T);
        if (shift) {
            L.push_back("A" + cell + " = exp((s − max)/T) / Σⱼ exp((sⱼ − max)/T)   (max = " + f(mx, 4) +
                        " subtracted so exp cannot overflow)");
            L.push_back("= exp((" + f(M(i, j), 4) + " − " + f(mx, 4) + ")/" + f(T, 4) + ") / (Σ of " +
                        std::to_string(terms) + " terms = " + f(z, 4) + ")");
        } else {
            L.push_back("A" + cell + " = exp(s/T) / Σⱼ exp(sⱼ/T),   T = " + f(T, 4));
            L.push_back("= exp(" + f(M(i, j), 4) + "/" + f(T, 4) + ") / (Σ of " + std::to_string(terms) +
                        " terms = " + f(z, 4) + ") = " + f(e, 4) + " / " + f(z, 4));
        }
        // Name s: the softmax's input is the scaled (and masked) score, not S itself.
        L.push_back(c.scoring == Scoring::ScaledDot
                        ? "s = S/√d_k, the scaled score (masked keys −∞) = " + f(M(i, j), 4)
                        : "s = the score (masked keys −∞) = " + f(M(i, j), 4));
        L.push_back(final_line(z > 0 ? e / z : 0.0));
    }
}

void weights_record(LayerRecorder& r, int hd) {
    const LayerRun& x = r.run;
    const MatPtr& A = x.heads[std::size_t(hd)].A;
    if (!x.modes.linear)
        r.add(x.q_ax, x.k_ax, ValueKind::Probability, (x.modes.kernel ? 2 : 5) * x.nf * x.mf, A);
    else if (A)  // linear attention too large for its implied weights shows none
        r.add(x.q_ax, x.k_ax, ValueKind::Probability, 2 * x.nf * x.mf * x.dkf + 2 * x.nf * x.mf, A);
}

}  // namespace

std::vector<StageEntry> normalise_stages() {
    using K = ValueKind;
    // name, phase, kind, kind varies, role, per head, layer text, model text, explain, record
    return {
        {"normalizer", "normalise", K::NonNegative, false, "linear attention's per-query normaliser", true,
         normalizer_text, nullptr, normalizer_explain, normalizer_record},
        {"weights", "normalise", K::Probability, false, "attention weights: each row sums to 1", true,
         weights_text, weights_model_text, weights_explain, weights_record},
    };
}

}  // namespace attnviz

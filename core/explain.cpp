// explain_cell(): the arithmetic behind one cell, with the trace's own numbers. Every final value is
// recomputed here in double precision from the inputs the text shows (not copied from the stage),
// so the explanation and the matrix check each other.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positive in Eigen's AVX-512 code
#endif
#include "core/explain.hpp"

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>

#include "core/cell_text.hpp"
#include "core/error.hpp"
#include "core/ops.hpp"
#include "core/trace_internal.hpp"

namespace attnviz {
namespace {

using cell_text::f;
using cell_text::final_line;
using cell_text::sub;

// "(a)(b) + (c)(d) + … (N terms)" and the exact sum of all N products.
struct DotText {
    std::string text;
    double sum = 0;
};
DotText dot_text(int count, const std::function<double(int)>& a, const std::function<double(int)>& b) {
    DotText d;
    for (int t = 0; t < count; ++t) {
        d.sum += a(t) * b(t);
        if (t < 3) d.text += std::string(t ? " + " : "") + "(" + f(a(t), 2) + ")(" + f(b(t), 2) + ")";
    }
    if (count > 3) d.text += " + … (" + std::to_string(count) + " terms)";
    if (count == 0) d.text = "0 (no terms)";
    return d;
}

std::string mask_reason(const Config& c) {
    switch (c.mask) {
        case MaskKind::Causal:
            return "the causal mask (a token may not see later tokens)";
        case MaskKind::Padding:
            return "the padding mask (keys from position " + std::to_string(c.valid_length) +
                   " on are padding)";
        case MaskKind::Window:
            return "the window mask (only the last " + std::to_string(c.window) + " keys are visible)";
        case MaskKind::Custom:
            return "your custom mask";
        case MaskKind::None:
            break;
    }
    return "no mask";
}

Mat stage_matrix(const Trace& t, const std::string& name, int head = -1) {
    const Stage* s = t.get(name, head);
    return s ? s->matrix() : Mat();
}

// What Q reads (LN(X) or X) and what K, V read (LN(Y) or Y).
Mat query_input(const Trace& t) {
    const Stage* ln = t.get("layernorm");
    return ln ? ln->matrix() : stage_matrix(t, "input");
}
Mat key_input(const Trace& t) {
    if (!t.get("source")) return query_input(t);
    const Mat Y = stage_matrix(t, "source");
    return t.config.layernorm == LayerNormMode::Pre ? layernorm_rows(Y) : Y;
}

// The parameters of head h the trace computed with (never re-derived from a seed here).
const HeadWeights& head_weights(const Trace& t, int h) {
    if (!t.weights || h < 0 || h >= int(t.weights->heads.size()))
        throw Error("explain: the trace carries no weights for head " + std::to_string(h));
    return t.weights->heads[std::size_t(h)];
}

}  // namespace

std::vector<std::string> explain_cell(const Trace& t, int stage_index, int i, int j) {
    if (stage_index < 0 || stage_index >= int(t.stages.size())) return {"No such stage."};
    const Stage& st = t.stages[std::size_t(stage_index)];
    if (i < 0 || j < 0 || i >= st.n_rows() || j >= st.n_cols())
        return {"Cell (" + std::to_string(i) + ", " + std::to_string(j) + ") is outside this " +
                st.shape_text() + " matrix."};
    if (t.explain_hook) return t.explain_hook(t, stage_index, i, j);
    const Config& c = t.config;
    const int h = st.head;
    const std::string& name = st.name;
    const std::string ri = st.rows.label(i), cj = st.cols.label(j);
    const std::string cell = "[" + ri + ", " + cj + "]";
    std::vector<std::string> L;
    const BoolMat allowed = make_mask(c, t.n, t.m);  // n x m
    auto visible = [&](int qi, int kj) { return allowed(qi, kj); };

    if (name == "one_hot") {
        const std::string tok = (*t.query_tokens)[std::size_t(i)], v = (*t.vocab)[std::size_t(j)];
        L.push_back("onehot[" + ri + ", " + v + "] = 1 if token " + std::to_string(i) +
                    " is vocabulary entry " + std::to_string(j) + ", else 0");
        L.push_back("token " + std::to_string(i) + " is '" + tok + "', entry " + std::to_string(j) + " is '" +
                    v + "'");
        L.push_back(final_line(tok == v ? 1.0 : 0.0));
    } else if (name == "embedding") {
        const Mat OH = stage_matrix(t, "one_hot");
        Eigen::Index id = 0;
        OH.row(i).maxCoeff(&id);
        L.push_back("E" + cell + " = Σᵥ onehot[" + ri + ", v] · table[v, " + cj + "]");
        L.push_back("= table['" + (*t.vocab)[std::size_t(id)] + "', " + cj +
                    "]: the single 1 in the one-hot row picks row " + std::to_string(id) + " of the table");
        L.push_back(final_line(st.matrix()(i, j)));
    } else if (name == "positional") {
        if (c.positional == Positional::Sinusoidal) {
            const int pair = j / 2;
            const double w = pe_frequency(pair, t.d_model, c.pe_base);
            const std::string fn = j % 2 == 0 ? "sin" : "cos";
            L.push_back("PE(p=" + std::to_string(i) + ", " + std::to_string(j) + ") = " + fn + "(p / " +
                        f(c.pe_base, 6) + "^(" + std::to_string(2 * pair) + "/" + std::to_string(t.d_model) +
                        "))");
            L.push_back("= " + fn + "(" + std::to_string(i) + " × " + f(w, 4) + ") = " + fn + "(" +
                        f(i * w, 4) + ")");
            L.push_back(final_line(j % 2 == 0 ? std::sin(i * w) : std::cos(i * w)));
        } else if (c.positional == Positional::Learned) {
            L.push_back("P" + cell + " = row " + std::to_string(i) +
                        " of the learned position table, column " + cj);
            L.push_back(final_line(st.matrix()(i, j)));
        } else {
            L.push_back("P" + cell + " = 0: with " + to_string(c.positional) +
                        " nothing is added to the embeddings");
            L.push_back(final_line(0.0));
        }
    } else if (name == "input" || name == "residual") {
        const Mat A = stage_matrix(t, name == "input" ? "embedding" : "input");
        const Mat B = stage_matrix(t, name == "input" ? "positional" : "output");
        L.push_back(name == "input" ? "X" + cell + " = E" + cell + " + P" + cell
                                    : "residual" + cell + " = X" + cell + " + output" + cell +
                                          "  (the change vector added to the input)");
        L.push_back("= (" + f(A(i, j), 4) + ") + (" + f(B(i, j), 4) + ")");
        L.push_back(final_line(double(A(i, j)) + double(B(i, j))));
    } else if (name == "source") {
        L.push_back("Y" + cell + " = embedding of source token '" + ri +
                    "' + positional encoding of position " + std::to_string(i) + ", dimension " + cj);
        L.push_back(final_line(st.matrix()(i, j)));
    } else if (name == "layernorm" || name == "layernorm_post") {
        const Mat X = name == "layernorm" ? stage_matrix(t, "input")
                                          : stage_matrix(t, t.get("residual") ? "residual" : "output");
        double mean = 0, var = 0;
        const int d = int(X.cols());
        for (int k = 0; k < d; ++k) mean += X(i, k);
        mean /= d;
        for (int k = 0; k < d; ++k) var += (X(i, k) - mean) * (X(i, k) - mean);
        var /= d;
        L.push_back("LN(x" + sub(i) + ")" + sub(j) + " = (x_ik − mean(x_i)) / √(var(x_i) + ε)");
        L.push_back("= (" + f(X(i, j), 4) + " − " + f(mean, 4) + ") / √(" + f(var, 4) + " + 1e−5)");
        L.push_back(final_line((X(i, j) - mean) / std::sqrt(var + 1e-5)));
    } else if (name == "W_Q" || name == "W_K" || name == "W_V" || name == "W_O") {
        const bool designed =
            h >= 0 && (name == "W_Q" || name == "W_K") && t.weights && !head_weights(t, h).designed.empty();
        const bool seeded = !t.weights || t.weights->source == "seeded" || t.weights->source == "designed";
        L.push_back(name + cell + (h >= 0 ? " of head " + std::to_string(h) : "") +
                    (designed ? ": set by hand for the designed head (see the explanation)"
                     : seeded ? ": a learned parameter (here drawn at random)"
                              : ": a learned parameter (" + t.weights->source + ")"));
        L.push_back(final_line(st.matrix()(i, j)));
    } else if (name == "Q" || name == "K" || name == "V") {
        const Mat Xin = name == "Q" ? query_input(t) : key_input(t);
        const Mat W = stage_matrix(t, "W_" + name, h);
        const std::string x =
            name == "Q" ? (t.get("layernorm") ? "LN(x)" : "x") : (t.get("source") ? "y" : "x");
        const std::string lower = name == "Q" ? "q" : name == "K" ? "k" : "v";
        L.push_back(name + cell + " = " + x + sub(i) + " · W_" + name + "[:, " + std::to_string(j) +
                    "] = Σₖ " + x + sub(i) + "ₖ W_" + name + "[k, " + std::to_string(j) + "]");
        const DotText d = dot_text(
            int(Xin.cols()), [&](int k) { return double(Xin(i, k)); },
            [&](int k) { return double(W(k, j)); });
        const RowVec& bias = name == "Q"   ? head_weights(t, h).b_Q
                             : name == "K" ? head_weights(t, h).b_K
                                           : head_weights(t, h).b_V;
        if (bias.size() == 0) {
            L.push_back("= " + d.text);
            L.push_back(final_line(d.sum));
        } else {
            L.push_back("= " + d.text + " + b_" + name + "[" + std::to_string(j) + "] (" + f(bias(j), 4) +
                        ")");
            L.push_back(final_line(d.sum + double(bias(j))));
        }
    } else if (name == "Q_rot" || name == "K_rot") {
        const Mat M = stage_matrix(t, name == "Q_rot" ? "Q" : "K", h);
        const int pair = j / 2, d = int(M.cols());
        const double w = std::pow(c.pe_base, -2.0 * pair / d), th = i * w;
        const double a = M(i, 2 * pair), b = M(i, 2 * pair + 1);
        const std::string v = name == "Q_rot" ? "q" : "k";
        if (j % 2 == 0) {
            L.push_back(v + "̃" + cell + " = " + v + "_" + std::to_string(2 * pair) + "·cos(pω) − " + v + "_" +
                        std::to_string(2 * pair + 1) + "·sin(pω),  p = " + std::to_string(i) +
                        ", ω = " + f(w, 4));
            L.push_back("= (" + f(a, 4) + ")·cos(" + f(th, 4) + ") − (" + f(b, 4) + ")·sin(" + f(th, 4) +
                        ")");
            L.push_back(final_line(a * std::cos(th) - b * std::sin(th)));
        } else {
            L.push_back(v + "̃" + cell + " = " + v + "_" + std::to_string(2 * pair) + "·sin(pω) + " + v + "_" +
                        std::to_string(2 * pair + 1) + "·cos(pω),  p = " + std::to_string(i) +
                        ", ω = " + f(w, 4));
            L.push_back("= (" + f(a, 4) + ")·sin(" + f(th, 4) + ") + (" + f(b, 4) + ")·cos(" + f(th, 4) +
                        ")");
            L.push_back(final_line(a * std::sin(th) + b * std::cos(th)));
        }
    } else if (name == "alibi") {
        const double slope = alibi_slope(h, t.heads);
        L.push_back("B" + cell + " = −slope·|i − j| = −" + f(slope, 4) + " × |" + std::to_string(i) + " − " +
                    std::to_string(j) + "|");
        L.push_back(final_line(-slope * std::abs(i - j)));
    } else if (name == "scores") {
        const Mat Q = t.get("Q_rot", h) ? stage_matrix(t, "Q_rot", h) : stage_matrix(t, "Q", h);
        const Mat K = t.get("K_rot", h) ? stage_matrix(t, "K_rot", h) : stage_matrix(t, "K", h);
        const int dk = int(Q.cols());
        const std::string q = "q" + sub(i), k = "k" + sub(j);
        switch (c.scoring) {
            case Scoring::ScaledDot:
            case Scoring::Dot: {
                L.push_back("S" + cell + " = " + q + "·" + k + " = Σₖ " + q + "ₖ " + k + "ₖ");
                const DotText d = dot_text(
                    dk, [&](int a) { return double(Q(i, a)); }, [&](int a) { return double(K(j, a)); });
                L.push_back("= " + d.text);
                L.push_back(final_line(d.sum));
                break;
            }
            case Scoring::Bilinear: {
                const ScoringParams& p = head_weights(t, h).scoring;
                const Vec Wk = p.W * K.row(j).transpose();  // d_k
                L.push_back("S" + cell + " = " + q + "ᵀ W " + k + " = Σₐ " + q + "ₐ (W " + k + ")ₐ");
                const DotText d = dot_text(
                    dk, [&](int a) { return double(Q(i, a)); }, [&](int a) { return double(Wk(a)); });
                L.push_back("= " + d.text);
                L.push_back(final_line(d.sum));
                break;
            }
            case Scoring::Additive: {
                const ScoringParams& p = head_weights(t, h).scoring;
                const int hid = int(p.w_v.size());
                std::vector<double> z(std::size_t(hid), 0.0);
                for (int u = 0; u < hid; ++u)
                    for (int a = 0; a < dk; ++a)
                        z[std::size_t(u)] += double(p.W_q(a, u)) * Q(i, a) + double(p.W_k(a, u)) * K(j, a);
                L.push_back("S" + cell + " = w_vᵀ tanh(W_qᵀ" + q + " + W_kᵀ" + k + ") = Σᵤ w_v[u] tanh(z_u)");
                const DotText d = dot_text(
                    hid, [&](int u) { return double(p.w_v(u)); },
                    [&](int u) { return std::tanh(z[std::size_t(u)]); });
                L.push_back("= " + d.text);
                L.push_back(final_line(d.sum));
                break;
            }
            default: {
                double d2 = 0;
                for (int a = 0; a < dk; ++a) d2 += double(Q(i, a) - K(j, a)) * double(Q(i, a) - K(j, a));
                const double u = std::sqrt(d2) / c.bandwidth;
                L.push_back("S" + cell + " = kernel(u),  u = ‖" + q + " − " + k + "‖ / bandwidth = " +
                            f(std::sqrt(d2), 4) + " / " + f(c.bandwidth, 4) + " = " + f(u, 4));
                double v = 0;
                if (c.scoring == Scoring::Gaussian) {
                    L.push_back("Gaussian: exp(−u²/2) = exp(−" + f(u * u / 2, 4) + ")");
                    v = std::exp(-u * u / 2);
                } else if (c.scoring == Scoring::Boxcar) {
                    L.push_back("boxcar: 1 if u ≤ 1 else 0");
                    v = u <= 1 ? 1 : 0;
                } else {
                    L.push_back("Epanechnikov: max(0, 1 − u) = max(0, " + f(1 - u, 4) + ")");
                    v = std::max(0.0, 1 - u);
                }
                L.push_back(final_line(v));
                break;
            }
        }
    } else if (name == "scaled" || name == "masked") {
        const double s = stage_matrix(t, "scores", h)(i, j);
        const double scale = is_kernel(c.scoring) ? 1.0 : score_scale(c.scoring, t.d_k);
        const bool alibi = t.get("alibi", h) != nullptr;
        const double b = alibi ? -alibi_slope(h, t.heads) * std::abs(i - j) : 0.0;
        const double scaled = s * scale + b;
        if (name == "masked" && !visible(i, j)) {
            L.push_back("masked" + cell + " = −∞: key '" + cj + "' is hidden from query '" + ri + "' by " +
                        mask_reason(c) + ",");
            L.push_back("so exp(−∞) = 0 and its weight is exactly 0");
            L.push_back("= −∞");
        } else {
            if (name == "masked")
                L.push_back("masked" + cell + " = scaled" + cell + ": key visible (" + mask_reason(c) + ")");
            if (scale != 1.0) {
                L.push_back("scaled" + cell + " = S / √d_k" + std::string(alibi ? " + B" : "") + " = " +
                            f(s, 4) + " / √" + std::to_string(t.d_k) + (alibi ? " + (" + f(b, 4) + ")" : ""));
            } else {
                L.push_back("scaled" + cell + " = S" + std::string(alibi ? " + B" : "") + " = " + f(s, 4) +
                            (alibi ? " + (" + f(b, 4) + ")" : "") + "   (no √d_k scaling for " +
                            to_string(c.scoring) + ")");
            }
            L.push_back(final_line(scaled));
        }
    } else if (name == "weights") {
        if (!visible(i, j)) {
            L.push_back("A" + cell + " = 0: key '" + cj + "' is hidden from query '" + ri + "' by " +
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
                if (!visible(i, k)) continue;
                const double v = double(PQ.row(i).cast<double>().dot(PK.row(k).cast<double>()));
                z += v, ++terms;
                if (k == j) num = v;
            }
            L.push_back("A" + cell + " = φ(q" + sub(i) + ")·φ(k" + sub(j) + ") / Σⱼ φ(q" + sub(i) +
                        ")·φ(kⱼ)");
            L.push_back("= " + f(num, 4) + " / (Σ of " + std::to_string(terms) + " terms = " + f(z, 4) + ")");
            L.push_back(final_line(z > 0 ? num / z : 0.0));
        } else if (is_kernel(c.scoring)) {
            const Mat S = stage_matrix(t, "scores", h);
            double z = 0;
            int terms = 0;
            for (int k = 0; k < t.m; ++k)
                if (visible(i, k)) z += S(i, k), ++terms;
            L.push_back("A" + cell + " = S" + cell + " / Σⱼ S[" + ri +
                        ", j]   (kernel values normalised; no temperature)");
            L.push_back("= " + f(S(i, j), 4) + " / (Σ of " + std::to_string(terms) + " terms = " + f(z, 4) +
                        ")");
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
                if (visible(i, k)) z += std::exp((double(M(i, k)) - off) / T), ++terms;
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
    } else if (name == "head_output") {
        const Mat A = stage_matrix(t, "weights", h), V = stage_matrix(t, "V", h);
        if (A.size() != 0) {
            L.push_back("head" + sub(h) + cell + " = Σⱼ A[" + ri + ", j] V[j, " + cj +
                        "]   (weighted average of the values)");
            const DotText d = dot_text(
                t.m, [&](int k) { return double(A(i, k)); }, [&](int k) { return double(V(k, j)); });
            L.push_back("= " + d.text);
            L.push_back(final_line(d.sum));
        } else {
            const Mat PQ = stage_matrix(t, "phi_Q", h), KV = stage_matrix(t, "KV", h),
                      Z = stage_matrix(t, "normalizer", h);
            L.push_back("head" + sub(h) + cell + " = φ(q" + sub(i) + ")·(φ(K)ᵀV)[:, " + cj + "] / z" +
                        sub(i) + "   (the n×m weights are never formed)");
            if (c.mask == MaskKind::Causal) {
                L.push_back("with the causal mask φ(K)ᵀV is the running sum over keys j ≤ " +
                            std::to_string(i));
                L.push_back(final_line(st.matrix()(i, j)));
            } else {
                const DotText d = dot_text(
                    int(PQ.cols()), [&](int a) { return double(PQ(i, a)); },
                    [&](int a) { return double(KV(a, j)); });
                L.push_back("= (" + d.text + ") / " + f(Z(i, 0), 4));
                L.push_back(final_line(Z(i, 0) > 0 ? d.sum / Z(i, 0) : 0.0));
            }
        }
    } else if (name == "phi_Q" || name == "phi_K") {
        const bool key = name == "phi_K";
        const Mat X = stage_matrix(
            t, key ? (t.get("K_rot", h) ? "K_rot" : "K") : (t.get("Q_rot", h) ? "Q_rot" : "Q"), h);
        const double x = X(i, j);
        if (key && c.mask == MaskKind::Padding && c.valid_length >= 0 && i >= c.valid_length) {
            L.push_back("φ(k" + sub(i) + ") = 0: key '" + ri +
                        "' is padding, so its feature row is zeroed (that hides it)");
            L.push_back(final_line(0.0));
        } else if (c.phi == PhiKind::Elu1) {
            L.push_back(std::string("φ(x) = elu(x) + 1 with x = ") + f(x, 4) +
                        (x > 0 ? ": x > 0 so φ = x + 1" : ": x ≤ 0 so φ = eˣ"));
            L.push_back(final_line(x > 0 ? x + 1 : std::exp(x)));
        } else if (c.phi == PhiKind::Relu) {
            L.push_back("φ(x) = max(x, 0) with x = " + f(x, 4));
            L.push_back(final_line(std::max(x, 0.0)));
        } else if (!key) {
            double mx = X.row(i).maxCoeff(), z = 0;
            for (int a = 0; a < X.cols(); ++a) z += std::exp(double(X(i, a)) - mx);
            L.push_back("φ(q" + sub(i) + ")" + sub(j) + " = exp(qₖ) / Σₐ exp(qₐ): softmax over the " +
                        std::to_string(X.cols()) + " features of this query");
            L.push_back("= exp(" + f(x, 4) + " − " + f(mx, 4) + ") / " + f(z, 4));
            L.push_back(final_line(std::exp(x - mx) / z));
        } else {
            double mx = -std::numeric_limits<double>::infinity(), z = 0;
            auto valid = [&](int r) {
                return c.mask != MaskKind::Padding || c.valid_length < 0 || r < c.valid_length;
            };
            for (int r = 0; r < X.rows(); ++r)
                if (valid(r)) mx = std::max(mx, double(X(r, j)));
            for (int r = 0; r < X.rows(); ++r)
                if (valid(r)) z += std::exp(double(X(r, j)) - mx);
            L.push_back("φ(k" + sub(i) + ")" + sub(j) + " = exp(k_ij) / Σᵣ exp(k_rj): softmax of feature " +
                        cj + " over the key tokens");
            L.push_back("= exp(" + f(x, 4) + " − " + f(mx, 4) + ") / " + f(z, 4));
            L.push_back(final_line(std::exp(x - mx) / z));
        }
    } else if (name == "KV") {
        const Mat PK = stage_matrix(t, "phi_K", h), V = stage_matrix(t, "V", h);
        const int count = c.mask == MaskKind::Causal ? std::min(t.m, t.n) : t.m;
        L.push_back("KV[" + ri + ", " + cj + "] = Σⱼ φ(k_j)" + sub(i) + " v_j" + sub(j) + " over " +
                    (c.mask == MaskKind::Causal
                         ? "keys j ≤ " + std::to_string(count - 1) + " (the last running sum)"
                         : "all " + std::to_string(count) + " keys"));
        const DotText d = dot_text(
            count, [&](int k) { return double(PK(k, i)); }, [&](int k) { return double(V(k, j)); });
        L.push_back("= " + d.text);
        L.push_back(final_line(d.sum));
    } else if (name == "normalizer") {
        const Mat PQ = stage_matrix(t, "phi_Q", h), PK = stage_matrix(t, "phi_K", h);
        double z = 0;
        int terms = 0;
        for (int k = 0; k < t.m; ++k) {
            if (!visible(i, k)) continue;
            z += PQ.row(i).cast<double>().dot(PK.row(k).cast<double>());
            ++terms;
        }
        L.push_back("z" + sub(i) + " = Σⱼ φ(q" + sub(i) + ")·φ(k_j) over the " + std::to_string(terms) +
                    " keys '" + ri + "' may see = φ(q" + sub(i) + ")·(Σⱼ φ(k_j))");
        L.push_back(final_line(z));
    } else if (name == "concat") {
        const int head = j / t.d_v, col = j % t.d_v;
        const Mat H = stage_matrix(t, "head_output", head);
        L.push_back("concat" + cell + " = head" + sub(head) + "[" + ri + ", " + std::to_string(col) +
                    "]: columns " + std::to_string(head * t.d_v) + "–" +
                    std::to_string(head * t.d_v + t.d_v - 1) + " come from head " + std::to_string(head));
        L.push_back(final_line(H(i, col)));
    } else if (name == "output") {
        const Mat C = stage_matrix(t, "concat"), W = stage_matrix(t, "W_O");
        L.push_back("output" + cell + " = Σ_c concat[" + ri + ", c] W_O[c, " + cj + "]   (mixes all heads)");
        const DotText d = dot_text(
            int(C.cols()), [&](int a) { return double(C(i, a)); }, [&](int a) { return double(W(a, j)); });
        const bool bias = t.weights && t.weights->b_O.size() != 0;
        if (!bias) {
            L.push_back("= " + d.text);
            L.push_back(final_line(d.sum));
        } else {
            const double b = t.weights->b_O(j);
            L.push_back("= " + d.text + " + b_O[" + cj + "] (" + f(b, 4) + ")");
            L.push_back(final_line(d.sum + b));
        }
    } else {
        L.push_back(name + cell);
        L.push_back(final_line(st.matrix()(i, j)));
    }
    return L;
}

}  // namespace attnviz

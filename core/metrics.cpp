// Sizes and costs of one attention layer: the numbers behind "attention is quadratic" and
// "4·d_model² parameters".
#include "core/metrics.hpp"

#include "core/ops.hpp"

namespace attnviz {

ParamCount attention_params(const LayerSize& s, Scoring scoring, int additive_hidden) {
    const std::int64_t d = s.d_model, h = s.heads, dk = s.d_k, dv = s.d_v;
    ParamCount p;
    // Every head has its own W_Q, W_K (d_model × d_k) and W_V (d_model × d_v); W_O maps the
    // concatenated heads (h·d_v) back to d_model.
    p.w_q = h * d * dk;
    p.w_k = h * d * dk;
    p.w_v = h * d * dv;
    p.w_o = h * dv * d;
    if (s.bias) {
        p.w_q += h * dk;
        p.w_k += h * dk;
        p.w_v += h * dv;
        p.w_o += d;
    }
    if (scoring == Scoring::Additive) {
        // Per head: W_q, W_k (d_k × hidden) and w_v (hidden).
        const std::int64_t hidden = additive_hidden > 0 ? additive_hidden : dk;
        p.scoring = h * (2 * dk * hidden + hidden);
    } else if (scoring == Scoring::Bilinear) {
        p.scoring = h * dk * dk;  // per head: W (d_k × d_k)
    }
    p.total = p.w_q + p.w_k + p.w_v + p.w_o + p.scoring;

    p.formula = "h·d_model·(2·d_k + d_v) + h·d_v·d_model";
    if (s.bias) p.formula += " + h·(2·d_k + d_v) + d_model";
    if (scoring == Scoring::Additive) p.formula += " + h·(2·d_k·hidden + hidden)";
    if (scoring == Scoring::Bilinear) p.formula += " + h·d_k²";
    if (!s.bias && scoring != Scoring::Additive && scoring != Scoring::Bilinear && h * dk == d &&
        h * dv == d) {
        p.formula += " = 4·d_model²";  // the familiar special case h·d_k = h·d_v = d_model
    }
    return p;
}

ParamCount attention_params(const Config& cfg) {
    LayerSize s;
    s.d_model = cfg.d_model;
    s.heads = cfg.heads;
    s.d_k = cfg.resolved_d_k();
    s.d_v = cfg.resolved_d_v();
    s.bias = false;  // attnviz's layer has no biases
    return attention_params(s, cfg.scoring, cfg.resolved_additive_hidden());
}

std::int64_t embedding_params(std::int64_t vocab, std::int64_t d_model) {
    return vocab * d_model;
}

double attention_pattern_bytes(std::int64_t n, std::int64_t m, int heads, int bytes_per_value) {
    return double(heads) * double(n) * double(m) * double(bytes_per_value);
}

double forward_flops(const Config& cfg, int n_, int m_) {
    const double n = n_, m = m_, d = cfg.d_model, h = cfg.heads;
    const double dk = cfg.resolved_d_k(), dv = cfg.resolved_d_v();
    double f = 0;
    // Projections: Q = X W_Q (n×d_model · d_model×d_k), K and V from Y, per head.
    f += h * (2 * n * d * dk + 2 * m * d * dk + 2 * m * d * dv);
    if (cfg.attention == AttentionKind::Linear) {
        // φ(Q), φ(K) (about 1 op per entry), φ(K)ᵀV, Σφ(k), φ(Q)·KV, normalizer, division.
        f += h * (n * dk + m * dk + 2 * m * dk * dv + m * dk + 2 * n * dk * dv + 2 * n * dk + n * dv);
    } else {
        double scores = 0;
        switch (cfg.scoring) {
            case Scoring::ScaledDot:
                scores = 2 * n * m * dk + n * m;
                break;  // QKᵀ, then ÷√d_k
            case Scoring::Dot:
                scores = 2 * n * m * dk;
                break;
            case Scoring::Additive: {
                const double hid = cfg.resolved_additive_hidden();
                // W_qᵀq_i and W_kᵀk_j once, then per (i, j): add, tanh, multiply-add with w_v.
                scores = 2 * n * dk * hid + 2 * m * dk * hid + n * m * hid * 4;
                break;
            }
            case Scoring::Bilinear:
                scores = 2 * n * dk * dk + 2 * n * m * dk;
                break;  // (QW)Kᵀ
            default:
                // Kernels: ‖q‖², ‖k‖², QKᵀ, combine, kernel; then normalise (sum, divide).
                scores = 2 * n * dk + 2 * m * dk + 2 * n * m * dk + 4 * n * m + 2 * n * m;
                break;
        }
        f += h * scores;
        // Softmax: subtract max, divide by T, exp, sum, divide ≈ 5 per entry (kernels: normalise
        // only, counted above). Then A·V.
        if (!is_kernel(cfg.scoring)) f += h * 5 * n * m;
        f += h * 2 * n * m * dv;
    }
    // Output projection: concat (n × h·d_v) · W_O (h·d_v × d_model).
    f += 2 * n * h * dv * d;
    if (cfg.residual) f += n * d;
    if (cfg.layernorm != LayerNormMode::None) f += 5 * n * d;
    return f;
}

ModelPreset gpt3_preset() {
    return ModelPreset{"GPT-3 175B", 12288, 96, 128, 50257, 96, 2048};
}

}  // namespace attnviz

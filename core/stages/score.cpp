// Phase "score": how well each key answers each query. Softmax attention: ALiBi's bias, the scores
// (dot, additive, bilinear or a kernel), scaled and masked (derived on demand, never stored).
// Linear attention: the feature maps φ(Q), φ(K) and the key–value summary φ(K)ᵀV.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/ops.hpp"
#include "core/stages/common.hpp"
#include "core/stages/layer_run.hpp"
#include "core/trace_internal.hpp"

namespace attnviz {
namespace {

using namespace stages;

std::string query_name(const LayerWords& w) {
    return w.modes.rope ? "Q̃" : "Q";
}
std::string key_name(const LayerWords& w) {
    return w.modes.rope ? "K̃" : "K";
}

// --- alibi ----------------------------------------------------------------------------------------

StageText alibi_text(const LayerWords& w) {
    const double slope = alibi_slope(w.hd, w.cfg.heads);
    return StageText{"ALiBi bias" + w.H(), "B_ij = −" + text_num(slope) + "·|i − j|",
                     "ALiBi gives every head a fixed distance penalty with its own slope (here 2^(−8·" +
                         std::to_string(w.hd + 1) + "/" + std::to_string(w.cfg.heads) +
                         ") = " + text_num(slope) +
                         "). Added to the scaled scores, it makes far-away keys less likely; steep-slope "
                         "heads look "
                         "locally, shallow-slope heads look far. It needs no learned parameters and "
                         "extends "
                         "to longer "
                         "texts than seen in training."};
}

void alibi_explain(const CellQuery& q, Lines& L) {
    const double slope = alibi_slope(q.h, q.t.heads);
    L.push_back("B" + q.cell + " = −slope·|i − j| = −" + f(slope, 4) + " × |" + std::to_string(q.i) + " − " +
                std::to_string(q.j) + "|");
    L.push_back(final_line(-slope * std::abs(q.i - q.j)));
}

void alibi_record(LayerRecorder& r, int hd) {
    const LayerRun& x = r.run;
    if (x.modes.linear || !x.modes.alibi) return;
    const double slope = alibi_slope(hd, x.h);
    const int n = x.n, m = x.m;
    r.add(
        x.q_ax, x.k_ax, ValueKind::Signed, x.nf * x.mf, nullptr,
        [n, m, slope] { return alibi_bias(n, m, slope); },
        [slope](int i, int j) { return float(-slope * std::abs(i - j)); });
}

// --- scores ---------------------------------------------------------------------------------------

StageText scores_text(const LayerWords& w) {
    const Config& cfg = w.cfg;
    const std::string qn = query_name(w), kn = key_name(w);
    std::string stitle, sformula, sexp, hd = w.H();
    switch (cfg.scoring) {
        case Scoring::ScaledDot:
        case Scoring::Dot:
            stitle = w.tr("Scores  S = " + qn + kn + "ᵀ", "注意力分数  S = " + qn + kn + "ᵀ");
            hd = w.tr(hd, w.H_zh());
            sformula = "S = " + qn + " " + kn + "ᵀ,   S_ij = q_i·k_j";
            sexp =
                "Every query is compared with every key by a dot product: S_ij = Σₖ q_ik k_jk. "
                "Large "
                "and "
                "positive when the two vectors point the same way, negative when opposite. Row i "
                "says how "
                "well each key answers token i's question. This n×m matrix is why attention "
                "costs "
                "O(n²).";
            sexp = w.tr(std::move(sexp),
                        "每个查询都通过点积与每个键比较：S_ij = Σₖ q_ik k_jk。两个向量指向同一方向时分数大且"
                        "为正，方向相反时为负。第 i 行表示每个键对词元 i 的提问回答得有多好。正是这个 n×m "
                        "矩阵使注意力的代价为 O(n²)。");
            break;
        case Scoring::Additive:
            stitle = "Scores (additive)";
            sformula = "S_ij = w_vᵀ tanh(W_qᵀ q_i + W_kᵀ k_j)";
            sexp = "Additive (Bahdanau) scoring: a tiny one-hidden-layer network (hidden size " +
                   std::to_string(cfg.resolved_additive_hidden()) +
                   ") scores each (query, key) pair. More flexible than a dot product but it "
                   "cannot be "
                   "written as one matrix product, so it is slower on long texts.";
            break;
        case Scoring::Bilinear:
            stitle = "Scores (bilinear)";
            sformula = "S = " + qn + " W " + kn + "ᵀ   (W: d_k×d_k)";
            sexp =
                "Bilinear (Luong 'general') scoring: a learned d_k×d_k matrix W sits between "
                "query "
                "and "
                "key, S_ij = q_iᵀ W k_j. With W = I it is the plain dot product.";
            break;
        default: {
            const std::string b = text_num(cfg.bandwidth);
            stitle = "Kernel values (" + to_string(cfg.scoring) + ")";
            const std::string u = "u = ‖q_i − k_j‖/" + b;
            sformula = cfg.scoring == Scoring::Gaussian ? "S_ij = exp(−u²/2),  " + u
                       : cfg.scoring == Scoring::Boxcar ? "S_ij = 1 if u ≤ 1 else 0,  " + u
                                                        : "S_ij = max(0, 1 − u),  " + u;
            sexp =
                "Nadaraya–Watson kernel regression, the ancestor of attention: the similarity is "
                "a "
                "kernel "
                "of the distance between query and key (bandwidth " +
                b +
                "). Near keys get large values, far keys small or zero. The values are already "
                "non-negative, so they are normalised by their row sum instead of by softmax; "
                "temperature "
                "is not used.";
            break;
        }
    }
    return StageText{stitle + hd, sformula, sexp};
}

StageText scores_model_text(const ModelWords& w) {
    return {"Scores  S" + w.h + " = Q Kᵀ", "S" + w.h + " = Q" + w.h + " K" + w.h + "ᵀ",
            "Every query against every key, unscaled and before the mask. Large means 'this key answers "
            "this query'."};
}

void scores_explain(const CellQuery& q, Lines& L) {
    const Trace& t = q.t;
    const Config& c = q.c;
    const int h = q.h, i = q.i, j = q.j;
    const std::string& cell = q.cell;
    const Mat Q = t.get("Q_rot", h) ? stage_matrix(t, "Q_rot", h) : stage_matrix(t, "Q", h);
    const Mat K = t.get("K_rot", h) ? stage_matrix(t, "K_rot", h) : stage_matrix(t, "K", h);
    const int dk = int(Q.cols());
    const std::string qi = "q" + sub(i), kj = "k" + sub(j);
    switch (c.scoring) {
        case Scoring::ScaledDot:
        case Scoring::Dot: {
            L.push_back("S" + cell + " = " + qi + "·" + kj + " = Σₖ " + qi + "ₖ " + kj + "ₖ");
            const DotText d = dot_text(
                dk, [&](int a) { return double(Q(i, a)); }, [&](int a) { return double(K(j, a)); });
            L.push_back("= " + d.text);
            L.push_back(final_line(d.sum));
            break;
        }
        case Scoring::Bilinear: {
            const ScoringParams& p = head_weights(t, h).scoring;
            const Vec Wk = p.W * K.row(j).transpose();  // d_k
            L.push_back("S" + cell + " = " + qi + "ᵀ W " + kj + " = Σₐ " + qi + "ₐ (W " + kj + ")ₐ");
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
            L.push_back("S" + cell + " = w_vᵀ tanh(W_qᵀ" + qi + " + W_kᵀ" + kj + ") = Σᵤ w_v[u] tanh(z_u)");
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
            L.push_back("S" + cell + " = kernel(u),  u = ‖" + qi + " − " + kj + "‖ / bandwidth = " +
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
}

ValueKind score_kind(const LayerRun& x) {
    return x.modes.kernel ? ValueKind::NonNegative : ValueKind::Signed;
}

void scores_record(LayerRecorder& r, int hd) {
    const LayerRun& x = r.run;
    if (x.modes.linear) return;
    const double nf = x.nf, mf = x.mf, dkf = x.dkf;
    const double hid = x.cfg.resolved_additive_hidden();
    const double sflops = x.cfg.scoring == Scoring::Additive   ? 2 * (nf + mf) * dkf * hid + 4 * nf * mf * hid
                          : x.cfg.scoring == Scoring::Bilinear ? 2 * nf * mf * dkf + 2 * nf * dkf * dkf
                          : x.modes.kernel                     ? 3 * nf * mf * dkf
                                                               : 2 * nf * mf * dkf;
    r.add(x.q_ax, x.k_ax, score_kind(x), sflops, x.heads[std::size_t(hd)].S);
}

// --- scaled, masked -------------------------------------------------------------------------------

// scaled = S·scale (+ B): the whole matrix, and one cell with the same float operations in the same order.
struct Scaled {
    MatPtr S;
    double scale, slope;
    bool alibi;
    Mat operator()() const {
        Mat r = *S * float(scale);  // n x m
        if (alibi) r += alibi_bias(int(r.rows()), int(r.cols()), slope);
        return r;
    }
    float cell(int i, int j) const {
        float r = (*S)(i, j) * float(scale);
        if (alibi) r += float(-slope * std::abs(i - j));
        return r;
    }
};

Scaled scaled_of(const LayerRun& x, int hd) {
    const bool alibi = x.modes.alibi;
    return Scaled{x.heads[std::size_t(hd)].S, x.modes.kernel ? 1.0 : score_scale(x.cfg.scoring, x.d_k),
                  alibi ? alibi_slope(hd, x.h) : 0.0, alibi};
}

StageText scaled_text(const LayerWords& w) {
    const Config& cfg = w.cfg;
    const double dkf = w.d_k;
    const std::string B = w.modes.alibi ? " + B" : "";
    std::string cformula, cexp;
    bool zh = false;  // the paragraph is in Chinese (additive and kernel scores stay English)
    if (cfg.scoring == Scoring::ScaledDot || cfg.scoring == Scoring::Bilinear) {
        cformula = "scaled = S / √d_k" + B + " = S / " + text_num(std::sqrt(dkf)) + B;
        cexp = "If the entries of q and k have variance 1, q·k is a sum of d_k = " + w.dk_s +
               " such products and has variance d_k: the scores grow like √d_k. Large scores push "
               "softmax "
               "into saturation (one weight ≈ 1, gradients ≈ 0). Dividing by √d_k = " +
               text_num(std::sqrt(dkf)) + " brings the variance back to 1 whatever the head size.";
        cexp =
            w.tr(std::move(cexp), "如果 q 和 k 的元素方差为 1，q·k 就是 d_k = " + w.dk_s +
                                      " 个这样的乘积之和，方差为 d_k：分数按 √d_k 增长。分数过大会使 softmax "
                                      "饱和（一个权重 ≈ 1，梯度 ≈ 0）。除以 √d_k = " +
                                      text_num(std::sqrt(dkf)) + " 缩放后，无论头的大小如何，方差都回到 1。");
        zh = w.zh();
    } else if (w.modes.kernel) {
        cformula = "scaled = S   (kernels are not scaled)";
        cexp =
            "Kernel values are already on a fixed scale (the bandwidth sets it), so there is nothing "
            "to "
            "scale: this stage equals the kernel values.";
    } else {
        cformula = "scaled = S" + B + "   (" + to_string(cfg.scoring) + " scoring: no √d_k scaling)";
        cexp = cfg.scoring == Scoring::Dot
                   ? "Plain dot-product scoring does not divide by √d_k. Compare with scaled_dot: "
                     "with d_k = " +
                         w.dk_s + " the scores here are √d_k = " + text_num(std::sqrt(dkf)) +
                         " times larger, so softmax is sharper (often saturated)."
                   : "Additive scores come out of tanh and a small weight vector, so they are "
                     "already of "
                     "moderate size and are not scaled.";
        if (cfg.scoring == Scoring::Dot) {
            cexp = w.tr(std::move(cexp), "普通点积评分不除以 √d_k。与 scaled_dot 比较：d_k = " + w.dk_s +
                                             " 时，这里的分数大 √d_k = " + text_num(std::sqrt(dkf)) +
                                             " 倍，因此 softmax 更尖锐（常常饱和）。");
            zh = w.zh();
        }
    }
    if (w.modes.alibi)
        cexp += zh ? "ALiBi 的距离惩罚 B 在这里加上。" : " ALiBi's distance penalty B is added here.";
    return StageText{zh ? "缩放后的注意力分数" + w.H_zh() : "Scaled scores" + w.H(), cformula, cexp};
}

StageText masked_text(const LayerWords& w) {
    const Config& cfg = w.cfg;
    const bool mask = cfg.mask != MaskKind::None;
    std::string mexp;
    if (!mask) {
        mexp =
            "No mask: every query may look at every key, including keys after it. This is an "
            "encoder's bidirectional attention (BERT reads the whole sentence at once, e.g. to fill "
            "in a masked word). Choose causal to stop tokens from seeing the future, as a decoder "
            "that generates text one token at a time must (GPT).";
        mexp = w.tr(std::move(mexp),
                    "无掩码：每个查询都可以看到每个键，包括它之后的键。这是编码器的双向注意力（BERT 一次读完"
                    "整个句子，例如用来填出被遮住的词）。选择 causal（因果掩码）可以让词元看不到未来，逐个"
                    "词元生成文本的解码器（GPT）必须这样做。");
    } else if (w.zh()) {
        mexp =
            "被遮住的格子设为 −∞，于是 exp(−∞) = 0 恰好成立：该键的权重是零，而不是一个很小的数，其余"
            "权重之和仍为 1。";
        switch (cfg.mask) {
            case MaskKind::Causal:
                mexp +=
                    "因果掩码：词元 i 只能看到 j ≤ i 的键（不能偷看未来），上三角被遮住。这是解码器的自注意力"
                    "（GPT）：训练时整个目标句子一次输入，掩码为每个位置遮住它将要预测的词元。编码器–解码器"
                    "模型（T5、翻译）另加交叉注意力，解码器的查询读取编码器的键和值（这里的第二段文本）。";
                break;
            case MaskKind::Padding:
                mexp += "填充掩码：从位置 " + std::to_string(cfg.valid_length) +
                        " 起的键都是填充，对所有查询隐藏。";
                break;
            case MaskKind::Window:
                mexp += "窗口掩码：词元 i 只看到最近的 " + std::to_string(cfg.window) + " 个键（i − " +
                        std::to_string(cfg.window) + " < j ≤ i），即沿对角线的一条带。";
                break;
            case MaskKind::Custom:
                mexp += "自定义掩码：你关掉的格子被遮住。";
                break;
            case MaskKind::None:
                break;
        }
        mexp += "所有键都被遮住的行得到全零的权重（绝不会是 NaN）。";
        if (w.modes.kernel) mexp += "对核函数而言，被遮住的格子只是不计入行和。";
    } else {
        mexp =
            "Hidden cells are set to −∞ so that exp(−∞) = 0 exactly: the key gets zero weight, not a "
            "small "
            "one, and the remaining weights still sum to 1. ";
        switch (cfg.mask) {
            case MaskKind::Causal:
                mexp +=
                    "Causal mask: token i may only see keys j ≤ i (no peeking at the future), the "
                    "upper triangle is hidden. This is a decoder's self-attention (GPT): during "
                    "training the whole target sentence is fed at once and the mask hides, for "
                    "each position, the tokens it will have to predict. Encoder–decoder models "
                    "(T5, translation) add cross-attention, where the decoder's queries read the "
                    "encoder's keys and values (the second text here).";
                break;
            case MaskKind::Padding:
                mexp += "Padding mask: keys from position " + std::to_string(cfg.valid_length) +
                        " on are padding and hidden from every query.";
                break;
            case MaskKind::Window:
                mexp += "Window mask: token i sees only the last " + std::to_string(cfg.window) +
                        " keys (i − " + std::to_string(cfg.window) + " < j ≤ i), a band along the diagonal.";
                break;
            case MaskKind::Custom:
                mexp += "Custom mask: the cells you switched off are hidden.";
                break;
            case MaskKind::None:
                break;
        }
        mexp += " A row with every key hidden gets all-zero weights (never NaN).";
        if (w.modes.kernel) mexp += " For kernels the hidden cells are simply left out of the row sum.";
    }
    return StageText{w.tr("Masked scores" + w.H(), "掩码后的注意力分数" + w.H_zh()),
                     mask ? "masked_ij = scaled_ij if allowed(i,j) else −∞" : "masked = scaled   (no mask)",
                     mexp};
}

void scaled_explain(const CellQuery& q, Lines& L) {
    const Trace& t = q.t;
    const Config& c = q.c;
    const int h = q.h, i = q.i, j = q.j;
    const std::string& cell = q.cell;
    const std::string& name = q.st.name;
    const double s = stage_matrix(t, "scores", h)(i, j);
    const double scale = is_kernel(c.scoring) ? 1.0 : score_scale(c.scoring, t.d_k);
    const bool alibi = t.get("alibi", h) != nullptr;
    const double b = alibi ? -alibi_slope(h, t.heads) * std::abs(i - j) : 0.0;
    const double scaled = s * scale + b;
    if (name == "masked" && !q.visible(i, j)) {
        L.push_back("masked" + cell + " = −∞: key '" + q.cj + "' is hidden from query '" + q.ri + "' by " +
                    mask_reason(c) + ",");
        L.push_back("so exp(−∞) = 0 and its weight is exactly 0");
        L.push_back("= −∞");
    } else {
        if (name == "masked")
            L.push_back("masked" + cell + " = scaled" + cell + ": key visible (" + mask_reason(c) + ")");
        if (scale != 1.0) {
            L.push_back("scaled" + cell + " = S / √d_k" + std::string(alibi ? " + B" : "") + " = " + f(s, 4) +
                        " / √" + std::to_string(t.d_k) + (alibi ? " + (" + f(b, 4) + ")" : ""));
        } else {
            L.push_back("scaled" + cell + " = S" + std::string(alibi ? " + B" : "") + " = " + f(s, 4) +
                        (alibi ? " + (" + f(b, 4) + ")" : "") + "   (no √d_k scaling for " +
                        to_string(c.scoring) + ")");
        }
        L.push_back(final_line(scaled));
    }
}

void scaled_record(LayerRecorder& r, int hd) {
    const LayerRun& x = r.run;
    if (x.modes.linear) return;
    const Scaled sc = scaled_of(x, hd);
    r.add(
        x.q_ax, x.k_ax, score_kind(x), x.nf * x.mf * (x.modes.alibi ? 2 : 1), nullptr, [sc] { return sc(); },
        [sc](int i, int j) { return sc.cell(i, j); });
}

void masked_record(LayerRecorder& r, int hd) {
    const LayerRun& x = r.run;
    if (x.modes.linear) return;
    const Scaled sc = scaled_of(x, hd);
    const std::shared_ptr<const BoolMat> mask = x.allowed;
    r.add(
        x.q_ax, x.k_ax, score_kind(x), x.nf * x.mf, nullptr,
        [sc, mask] {
            Mat m = sc();
            return mask ? apply_mask(m, *mask) : m;
        },
        [sc, mask](int i, int j) {
            return mask && !(*mask)(i, j) ? -std::numeric_limits<float>::infinity() : sc.cell(i, j);
        });
}

// --- phi_Q, phi_K, KV (linear attention) ----------------------------------------------------------

std::string phi_formula(const Config& cfg) {
    return cfg.phi == PhiKind::Elu1   ? "φ(x) = elu(x) + 1"
           : cfg.phi == PhiKind::Relu ? "φ(x) = max(x, 0)"
                                      : "φ = softmax (queries over features, keys over tokens)";
}
std::string phi_explanation(const Config& cfg) {
    return "Linear attention replaces exp(q·k) by a similarity φ(q)·φ(k) of non-negative feature "
           "vectors (" +
           phi_formula(cfg) +
           "). Because it factors, (φ(Q)φ(K)ᵀ)V = φ(Q)(φ(K)ᵀV): the keys and values can be summarised "
           "once, "
           "before any query looks at them.";
}

StageText phi_q_text(const LayerWords& w) {
    return StageText{"φ(Q)" + w.H(), "φ(" + query_name(w) + "),   " + phi_formula(w.cfg),
                     phi_explanation(w.cfg)};
}
StageText phi_k_text(const LayerWords& w) {
    return StageText{
        "φ(K)" + w.H(), "φ(" + key_name(w) + "),   " + phi_formula(w.cfg),
        phi_explanation(w.cfg) +
            (w.cfg.mask == MaskKind::Padding ? " Rows of padded keys are zeroed, which hides them." : "")};
}

void phi_explain(const CellQuery& q, Lines& L) {
    const Trace& t = q.t;
    const Config& c = q.c;
    const int h = q.h, i = q.i, j = q.j;
    const bool key = q.st.name == "phi_K";
    const Mat X =
        stage_matrix(t, key ? (t.get("K_rot", h) ? "K_rot" : "K") : (t.get("Q_rot", h) ? "Q_rot" : "Q"), h);
    const double x = X(i, j);
    if (key && c.mask == MaskKind::Padding && c.valid_length >= 0 && i >= c.valid_length) {
        L.push_back("φ(k" + sub(i) + ") = 0: key '" + q.ri +
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
                    q.cj + " over the key tokens");
        L.push_back("= exp(" + f(x, 4) + " − " + f(mx, 4) + ") / " + f(z, 4));
        L.push_back(final_line(std::exp(x - mx) / z));
    }
}

void phi_q_record(LayerRecorder& r, int hd) {
    const LayerRun& x = r.run;
    if (x.modes.linear)
        r.add(x.q_ax, x.dk_ax, ValueKind::NonNegative, x.nf * x.dkf * 2, x.heads[std::size_t(hd)].phi_Q);
}
void phi_k_record(LayerRecorder& r, int hd) {
    const LayerRun& x = r.run;
    if (x.modes.linear)
        r.add(x.k_ax, x.dk_ax, ValueKind::NonNegative, x.mf * x.dkf * 2, x.heads[std::size_t(hd)].phi_K);
}

StageText kv_text(const LayerWords& w) {
    const Config& cfg = w.cfg;
    std::string kvexp = "φ(K)ᵀV sums φ(k_j) v_jᵀ over all keys into one d_k×d_v = " + w.dk_s + "×" +
                        std::to_string(w.d_v) +
                        " matrix, whatever the text length. Every query then reads this summary instead of "
                        "every key: the cost is O(n·d_k·d_v), linear in n, and no n×n matrix is formed.";
    if (cfg.mask == MaskKind::Causal)
        kvexp +=
            " With a causal mask the sum is a running (prefix) sum over j ≤ i, like an RNN's state; "
            "shown "
            "here is the final one, after the last key.";
    if (!w.modes.linear_native_mask)
        kvexp += " A " + to_string(cfg.mask) +
                 " mask cannot be folded into this sum, so here the weights are materialised as an "
                 "n×m matrix "
                 "(O(n²), as in softmax attention) and this summary is shown unmasked for reference.";
    return StageText{"Key–value summary  φ(K)ᵀV" + w.H(), "KV = φ(K)ᵀ V   (d_k×d_v)", kvexp};
}

void kv_explain(const CellQuery& q, Lines& L) {
    const Trace& t = q.t;
    const Config& c = q.c;
    const int h = q.h, i = q.i, j = q.j;
    const Mat PK = stage_matrix(t, "phi_K", h), V = stage_matrix(t, "V", h);
    const int count = c.mask == MaskKind::Causal ? std::min(t.m, t.n) : t.m;
    L.push_back("KV[" + q.ri + ", " + q.cj + "] = Σⱼ φ(k_j)" + sub(i) + " v_j" + sub(j) + " over " +
                (c.mask == MaskKind::Causal
                     ? "keys j ≤ " + std::to_string(count - 1) + " (the last running sum)"
                     : "all " + std::to_string(count) + " keys"));
    const DotText d = dot_text(
        count, [&](int k) { return double(PK(k, i)); }, [&](int k) { return double(V(k, j)); });
    L.push_back("= " + d.text);
    L.push_back(final_line(d.sum));
}

void kv_record(LayerRecorder& r, int hd) {
    const LayerRun& x = r.run;
    if (x.modes.linear)
        r.add(x.dk_ax, x.dv_ax, ValueKind::Signed, 2 * x.mf * x.dkf * x.dvf, x.heads[std::size_t(hd)].KV);
}

}  // namespace

std::vector<StageEntry> score_stages() {
    using K = ValueKind;
    // name, phase, kind, kind varies, role, per head, layer text, model text, explain, record
    return {
        {"alibi", "score", K::Signed, false, "ALiBi's distance bias added to the scores", true, alibi_text,
         nullptr, alibi_explain, alibi_record},
        {"scores", "score", K::Signed, true, "every query against every key", true, scores_text,
         scores_model_text, scores_explain, scores_record},
        {"scaled", "score", K::Signed, true, "the scores scaled (÷√d_k, or by temperature)", true,
         scaled_text, nullptr, scaled_explain, scaled_record},
        {"masked", "score", K::Signed, true, "the scaled scores with hidden keys at −∞", true, masked_text,
         nullptr, scaled_explain, masked_record},
        {"phi_Q", "score", K::NonNegative, false, "linear attention's feature map of the queries", true,
         phi_q_text, nullptr, phi_explain, phi_q_record},
        {"phi_K", "score", K::NonNegative, false, "linear attention's feature map of the keys", true,
         phi_k_text, nullptr, phi_explain, phi_k_record},
        {"KV", "score", K::Signed, false, "linear attention's key–value summary φ(K)ᵀV", true, kv_text,
         nullptr, kv_explain, kv_record},
    };
}

}  // namespace attnviz

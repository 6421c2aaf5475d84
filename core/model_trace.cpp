// model_layer_trace(): one layer of a real model as a Trace, with its formulas, explanations for the
// learner (GPT-2 and Llama wording) and hover derivations computed from the numbers in the trace.
#include "core/model_trace.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "core/axes.hpp"
#include "core/cell_text.hpp"
#include "core/error.hpp"
#include "core/stage_catalogue.hpp"

namespace attnviz {

namespace {

using cell_text::f;
using cell_text::final_line;
using cell_text::sub;

using MatPtr = std::shared_ptr<const Mat>;

using axes::dim_axis;
using axes::token_axis;

// Σ_t a(t)·b(t) written with its three largest terms (by |a·b|), and the exact sum of all terms.
struct TermsText {
    std::string text;
    double sum = 0;
};
TermsText top_terms(int count, const std::function<double(int)>& a, const std::function<double(int)>& b,
                    const std::function<std::string(int)>& label) {
    TermsText out;
    std::vector<int> order(std::size_t(std::max(count, 0)));
    std::iota(order.begin(), order.end(), 0);
    for (int t = 0; t < count; ++t) out.sum += a(t) * b(t);
    const std::size_t shown = std::min<std::size_t>(3, order.size());
    std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(shown), order.end(),
                      [&](int x, int y) { return std::abs(a(x) * b(x)) > std::abs(a(y) * b(y)); });
    for (std::size_t k = 0; k < shown; ++k) {
        const int t = order[k];
        out.text += std::string(k ? " + " : "") + "(" + f(a(t), 2) + ")(" + f(b(t), 2) + ")" + label(t);
    }
    if (count > int(shown))
        out.text += " + … (" + std::to_string(count - int(shown)) + " smaller terms of " +
                    std::to_string(count) + ")";
    if (count == 0) out.text = "0 (no terms)";
    return out;
}

void add_stage(Trace& t, const ModelSpec& spec, const std::string& name, int head, MatPtr data, Axis rows,
               Axis cols, ValueKind kind, double flops) {
    t.stages.push_back(
        model_stage(spec, name, head, std::move(data), std::move(rows), std::move(cols), kind, flops));
}

// --- hover derivations ---------------------------------------------------------------------------

std::vector<std::string> explain_model_cell(const ModelSpec& spec, const ModelForward& fwd, int layer,
                                            const Trace& t, int stage_index, int i, int j) {
    const Stage& st = t.stages[std::size_t(stage_index)];
    const Mat M = st.matrix();
    const double value = M(i, j);
    const std::string cell = "[" + st.rows.label(i) + ", " + st.cols.label(j) + "]";
    const int hd = st.head;
    const std::string h = hd >= 0 ? sub(hd) : "";
    std::vector<std::string> L;
    auto tok = [&](int k) { return (*t.query_tokens)[std::size_t(k)]; };

    // Keys a query sees: j ≤ i in a decoder, every key in an encoder.
    const bool causal = spec.causal;
    auto visible_keys = [&](int q) { return causal ? q + 1 : int(t.m); };
    if (st.name == "weights") {
        const Stage* sc = t.get("scores", hd);
        if (causal && j > i) {
            L.push_back("A" + h + cell + " = 0: key " + std::to_string(j) + " (" + tok(j) +
                        ") comes after query " + std::to_string(i) + " — hidden by the causal mask.");
            L.push_back(final_line(value));
            return L;
        }
        if (sc) {
            const Mat& S = *sc->data;  // [n, n]
            const double scale = 1.0 / std::sqrt(double(spec.d_head));
            double mx = -INFINITY;
            const int keys = visible_keys(i);
            for (int k = 0; k < keys; ++k) mx = std::max(mx, S(i, k) * scale);
            double z = 0;
            for (int k = 0; k < keys; ++k) z += std::exp(S(i, k) * scale - mx);
            const double e = std::exp(S(i, j) * scale - mx);
            L.push_back("A" + h + cell + " = exp(s_ij/√d_h − max) / Σ_" + (causal ? "{k≤i}" : "k") +
                        " exp(s_ik/√d_h − max)");
            L.push_back("s_ij = " + f(S(i, j)) + ",  √d_h = √" + std::to_string(spec.d_head) +
                        ",  max = " + f(mx) + " over the " + std::to_string(keys) +
                        (causal ? " visible keys" : " keys (an encoder: every token sees every token)"));
            L.push_back("= exp(" + f(S(i, j) * scale) + " − " + f(mx) + ") / " + f(z, 4) + " = " + f(e, 4) +
                        " / " + f(z, 4));
            L.push_back(final_line(e / z));
            return L;
        }
    }
    if (st.name == "scores") {
        const Stage* q = t.get("Q", hd);
        const Stage* k = t.get("K", hd);
        if (q && k) {
            const Mat &Q = *q->data, &K = *k->data;  // [n, dh] each
            const TermsText d = top_terms(
                int(Q.cols()), [&](int c) { return double(Q(i, c)); }, [&](int c) { return double(K(j, c)); },
                [](int c) { return "_" + std::to_string(c); });
            L.push_back("S" + h + cell + " = q_" + std::to_string(i) + "·k_" + std::to_string(j) +
                        " = Σ_c Q[i,c] K[j,c]  (largest terms first, c = dimension)");
            L.push_back("= " + d.text);
            L.push_back(final_line(d.sum));
            return L;
        }
    }
    if (st.name == "head_output") {
        const Stage* a = t.get("weights", hd);
        const Stage* v = t.get("V", hd);
        if (a && v) {
            const Mat &A = *a->data, &V = *v->data;  // [n, n], [n, dh]
            const TermsText d = top_terms(
                visible_keys(i), [&](int k) { return double(A(i, k)); },
                [&](int k) { return double(V(k, j)); }, [&](int k) { return " " + tok(k); });
            L.push_back("O" + h + cell + " = Σ_" + (causal ? "{k≤i}" : "k") + " A[i,k] V[k," +
                        std::to_string(j) + "]  (weight)(value) per visible key, largest first");
            L.push_back("= " + d.text);
            L.push_back(final_line(d.sum));
            return L;
        }
    }
    const LayerStages& ls = fwd.layers[std::size_t(layer)];
    if (spec.post_norm && (st.name == "resid_post" || st.name == "resid_mid")) {
        // LN(sum): the sum is not kept, so the value and its formula
        L.push_back(st.title + " " + cell);
        L.push_back(st.formula);
        L.push_back(final_line(value));
        return L;
    }
    if (st.name == "resid_post" && ls.resid_mid.size() && ls.mlp_out.size()) {
        L.push_back("x'" + cell + " = r" + cell + " + mlp" + cell);
        L.push_back("= " + f(ls.resid_mid(i, j)) + " + " + f(ls.mlp_out(i, j)));
        L.push_back(final_line(double(ls.resid_mid(i, j)) + double(ls.mlp_out(i, j))));
        return L;
    }
    if (st.name == "resid_mid" && ls.attn_out.size()) {
        const double x = double(ls.resid_mid(i, j)) - double(ls.attn_out(i, j));
        L.push_back("r" + cell + " = x" + cell + " + attn" + cell);
        L.push_back(std::string("x = ") +
                    (layer > 0
                         ? "layer " + std::to_string(layer - 1) + "'s resid_post"
                         : "the embedding (token" +
                               std::string(position_kind(spec) == PositionKind::Learned      ? " + position"
                                           : position_kind(spec) == PositionKind::Sinusoidal ? " + sinusoid"
                                                                                             : "") +
                               ")") +
                    " = " + f(x) + ",  attn = " + f(ls.attn_out(i, j)));
        L.push_back(final_line(x + double(ls.attn_out(i, j))));
        return L;
    }
    if (st.name == "residual_stream" && i < int(fwd.layers.size()) &&
        fwd.layers[std::size_t(i)].resid_post.rows() > j) {
        const Mat& R = fwd.layers[std::size_t(i)].resid_post;  // [n, d]
        const TermsText d = top_terms(
            int(R.cols()), [&](int c) { return double(R(j, c)); }, [&](int c) { return double(R(j, c)); },
            [](int) { return std::string(); });
        L.push_back("‖x'_" + std::to_string(i) + "[" + tok(j) + "]‖₂ = √(Σ_c x_c²)  (largest terms first)");
        L.push_back("= √(" + d.text + ") = √" + f(d.sum, 5));
        L.push_back(final_line(std::sqrt(d.sum)));
        return L;
    }
    // Stages made from learned weights that the trace does not hold: the value and its formula.
    L.push_back(st.title + " " + cell);
    L.push_back(st.formula);
    L.push_back("(the weight matrices are the checkpoint's; this layer's inputs are the stages before it)");
    L.push_back(final_line(value));
    return L;
}

// W[k, c] of a Linear in its input × output orientation, and its bias (0 without one).
double weight_at(const Linear& L, int k, int c) {
    return L.out_in ? double(L.weight.map()(c, k)) : double(L.weight.map()(k, c));
}
double bias_at(const Linear& L, int c) {
    return L.bias ? double(L.bias[c]) : 0.0;
}

// Σ_k x[k]·W[k, col] + b[col], written with its largest terms.
TermsText linear_cell(const Linear& L, const Eigen::Ref<const RowVec>& x, int col) {
    TermsText d = top_terms(
        int(x.size()), [&](int k) { return double(x(k)); }, [&](int k) { return weight_at(L, k, col); },
        [](int) { return std::string(); });
    d.sum += bias_at(L, col);
    if (L.bias) d.text += " + b (" + f(bias_at(L, col), 2) + ")";
    return d;
}

// norm(x)[c] with the checkpoint's γ (and β), from the row x it normalises: [d].
std::vector<std::string> norm_cell(const Norm& n, double eps, bool layernorm,
                                   const Eigen::Ref<const RowVec>& x, int c, const std::string& lhs,
                                   const std::string& xname) {
    const double d = double(x.size());
    double mean = 0, sq = 0;
    for (Eigen::Index k = 0; k < x.size(); ++k) mean += x(k);
    mean /= d;
    for (Eigen::Index k = 0; k < x.size(); ++k)
        sq += layernorm ? (x(k) - mean) * (x(k) - mean) : double(x(k)) * x(k);
    sq /= d;
    const double g = n.weight[c], b = n.bias ? double(n.bias[c]) : 0.0;
    const double denom = std::sqrt(sq + eps);
    std::vector<std::string> L;
    if (layernorm) {
        L.push_back(lhs + " = γ_c (x_c − μ) / √(σ² + ε) + β_c,  x = " + xname);
        L.push_back("x_c = " + f(x(c)) + ",  μ = " + f(mean) + ",  σ² = " + f(sq) + ",  γ_c = " + f(g) +
                    ",  β_c = " + f(b));
        L.push_back(final_line(g * (x(c) - mean) / denom + b));
    } else {
        L.push_back(lhs + " = γ_c x_c / √(mean(x²) + ε),  x = " + xname);
        L.push_back("x_c = " + f(x(c)) + ",  mean(x²) = " + f(sq) + ",  γ_c = " + f(g));
        L.push_back(final_line(g * x(c) / denom));
    }
    return L;
}

std::vector<std::string> explain_with_weights(const ModelWeights& W, const ModelForward& fwd, int layer,
                                              const Trace& t, int stage_index, int i, int j) {
    const ModelSpec& s = W.spec;
    const BlockWeights& B = W.blocks[std::size_t(layer)];
    const Stage& st = t.stages[std::size_t(stage_index)];
    const LayerStages& ls = fwd.layers[std::size_t(layer)];
    const std::string cell = "[" + st.rows.label(i) + ", " + st.cols.label(j) + "]";
    const std::string h = st.head >= 0 ? sub(st.head) : "";
    std::vector<std::string> L;
    if ((st.name == "Q" || st.name == "K" || st.name == "V") && ls.ln_1.rows() > i) {
        const Linear& lin = st.name == "Q" ? B.q : st.name == "K" ? B.k : B.v;
        const int head_col = (st.name == "Q" ? st.head : kv_head_of(s, st.head)) * s.d_head;
        const auto x = ls.ln_1.row(i);  // [d]
        const std::string w = "W_" + st.name;
        const bool rope = position_kind(s) == PositionKind::Rope && st.name != "V";
        if (!rope) {
            const TermsText d = linear_cell(lin, x, head_col + j);
            L.push_back(st.name + h + cell + " = Σ_k x̂[i,k] " + w + "[k,c]" + (lin.bias ? " + b_c" : "") +
                        "  (largest terms first)");
            L.push_back("= " + d.text);
            L.push_back(final_line(d.sum));
            return L;
        }
        const int half = s.d_head / 2;
        const int pair = j < half ? j + half : j - half;
        const double a = linear_cell(lin, x, head_col + j).sum, b = linear_cell(lin, x, head_col + pair).sum;
        const double angle = double(i) * std::pow(s.rope_theta, -2.0 * (j % half) / s.d_head);
        const double v =
            j < half ? a * std::cos(angle) - b * std::sin(angle) : a * std::cos(angle) + b * std::sin(angle);
        L.push_back(st.name + h + cell + " = RoPE(x̂ " + w + ")  at position " + std::to_string(i));
        L.push_back("before RoPE: (x̂ " + w + ")[i," + std::to_string(j) + "] = " + f(a) + ",  its pair [i," +
                    std::to_string(pair) + "] = " + f(b));
        L.push_back("angle = " + std::to_string(i) + "·θ^(−2·" + std::to_string(j % half) + "/" +
                    std::to_string(s.d_head) + ") = " + f(angle) +
                    (j < half ? ":  a cos − b sin" : ":  a cos + b sin"));
        L.push_back(final_line(v));
        return L;
    }
    if (st.name == "attn_out" && !ls.heads.empty()) {
        const int dh = s.d_head;
        const TermsText d = top_terms(
            s.n_head * dh,
            [&](int k) { return double(ls.heads[std::size_t(k / dh)].head_output(i, k % dh)); },
            [&](int k) { return weight_at(B.o, k, j); },
            [&](int k) { return " (head " + std::to_string(k / dh) + ")"; });
        L.push_back("attn" + cell + " = Σ_h Σ_k O_h[i,k] W_O[h·d_h + k, c]" +
                    std::string(B.o.bias ? " + b_c" : "") + "  (largest terms first)");
        L.push_back("= " + d.text + (B.o.bias ? " + b (" + f(bias_at(B.o, j), 2) + ")" : ""));
        L.push_back(final_line(d.sum + bias_at(B.o, j)));
        return L;
    }
    const NormKind nk = norm_kind(s);
    const bool layernorm = nk == NormKind::LayerNorm;
    if (nk == NormKind::None || s.post_norm) return L;  // ln_1 is the block's input itself: nothing to derive
    if (st.name == "ln_2" && ls.resid_mid.rows() > i)
        return norm_cell(B.ln_2, s.norm_eps, layernorm, ls.resid_mid.row(i), j, "r̂" + cell,
                         "resid_mid (this layer)");
    if (st.name == "ln_1" && layer > 0 && fwd.layers[std::size_t(layer - 1)].resid_post.rows() > i)
        return norm_cell(B.ln_1, s.norm_eps, layernorm, fwd.layers[std::size_t(layer - 1)].resid_post.row(i),
                         j, "x̂" + cell, "layer " + std::to_string(layer - 1) + "'s resid_post");
    return L;
}

}  // namespace

Stage model_stage(const ModelSpec& spec, const std::string& name, int head, std::shared_ptr<const Mat> data,
                  Axis rows, Axis cols, ValueKind kind, double flops) {
    Stage st;
    st.name = name;
    st.head = head;
    const StageText tx = model_stage_text(spec, name, head);
    st.title = tx.title;
    st.formula = tx.formula;
    st.explanation = tx.explanation;
    st.rows = std::move(rows);
    st.cols = std::move(cols);
    st.kind = kind;
    st.flops = flops;
    st.bytes = double(data->size()) * sizeof(float);
    st.data = std::move(data);
    return st;
}

int kv_head_of(const ModelSpec& spec, int head) {
    const int group = spec.n_head / std::max(1, spec.n_kv_head);
    return head / std::max(1, group);
}

Mat head_mean_weights(const LayerStages& layer) {
    if (layer.heads.empty()) return Mat();
    Mat mean = Mat::Zero(layer.heads[0].weights.rows(), layer.heads[0].weights.cols());  // [n, n]
    for (const HeadStages& h : layer.heads) mean += h.weights;
    return mean / float(layer.heads.size());
}

Mat residual_norms(const ModelForward& forward, int n) {
    Mat out = Mat::Zero(Eigen::Index(forward.layers.size()), n);  // [L, n]
    for (std::size_t l = 0; l < forward.layers.size(); ++l) {
        const Mat& R = forward.layers[l].resid_post;  // [n, d]
        if (R.rows() != n) continue;
        out.row(Eigen::Index(l)) = R.rowwise().norm().transpose();
    }
    return out;
}

std::vector<TokenProb> top_tokens(const Vec& probs, int k) {
    std::vector<int> ids(std::size_t(probs.size()));
    std::iota(ids.begin(), ids.end(), 0);
    const std::size_t shown = std::min<std::size_t>(std::size_t(std::max(k, 0)), ids.size());
    std::partial_sort(ids.begin(), ids.begin() + std::ptrdiff_t(shown), ids.end(),
                      [&](int a, int b) { return probs(a) > probs(b) || (probs(a) == probs(b) && a < b); });
    std::vector<TokenProb> out;
    for (std::size_t r = 0; r < shown; ++r) out.push_back({ids[r], double(probs(ids[r]))});
    return out;
}

Trace model_layer_trace(const ModelSpec& spec, std::shared_ptr<const ModelForward> fwd, int layer,
                        std::shared_ptr<const std::vector<std::string>> tokens,
                        std::shared_ptr<const ModelWeights> weights,
                        std::shared_ptr<const std::vector<std::string>> vocab, int logits_row) {
    if (!fwd || layer < 0 || layer >= int(fwd->layers.size()))
        throw Error("model trace: layer " + std::to_string(layer) + " is out of range");
    const int n = int(tokens->size());
    const LayerStages& ls = fwd->layers[std::size_t(layer)];
    if ((ls.ln_1.size() && ls.ln_1.rows() != n) || (!ls.heads.empty() && ls.heads[0].Q.rows() != n))
        throw Error("model trace: " + std::to_string(n) + " token labels for a forward pass of " +
                    std::to_string(ls.ln_1.rows()) + " tokens");
    Trace t;
    t.config.mask = spec.causal ? MaskKind::Causal : MaskKind::None;  // what the heatmaps hatch
    t.config.heads = spec.n_head;
    t.config.d_model = spec.d_model;
    t.config.d_k = t.config.d_v = spec.d_head;
    t.query_tokens = t.key_tokens = t.vocab = tokens;
    t.n = t.m = n;
    t.d_model = spec.d_model;
    t.heads = spec.n_head;
    t.d_k = t.d_v = spec.d_head;
    t.layer = layer;

    const double nd = double(n) * spec.d_model, nn = double(n) * n, dh = spec.d_head;
    const Axis q_tok = token_axis(Axis::Kind::QueryTokens, tokens);
    const Axis k_tok = token_axis(Axis::Kind::KeyTokens, tokens);
    const Axis d_model = dim_axis("d_model", spec.d_model);
    const Axis d_head = dim_axis("d_head", spec.d_head);
    auto alias = [&](const Mat& m) { return MatPtr(fwd, &m); };
    auto layer_stage = [&](const char* name, const Mat& m, double flops) {
        if (m.rows() == n) add_stage(t, spec, name, -1, alias(m), q_tok, d_model, ValueKind::Signed, flops);
    };

    // The model end to end: this layer's stages sit between the embeddings and the output stages.
    if (fwd->embed.rows() == n)
        add_stage(t, spec, "embed", -1, alias(fwd->embed), q_tok, d_model, ValueKind::Signed, nd);
    layer_stage("ln_1", ls.ln_1, 8 * nd);
    const double proj = 2.0 * n * spec.d_model * dh;
    const std::size_t H = ls.heads.size();
    for (std::size_t h = 0; h < H; ++h)
        add_stage(t, spec, "Q", int(h), alias(ls.heads[h].Q), q_tok, d_head, ValueKind::Signed, proj);
    for (std::size_t h = 0; h < H; ++h)
        add_stage(t, spec, "K", int(h), alias(ls.heads[h].K), k_tok, d_head, ValueKind::Signed, proj);
    for (std::size_t h = 0; h < H; ++h)
        add_stage(t, spec, "V", int(h), alias(ls.heads[h].V), k_tok, d_head, ValueKind::Signed, proj);
    for (std::size_t h = 0; h < H; ++h)
        add_stage(t, spec, "scores", int(h), alias(ls.heads[h].scores), q_tok, k_tok, ValueKind::Signed,
                  2 * nn * dh);
    for (std::size_t h = 0; h < H; ++h)
        add_stage(t, spec, "weights", int(h), alias(ls.heads[h].weights), q_tok, k_tok,
                  ValueKind::Probability, 5 * nn);
    for (std::size_t h = 0; h < H; ++h)
        add_stage(t, spec, "head_output", int(h), alias(ls.heads[h].head_output), q_tok, d_head,
                  ValueKind::Signed, 2 * nn * dh);
    layer_stage("attn_out", ls.attn_out, 2.0 * n * spec.n_head * dh * spec.d_model);
    layer_stage("resid_mid", ls.resid_mid, nd);
    layer_stage("ln_2", ls.ln_2, 8 * nd);
    layer_stage("mlp_out", ls.mlp_out, 4.0 * n * spec.d_model * spec.d_ff);
    layer_stage("resid_post", ls.resid_post, nd);

    // The next token: the final norm, the last position's logits and their softmax (T = 1; the
    // sampling knobs are drawn on it by the app).
    if (fwd->ln_f.rows() == n)
        add_stage(t, spec, "ln_f", -1, alias(fwd->ln_f), q_tok, d_model, ValueKind::Signed, 8 * nd);
    if (fwd->logits.rows() > 0 && fwd->logits.cols() == spec.vocab_size) {
        // a decoder's last row, or the row asked for (an encoder's [MASK]) when the forward has every row
        const int row =
            logits_row >= 0 && logits_row < fwd->logits.rows() ? logits_row : int(fwd->logits.rows()) - 1;
        const MatPtr logits = fwd->logits.rows() == 1
                                  ? alias(fwd->logits)
                                  : std::make_shared<const Mat>(fwd->logits.row(row));  // [1, V]
        Axis next;
        next.kind = Axis::Kind::Single;
        next.name =
            is_encoder(spec) && fwd->logits.rows() == n
                ? "at \u201c" + (*tokens)[std::size_t(row)] + "\u201d (token " + std::to_string(row) + ")"
                : "after \u201c" + tokens->back() + "\u201d";
        next.size = 1;
        const Axis vocab_axis = vocab && int(vocab->size()) == spec.vocab_size
                                    ? token_axis(Axis::Kind::Vocabulary, vocab)
                                    : dim_axis("vocabulary", spec.vocab_size);
        add_stage(t, spec, "logits", -1, logits, next, vocab_axis, ValueKind::Signed,
                  2.0 * spec.d_model * spec.vocab_size);
        auto probs = std::make_shared<Mat>(1, spec.vocab_size);  // [1, V]
        probs->row(0) = next_token_probs(logits->row(0), 1.0);
        add_stage(t, spec, "probs", -1, std::move(probs), next, vocab_axis, ValueKind::Probability,
                  3.0 * spec.vocab_size);
    }

    // Entropy of every weight row (nats), per head: what the heads grid reports.
    for (std::size_t h = 0; h < H; ++h) {
        const Mat& A = ls.heads[h].weights;  // [n, n]
        Vec e = Vec::Zero(n);                // [n]
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < (spec.causal ? i + 1 : n) && j < A.cols(); ++j)
                if (A(i, j) > 0) e(i) -= A(i, j) * std::log(A(i, j));
        t.row_entropy.push_back(std::move(e));
    }

    // Model-wide summaries (the same in every layer's trace).
    const bool all_layers = std::all_of(fwd->layers.begin(), fwd->layers.end(),
                                        [&](const LayerStages& l) { return l.resid_post.rows() == n; });
    if (all_layers) {
        Axis layers = dim_axis("layer", spec.n_layer);
        add_stage(t, spec, "residual_stream", -1, std::make_shared<const Mat>(residual_norms(*fwd, n)),
                  layers, q_tok, ValueKind::NonNegative, 2 * nd * spec.n_layer);
    }
    if (fwd->rollout.rows() == n)
        add_stage(t, spec, "rollout", -1, alias(fwd->rollout), q_tok, k_tok, ValueKind::Probability,
                  2 * nn * n * spec.n_layer);

    if (weights && (weights->spec.n_layer != spec.n_layer || weights->spec.d_model != spec.d_model))
        weights = nullptr;  // not the model of this forward pass
    t.explain_hook = [spec, fwd, layer, weights](const Trace& tr, int s, int i, int j) {
        if (weights) {
            std::vector<std::string> lines = explain_with_weights(*weights, *fwd, layer, tr, s, i, j);
            if (!lines.empty()) return lines;
        }
        return explain_model_cell(spec, *fwd, layer, tr, s, i, j);
    };
    return t;
}

}  // namespace attnviz

#include "app/seq2seq_run.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <numeric>

#include "core/axes.hpp"
#include "core/cell_text.hpp"
#include "core/error.hpp"
#include "core/model.hpp"
#include "core/model_trace.hpp"
#include "core/seq2seq.hpp"
#include "io/cli.hpp"
#include "io/model_loader.hpp"

namespace attnviz::app {

namespace {

using MatPtr = std::shared_ptr<const Mat>;
using Tokens = std::shared_ptr<const std::vector<std::string>>;
using cell_text::f;
using cell_text::final_line;
using cell_text::sub;

std::string s2s_mib(std::uint64_t bytes) {
    return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
}

// Index of the first stage called one of `names` (stages.size() when there is none).
std::size_t first_of(const Trace& t, std::initializer_list<const char*> names) {
    for (std::size_t k = 0; k < t.stages.size(); ++k)
        for (const char* name : names)
            if (t.stages[k].name == name) return k;
    return t.stages.size();
}

// Entropy (nats) of every row of weights A [n, m] over the keys the row may see.
Vec weight_row_entropy(const Mat& A, bool causal) {
    Vec e = Vec::Zero(A.rows());  // [n]
    for (Eigen::Index i = 0; i < A.rows(); ++i)
        for (Eigen::Index j = 0; j < A.cols() && (!causal || j <= i); ++j)
            if (A(i, j) > 0) e(i) -= A(i, j) * std::log(A(i, j));
    return e;
}

// "(a)(b) label + …" with the three largest |a·b| terms of Σ_t a(t)·b(t), and the exact sum.
std::pair<std::string, double> top_terms(int count, const std::function<double(int)>& a,
                                         const std::function<double(int)>& b,
                                         const std::function<std::string(int)>& label) {
    std::vector<int> order(std::size_t(std::max(count, 0)));
    std::iota(order.begin(), order.end(), 0);
    double sum = 0;
    for (int t = 0; t < count; ++t) sum += a(t) * b(t);
    const std::size_t shown = std::min<std::size_t>(3, order.size());
    std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(shown), order.end(),
                      [&](int x, int y) { return std::abs(a(x) * b(x)) > std::abs(a(y) * b(y)); });
    std::string text;
    for (std::size_t k = 0; k < shown; ++k)
        text += std::string(k ? " + " : "") + "(" + f(a(order[k]), 2) + ")(" + f(b(order[k]), 2) + ")" +
                label(order[k]);
    if (count > int(shown)) text += " + … (" + std::to_string(count - int(shown)) + " smaller terms)";
    return {count ? text : "0 (no terms)", sum};
}

// What the hover of an encoder–decoder's stages needs beyond core/model_trace.cpp's decoder-only words:
// unscaled scores and T5's bias, bidirectional attention in the encoder, the cross-attention.
struct HoverContext {
    bool causal = true;      // the stack's self-attention
    bool post_norm = false;  // BART: the norms sit after the sums, the decoder-only derivations do not hold
    double scale = 1.0;      // the scores' factor before the softmax (1/√dh, or 1 in T5)
    std::shared_ptr<const std::vector<Mat>> bias;  // [h][rows, rows] T5's position bias, or null
};

std::vector<std::string> explain_seq2seq_cell(const HoverContext& c, const Trace& t, int s, int i, int j) {
    const Stage& st = t.stages[std::size_t(s)];
    const std::string cell = "[" + st.rows.label(i) + ", " + st.cols.label(j) + "]";
    const std::string h = st.head >= 0 ? sub(st.head) : "";
    const bool cross = st.name.rfind("cross_", 0) == 0;
    const std::string prefix = cross ? "cross_" : "";
    std::vector<std::string> L;
    if (st.name == "weights" || st.name == "cross_weights") {
        const Stage* sc = t.get(prefix + "scores", st.head);
        if (!sc || !sc->data) return L;
        const Mat& S = *sc->data;  // [n, m]
        const bool causal = c.causal && !cross;
        if (causal && j > i) {
            L.push_back("A" + h + cell + " = 0: key " + std::to_string(j) + " comes after query " +
                        std::to_string(i) + " — hidden by the decoder's causal mask.");
            L.push_back(final_line(st.data ? double((*st.data)(i, j)) : 0.0));
            return L;
        }
        const Mat* B = !cross && c.bias && std::size_t(st.head) < c.bias->size()
                           ? &(*c.bias)[std::size_t(st.head)]
                           : nullptr;
        auto z = [&](int k) { return double(S(i, k)) * c.scale + (B ? double((*B)(i, k)) : 0.0); };
        const int keys = causal ? i + 1 : int(S.cols());
        double mx = -INFINITY, sum = 0;
        for (int k = 0; k < keys; ++k) mx = std::max(mx, z(k));
        for (int k = 0; k < keys; ++k) sum += std::exp(z(k) - mx);
        const std::string zf =
            std::string(c.scale != 1.0 ? "s·/√d_h" : "s") + (B ? " + b (position bias)" : "");
        L.push_back("A" + h + cell + " = exp(z_ij − max) / Σ_k exp(z_ik − max),  z = " + zf);
        L.push_back("s_ij = " + f(S(i, j)) + (B ? ",  b_ij = " + f((*B)(i, j)) : "") +
                    ",  z_ij = " + f(z(j)) + ",  max = " + f(mx) + " over the " + std::to_string(keys) +
                    (cross    ? " source tokens"
                     : causal ? " visible keys"
                              : " keys (no mask)"));
        L.push_back("= exp(" + f(z(j) - mx) + ") / " + f(sum, 4));
        L.push_back(final_line(std::exp(z(j) - mx) / sum));
        return L;
    }
    if (st.name == "head_output" || st.name == "cross_head_output") {
        const Stage* a = t.get(prefix + "weights", st.head);
        const Stage* v = t.get(prefix + "V", st.head);
        if (!a || !v || !a->data || !v->data) return L;
        const Mat &A = *a->data, &V = *v->data;  // [n, m], [m, dh]
        const int keys = c.causal && !cross ? i + 1 : int(A.cols());
        const auto d = top_terms(
            keys, [&](int k) { return double(A(i, k)); }, [&](int k) { return double(V(k, j)); },
            [&](int k) { return " " + v->rows.label(k); });
        L.push_back("O" + h + cell + " = Σ_k A[i,k] V[k," + std::to_string(j) + "]  (weight)(value) over " +
                    (cross      ? "the source tokens"
                     : c.causal ? "the visible keys"
                                : "every key") +
                    ", largest first");
        L.push_back("= " + d.first);
        L.push_back(final_line(d.second));
        return L;
    }
    if (st.name == "cross_scores") {
        const Stage* q = t.get("cross_Q", st.head);
        const Stage* k = t.get("cross_K", st.head);
        if (!q || !k || !q->data || !k->data) return L;
        const Mat &Q = *q->data, &K = *k->data;  // [n, dh], [m, dh]
        const auto d = top_terms(
            int(Q.cols()), [&](int x) { return double(Q(i, x)); }, [&](int x) { return double(K(j, x)); },
            [](int x) { return "_" + std::to_string(x); });
        L.push_back("S" + h + cell + " = q_" + std::to_string(i) + "·k_" + std::to_string(j) +
                    " = Σ_c Q[i,c] K[j,c]  (target query · source key; largest terms first)");
        L.push_back("= " + d.first);
        L.push_back(final_line(d.second));
        return L;
    }
    if (st.name == "position_bias") {
        L.push_back("B" + h + cell +
                    " = the learned bias of the bucket of the distance j − i = " + std::to_string(j - i));
        L.push_back("(the same table in every layer of this stack; added to the scores before the softmax)");
        L.push_back(final_line(st.data ? double((*st.data)(i, j)) : 0.0));
        return L;
    }
    const bool generic = cross || (st.name == "resid_post" && (c.causal || c.post_norm)) ||
                         (c.post_norm && (st.name == "resid_mid" || st.name == "ln_1" || st.name == "ln_2"));
    if (generic) {
        L.push_back(st.title + " " + cell);
        L.push_back(st.formula);
        if (st.name == "resid_post")
            L.push_back(c.post_norm
                            ? "(post-norm: the MLP's sum with its input, then the block's LayerNorm)"
                            : "(the residual after attention, plus the cross-attention, plus the MLP)");
        else
            L.push_back(
                "(the weight matrices are the checkpoint's; this layer's inputs are the stages before it)");
        L.push_back(final_line(st.data ? double((*st.data)(i, j)) : 0.0));
    }
    return L;
}

// Wraps the trace's hover: the cells above explained here, the rest by core/model_trace.cpp.
void wrap_hover(Trace& t, HoverContext c) {
    auto inner = t.explain_hook;
    t.explain_hook = [inner, c](const Trace& tr, int s, int i, int j) {
        std::vector<std::string> lines = explain_seq2seq_cell(c, tr, s, i, j);
        if (lines.empty() && inner) lines = inner(tr, s, i, j);
        return lines;
    };
}

// The self-attention weights' formula and words for this stack: a decoder-only model's text says
// causal and S/√d_h; an encoder sees every token, and T5 adds its bias to unscaled scores.
void word_self_weights(Trace& t, bool causal, bool scaled, bool bias) {
    const std::string z = std::string("S") + (scaled ? "/√d_h" : "") + (bias ? " + B" : "");
    for (Stage& st : t.stages) {
        if (st.name != "weights") continue;
        const std::string h = st.head >= 0 ? sub(st.head) : "";
        st.formula = "A" + h + " = softmax(" + (causal ? "causal(" + z + ")" : z) + ")";
        st.explanation =
            std::string(
                causal ? "The decoder's self-attention over the target so far: later keys are hidden by the "
                         "causal mask (hatched, exactly 0)"
                       : "The encoder's self-attention over the source: every token sees every token "
                         "(no mask)") +
            (bias ? "; T5 adds each head's relative position bias B to the scores, which it does not divide "
                    "by √d_h"
             : scaled ? "; the scores are divided by √d_h"
                      : "") +
            ". Softmax along each row, so each row sums to 1.";
    }
}

}  // namespace

std::vector<std::string> cross_row_labels(const std::vector<std::string>& target,
                                          const std::optional<std::string>& next) {
    // (" lo" and "!" both read "→ lo", "→ !"; a lone space stays a space)
    auto word = [](const std::string& w) { return w.size() > 1 && w[0] == ' ' ? w.substr(1) : w; };
    std::vector<std::string> out;
    for (std::size_t i = 0; i + 1 < target.size(); ++i) out.push_back("→ " + word(target[i + 1]));
    if (!target.empty()) out.push_back(next ? "→ " + word(*next) + "?" : "→ ?");
    return out;
}

ModelRun run_seq2seq_on_text(const LoadedModel& model, const std::string& source, const std::string& target,
                             int threads, const std::atomic<bool>* cancel) {
    const ModelSpec& s = model.weights->spec;
    ModelRun r;
    r.source_ids = model.tokenizer->encode_for_model(source).ids;  // with </s> etc. as the model wants
    if (r.source_ids.empty()) throw TextError("the source text gives no tokens: type something");
    check_ids_in_vocab(*model.tokenizer, r.source_ids, s.vocab_size);
    // The decoder reads its start token, then the target's own tokens (as `attnviz dump --target`).
    r.ids = {s.s2s.decoder_start};
    const std::vector<int> more = model.tokenizer->encode(target);
    try {
        check_ids_in_vocab(*model.tokenizer, more, s.vocab_size);
    } catch (const TextError& e) {
        throw TextError(std::string("the target: ") + e.what());  // (the GUI names the box to edit)
    }
    r.ids.insert(r.ids.end(), more.begin(), more.end());
    const int m = int(r.source_ids.size()), n = int(r.ids.size());
    Seq2SeqRunOptions o;
    o.keep = true;
    o.all_logits = false;
    o.rollout = true;
    o.threads = threads;
    o.cancel = cancel;
    const std::uint64_t need = seq2seq_forward_bytes(s, m, n, o) + model.weights->weight_bytes;
    if (need > kModelMemoryLimit)
        throw Error(std::to_string(m) + " source and " + std::to_string(n) + " target tokens need " +
                    s2s_mib(need) + " with the weights, over the 3 GiB limit; shorten the text");
    Seq2SeqForward f = run_seq2seq(*model.weights, r.source_ids, r.ids, o);

    auto src = std::make_shared<std::vector<std::string>>();
    for (int id : r.source_ids) src->push_back(model.tokenizer->token_label(id));
    auto tgt = std::make_shared<std::vector<std::string>>();
    for (int id : r.ids) tgt->push_back(model.tokenizer->token_label(id));
    r.source_tokens = src;
    r.tokens = tgt;
    r.kept_heads.assign(std::size_t(s.n_layer), true);

    // The stacks as ModelForwards (moved, not copied), each layer as a Trace.
    auto enc = std::make_shared<ModelForward>();
    enc->layers = std::move(f.encoder.layers);
    enc->ln_f = std::move(f.encoder.ln_f);
    enc->rollout = std::move(f.encoder.rollout);
    auto dec = std::make_shared<ModelForward>();
    dec->layers = std::move(f.decoder.layers);
    dec->ln_f = std::move(f.decoder.ln_f);
    dec->rollout = std::move(f.decoder.rollout);
    dec->logits = std::move(f.logits);
    auto enc_bias = std::make_shared<const std::vector<Mat>>(std::move(f.encoder.position_bias));
    auto dec_bias = std::make_shared<const std::vector<Mat>>(std::move(f.decoder.position_bias));
    r.forward = dec;

    ModelSpec enc_spec = s;
    enc_spec.n_layer = s.s2s.n_encoder_layer;
    enc_spec.causal = false;
    const double scale = s.s2s.scale_scores ? 1.0 / std::sqrt(double(s.d_head)) : 1.0;
    const Axis d_head = axes::dim_axis("d_head", s.d_head);
    const Axis d_model = axes::dim_axis("d_model", s.d_model);
    auto named = [](Axis a, const char* name) {
        a.name = name;
        return a;
    };
    // The position bias per head after the scores (what the weights' softmax adds to them).
    auto add_bias = [&](Trace& t, const ModelSpec& spec, const std::shared_ptr<const std::vector<Mat>>& bias,
                        const Tokens& tokens) {
        if (bias->empty()) return;
        const Axis q = axes::token_axis(Axis::Kind::QueryTokens, tokens);
        const Axis k = axes::token_axis(Axis::Kind::KeyTokens, tokens);
        std::vector<Stage> stages;
        for (std::size_t h = 0; h < bias->size(); ++h)
            stages.push_back(model_stage(spec, "position_bias", int(h), MatPtr(bias, &(*bias)[h]), q, k,
                                         ValueKind::Signed, double((*bias)[h].size())));
        const std::size_t at = first_of(t, {"weights"});
        t.stages.insert(t.stages.begin() + std::ptrdiff_t(at), stages.begin(), stages.end());
    };

    for (int l = 0; l < enc_spec.n_layer; ++l) {
        if (cancel && cancel->load()) throw Cancelled();
        Trace t = model_layer_trace(enc_spec, enc, l, src, nullptr, nullptr);
        t.config.mask = MaskKind::None;  // bidirectional: nothing hatched
        t.row_entropy.clear();
        for (const HeadStages& hs : enc->layers[std::size_t(l)].heads)
            t.row_entropy.push_back(weight_row_entropy(hs.weights, false));
        add_bias(t, enc_spec, enc_bias, src);
        word_self_weights(t, false, s.s2s.scale_scores, !enc_bias->empty());
        wrap_hover(t, {false, s.post_norm, scale, enc_bias->empty() ? nullptr : enc_bias});
        r.encoder_layers.push_back(std::make_shared<const Trace>(std::move(t)));
    }

    // Cross-attention rows are labelled by the word each row writes (the Training lab's translation
    // preset labels its rows the same way); the last row's word is the one "Append greedy" would add,
    // read from the same logits the next-token panel ranks.
    std::optional<std::string> next;
    if (dec->logits.rows() > 0 && dec->logits.cols() > 0) {
        SamplingOptions greedy;
        greedy.temperature = 0.0;
        next = model.tokenizer->token_label(
            sample_next_token(dec->logits.row(dec->logits.rows() - 1), greedy, 0.0));
    }
    auto written = std::make_shared<std::vector<std::string>>(cross_row_labels(*tgt, next));
    const Axis tq = named(axes::token_axis(Axis::Kind::QueryTokens, written), "target tokens");
    const Axis sk = named(axes::token_axis(Axis::Kind::KeyTokens, src), "source tokens");
    const double nm = double(n) * m, dh = s.d_head;
    for (int l = 0; l < s.n_layer; ++l) {
        if (cancel && cancel->load()) throw Cancelled();
        // (BART's post-norm blocks: the decoder-only derivations with the checkpoint's norms do not hold)
        Trace t = model_layer_trace(s, dec, l, tgt, s.post_norm ? nullptr : model.weights, model.vocab);
        add_bias(t, s, dec_bias, tgt);
        word_self_weights(t, true, s.s2s.scale_scores, !dec_bias->empty());
        const LayerStages& ls = dec->layers[std::size_t(l)];
        auto alias = [&](const Mat& x) { return MatPtr(dec, &x); };
        std::vector<Stage> cross;
        const std::size_t H = ls.cross_heads.size();
        for (std::size_t h = 0; h < H; ++h)
            cross.push_back(model_stage(s, "cross_Q", int(h), alias(ls.cross_heads[h].Q), tq, d_head,
                                        ValueKind::Signed, 2.0 * n * s.d_model * dh));
        for (std::size_t h = 0; h < H; ++h)
            cross.push_back(model_stage(s, "cross_K", int(h), alias(ls.cross_heads[h].K), sk, d_head,
                                        ValueKind::Signed, 2.0 * m * s.d_model * dh));
        for (std::size_t h = 0; h < H; ++h)
            cross.push_back(model_stage(s, "cross_V", int(h), alias(ls.cross_heads[h].V), sk, d_head,
                                        ValueKind::Signed, 2.0 * m * s.d_model * dh));
        for (std::size_t h = 0; h < H; ++h)
            cross.push_back(model_stage(s, "cross_scores", int(h), alias(ls.cross_heads[h].scores), tq, sk,
                                        ValueKind::Signed, 2 * nm * dh));
        for (std::size_t h = 0; h < H; ++h)
            cross.push_back(model_stage(s, "cross_weights", int(h), alias(ls.cross_heads[h].weights), tq, sk,
                                        ValueKind::Probability, 5 * nm));
        for (std::size_t h = 0; h < H; ++h)
            cross.push_back(model_stage(s, "cross_head_output", int(h), alias(ls.cross_heads[h].head_output),
                                        tq, d_head, ValueKind::Signed, 2 * nm * dh));
        if (ls.cross_attn_out.rows() == n)
            cross.push_back(model_stage(s, "cross_attn_out", -1, alias(ls.cross_attn_out), tq, d_model,
                                        ValueKind::Signed, 2.0 * n * s.n_head * dh * s.d_model));
        // The cross-attention sits between the self-attention's residual and the MLP.
        const std::size_t at = first_of(t, {"ln_2", "mlp_out", "resid_post", "ln_f", "logits"});
        t.stages.insert(t.stages.begin() + std::ptrdiff_t(at), cross.begin(), cross.end());
        wrap_hover(t, {true, s.post_norm, scale, dec_bias->empty() ? nullptr : dec_bias});
        r.layers.push_back(std::make_shared<const Trace>(std::move(t)));
    }
    return r;
}

}  // namespace attnviz::app

// The trainer's encoder–decoder (TrainConfig::encoder_layers > 0), in T5 v1.1's layout and maths, so
// its checkpoint is a Hugging Face T5 folder that attnviz (core/seq2seq.hpp) and transformers open:
// shared token embeddings; encoder blocks of [RMSNorm → bidirectional self-attention (+ relative
// position bias) → residual, RMSNorm → gated-GELU MLP → residual], a final RMSNorm; decoder blocks of
// [RMSNorm → causal self-attention (+ its relative position bias) → residual, RMSNorm → cross-attention
// to the encoder's output → residual, RMSNorm → gated-GELU MLP → residual], a final RMSNorm, an untied
// lm_head. Scores are Q·Kᵀ unscaled (T5 folds 1/√d_k into its initialisation); the position bias (one
// table per stack, [32 buckets, h], in the stack's first block) is added to every block's
// self-attention scores.
//
// The forward is the one forward of every model (core/seq2seq.hpp's seq2seq_encode / seq2seq_decode,
// i.e. decoder_forward) over views into the parameter buffer; the backward here runs on the
// activations it keeps, with the ops' backwards of core/nn_ops.hpp. Templated on the scalar: float in
// core/train.cpp, double in the finite-difference tests.
//
// Shapes: S sequences; m source tokens, n decoder positions; rows_e = S·m, rows_d = S·n; d = d_model,
// h heads of dh = d/h, f = d_ff, V = vocabulary.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/nn_ops.hpp"
#include "core/seq2seq.hpp"
#include "core/thread_pool.hpp"
#include "core/train.hpp"
#include "core/train_runs.hpp"

namespace attnviz {

namespace s2s_detail {

using namespace nn;

inline constexpr int kBuckets = 32, kMaxDistance = 128;
inline constexpr double kT5Eps = 1e-6;

/// T5's bucket of key j seen from query i (relative = j − i): nn::relative_position_bucket.
inline int t5_bucket(int relative, bool bidirectional) {
    return relative_position_bucket(relative, bidirectional, kBuckets, kMaxDistance);
}

/// The tensor names of block l of a stack (T5ForConditionalGeneration's state dict).
inline std::string t5_block(bool decoder, int l) {
    return std::string(decoder ? "decoder" : "encoder") + ".block." + std::to_string(l) + ".";
}

/// Indices (into param_layout) of one block's tensors; −1 = absent.
struct BlockIdx {
    int ln_self = -1, qkv = -1, o = -1;    // q | k | v adjacent: one [3d, d] nn.Linear
    int ln_cross = -1, cq = -1, ckv = -1;  // decoder: cross q [d, d]; k | v adjacent [2d, d]
    int co = -1;
    int ln_ff = -1, wi = -1, wo = -1;  // wi_0 | wi_1 adjacent: [2f, d]; wo [d, f]
};
struct Idx {
    int shared = -1, enc_bias = -1, dec_bias = -1, enc_ln_f = -1, dec_ln_f = -1, lm_head = -1;
    std::vector<BlockIdx> enc, dec;
    int d_ff = 0;
};

inline Idx layout_index(const TrainConfig& c, const std::vector<ParamView>& layout) {
    auto find = [&](const std::string& name) {
        for (std::size_t i = 0; i < layout.size(); ++i)
            if (layout[i].name == name) return int(i);
        throw Error("The encoder-decoder's tensor " + name + " is missing from its layout.");
    };
    Idx idx;
    idx.d_ff = train_d_ff(c);
    idx.shared = find("shared.weight");
    for (int stack = 0; stack < 2; ++stack) {
        const bool dec = stack == 1;
        for (int l = 0; l < (dec ? c.n_layer : c.encoder_layers); ++l) {
            const std::string p = t5_block(dec, l);
            BlockIdx b;
            b.ln_self = find(p + "layer.0.layer_norm.weight");
            b.qkv = find(p + "layer.0.SelfAttention.q.weight");
            b.o = find(p + "layer.0.SelfAttention.o.weight");
            const std::string ff = p + (dec ? "layer.2." : "layer.1.");
            if (dec) {
                b.ln_cross = find(p + "layer.1.layer_norm.weight");
                b.cq = find(p + "layer.1.EncDecAttention.q.weight");
                b.ckv = find(p + "layer.1.EncDecAttention.k.weight");
                b.co = find(p + "layer.1.EncDecAttention.o.weight");
            }
            b.ln_ff = find(ff + "layer_norm.weight");
            b.wi = find(ff + "DenseReluDense.wi_0.weight");
            b.wo = find(ff + "DenseReluDense.wo.weight");
            (dec ? idx.dec : idx.enc).push_back(b);
        }
    }
    idx.enc_bias = find(t5_block(false, 0) + "layer.0.SelfAttention.relative_attention_bias.weight");
    idx.dec_bias = find(t5_block(true, 0) + "layer.0.SelfAttention.relative_attention_bias.weight");
    idx.enc_ln_f = find("encoder.final_layer_norm.weight");
    idx.dec_ln_f = find("decoder.final_layer_norm.weight");
    idx.lm_head = find("lm_head.weight");
    return idx;
}

/// The tensors of an encoder–decoder config, in checkpoint order (train.cpp's param_layout).
template <typename Add>
void t5_layout(const TrainConfig& c, Add&& add) {
    const int d = c.d_model, f = train_d_ff(c);
    add("shared.weight", std::vector<int>{c.vocab_size, d});
    for (int stack = 0; stack < 2; ++stack) {
        const bool dec = stack == 1;
        for (int l = 0; l < (dec ? c.n_layer : c.encoder_layers); ++l) {
            const std::string p = t5_block(dec, l);
            for (const char* x : {"q", "k", "v", "o"})
                add(p + "layer.0.SelfAttention." + x + ".weight", std::vector<int>{d, d});
            if (l == 0)
                add(p + "layer.0.SelfAttention.relative_attention_bias.weight",
                    std::vector<int>{kBuckets, c.n_head});
            add(p + "layer.0.layer_norm.weight", std::vector<int>{d});
            if (dec) {
                for (const char* x : {"q", "k", "v", "o"})
                    add(p + "layer.1.EncDecAttention." + x + ".weight", std::vector<int>{d, d});
                add(p + "layer.1.layer_norm.weight", std::vector<int>{d});
            }
            const std::string ff = p + (dec ? "layer.2." : "layer.1.");
            add(ff + "DenseReluDense.wi_0.weight", std::vector<int>{f, d});
            add(ff + "DenseReluDense.wi_1.weight", std::vector<int>{f, d});
            add(ff + "DenseReluDense.wo.weight", std::vector<int>{d, f});
            add(ff + "layer_norm.weight", std::vector<int>{d});
        }
        add(std::string(dec ? "decoder" : "encoder") + ".final_layer_norm.weight", std::vector<int>{d});
    }
    add("lm_head.weight", std::vector<int>{c.vocab_size, d});
}

template <typename T>
const T* at(const Params<T>& p, int i) {
    return p.data.data() + p.layout[std::size_t(i)].offset;
}
template <typename T>
T* gat(std::vector<T>& g, const std::vector<ParamView>& layout, int i) {
    return g.data() + layout[std::size_t(i)].offset;
}

/// The model as the one forward sees it: views into the parameter buffer (q | k | v, wi_0 | wi_1 and
/// the cross k | v lie side by side, so the forward fuses each into one product).
template <typename T>
Seq2SeqWeights<T> weights(const Params<T>& p, const Idx& idx) {
    const TrainConfig& c = p.config;
    const int d = c.d_model, f = idx.d_ff;
    const LinearShape dd{d, d, true}, df{d, f, true}, fd{f, d, true};
    Seq2SeqWeights<T> w;
    for (int stack = 0; stack < 2; ++stack) {
        const bool dec = stack == 1;
        DecoderWeights<T>& s = dec ? w.decoder : w.encoder;
        DecoderShape& sh = s.shape;
        sh.n_layer = dec ? c.n_layer : c.encoder_layers;
        sh.n_head = sh.n_kv_head = c.n_head;
        sh.d_model = d;
        sh.d_head = d / c.n_head;
        sh.d_ff = f;
        sh.vocab = c.vocab_size;
        sh.context = c.context;
        sh.norm = NormKind::RMSNorm;
        sh.mlp = MlpKind::GeGLU;
        sh.positions = PositionKind::Relative;
        sh.eps = kT5Eps;
        sh.causal = dec;
        sh.scale_scores = false;
        sh.rel_buckets = kBuckets;
        sh.rel_max_distance = kMaxDistance;
        sh.cross = dec;
        s.wte = at(p, idx.shared);
        s.wte_ld = d;
        s.rel_bias = at(p, dec ? idx.dec_bias : idx.enc_bias);
        s.ln_f = {at(p, dec ? idx.dec_ln_f : idx.enc_ln_f), nullptr};
        for (const BlockIdx& b : dec ? idx.dec : idx.enc) {
            BlockW<T> bw;
            bw.ln_1 = {at(p, b.ln_self), nullptr};
            const T* qkv = at(p, b.qkv);
            bw.q = {qkv, nullptr, dd};
            bw.k = {qkv + long(d) * d, nullptr, dd};
            bw.v = {qkv + 2 * long(d) * d, nullptr, dd};
            bw.o = {at(p, b.o), nullptr, dd};
            if (dec) {
                bw.ln_cross = {at(p, b.ln_cross), nullptr};
                bw.cq = {at(p, b.cq), nullptr, dd};
                bw.ck = {at(p, b.ckv), nullptr, dd};
                bw.cv = {at(p, b.ckv) + long(d) * d, nullptr, dd};
                bw.co = {at(p, b.co), nullptr, dd};
            }
            bw.ln_2 = {at(p, b.ln_ff), nullptr};
            bw.fc = {at(p, b.wi), nullptr, df};
            bw.up = {at(p, b.wi) + long(f) * d, nullptr, df};
            bw.proj = {at(p, b.wo), nullptr, fd};
            s.blocks.push_back(bw);
        }
        if (dec) {
            s.unembed = at(p, idx.lm_head);
            s.unembed_ld = d;
        }
    }
    return w;
}

/// What the forward keeps: the encoder's and the decoder's activations (E.f [S·m, d] is the source of
/// every cross-attention; D.logits the probabilities after seq_forward's softmax).
template <typename T>
struct Acts {
    SeqActs<T> E, D;
};

/// The forward of S pairs: src [S, m], tgt [S, n] (the decoder's input); every activation kept. With
/// `softmax` A.D.logits holds the probabilities.
template <typename T>
void seq_forward(const Seq2SeqWeights<T>& w, const int* src, int m, const int* tgt, int n, int S, Acts<T>& A,
                 bool softmax) {
    ForwardOptions<T> opt;
    opt.keep_layers = true;
    seq2seq_encode(w, src, S, m, A.E, opt);
    seq2seq_decode(w, A.E.f, m, tgt, S, n, A.D, opt);
    if (!softmax) return;
    M<T>& logits = A.D.logits;
    for (Eigen::Index t = 0; t < logits.rows(); ++t) {
        const T mx = logits.row(t).maxCoeff();
        logits.row(t) = (logits.row(t).array() - mx).exp();
        logits.row(t) /= ordered_sum(logits.row(t));
    }
}

/// Backward of attention for every sequence and head (nn::cross_attention_head_backward): dy
/// [S·nq, h·dh] → dq (rows S·nq), dk, dv (rows S·nk), all overwritten, each with row stride ldg; q row
/// stride ldq, k and v ldk. dbias [h] [nq, nk] added to when non-null.
template <typename T>
void attend_backward(int S, int nq, int nk, int h, int dh, const T* q, long ldq, const T* k, const T* v,
                     long ldk, const std::vector<M<T>>& att, bool causal, const M<T>& dy, T* dq, T* dk, T* dv,
                     long ldg, std::vector<M<T>>* dbias) {
    M<T> dP, dS;
    const long ldy = long(h) * dh;
    for (int s = 0; s < S; ++s)
        for (int j = 0; j < h; ++j)
            cross_attention_head_backward<T>(
                nq, nk, dh, q + long(s) * nq * ldq + j * dh, ldq, k + long(s) * nk * ldk + j * dh,
                v + long(s) * nk * ldk + j * dh, ldk, att[std::size_t(s * h + j)], T(1), causal,
                dy.data() + long(s) * nq * ldy + j * dh, ldy, dq + long(s) * nq * ldg + j * dh,
                dk + long(s) * nk * ldg + j * dh, dv + long(s) * nk * ldg + j * dh, ldg,
                dbias ? (*dbias)[std::size_t(j)].data() : nullptr, dP, dS);
}

/// One block backward (decoder_forward's block, pre-norm): dx [rows, d] holds d(block out) and becomes
/// d(block in); for a decoder block denc gets the gradient of the encoder's output (enc_out) added;
/// dbias [h] the self-attention scores' gradient added.
template <typename T>
void block_backward(const Params<T>& p, const BlockIdx& b, int S, int n, bool decoder, const M<T>* enc_out,
                    int m, const LayerActs<T>& L, M<T>& dx, M<T>* denc, std::vector<M<T>>& dbias,
                    std::vector<T>& g) {
    const TrainConfig& c = p.config;
    const int d = c.d_model, h = c.n_head, dh = d / h, f = train_d_ff(c);
    const auto& layout = p.layout;
    T* const none = nullptr;
    M<T> dact, dpre, da, dy;
    // MLP: out = res + wo(geglu(wi(norm(res)))), res = cmid (decoder) or mid
    linear_backward(dx, L.act, at(p, b.wo), LinearShape{f, d, true}, gat(g, layout, b.wo), none, dact);
    geglu_backward(dact, L.pre, dpre);
    linear_backward(dpre, L.a2, at(p, b.wi), LinearShape{d, 2 * f, true}, gat(g, layout, b.wi), none, da);
    norm_backward(da, L.xhat2, L.rstd2, at(p, b.ln_ff), true, dx, gat(g, layout, b.ln_ff), none);
    if (decoder) {  // cmid = mid + co(cross(cq(norm(mid)), ck|cv(enc_out)))
        linear_backward(dx, L.cy, at(p, b.co), LinearShape{d, d, true}, gat(g, layout, b.co), none, dy);
        // dq and dk | dv share one row stride (2d): dq in the left half of a [S·n, 2d] buffer
        M<T> dq2(long(S) * n, 2 * d), dkv(long(S) * m, 2 * d);
        attend_backward(S, n, m, h, dh, L.cq.data(), d, L.ckv.data(), L.ckv.data() + d, 2 * d, L.catt, false,
                        dy, dq2.data(), dkv.data(), dkv.data() + d, 2 * d,
                        static_cast<std::vector<M<T>>*>(nullptr));
        const M<T> dq = dq2.leftCols(d);
        linear_backward(dq, L.ac, at(p, b.cq), LinearShape{d, d, true}, gat(g, layout, b.cq), none, da);
        norm_backward(da, L.xhatc, L.rstdc, at(p, b.ln_cross), true, dx, gat(g, layout, b.ln_cross), none);
        linear_backward(dkv, *enc_out, at(p, b.ckv), LinearShape{d, 2 * d, true}, gat(g, layout, b.ckv), none,
                        da);
        *denc += da;
    }
    // self-attention: mid = in + o(attend(qkv(norm(in))))
    linear_backward(dx, L.y, at(p, b.o), LinearShape{d, d, true}, gat(g, layout, b.o), none, dy);
    M<T> dqkv(long(S) * n, 3 * d);
    attend_backward(S, n, n, h, dh, L.qkv.data(), 3 * d, L.qkv.data() + d, L.qkv.data() + 2 * d, 3 * d, L.att,
                    decoder, dy, dqkv.data(), dqkv.data() + d, dqkv.data() + 2 * d, 3 * d, &dbias);
    linear_backward(dqkv, L.a, at(p, b.qkv), LinearShape{d, 3 * d, true}, gat(g, layout, b.qkv), none, da);
    norm_backward(da, L.xhat, L.rstd, at(p, b.ln_self), true, dx, gat(g, layout, b.ln_self), none);
}

/// Backward of S pairs after seq_forward (with softmax): dlogits = (probs − onehot)·weight per scored
/// target, then every step in reverse. g: the gradient buffer (added to).
template <typename T>
void seq_backward(const Params<T>& p, const Idx& idx, const int* src, int m, const int* tgt,
                  const int* targets, int n, int S, T weight, const Acts<T>& A, std::vector<T>& g) {
    const TrainConfig& c = p.config;
    const int d = c.d_model, h = c.n_head, V = c.vocab_size, rows = S * n;
    const auto& layout = p.layout;
    T* const none = nullptr;
    M<T> dlogits = A.D.logits;
    for (int t = 0; t < rows; ++t) {
        if (targets[t] < 0) {
            dlogits.row(t).setZero();
            continue;
        }
        dlogits(t, targets[t]) -= T(1);
        dlogits.row(t) *= weight;
    }
    M<T> df;
    linear_backward(dlogits, A.D.f, at(p, idx.lm_head), LinearShape{d, V, true}, gat(g, layout, idx.lm_head),
                    none, df);
    M<T> dx = M<T>::Zero(rows, d);
    norm_backward(df, A.D.fhat, A.D.frstd, at(p, idx.dec_ln_f), true, dx, gat(g, layout, idx.dec_ln_f), none);
    M<T> denc = M<T>::Zero(long(S) * m, d);
    std::vector<M<T>> dbias(std::size_t(h), M<T>::Zero(n, n));
    for (int l = int(idx.dec.size()) - 1; l >= 0; --l)
        block_backward(p, idx.dec[std::size_t(l)], S, n, true, &A.E.f, m, A.D.layers[std::size_t(l)], dx,
                       &denc, dbias, g);
    relative_position_bias_backward(dbias, gat(g, layout, idx.dec_bias), false, kBuckets, kMaxDistance);
    WMap<T> dshared(gat(g, layout, idx.shared), V, d);
    for (int t = 0; t < rows; ++t) dshared.row(tgt[t]) += dx.row(t);
    // the encoder, from the gradient of its output
    M<T> dxe = M<T>::Zero(long(S) * m, d);
    norm_backward(denc, A.E.fhat, A.E.frstd, at(p, idx.enc_ln_f), true, dxe, gat(g, layout, idx.enc_ln_f),
                  none);
    std::vector<M<T>> ebias(std::size_t(h), M<T>::Zero(m, m));
    for (int l = int(idx.enc.size()) - 1; l >= 0; --l)
        block_backward(p, idx.enc[std::size_t(l)], S, m, false, static_cast<const M<T>*>(nullptr), 0,
                       A.E.layers[std::size_t(l)], dxe, static_cast<M<T>*>(nullptr), ebias, g);
    relative_position_bias_backward(ebias, gat(g, layout, idx.enc_bias), true, kBuckets, kMaxDistance);
    for (int t = 0; t < S * m; ++t) dshared.row(src[t]) += dxe.row(t);
}

inline void check_batch(const TrainConfig& c, const Batch& b) {
    if (b.B <= 0 || b.n <= 0 || b.m <= 0)
        throw Error("The training batch is empty (an encoder-decoder needs sources).");
    if (b.n > c.context || b.m > c.context)
        throw Error("The training pairs have " + std::to_string(b.m) + " source and " + std::to_string(b.n) +
                    " target tokens but the model's context is " + std::to_string(c.context) + ".");
    const std::size_t cells = std::size_t(b.B) * std::size_t(b.n);
    if (b.inputs.size() != cells || b.targets.size() != cells ||
        b.source.size() != std::size_t(b.B) * std::size_t(b.m))
        throw Error("The training batch's source must be B x m and its inputs and targets B x n.");
    auto bad = [&](int id) { return id < 0 || id >= c.vocab_size; };
    for (int id : b.source)
        if (bad(id)) throw Error("Source id " + std::to_string(id) + " is outside the vocabulary.");
    for (std::size_t i = 0; i < cells; ++i)
        if (bad(b.inputs[i]) || b.targets[i] >= c.vocab_size)
            throw Error("Token id " + std::to_string(std::max(b.inputs[i], b.targets[i])) +
                        " in the training batch is outside the vocabulary of " +
                        std::to_string(c.vocab_size) + ".");
}

/// loss_and_grad of an encoder–decoder (train.hpp's contract): runs of pairs per thread, each in
/// sub-batches, one gradient partial per run summed in run order.
template <typename T>
double loss_and_grad(const Params<T>& params, const Batch& batch, Params<T>* grad, int threads,
                     std::vector<double>* per_token_loss) {
    const TrainConfig& c = params.config;
    check_batch(c, batch);
    const Idx idx = layout_index(c, params.layout);
    const Seq2SeqWeights<T> w = weights(params, idx);
    const long scored = train_runs::scored_targets(batch);
    const T weight = T(1) / T(scored);
    const int B = batch.B, n = batch.n, m = batch.m;
    if (per_token_loss) per_token_loss->assign(std::size_t(B) * std::size_t(n), 0.0);
    std::vector<double> seq_loss(std::size_t(B), 0.0);
    const int group = std::max(1, 1024 / std::max(n, m));
    const int chunks = std::max(1, std::min(threads, B));
    std::vector<std::vector<T>> partial(grad ? std::size_t(chunks) : 0);
    parallel_for(chunks, threads, [&](int k) {
        const int b0 = int(std::int64_t(B) * k / chunks), b1 = int(std::int64_t(B) * (k + 1) / chunks);
        if (grad) partial[std::size_t(k)].assign(params.data.size(), T(0));
        Acts<T> A;
        for (int g0 = b0; g0 < b1; g0 += group) {
            const int S = std::min(group, b1 - g0);
            const int* src = batch.source.data() + std::size_t(g0) * std::size_t(m);
            const int* ids = batch.inputs.data() + std::size_t(g0) * std::size_t(n);
            const int* tg = batch.targets.data() + std::size_t(g0) * std::size_t(n);
            seq_forward(w, src, m, ids, n, S, A, true);
            train_runs::score_sequences(A.D.logits, tg, g0, S, n, seq_loss, per_token_loss);
            if (grad) seq_backward(params, idx, src, m, ids, tg, n, S, weight, A, partial[std::size_t(k)]);
        }
    });
    return train_runs::finish_runs(params, grad, partial, seq_loss, scored);
}

}  // namespace s2s_detail

}  // namespace attnviz

// The trainer's encoder–decoder (TrainConfig::encoder_layers > 0), in T5 v1.1's layout and maths, so
// its checkpoint is a Hugging Face T5 folder: shared token embeddings; encoder blocks of [RMSNorm →
// bidirectional self-attention (+ relative position bias) → residual, RMSNorm → gated-GELU MLP →
// residual], a final RMSNorm; decoder blocks of [RMSNorm → causal self-attention (+ its relative
// position bias) → residual, RMSNorm → cross-attention to the encoder's output → residual, RMSNorm →
// gated-GELU MLP → residual], a final RMSNorm, an untied lm_head. Scores are Q·Kᵀ unscaled (T5 folds
// 1/√d_k into its initialisation); the position bias (one table per stack, [32 buckets, h], in the
// stack's first block) is added to every block's self-attention scores.
//
// Forward with kept activations and the backward beside it (the ops of core/nn_ops.hpp), templated on
// the scalar: float in core/train.cpp, double in the finite-difference tests.
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
#include "core/thread_pool.hpp"
#include "core/train.hpp"

namespace attnviz {

namespace s2s_detail {

using namespace nn;

inline constexpr int kBuckets = 32, kMaxDistance = 128;
inline constexpr double kT5Eps = 1e-6;
inline constexpr int kPad = 0;  // T5's <pad>: a source's padding at its end, masked as keys

/// T5's relative position bucket of key j seen from query i (relative = j − i), as transformers'
/// T5Attention._relative_position_bucket: exact for small distances, logarithmic up to max_distance;
/// bidirectional (the encoder) gives the keys after the query their own half of the buckets.
inline int t5_bucket(int relative, bool bidirectional, int buckets = kBuckets, int max_distance = kMaxDistance) {
    int bucket = 0;
    if (bidirectional) {
        buckets /= 2;
        if (relative > 0) bucket += buckets;
        relative = std::abs(relative);
    } else {
        relative = -std::min(relative, 0);
    }
    const int max_exact = buckets / 2;
    if (relative < max_exact) return bucket + relative;
    // (in float, as torch computes it)
    const float large = std::log(float(relative) / float(max_exact)) /
                        float(std::log(double(max_distance) / double(max_exact))) * float(buckets - max_exact);
    return bucket + std::min(max_exact + int(large), buckets - 1);
}

/// The tensor names of block l of a stack (T5ForConditionalGeneration's state dict).
inline std::string t5_block(bool decoder, int l) {
    return std::string(decoder ? "decoder" : "encoder") + ".block." + std::to_string(l) + ".";
}

/// Indices (into param_layout) of one block's tensors; −1 = absent.
struct BlockIdx {
    int ln_self = -1, qkv = -1, o = -1;     // q | k | v adjacent: one [3d, d] nn.Linear
    int ln_cross = -1, cq = -1, ckv = -1;   // decoder: cross q [d, d]; k | v adjacent [2d, d]
    int co = -1;
    int ln_ff = -1, wi = -1, wo = -1;       // wi_0 | wi_1 adjacent: [2f, d]; wo [d, f]
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

/// What one block keeps for the backward (rows: its stack's).
template <typename T>
struct BlockActs {
    M<T> in, a, xhat;  // residual in; its RMSNorm (a = xhat·γ)
    std::vector<T> rstd;
    M<T> qkv;                // [rows, 3d]
    std::vector<M<T>> att;   // [S·h] self-attention weights
    M<T> y;                  // [rows, d] heads concatenated
    M<T> mid;                // residual after self-attention
    M<T> c, chat;            // decoder: RMSNorm of mid
    std::vector<T> crstd;
    M<T> cq;                 // [rows_d, d] cross queries
    M<T> ckv;                // [rows_e, 2d] cross keys | values (of the encoder's output)
    std::vector<M<T>> catt;  // [S·h] cross-attention weights [n, m]
    M<T> cy;                 // [rows_d, d]
    M<T> mid2;               // decoder: residual after cross-attention
    M<T> a2, xhat2;          // RMSNorm before the MLP
    std::vector<T> rstd2;
    M<T> pre, act;  // [rows, 2f] gate | up; [rows, f] GELU(gate)·up
};

template <typename T>
struct Acts {
    std::vector<BlockActs<T>> enc, dec;
    M<T> enc_x, enc_out, enc_hat;  // encoder residual out; its final RMSNorm (the cross keys' input)
    std::vector<T> enc_rstd;
    M<T> dec_x, f, fhat;  // decoder residual out; its final RMSNorm
    std::vector<T> frstd;
    M<T> logits;  // [rows_d, V] (probabilities after seq_forward's softmax)
};

template <typename T>
const T* at(const Params<T>& p, int i) {
    return p.data.data() + p.layout[std::size_t(i)].offset;
}
template <typename T>
T* gat(std::vector<T>& g, const std::vector<ParamView>& layout, int i) {
    return g.data() + layout[std::size_t(i)].offset;
}

/// The relative position bias of every head: bias[h] [n, m] = table[bucket(j − i), h].
template <typename T>
std::vector<M<T>> position_bias(const T* table, int heads, int n, int m, bool bidirectional) {
    std::vector<M<T>> out(std::size_t(heads), M<T>(n, m));
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j) {
            const int b = t5_bucket(j - i, bidirectional);
            for (int h = 0; h < heads; ++h) out[std::size_t(h)](i, j) = table[long(b) * heads + h];
        }
    return out;
}

/// Self-attention (bias: the stack's) or cross-attention of every sequence and head: q rows [S·nq]
/// (row stride ldq), k and v rows [S·nk] (row strides ldk); y [S·nq, d]. keys [S]: how many keys of
/// each sequence are not padding (null: all).
template <typename T>
void attend(int S, int nq, int nk, int h, int dh, const T* q, long ldq, const T* k, const T* v, long ldk,
            const std::vector<M<T>>* bias, bool causal, const int* keys, std::vector<M<T>>& att, M<T>& y) {
    att.resize(std::size_t(S) * std::size_t(h));
    y.resize(long(S) * nq, long(h) * dh);
    const long ldy = long(h) * dh;
    for (int s = 0; s < S; ++s)
        for (int j = 0; j < h; ++j)
            attention_any_forward<T>(nq, nk, dh, dh, q + long(s) * nq * ldq + j * dh, ldq,
                                     k + long(s) * nk * ldk + j * dh, ldk, v + long(s) * nk * ldk + j * dh, ldk,
                                     T(1), bias ? (*bias)[std::size_t(j)].data() : nullptr, causal,
                                     keys ? keys[s] : nk, att[std::size_t(s * h + j)], y.data() + long(s) * nq * ldy + j * dh, ldy);
}

/// One stack's block forward on x (moved into L.in); enc_out = the encoder's output for a decoder block.
/// src_len [S]: each source's length without its padding (the keys the encoder and cross-attention see).
template <typename T>
void block_forward(const Params<T>& p, const BlockIdx& b, int S, int n, const std::vector<M<T>>& bias,
                   bool decoder, const M<T>* enc_out, int m, const int* src_len, M<T>& x, BlockActs<T>& L) {
    const TrainConfig& c = p.config;
    const int d = c.d_model, h = c.n_head, dh = d / h, f = train_d_ff(c), rows = int(x.rows());
    L.in = std::move(x);
    norm_forward(L.in, at(p, b.ln_self), static_cast<const T*>(nullptr), true, kT5Eps, L.a, L.xhat, L.rstd);
    linear_forward(L.a, at(p, b.qkv), static_cast<const T*>(nullptr), LinearShape{d, 3 * d, true}, L.qkv);
    attend(S, n, n, h, dh, L.qkv.data(), 3 * d, L.qkv.data() + d, L.qkv.data() + 2 * d, 3 * d, &bias, decoder,
           decoder ? static_cast<const int*>(nullptr) : src_len, L.att, L.y);
    M<T> o;
    linear_forward(L.y, at(p, b.o), static_cast<const T*>(nullptr), LinearShape{d, d, true}, o);
    L.mid = L.in + o;
    const M<T>* res = &L.mid;
    if (decoder) {
        norm_forward(L.mid, at(p, b.ln_cross), static_cast<const T*>(nullptr), true, kT5Eps, L.c, L.chat,
                     L.crstd);
        linear_forward(L.c, at(p, b.cq), static_cast<const T*>(nullptr), LinearShape{d, d, true}, L.cq);
        linear_forward(*enc_out, at(p, b.ckv), static_cast<const T*>(nullptr), LinearShape{d, 2 * d, true},
                       L.ckv);
        attend(S, n, m, h, dh, L.cq.data(), d, L.ckv.data(), L.ckv.data() + d, 2 * d,
               static_cast<const std::vector<M<T>>*>(nullptr), false, src_len, L.catt, L.cy);
        linear_forward(L.cy, at(p, b.co), static_cast<const T*>(nullptr), LinearShape{d, d, true}, o);
        L.mid2 = L.mid + o;
        res = &L.mid2;
    }
    norm_forward(*res, at(p, b.ln_ff), static_cast<const T*>(nullptr), true, kT5Eps, L.a2, L.xhat2, L.rstd2);
    linear_forward(L.a2, at(p, b.wi), static_cast<const T*>(nullptr), LinearShape{d, 2 * f, true}, L.pre);
    geglu_forward(L.pre, L.act);
    linear_forward(L.act, at(p, b.wo), static_cast<const T*>(nullptr), LinearShape{f, d, true}, o);
    x = *res + o;
    (void)rows;
}

/// The forward of S pairs: src [S, m], tgt [S, n] (the decoder's input); every activation kept.
/// With `softmax` A.logits holds the probabilities.
template <typename T>
void seq_forward(const Params<T>& p, const Idx& idx, const int* src, int m, const int* tgt, int n, int S,
                 Acts<T>& A, bool softmax) {
    const TrainConfig& c = p.config;
    const int d = c.d_model, h = c.n_head, V = c.vocab_size;
    const CMap<T> shared(at(p, idx.shared), V, d);
    // Each source's length without the padding at its end (T5's attention mask: padding is no key).
    std::vector<int> src_len(std::size_t(S), m);
    for (int s = 0; s < S; ++s)
        while (src_len[std::size_t(s)] > 1 && src[long(s) * m + src_len[std::size_t(s)] - 1] == kPad)
            --src_len[std::size_t(s)];
    // encoder
    M<T> x(long(S) * m, d);
    for (int t = 0; t < S * m; ++t) x.row(t) = shared.row(src[t]);
    const std::vector<M<T>> enc_bias = position_bias(at(p, idx.enc_bias), h, m, m, true);
    A.enc.resize(idx.enc.size());
    for (std::size_t l = 0; l < idx.enc.size(); ++l)
        block_forward(p, idx.enc[l], S, m, enc_bias, false, static_cast<const M<T>*>(nullptr), m, src_len.data(), x,
                      A.enc[l]);
    A.enc_x = std::move(x);
    norm_forward(A.enc_x, at(p, idx.enc_ln_f), static_cast<const T*>(nullptr), true, kT5Eps, A.enc_out,
                 A.enc_hat, A.enc_rstd);
    // decoder
    M<T> y(long(S) * n, d);
    for (int t = 0; t < S * n; ++t) y.row(t) = shared.row(tgt[t]);
    const std::vector<M<T>> dec_bias = position_bias(at(p, idx.dec_bias), h, n, n, false);
    A.dec.resize(idx.dec.size());
    for (std::size_t l = 0; l < idx.dec.size(); ++l)
        block_forward(p, idx.dec[l], S, n, dec_bias, true, &A.enc_out, m, src_len.data(), y, A.dec[l]);
    A.dec_x = std::move(y);
    norm_forward(A.dec_x, at(p, idx.dec_ln_f), static_cast<const T*>(nullptr), true, kT5Eps, A.f, A.fhat,
                 A.frstd);
    linear_forward(A.f, at(p, idx.lm_head), static_cast<const T*>(nullptr), LinearShape{d, V, true}, A.logits);
    if (!softmax) return;
    for (Eigen::Index t = 0; t < A.logits.rows(); ++t) {
        const T mx = A.logits.row(t).maxCoeff();
        A.logits.row(t) = (A.logits.row(t).array() - mx).exp();
        A.logits.row(t) /= ordered_sum(A.logits.row(t));
    }
}

/// Backward of attention for every sequence and head: dy [S·nq, d] → dq (row stride ldq), dk, dv
/// (row stride ldk), all overwritten; dbias [h] [nq, nk] added to when non-null.
template <typename T>
void attend_backward(int S, int nq, int nk, int h, int dh, const T* q, long ldq, const T* k, const T* v,
                     long ldk, const std::vector<M<T>>& att, const M<T>& dy, T* dq, T* dk, T* dv,
                     std::vector<M<T>>* dbias) {
    M<T> dP, dS;
    const long ldy = long(h) * dh;
    for (int s = 0; s < S; ++s)
        for (int j = 0; j < h; ++j)
            attention_any_backward<T>(nq, nk, dh, dh, q + long(s) * nq * ldq + j * dh, ldq,
                                      k + long(s) * nk * ldk + j * dh, ldk, v + long(s) * nk * ldk + j * dh, ldk,
                                      T(1), att[std::size_t(s * h + j)], dy.data() + long(s) * nq * ldy + j * dh,
                                      ldy, dq + long(s) * nq * ldq + j * dh, ldq, dk + long(s) * nk * ldk + j * dh,
                                      ldk, dv + long(s) * nk * ldk + j * dh, ldk,
                                      dbias ? (*dbias)[std::size_t(j)].data() : nullptr, dP, dS);
}

/// One block backward: dx [rows, d] holds d(block out) and becomes d(block in); denc (decoder) gets the
/// gradient of the encoder's output added; dbias [h] the self-attention scores' gradient added.
template <typename T>
void block_backward(const Params<T>& p, const BlockIdx& b, int S, int n, bool decoder, const M<T>* enc_out,
                    int m, const BlockActs<T>& L, M<T>& dx, M<T>* denc, std::vector<M<T>>& dbias,
                    std::vector<T>& g) {
    const TrainConfig& c = p.config;
    const int d = c.d_model, h = c.n_head, dh = d / h, f = train_d_ff(c);
    const auto& layout = p.layout;
    const T* none = nullptr;
    M<T> dact, dpre, da, dy, dq, dkv;
    // MLP: x_out = res + wo(geglu(wi(norm(res))))
    linear_backward(dx, L.act, at(p, b.wo), LinearShape{f, d, true}, gat(g, layout, b.wo), static_cast<T*>(nullptr),
                    dact);
    geglu_backward(dact, L.pre, dpre);
    linear_backward(dpre, L.a2, at(p, b.wi), LinearShape{d, 2 * f, true}, gat(g, layout, b.wi),
                    static_cast<T*>(nullptr), da);
    norm_backward(da, L.xhat2, L.rstd2, at(p, b.ln_ff), true, dx, gat(g, layout, b.ln_ff), static_cast<T*>(nullptr));
    if (decoder) {  // mid2 = mid + co(cross(cq(norm(mid)), ckv(enc_out)))
        linear_backward(dx, L.cy, at(p, b.co), LinearShape{d, d, true}, gat(g, layout, b.co),
                        static_cast<T*>(nullptr), dy);
        dq.resize(long(S) * n, d);
        dkv.resize(long(S) * m, 2 * d);
        attend_backward(S, n, m, h, dh, L.cq.data(), d, L.ckv.data(), L.ckv.data() + d, 2 * d, L.catt, dy,
                        dq.data(), dkv.data(), dkv.data() + d, static_cast<std::vector<M<T>>*>(nullptr));
        linear_backward(dq, L.c, at(p, b.cq), LinearShape{d, d, true}, gat(g, layout, b.cq),
                        static_cast<T*>(nullptr), da);
        norm_backward(da, L.chat, L.crstd, at(p, b.ln_cross), true, dx, gat(g, layout, b.ln_cross),
                      static_cast<T*>(nullptr));
        linear_backward(dkv, *enc_out, at(p, b.ckv), LinearShape{d, 2 * d, true}, gat(g, layout, b.ckv),
                        static_cast<T*>(nullptr), da);
        *denc += da;
    }
    // self-attention: mid = in + o(attend(qkv(norm(in))))
    linear_backward(dx, L.y, at(p, b.o), LinearShape{d, d, true}, gat(g, layout, b.o), static_cast<T*>(nullptr), dy);
    M<T> dqkv(long(S) * n, 3 * d);
    attend_backward(S, n, n, h, dh, L.qkv.data(), 3 * d, L.qkv.data() + d, L.qkv.data() + 2 * d, 3 * d, L.att, dy,
                    dqkv.data(), dqkv.data() + d, dqkv.data() + 2 * d, &dbias);
    linear_backward(dqkv, L.a, at(p, b.qkv), LinearShape{d, 3 * d, true}, gat(g, layout, b.qkv),
                    static_cast<T*>(nullptr), da);
    norm_backward(da, L.xhat, L.rstd, at(p, b.ln_self), true, dx, gat(g, layout, b.ln_self), static_cast<T*>(nullptr));
    (void)none;
}

/// The scores' gradient of every head [h] [n, m] into the bias table's gradient [buckets, h].
template <typename T>
void bias_backward(const std::vector<M<T>>& dbias, bool bidirectional, T* dtable) {
    const int heads = int(dbias.size());
    for (int hd = 0; hd < heads; ++hd) {
        const M<T>& D = dbias[std::size_t(hd)];
        for (int i = 0; i < int(D.rows()); ++i)
            for (int j = 0; j < int(D.cols()); ++j) dtable[long(t5_bucket(j - i, bidirectional)) * heads + hd] += D(i, j);
    }
}

/// Backward of S pairs after seq_forward (with softmax): dlogits = (probs − onehot)·weight per scored
/// target, then every step in reverse. g: the gradient buffer (added to).
template <typename T>
void seq_backward(const Params<T>& p, const Idx& idx, const int* src, int m, const int* tgt, const int* targets,
                  int n, int S, T weight, const Acts<T>& A, std::vector<T>& g) {
    const TrainConfig& c = p.config;
    const int d = c.d_model, h = c.n_head, V = c.vocab_size, rows = S * n;
    const auto& layout = p.layout;
    M<T> dlogits = A.logits;
    for (int t = 0; t < rows; ++t) {
        if (targets[t] < 0) {
            dlogits.row(t).setZero();
            continue;
        }
        dlogits(t, targets[t]) -= T(1);
        dlogits.row(t) *= weight;
    }
    M<T> df;
    linear_backward(dlogits, A.f, at(p, idx.lm_head), LinearShape{d, V, true}, gat(g, layout, idx.lm_head),
                    static_cast<T*>(nullptr), df);
    M<T> dx = M<T>::Zero(rows, d);
    norm_backward(df, A.fhat, A.frstd, at(p, idx.dec_ln_f), true, dx, gat(g, layout, idx.dec_ln_f),
                  static_cast<T*>(nullptr));
    M<T> denc = M<T>::Zero(long(S) * m, d);
    std::vector<M<T>> dbias(std::size_t(h), M<T>::Zero(n, n));
    for (int l = int(idx.dec.size()) - 1; l >= 0; --l)
        block_backward(p, idx.dec[std::size_t(l)], S, n, true, &A.enc_out, m, A.dec[std::size_t(l)], dx, &denc,
                       dbias, g);
    bias_backward(dbias, false, gat(g, layout, idx.dec_bias));
    WMap<T> dshared(gat(g, layout, idx.shared), V, d);
    for (int t = 0; t < rows; ++t) dshared.row(tgt[t]) += dx.row(t);
    // encoder
    M<T> dxe = M<T>::Zero(long(S) * m, d);
    norm_backward(denc, A.enc_hat, A.enc_rstd, at(p, idx.enc_ln_f), true, dxe, gat(g, layout, idx.enc_ln_f),
                  static_cast<T*>(nullptr));
    std::vector<M<T>> ebias(std::size_t(h), M<T>::Zero(m, m));
    for (int l = int(idx.enc.size()) - 1; l >= 0; --l)
        block_backward(p, idx.enc[std::size_t(l)], S, m, false, static_cast<const M<T>*>(nullptr), 0,
                       A.enc[std::size_t(l)], dxe, static_cast<M<T>*>(nullptr), ebias, g);
    bias_backward(ebias, true, gat(g, layout, idx.enc_bias));
    for (int t = 0; t < S * m; ++t) dshared.row(src[t]) += dxe.row(t);
}

inline void check_batch(const TrainConfig& c, const Batch& b) {
    if (b.B <= 0 || b.n <= 0 || b.m <= 0) throw Error("The training batch is empty (an encoder-decoder needs sources).");
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
                        " in the training batch is outside the vocabulary of " + std::to_string(c.vocab_size) + ".");
}

/// loss_and_grad of an encoder–decoder (train.hpp's contract): runs of pairs per thread, each in
/// sub-batches, one gradient partial per run summed in run order.
template <typename T>
double loss_and_grad(const Params<T>& params, const Batch& batch, Params<T>* grad, int threads,
                     std::vector<double>* per_token_loss) {
    const TrainConfig& c = params.config;
    check_batch(c, batch);
    const Idx idx = layout_index(c, params.layout);
    long scored = 0;
    for (int t : batch.targets) scored += t >= 0 ? 1 : 0;
    if (scored == 0) throw Error("The training batch has no scored targets.");
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
            seq_forward(params, idx, src, m, ids, n, S, A, true);
            for (int s = 0; s < S; ++s) {
                double sum = 0;
                for (int t = 0; t < n; ++t) {
                    const int r = s * n + t;
                    if (tg[r] < 0) continue;
                    const double l = -std::log(std::max(double(A.logits(r, tg[r])), 1e-300));
                    sum += l;
                    if (per_token_loss) (*per_token_loss)[std::size_t(g0) * std::size_t(n) + std::size_t(r)] = l;
                }
                seq_loss[std::size_t(g0 + s)] = sum;
            }
            if (grad) seq_backward(params, idx, src, m, ids, tg, n, S, weight, A, partial[std::size_t(k)]);
        }
    });
    if (grad) {
        grad->config = c;
        grad->layout = params.layout;
        grad->data = std::move(partial[0]);
        for (std::size_t k = 1; k < partial.size(); ++k)
            for (std::size_t i = 0; i < partial[k].size(); ++i) grad->data[i] += partial[k][i];
    }
    double total = 0;
    for (double s : seq_loss) total += s;
    return total / double(scored);
}

}  // namespace s2s_detail

}  // namespace attnviz

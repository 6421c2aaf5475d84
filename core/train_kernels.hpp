// The trainer's backward, and its view of a parameter buffer for the one decoder forward
// (core/decoder.hpp; see core/train.hpp for the model and the shapes): instantiated for float in
// core/train.cpp and for double only in the core tests' finite-difference checks
// (tests/core/train_double.cpp), so neither the app nor a sanitized build compiles them twice.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "core/architecture.hpp"
#include "core/decoder.hpp"
#include "core/error.hpp"
#include "core/nn_ops.hpp"
#include "core/thread_pool.hpp"
#include "core/train.hpp"
#include "core/train_runs.hpp"
#include "core/train_seq2seq.hpp"

namespace attnviz {

namespace train_detail {

using namespace nn;

/// Indices (into param_layout) of a config's tensors; −1 = absent.
struct LayerIdx {
    int ln1_w = -1, ln1_b = -1;
    int qkv_w = -1, qkv_b = -1;  // [d, 3d] Conv1D (GPT-2) or q|k|v [3d, d] nn.Linear (Llama)
    int o_w = -1, o_b = -1;
    int ln2_w = -1, ln2_b = -1;
    int fc_w = -1, fc_b = -1;      // GELU: c_fc [d, f] or up_proj [f, d]; SwiGLU: gate|up [2f, d]
    int proj_w = -1, proj_b = -1;  // c_proj [f, d] or down_proj [d, f]
};
struct LayoutIdx {
    int wte = 0, wpe = -1;
    std::vector<LayerIdx> layers;
    int lnf_w = -1, lnf_b = -1;
    int unembed = 0;      // wte when tied, else lm_head
    bool out_in = false;  // Llama's nn.Linear [out, in] (else GPT-2's Conv1D [in, out])
    NormKind norm = NormKind::None;
    MlpKind mlp = MlpKind::None;
    PositionKind positions = PositionKind::Learned;
    int d_ff = 0;
};

/// Where each tensor of param_layout(c) sits, found by the names of the checkpoint's architecture
/// (core/architecture.hpp's table, as param_layout lays them out).
inline LayoutIdx layout_index(const TrainConfig& c, const std::vector<ParamView>& layout) {
    auto find = [&](const std::string& name) {
        for (std::size_t i = 0; i < layout.size(); ++i)
            if (layout[i].name == name) return int(i);
        return -1;
    };
    const TensorNames& t = train_architecture(c).tensors;
    LayoutIdx idx;
    idx.out_in = !t.conv1d;
    idx.norm = train_norm(c);
    idx.mlp = c.mlp;
    idx.positions = c.positions;
    idx.d_ff = train_d_ff(c);
    idx.wte = find(t.embed + ".weight");
    idx.wpe = find(t.positions + ".weight");
    // A fused tensor (q|k|v, gate|up) is found by its first part's name: param_layout puts the
    // parts side by side, so the first part's offset is the fused matrix's.
    for (int l = 0; l < c.n_layer; ++l) {
        const std::string p = t.block_prefix(l);
        LayerIdx li;
        li.ln1_w = find(p + t.attn_norm + ".weight");
        li.ln1_b = find(p + t.attn_norm + ".bias");
        li.ln2_w = find(p + t.mlp_norm + ".weight");
        li.ln2_b = find(p + t.mlp_norm + ".bias");
        const std::string qkv = t.qkv.empty() ? t.q : t.qkv;
        li.qkv_w = find(p + qkv + ".weight");
        li.qkv_b = find(p + qkv + ".bias");
        li.o_w = find(p + t.o + ".weight");
        li.o_b = find(p + t.o + ".bias");
        const std::string fc = c.mlp == MlpKind::SwiGLU ? t.gate : t.fc;
        const std::string proj = c.mlp == MlpKind::SwiGLU ? t.down : t.proj;
        li.fc_w = find(p + fc + ".weight");
        li.fc_b = find(p + fc + ".bias");
        li.proj_w = find(p + proj + ".weight");
        li.proj_b = find(p + proj + ".bias");
        idx.layers.push_back(li);
    }
    idx.lnf_w = find(t.final_norm + ".weight");
    idx.lnf_b = find(t.final_norm + ".bias");
    idx.unembed = c.tied ? idx.wte : find(t.lm_head + ".weight");
    return idx;
}

/// Start of tensor i in a buffer laid out by `layout` (null for i = −1).
template <typename T>
T* at(std::vector<T>& buf, const std::vector<ParamView>& layout, int i) {
    return i < 0 ? nullptr : buf.data() + layout[std::size_t(i)].offset;
}
template <typename T>
const T* at(const Params<T>& p, int i) {
    return i < 0 ? nullptr : p.data.data() + p.layout[std::size_t(i)].offset;
}
template <typename T>
CMap<T> view(const Params<T>& p, int i, int rows, int cols) {
    return CMap<T>(p.data.data() + p.layout[std::size_t(i)].offset, rows, cols);
}
template <typename T>
WMap<T> gview(std::vector<T>& g, const std::vector<ParamView>& layout, int i, int rows, int cols) {
    return WMap<T>(g.data() + layout[std::size_t(i)].offset, rows, cols);
}

// ---------------------------------------------------------------------------------------------
// One sequence: forward with kept activations, cross-entropy, backward
// ---------------------------------------------------------------------------------------------

/// The trainer's model as the decoder forward sees it: views into the parameter buffer.
inline DecoderShape train_shape(const TrainConfig& c, const LayoutIdx& idx) {
    DecoderShape s;
    s.n_layer = c.n_layer;
    s.n_head = s.n_kv_head = c.n_head;
    s.d_model = c.d_model;
    s.d_head = c.d_model / c.n_head;
    s.d_ff = idx.d_ff;
    s.vocab = c.vocab_size;
    s.context = c.context;
    s.norm = idx.norm;
    s.mlp = idx.mlp;
    s.positions = idx.positions;
    s.eps = c.norm_eps;
    s.theta = 10000.0;
    return s;
}

template <typename T>
DecoderWeights<T> train_weights(const Params<T>& p, const LayoutIdx& idx) {
    const TrainConfig& c = p.config;
    const int d = c.d_model, f = idx.d_ff;
    DecoderWeights<T> w;
    w.shape = train_shape(c, idx);
    w.wte = at(p, idx.wte);
    w.wte_ld = d;
    w.wpe = at(p, idx.wpe);
    w.wpe_ld = d;
    w.unembed = at(p, idx.unembed);
    w.unembed_ld = d;
    w.ln_f = {at(p, idx.lnf_w), at(p, idx.lnf_b)};
    const bool oi = idx.out_in;
    for (const LayerIdx& li : idx.layers) {
        BlockW<T> b;
        b.ln_1 = {at(p, li.ln1_w), at(p, li.ln1_b)};
        b.ln_2 = {at(p, li.ln2_w), at(p, li.ln2_b)};
        // q | k | v: column slices of GPT-2's c_attn [d, 3d], or the adjacent q/k/v_proj [d, d] each
        const T* qkv = at(p, li.qkv_w);
        const T* qkv_b = at(p, li.qkv_b);
        for (int part = 0; part < 3; ++part) {
            LinearW<T>& L = part == 0 ? b.q : part == 1 ? b.k : b.v;
            L.w = oi ? qkv + long(part) * d * d : qkv + long(part) * d;
            L.b = qkv_b ? qkv_b + part * d : nullptr;
            L.s = LinearShape{d, d, oi, oi ? long(d) : long(3 * d)};
        }
        b.o = {at(p, li.o_w), at(p, li.o_b), LinearShape{d, d, oi}};
        if (idx.mlp == MlpKind::SwiGLU) {  // gate | up: one [2f, d] tensor
            b.fc = {at(p, li.fc_w), nullptr, LinearShape{d, f, true}};
            b.up = {at(p, li.fc_w) + long(f) * d, nullptr, LinearShape{d, f, true}};
        } else if (idx.mlp == MlpKind::Gelu) {
            b.fc = {at(p, li.fc_w), at(p, li.fc_b), LinearShape{d, f, oi}};
        }
        if (idx.mlp != MlpKind::None) b.proj = {at(p, li.proj_w), at(p, li.proj_b), LinearShape{f, d, oi}};
        w.blocks.push_back(b);
    }
    return w;
}

/// Forward of S sequences of n tokens (ids [S, n]) keeping every activation, then the softmax:
/// A.logits holds the probabilities [S·n, V].
template <typename T>
void sequence_forward(const DecoderWeights<T>& w, const Tables<T>& tab, const int* ids, int S, int n,
                      SeqActs<T>& A) {
    decoder_forward(w, tab, ids, S, n, A, ForwardOptions<T>{});
    for (Eigen::Index t = 0; t < A.logits.rows(); ++t) {
        const T mx = A.logits.row(t).maxCoeff();
        A.logits.row(t) = (A.logits.row(t).array() - mx).exp();
        A.logits.row(t) /= ordered_sum(A.logits.row(t));
    }
}

/// backward of causal multi-head attention: dy [S·n, d] → dqkv [S·n, 3d] (overwritten), per sequence
/// and head (nn::attention_head_backward).
template <typename T>
void attention_backward(const M<T>& dy, const M<T>& qkv, const std::vector<M<T>>& att, int S, int n_head,
                        M<T>& dqkv) {
    const int n = int(qkv.rows()) / S, d = int(qkv.cols()) / 3, dh = d / n_head;
    const long ld = 3 * long(d);  // row stride of qkv and dqkv
    dqkv.resize(qkv.rows(), 3 * d);
    M<T> dP, dS;
    for (int s = 0; s < S; ++s)
        for (int h = 0; h < n_head; ++h) {
            const long q0 = long(s) * n * ld + h * dh;
            const T *Q = qkv.data() + q0, *K = Q + d, *V = Q + 2 * d;  // [n, dh] each, row stride ld
            T *dQ = dqkv.data() + q0, *dK = dQ + d, *dV = dQ + 2 * d;
            const T* dyh = dy.data() + long(s) * n * d + h * dh;  // [n, dh], row stride d
            attention_head_backward(n, dh, Q, K, V, ld, att[std::size_t(s * n_head + h)], dyh, long(d), dQ,
                                    dK, dV, ld, dP, dS);
        }
}

/// Backward of one sequence. dlogits [n, V] = (probs − onehot)·weight per scored token, then every
/// pass in reverse. g: gradient buffer (added to).
template <typename T>
void sequence_backward(const Params<T>& p, const LayoutIdx& idx, const Tables<T>& tab, const int* ids,
                       const int* targets, int S, int n, T weight, const SeqActs<T>& A, std::vector<T>& g) {
    const int rows = S * n;
    const TrainConfig& c = p.config;
    const int d = c.d_model, V = c.vocab_size, f = idx.d_ff;
    const auto& layout = p.layout;
    const bool norms = idx.norm != NormKind::None, rms = idx.norm == NormKind::RMSNorm;
    const LinearShape qkv_s{d, 3 * d, idx.out_in}, o_s{d, d, idx.out_in};
    const LinearShape fc_s{d, idx.mlp == MlpKind::SwiGLU ? 2 * f : f, idx.out_in}, proj_s{f, d, idx.out_in};
    auto G = [&](int i) { return at(g, layout, i); };
    // pass 5 backward: cross-entropy + softmax, unembedding, ln_f
    M<T> dlogits = A.logits;  // [S·n, V] (the probabilities: sequence_forward's softmax)
    for (int t = 0; t < rows; ++t) {
        if (targets[t] < 0) {
            dlogits.row(t).setZero();
            continue;
        }
        dlogits(t, targets[t]) -= T(1);
        dlogits.row(t) *= weight;
    }
    // dU [V, d] += dlogitsᵀ·f;  df [S·n, d] = dlogits·U
    product<T>(V, d, rows, dlogits.data(), 1, V, A.f.data(), d, 1, G(idx.unembed), d, true);
    M<T> df(rows, d);
    product<T>(rows, d, V, dlogits.data(), V, 1, at(p, idx.unembed), d, 1, df.data(), d, false);
    M<T> dx;  // [n, d] gradient of the residual stream
    if (norms) {
        dx.setZero(rows, d);
        norm_backward(df, A.fhat, A.frstd, at(p, idx.lnf_w), rms, dx, G(idx.lnf_w), G(idx.lnf_b));
    } else {
        dx = std::move(df);
    }
    // passes 4, 3 and 2 backward, last block first
    M<T> dy, dqkv, da, dact, dpre;
    for (int l = c.n_layer - 1; l >= 0; --l) {
        const LayerIdx& li = idx.layers[std::size_t(l)];
        const LayerActs<T>& L = A.layers[std::size_t(l)];
        if (idx.mlp != MlpKind::None) {
            // pass 4 backward: dx (out of the block) → MLP → ln_2; dx becomes d(mid)
            linear_backward(dx, L.act, at(p, li.proj_w), proj_s, G(li.proj_w), G(li.proj_b), dact);
            if (idx.mlp == MlpKind::Gelu)
                gelu_backward(dact, L.pre, dpre);
            else
                swiglu_backward(dact, L.pre, dpre);
            linear_backward(dpre, L.a2, at(p, li.fc_w), fc_s, G(li.fc_w), G(li.fc_b), da);
            if (norms)
                norm_backward(da, L.xhat2, L.rstd2, at(p, li.ln2_w), rms, dx, G(li.ln2_w), G(li.ln2_b));
            else
                dx += da;
        }
        // pass 3 backward: output projection, attention, RoPE, qkv
        linear_backward(dx, L.y, at(p, li.o_w), o_s, G(li.o_w), G(li.o_b), dy);
        attention_backward(dy, L.qkv, L.att, S, c.n_head, dqkv);
        if (idx.positions == PositionKind::Rope) {
            const int dh = d / c.n_head;
            rope_apply(dqkv.data(), rows, 3 * d, c.n_head, dh, n, tab.rope_cos, tab.rope_sin, T(-1));
            rope_apply(dqkv.data() + d, rows, 3 * d, c.n_head, dh, n, tab.rope_cos, tab.rope_sin, T(-1));
        }
        linear_backward(dqkv, L.a, at(p, li.qkv_w), qkv_s, G(li.qkv_w), G(li.qkv_b), da);
        // pass 2 backward; residual: dx (into the block) = dx (out of attention) + d(norm path)
        if (norms)
            norm_backward(da, L.xhat, L.rstd, at(p, li.ln1_w), rms, dx, G(li.ln1_w), G(li.ln1_b));
        else
            dx += da;
    }
    // pass 1 backward: embeddings
    auto dwte = gview(g, layout, idx.wte, V, d);
    for (int t = 0; t < rows; ++t) dwte.row(ids[t]) += dx.row(t);
    if (idx.positions == PositionKind::Learned)
        for (int s = 0; s < S; ++s)
            gview(g, layout, idx.wpe, c.context, d).topRows(n) += dx.middleRows(s * n, n);
}

inline void check_batch(const TrainConfig& c, const Batch& batch) {
    if (batch.B <= 0 || batch.n <= 0) throw Error("The training batch is empty.");
    if (batch.n > c.context)
        throw Error("The training sequences have " + std::to_string(batch.n) +
                    " tokens but the model's context is " + std::to_string(c.context) + ".");
    const std::size_t cells = std::size_t(batch.B) * std::size_t(batch.n);
    if (batch.inputs.size() != cells || batch.targets.size() != cells)
        throw Error("The training batch's inputs and targets must both be B x n.");
    for (std::size_t i = 0; i < cells; ++i) {
        if (batch.inputs[i] < 0 || batch.inputs[i] >= c.vocab_size || batch.targets[i] >= c.vocab_size)
            throw Error("Token id " + std::to_string(std::max(batch.inputs[i], batch.targets[i])) +
                        " in the training batch is outside the vocabulary of " +
                        std::to_string(c.vocab_size) + ".");
    }
}

}  // namespace train_detail

template <typename T>
Params<T> make_params(const TrainConfig& config) {
    validate_train_config(config);
    Params<T> p;
    p.config = config;
    p.layout = param_layout(config);
    p.data.assign(param_count(config), T(0));
    return p;
}

template <typename T>
double loss_and_grad(const Params<T>& params, const Batch& batch, Params<T>* grad, int threads,
                     std::vector<double>* per_token_loss) {
    using namespace train_detail;
    const TrainConfig& c = params.config;
    if (c.encoder_layers > 0) return s2s_detail::loss_and_grad(params, batch, grad, threads, per_token_loss);
    check_batch(c, batch);
    const LayoutIdx idx = layout_index(c, params.layout);
    const DecoderWeights<T> w = train_weights(params, idx);
    const Tables<T> tab = make_tables<T>(w.shape, c.context);
    const long scored = train_runs::scored_targets(batch);
    const T weight = T(1) / T(scored);
    const int B = batch.B, n = batch.n;
    if (per_token_loss) per_token_loss->assign(std::size_t(B) * std::size_t(n), 0.0);
    std::vector<double> seq_loss(std::size_t(B), 0.0);
    // The batch in `chunks` contiguous runs of sequences (one per thread), each run in sub-batches of
    // at most `group` sequences whose rows go through every matrix product together; one gradient
    // partial per run, summed in run order: deterministic for a thread count.
    const std::size_t row_floats = std::size_t(c.vocab_size) + 64 * std::size_t(c.d_model) +
                                   std::size_t(c.n_layer) * std::size_t(c.n_head) * std::size_t(n);
    const int max_rows = int(std::max<std::size_t>(
        std::size_t(n), std::min<std::size_t>(2048, (std::size_t(64) << 20) / 4 / row_floats)));
    const int group = std::max(1, max_rows / n);
    // A run holds a gradient partial and one sub-batch's activations and their gradients: at most
    // 2 GiB of them together, whatever the thread count (more runs than that would only wait anyway).
    const std::size_t run_bytes = (grad ? params.data.size() : 0) * sizeof(T) +
                                  2 * std::size_t(group) * std::size_t(n) * row_floats * sizeof(T);
    const std::size_t run_limit = std::max<std::size_t>(1, (std::size_t(2) << 30) / run_bytes);
    const int chunks = std::max(1, std::min({threads, B, int(std::min<std::size_t>(run_limit, 4096))}));
    std::vector<std::vector<T>> partial(grad ? std::size_t(chunks) : 0);
    if (grad) partial[0].swap(grad->data);
    parallel_for(chunks, threads, [&](int k) {
        const int b0 = int(std::int64_t(B) * k / chunks), b1 = int(std::int64_t(B) * (k + 1) / chunks);
        if (grad) partial[std::size_t(k)].assign(params.data.size(), T(0));  // (run 0 reuses grad's memory)
        SeqActs<T> A;
        for (int g0 = b0; g0 < b1; g0 += group) {
            const int S = std::min(group, b1 - g0);
            const int* ids = batch.inputs.data() + std::size_t(g0) * std::size_t(n);
            const int* tg = batch.targets.data() + std::size_t(g0) * std::size_t(n);
            sequence_forward(w, tab, ids, S, n, A);
            train_runs::score_sequences(A.logits, tg, g0, S, n, seq_loss, per_token_loss);
            if (grad) sequence_backward(params, idx, tab, ids, tg, S, n, weight, A, partial[std::size_t(k)]);
        }
    });
    return train_runs::finish_runs(params, grad, partial, seq_loss, scored);
}

}  // namespace attnviz

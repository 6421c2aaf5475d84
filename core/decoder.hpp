// The one decoder forward: every decoder-only model -- trained here (core/train.cpp, which also runs
// its backward on the activations kept here) or opened from a Hugging Face folder (core/model.cpp) --
// goes through decoder_forward(), built from the ops of core/nn_ops.hpp.
//
// A model is seen through a DecoderWeights view: pointers into the trainer's parameter buffer or into a
// mapped checkpoint, never a copy. q, k and v are separate linear maps (each possibly a slice of a
// fused c_attn), so grouped-query attention (n_kv_head < n_head) needs nothing special.
//
// Hook points (TransformerLens's HookPoint): at each named stage the forward calls the caller's hook
// with the value, which the hook may read (recording), overwrite (patching) or zero in part
// (ablation); the forward goes on from whatever the hook left. With no hooks the forward records
// nothing and allocates nothing for them.
//
// Shapes: S sequences of n tokens, rows = S·n, d = d_model, h = n_head, g = n_kv_head, dh = d_head,
// f = d_ff, V = vocabulary. qkv [rows, (h + 2g)·dh] holds q | k | v.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/model.hpp"
#include "core/nn_ops.hpp"

namespace attnviz {

// ---------------------------------------------------------------------------------------------
// Hook points
// ---------------------------------------------------------------------------------------------

/// The named stages of a block and of the model's end, in the order the forward reaches them. The
/// names are `attnviz dump`'s stage names.
enum class HookStage : int {
    ln_1,
    Q,            // per query head [n, dh], after RoPE
    K,            // per key/value head [n, dh], after RoPE
    V,            // per key/value head [n, dh]
    scores,       // per query head [n, n]: Q·Kᵀ unscaled, every (i, j) (the hidden ones too)
    weights,      // per query head [n, n]: softmax of the masked, scaled scores
    head_output,  // per query head [n, dh]: weights·V, before the output projection
    attn_out,
    resid_mid,
    ln_2,
    mlp_out,
    resid_post,
    ln_f,    // layer −1
    logits,  // layer −1
    count
};
const char* hook_stage_name(HookStage stage);
/// True for the stages called once per head (Q, K, V, scores, weights, head_output).
bool hook_stage_per_head(HookStage stage);

/// Where a hook is called: the stage, its layer (−1 for ln_f and logits) and head (−1 for a whole-layer
/// stage; the key/value head for K and V); for a per-head stage also the sequence of the batch (a
/// whole-layer stage holds every sequence's rows, seq −1).
struct HookPoint {
    HookStage stage = HookStage::ln_1;
    int layer = -1;
    int head = -1;
    int seq = -1;
};

/// Which points to call and the function to call there. The per-head stages of one layer are called
/// from several threads at once (one per head); every other stage from the forward's own thread.
template <typename T>
struct ForwardHooks {
    std::vector<std::uint32_t> layer_stages;  // per layer: bit s set = call stage s there
    std::uint32_t end_stages = 0;             // bits of ln_f and logits
    std::function<void(const HookPoint&, nn::Block<T> value)> call;

    static std::uint32_t bit(HookStage s) { return std::uint32_t(1) << int(s); }
    bool wants(HookStage s, int layer) const {
        if (!call) return false;
        if (layer < 0) return (end_stages & bit(s)) != 0;
        return std::size_t(layer) < layer_stages.size() && (layer_stages[std::size_t(layer)] & bit(s)) != 0;
    }
    /// Asks for stage s at `layer` (−1: the end stages).
    void add(HookStage s, int layer) {
        if (layer < 0) {
            end_stages |= bit(s);
            return;
        }
        if (layer_stages.size() <= std::size_t(layer)) layer_stages.resize(std::size_t(layer) + 1, 0);
        layer_stages[std::size_t(layer)] |= bit(s);
    }
};

// ---------------------------------------------------------------------------------------------
// The model as the forward sees it
// ---------------------------------------------------------------------------------------------

template <typename T>
struct LinearW {
    const T* w = nullptr;
    const T* b = nullptr;  // [out] or null
    nn::LinearShape s;
};
template <typename T>
struct NormW {
    const T* w = nullptr;
    const T* b = nullptr;  // LayerNorm's bias, or null
};
template <typename T>
struct BlockW {
    NormW<T> ln_1, ln_2;
    LinearW<T> q, k, v, o;  // q: d → h·dh, k, v: d → g·dh, o: h·dh → d
    LinearW<T> fc;          // GELU: d → f; SwiGLU / GeGLU: the gate, d → f
    LinearW<T> up;          // SwiGLU / GeGLU: the up projection, d → f (unused for GELU)
    LinearW<T> proj;        // f → d
};

/// Two linear maps of the same input whose weights (and biases) lie side by side in one tensor, as one
/// map with both outputs (GPT-2's fused c_attn, the trainer's gate | up): one product instead of two,
/// every element the same sum. Empty (w null) when they are not side by side.
template <typename T>
LinearW<T> adjacent(const LinearW<T>& a, const LinearW<T>& b) {
    if (!a.w || !b.w || a.s.in != b.s.in || a.s.out_in != b.s.out_in || a.s.stride() != b.s.stride())
        return {};
    const long step = a.s.out_in ? long(a.s.out) * a.s.stride() : long(a.s.out);
    if (b.w != a.w + step) return {};
    if ((a.b == nullptr) != (b.b == nullptr) || (a.b && b.b != a.b + a.s.out)) return {};
    return LinearW<T>{a.w, a.b, nn::LinearShape{a.s.in, a.s.out + b.s.out, a.s.out_in, a.s.stride()}};
}

/// Sizes and kinds, every Auto resolved.
struct DecoderShape {
    int n_layer = 0, n_head = 0, n_kv_head = 0, d_model = 0, d_head = 0, d_ff = 0, vocab = 0;
    int context = 0;  // positions the tables and the learned embedding hold
    NormKind norm = NormKind::None;
    MlpKind mlp = MlpKind::None;
    PositionKind positions = PositionKind::Learned;
    double eps = 1e-5;
    double theta = 10000.0;    // RoPE's base, and the sinusoids'
    double embed_scale = 1.0;  // token embeddings times this (Gemma: √d); the trainer's models keep 1
};

template <typename T>
struct DecoderWeights {
    DecoderShape shape;
    const T* wte = nullptr;  // [V, d], row stride wte_ld
    long wte_ld = 0;
    const T* wpe = nullptr;  // [context, d] (learned positions), row stride wpe_ld
    long wpe_ld = 0;
    std::vector<BlockW<T>> blocks;
    NormW<T> ln_f;
    const T* unembed = nullptr;  // [V, d] nn.Linear layout, row stride unembed_ld (wte's memory when tied)
    long unembed_ld = 0;
};

/// Position tables for n positions: sinusoids [n, d] or RoPE's cos, sin [n, dh/2].
template <typename T>
struct Tables {
    nn::M<T> sinusoid;
    nn::M<T> rope_cos, rope_sin;
};
template <typename T>
Tables<T> make_tables(const DecoderShape& s, int positions) {
    Tables<T> t;
    if (s.positions == PositionKind::Sinusoidal)
        t.sinusoid = nn::sinusoid_table<T>(positions, s.d_model, s.theta);
    if (s.positions == PositionKind::Rope)
        nn::rope_tables<T>(positions, s.d_head, t.rope_cos, t.rope_sin, s.theta);
    return t;
}

/// What one block leaves behind (all of it kept for the trainer's backward).
template <typename T>
struct LayerActs {
    nn::M<T> in;                // [rows, d] residual entering the block
    nn::M<T> a;                 // [rows, d] ln_1 output (or `in` without norm)
    nn::M<T> xhat;              // [rows, d] normalised input (norms only)
    std::vector<T> rstd;        // [rows]
    nn::M<T> qkv;               // [rows, (h + 2g)·dh] (q and k after RoPE)
    std::vector<nn::M<T>> att;  // [S·h][n, n] softmax weights (sequence s, head j at s·h + j)
    nn::M<T> y;                 // [rows, h·dh] heads concatenated
    nn::M<T> mid;               // [rows, d] residual after attention
    nn::M<T> a2;                // [rows, d] ln_2 output (MLP only)
    nn::M<T> xhat2;             // [rows, d]
    std::vector<T> rstd2;       // [rows]
    nn::M<T> pre;               // [rows, f] GELU input, or [rows, 2f] SwiGLU / GeGLU gate | up
    nn::M<T> act;               // [rows, f] GELU output or gated product: the down projection's input
};

template <typename T>
struct SeqActs {
    std::vector<LayerActs<T>> layers;  // n_layer entries (keep_layers), else one reused by every block
    nn::M<T> x_final;                  // [rows, d] residual after the last block
    nn::M<T> f;                        // [rows, d] ln_f output (or x_final)
    nn::M<T> fhat;                     // [rows, d]
    std::vector<T> frstd;              // [rows]
    nn::M<T> logits;                   // [rows, V], or [S, V] (the last row of each sequence)
};

template <typename T>
struct ForwardOptions {
    bool keep_layers = true;   // every block's activations (the backward needs them)
    bool last_logits = false;  // logits of each sequence's last row only
    int threads = 1;           // within the forward: heads and matrix columns in parallel
    const ForwardHooks<T>* hooks = nullptr;
    const std::atomic<bool>* cancel = nullptr;  // checked between blocks: Cancelled
    /// Resuming a forward (interventions, core/interventions.hpp): start at block `first_layer` from
    /// `resume` [S·n, d], the residual entering that block, instead of the embeddings of `ids`.
    int first_layer = 0;
    const nn::M<T>* resume = nullptr;
    bool skip_logits = false;  // stop after the final norm (A.f): the caller unembeds what it needs
};

/// The residual entering block 0: x [S·n, d] = wte[ids] (× embed_scale) (+ wpe[0..n) or sinusoids, per
/// sequence).
template <typename T>
nn::M<T> decoder_embed(const DecoderWeights<T>& w, const Tables<T>& tab, const int* ids, int S, int n) {
    using namespace nn;
    const DecoderShape& c = w.shape;
    const int d = c.d_model, rows = S * n;
    M<T> x(rows, d);
    for (int t = 0; t < rows; ++t) x.row(t) = Eigen::Map<const RowT<T>>(w.wte + long(ids[t]) * w.wte_ld, d);
    if (c.embed_scale != 1.0) x *= T(c.embed_scale);
    for (int s = 0; s < S; ++s)
        for (int t = 0; t < n; ++t) {
            if (c.positions == PositionKind::Learned)
                x.row(s * n + t) += Eigen::Map<const RowT<T>>(w.wpe + long(t) * w.wpe_ld, d);
            if (c.positions == PositionKind::Sinusoidal) x.row(s * n + t) += tab.sinusoid.row(t);
        }
    return x;
}

/// The forward of S sequences of n tokens (ids [S, n]), every row-wise step and linear map on all
/// rows at once, attention per sequence and head. `tab` holds at least n positions. With
/// opt.resume, ids are not read (may be null) and blocks before opt.first_layer are not run.
template <typename T>
void decoder_forward(const DecoderWeights<T>& w, const Tables<T>& tab, const int* ids, int S, int n,
                     SeqActs<T>& A, const ForwardOptions<T>& opt) {
    using namespace nn;
    const DecoderShape& c = w.shape;
    const int d = c.d_model, V = c.vocab, h = c.n_head, g = c.n_kv_head, dh = c.d_head;
    const int group = h / g, qkv_w = (h + 2 * g) * dh, threads = std::max(1, opt.threads);
    const bool norms = c.norm != NormKind::None, rms = c.norm == NormKind::RMSNorm;
    const ForwardHooks<T>* hooks = opt.hooks;
    auto wants = [&](HookStage s, int l) { return hooks && hooks->wants(s, l); };
    auto hook = [&](HookStage s, int l, int head, T* p, int r, int cols, long ld, int seq = -1) {
        hooks->call(HookPoint{s, l, head, seq}, Block<T>(p, r, cols, Eigen::OuterStride<>(ld)));
    };
    auto hook_all = [&](HookStage s, int l, M<T>& m) {
        if (wants(s, l)) hook(s, l, -1, m.data(), int(m.rows()), int(m.cols()), long(m.cols()));
    };
    const T scale = T(1) / std::sqrt(T(dh));

    // embeddings (or the residual the caller resumes from): x [rows, d]
    const int rows = S * n;
    M<T> x = opt.resume ? *opt.resume : decoder_embed(w, tab, ids, S, n);
    A.layers.resize(opt.keep_layers ? std::size_t(c.n_layer) : std::size_t(1));
    for (int l = opt.resume ? std::max(0, opt.first_layer) : 0; l < c.n_layer; ++l) {
        if (opt.cancel && opt.cancel->load()) throw Cancelled();
        const BlockW<T>& b = w.blocks[std::size_t(l)];
        LayerActs<T>& L = A.layers[opt.keep_layers ? std::size_t(l) : 0];
        L.in = std::move(x);
        // ln_1
        if (norms)
            norm_forward(L.in, b.ln_1.w, b.ln_1.b, rms, c.eps, L.a, L.xhat, L.rstd);
        else
            L.a = L.in;
        hook_all(HookStage::ln_1, l, L.a);
        // q | k | v [rows, (h + 2g)·dh], RoPE on q and k
        L.qkv.resize(rows, qkv_w);
        if (const LinearW<T> fused = adjacent(adjacent(b.q, b.k), b.v); fused.w) {  // one fused c_attn
            linear_forward(rows, L.a.data(), d, fused.w, fused.b, fused.s, L.qkv.data(), qkv_w, threads);
        } else {
            linear_forward(rows, L.a.data(), d, b.q.w, b.q.b, b.q.s, L.qkv.data(), qkv_w, threads);
            linear_forward(rows, L.a.data(), d, b.k.w, b.k.b, b.k.s, L.qkv.data() + h * dh, qkv_w, threads);
            linear_forward(rows, L.a.data(), d, b.v.w, b.v.b, b.v.s, L.qkv.data() + (h + g) * dh, qkv_w,
                           threads);
        }
        if (c.positions == PositionKind::Rope) {
            rope_apply(L.qkv.data(), rows, qkv_w, h, dh, n, tab.rope_cos, tab.rope_sin, T(1));
            rope_apply(L.qkv.data() + h * dh, rows, qkv_w, g, dh, n, tab.rope_cos, tab.rope_sin, T(1));
        }
        const HookStage qkv_stages[] = {HookStage::Q, HookStage::K, HookStage::V};
        for (int part = 0; part < 3; ++part)
            if (wants(qkv_stages[part], l))
                for (int s = 0; s < S; ++s)
                    for (int j = 0; j < (part == 0 ? h : g); ++j)
                        hook(qkv_stages[part], l, j,
                             L.qkv.data() + long(s) * n * qkv_w + (part == 0 ? 0 : h + (part - 1) * g) * dh +
                                 j * dh,
                             n, dh, qkv_w, s);
        // attention, per sequence and head
        L.att.resize(std::size_t(S) * std::size_t(h));
        L.y.resize(rows, h * dh);
        const bool hook_scores = wants(HookStage::scores, l), hook_weights = wants(HookStage::weights, l),
                   hook_out = wants(HookStage::head_output, l);
        parallel_for(S * h, std::min(threads, S * h), [&](int task) {
            const int s = task / h, j = task % h, kv = j / group;
            const T* Q = L.qkv.data() + long(s) * n * qkv_w + j * dh;
            const T* K = L.qkv.data() + long(s) * n * qkv_w + (h + kv) * dh;
            const T* Vh = L.qkv.data() + long(s) * n * qkv_w + (h + g + kv) * dh;
            M<T>& P = L.att[std::size_t(task)];
            T* y = L.y.data() + long(s) * n * h * dh + j * dh;
            if (!hook_scores && !hook_weights) {  // the same values, in blocks of rows that stay in cache
                attention_head(n, dh, dh, Q, qkv_w, K, qkv_w, Vh, qkv_w, opt.keep_layers ? &P : nullptr,
                               scale, y, long(h) * dh);
                if (hook_out) hook(HookStage::head_output, l, j, y, n, dh, long(h) * dh, s);
                return;
            }
            P.resize(n, n);
            attention_scores(n, dh, Q, qkv_w, K, qkv_w, P.data(), hook_scores);
            if (hook_scores) hook(HookStage::scores, l, j, P.data(), n, n, n, s);
            causal_softmax(P, scale);
            if (hook_weights) hook(HookStage::weights, l, j, P.data(), n, n, n, s);
            attention_combine(n, dh, P, Vh, qkv_w, y, long(h) * dh);
            if (hook_out) hook(HookStage::head_output, l, j, y, n, dh, long(h) * dh, s);
        });
        // output projection, residual
        M<T> o(rows, d);  // [rows, d]
        linear_forward(rows, L.y.data(), long(h) * dh, b.o.w, b.o.b, b.o.s, o.data(), d, threads);
        hook_all(HookStage::attn_out, l, o);
        L.mid = L.in + o;
        hook_all(HookStage::resid_mid, l, L.mid);
        if (c.mlp == MlpKind::None) {
            x = L.mid;
            hook_all(HookStage::resid_post, l, x);
            continue;
        }
        // ln_2, MLP, residual
        if (norms)
            norm_forward(L.mid, b.ln_2.w, b.ln_2.b, rms, c.eps, L.a2, L.xhat2, L.rstd2);
        else
            L.a2 = L.mid;
        hook_all(HookStage::ln_2, l, L.a2);
        const int f = c.d_ff;
        if (c.mlp == MlpKind::Gelu) {
            L.pre.resize(rows, f);
            linear_forward(rows, L.a2.data(), d, b.fc.w, b.fc.b, b.fc.s, L.pre.data(), f, threads);
            gelu_forward(L.pre, L.act);
        } else {
            L.pre.resize(rows, 2 * f);
            if (const LinearW<T> fused = adjacent(b.fc, b.up); fused.w) {  // gate | up in one tensor
                linear_forward(rows, L.a2.data(), d, fused.w, fused.b, fused.s, L.pre.data(), 2 * f, threads);
            } else {
                linear_forward(rows, L.a2.data(), d, b.fc.w, b.fc.b, b.fc.s, L.pre.data(), 2 * f, threads);
                linear_forward(rows, L.a2.data(), d, b.up.w, b.up.b, b.up.s, L.pre.data() + f, 2 * f,
                               threads);
            }
            if (c.mlp == MlpKind::GeGLU)
                geglu_forward(L.pre, L.act);
            else
                swiglu_forward(L.pre, L.act);
        }
        linear_forward(rows, L.act.data(), f, b.proj.w, b.proj.b, b.proj.s, o.data(), d, threads);
        hook_all(HookStage::mlp_out, l, o);
        x = L.mid + o;
        hook_all(HookStage::resid_post, l, x);
    }
    A.x_final = std::move(x);
    // ln_f, unembedding: logits [rows, V] (or each sequence's last row) = f·Uᵀ, U = unembed [V, d]
    if (norms)
        norm_forward(A.x_final, w.ln_f.w, w.ln_f.b, rms, c.eps, A.f, A.fhat, A.frstd);
    else
        A.f = A.x_final;
    hook_all(HookStage::ln_f, -1, A.f);
    if (opt.skip_logits) {
        A.logits.resize(0, 0);
        return;
    }
    const LinearShape us{d, V, true, w.unembed_ld};
    if (opt.last_logits) {
        A.logits.resize(S, V);
        for (int s = 0; s < S; ++s)
            linear_forward(1, A.f.data() + (long(s) * n + n - 1) * d, d, w.unembed,
                           static_cast<const T*>(nullptr), us, A.logits.data() + long(s) * V, V, threads);
    } else {
        A.logits.resize(rows, V);
        linear_forward(rows, A.f.data(), d, w.unembed, static_cast<const T*>(nullptr), us, A.logits.data(), V,
                       threads);
    }
    hook_all(HookStage::logits, -1, A.logits);
}

/// A Hugging Face model (core/model.hpp) as the forward sees it: views of its weights.
DecoderWeights<float> decoder_weights(const ModelWeights& model);

}  // namespace attnviz

// The one decoder forward: every decoder-only model -- trained here (core/train.cpp, which also runs
// its backward on the activations kept here) or opened from a Hugging Face folder (core/model.cpp) --
// goes through decoder_forward(), built from the ops of core/nn_ops.hpp. Encoders run through it too:
// DecoderShape's causal = false (bidirectional attention), post_norm (BERT's blocks), the embeddings'
// LayerNorm, token types, a position offset and a masked-LM head are options whose defaults are a
// decoder's.
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
    // an encoder–decoder's decoder block: cross-attention, queries from the target (n rows), keys and
    // values from the encoder's output (m rows)
    cross_Q,            // per head [n, dh]
    cross_K,            // per head [m, dh]
    cross_V,            // per head [m, dh]
    cross_scores,       // per head [n, m]: Q·Kᵀ unscaled
    cross_weights,      // per head [n, m]: softmax of the scaled scores
    cross_head_output,  // per head [n, dh]
    cross_attn_out,     // [n, d] after the output projection
    ln_2,
    mlp_out,
    resid_post,
    position_bias,  // layer −1, per head [n, n]: T5's relative position bias added to every layer's scores
    ln_f,           // layer −1
    logits,         // layer −1
    count
};
const char* hook_stage_name(HookStage stage);
/// True for the stages called once per head (Q, K, V, scores, weights, head_output, their cross_
/// counterparts and position_bias).
bool hook_stage_per_head(HookStage stage);

/// Which stack of an encoder–decoder a hook point is in (a decoder-only model's is Decoder).
enum class StackKind { Decoder, Encoder };

/// Where a hook is called: the stage, its layer (−1 for ln_f and logits) and head (−1 for a whole-layer
/// stage; the key/value head for K and V); for a per-head stage also the sequence of the batch (a
/// whole-layer stage holds every sequence's rows, seq −1).
struct HookPoint {
    HookStage stage = HookStage::ln_1;
    int layer = -1;
    int head = -1;
    int seq = -1;
    StackKind stack = StackKind::Decoder;
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
    NormW<T> ln_cross;      // cross-attention (shape.cross): its norm,
    LinearW<T> cq, ck, cv;  // cq: d → h·dh on the target, ck, cv: d → h·dh on the source,
    LinearW<T> co;          // co: h·dh → d
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
    // Encoders and encoder–decoders (BERT, BART, T5); the defaults are a decoder's.
    bool causal = true;       // false: softmax over every key, no mask (bidirectional attention)
    bool post_norm = false;   // x = LN(x + attn(x)); x = LN(x + mlp(x)) with ln_1, ln_2 (BERT, BART)
    int position_offset = 0;  // token t reads learned position row t + offset (RoBERTa: pad + 1; BART: 2)
    MlpKind head_act = MlpKind::GeluErf;  // activation of DecoderWeights::head (Gelu or GeluErf)
    // Encoder–decoders (core/seq2seq.hpp):
    bool scale_scores = true;  // scores × 1/√dh before the softmax (T5: no)
    int rel_buckets = 0;       // T5's relative position bias (weights.rel_bias): buckets, max distance
    int rel_max_distance = 0;
    bool cross = false;        // every block has a cross-attention to ForwardOptions::source
    double logit_scale = 1.0;  // f·Uᵀ × this, before unembed_b (T5 with tied embeddings: d^−½)
};

template <typename T>
struct DecoderWeights {
    DecoderShape shape;
    const T* wte = nullptr;  // [V, d], row stride wte_ld
    long wte_ld = 0;
    const T* wpe = nullptr;  // [context, d] (learned positions), row stride wpe_ld
    long wpe_ld = 0;
    std::vector<BlockW<T>> blocks;
    NormW<T> ln_f;               // null w: no final norm (post-norm models without one)
    const T* unembed = nullptr;  // [V, d] nn.Linear layout, row stride unembed_ld (wte's memory when tied)
    long unembed_ld = 0;
    const T* unembed_b = nullptr;  // [V] added to the logits (BERT's cls.predictions.bias), or null
    const T* wtt = nullptr;        // [types, d] token-type (segment) embeddings, row stride wtt_ld, or null
    long wtt_ld = 0;
    NormW<T> ln_embed;  // LayerNorm of the summed embeddings (BERT, BART), or null w
    LinearW<T> head;    // d → d then head_act, before ln_f (a masked-LM head's transform), or null w
    const T* rel_bias = nullptr;  // [rel_buckets, h] T5's relative_attention_bias (shape.rel_buckets > 0)
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
    // post-norm blocks: xhat, rstd are ln_1's of in + attn; xhat2, rstd2 ln_2's of mid + mlp; a = in
    nn::M<T> pre;  // [rows, f] GELU input, or [rows, 2f] SwiGLU / GeGLU gate | up
    nn::M<T> act;  // [rows, f] GELU output or gated product: the down projection's input
    // cross-attention (shape.cross), source rows = S·m
    nn::M<T> ac;                 // [rows, d] its norm's output (its queries' input)
    nn::M<T> xhatc;              // [rows, d]
    std::vector<T> rstdc;        // [rows]
    nn::M<T> cq;                 // [rows, h·dh] queries
    nn::M<T> ckv;                // [S·m, 2·h·dh] keys | values of the source
    std::vector<nn::M<T>> catt;  // [S·h][n, m] weights
    nn::M<T> cy;                 // [rows, h·dh] heads concatenated
    nn::M<T> cmid;               // [rows, d] residual after the cross-attention (the MLP's input side)
};

template <typename T>
struct SeqActs {
    std::vector<LayerActs<T>> layers;  // n_layer entries (keep_layers), else one reused by every block
    nn::M<T> x_final;                  // [rows, d] residual after the last block
    nn::M<T> head_pre;                 // [rows, d] the head's dense output, before head_act (with a head)
    nn::M<T> f;                        // [rows, d] ln_f output (or x_final, or the head's activation)
    nn::M<T> fhat;                     // [rows, d]
    std::vector<T> frstd;              // [rows]
    nn::M<T> logits;                   // [rows, V], or [S, V] (the last row of each sequence)
    std::vector<nn::M<T>> pos_bias;    // [h][n, n] T5's relative position bias (rel_bias only)
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
    bool skip_logits = false;          // stop after the final norm (A.f): the caller unembeds what it needs
    const int* token_types = nullptr;  // [S·n] segment of each token (rows of wtt); null: all 0
    /// An encoder–decoder (core/seq2seq.hpp): the stack its hook points name, and for the decoder
    /// (shape.cross) the encoder's output [S·m, d], m = source_n rows per sequence.
    StackKind stack = StackKind::Decoder;
    const nn::M<T>* source = nullptr;
    int source_n = 0;
    /// Padded sources [S]: sequence s's first key_lengths[s] tokens are real, the rest padding that no
    /// query attends to -- in the bidirectional self-attention (the encoder, over its own input) and in
    /// the cross-attention (the decoder, over the source). Null: every token is real.
    const int* key_lengths = nullptr;
};

/// The residual entering block 0: x [S·n, d] = wte[ids] (× embed_scale) (+ wtt[types]) (+ wpe[offset +
/// 0..n) or sinusoids, per sequence), then the embeddings' LayerNorm where the model has one. types
/// [S·n] may be null (all 0).
template <typename T>
nn::M<T> decoder_embed(const DecoderWeights<T>& w, const Tables<T>& tab, const int* ids, int S, int n,
                       const int* types = nullptr) {
    using namespace nn;
    const DecoderShape& c = w.shape;
    const int d = c.d_model, rows = S * n;
    M<T> x(rows, d);
    for (int t = 0; t < rows; ++t) x.row(t) = Eigen::Map<const RowT<T>>(w.wte + long(ids[t]) * w.wte_ld, d);
    if (c.embed_scale != 1.0) x *= T(c.embed_scale);
    if (w.wtt)
        for (int t = 0; t < rows; ++t)
            x.row(t) += Eigen::Map<const RowT<T>>(w.wtt + long(types ? types[t] : 0) * w.wtt_ld, d);
    for (int s = 0; s < S; ++s)
        for (int t = 0; t < n; ++t) {
            if (c.positions == PositionKind::Learned)
                x.row(s * n + t) +=
                    Eigen::Map<const RowT<T>>(w.wpe + long(t + c.position_offset) * w.wpe_ld, d);
            if (c.positions == PositionKind::Sinusoidal) x.row(s * n + t) += tab.sinusoid.row(t);
        }
    if (w.ln_embed.w) {
        M<T> y, xhat;  // [rows, d]
        std::vector<T> rstd;
        norm_forward(x, w.ln_embed.w, w.ln_embed.b, c.norm == NormKind::RMSNorm, c.eps, y, xhat, rstd);
        return y;
    }
    return x;
}

/// One block's cross-attention (shape.cross): L.cmid [S·n, d] = L.mid + co(heads) (post-norm: its
/// LayerNorm), each head
/// softmax(q·kᵀ·scale)·v with q from the norm of L.mid (cq) and k, v from `source` [S·m, d] (ck, cv);
/// every key of the source, no mask. Keeps what a backward needs in L (ac, cq, ckv, catt, cy).
template <typename T, typename Hook, typename Wants>
void cross_attention_block(const DecoderWeights<T>& w, const BlockW<T>& b, LayerActs<T>& L, int l, int S,
                           int n, const nn::M<T>& source, int m, T scale, const ForwardOptions<T>& opt,
                           const Hook& hook, const Wants& wants) {
    using namespace nn;
    const DecoderShape& c = w.shape;
    const int d = c.d_model, h = c.n_head, dh = c.d_head, hd = h * dh, rows = S * n;
    const int threads = std::max(1, opt.threads);
    const bool rms = c.norm == NormKind::RMSNorm;
    if (c.norm != NormKind::None && !c.post_norm)
        norm_forward(L.mid, b.ln_cross.w, b.ln_cross.b, rms, c.eps, L.ac, L.xhatc, L.rstdc);
    else
        L.ac = L.mid;       // (a post-norm block's cross-attention reads resid_mid as it is)
    L.cq.resize(rows, hd);  // [S·n, h·dh]
    linear_forward(rows, L.ac.data(), d, b.cq.w, b.cq.b, b.cq.s, L.cq.data(), hd, threads);
    L.ckv.resize(long(S) * m, 2 * hd);  // [S·m, 2·h·dh]: k | v
    if (const LinearW<T> fused = adjacent(b.ck, b.cv); fused.w) {
        linear_forward(S * m, source.data(), d, fused.w, fused.b, fused.s, L.ckv.data(), 2 * hd, threads);
    } else {
        linear_forward(S * m, source.data(), d, b.ck.w, b.ck.b, b.ck.s, L.ckv.data(), 2 * hd, threads);
        linear_forward(S * m, source.data(), d, b.cv.w, b.cv.b, b.cv.s, L.ckv.data() + hd, 2 * hd, threads);
    }
    for (int s = 0; s < S; ++s)
        for (int j = 0; j < h; ++j) {
            if (wants(HookStage::cross_Q, l))
                hook(HookStage::cross_Q, l, j, L.cq.data() + long(s) * n * hd + j * dh, n, dh, hd, s);
            T* kv = L.ckv.data() + long(s) * m * 2 * hd + j * dh;
            if (wants(HookStage::cross_K, l)) hook(HookStage::cross_K, l, j, kv, m, dh, 2 * hd, s);
            if (wants(HookStage::cross_V, l)) hook(HookStage::cross_V, l, j, kv + hd, m, dh, 2 * hd, s);
        }
    L.catt.resize(std::size_t(S) * std::size_t(h));
    L.cy.resize(rows, hd);
    const bool hook_scores = wants(HookStage::cross_scores, l),
               hook_weights = wants(HookStage::cross_weights, l),
               hook_out = wants(HookStage::cross_head_output, l);
    parallel_for(S * h, std::min(threads, S * h), [&](int task) {
        const int s = task / h, j = task % h;
        const T* Q = L.cq.data() + long(s) * n * hd + j * dh;
        const T* K = L.ckv.data() + long(s) * m * 2 * hd + j * dh;
        M<T>& P = L.catt[std::size_t(task)];
        P.resize(n, m);
        cross_attention_scores(n, m, dh, Q, hd, K, 2 * hd, P.data());
        if (hook_scores) hook(HookStage::cross_scores, l, j, P.data(), n, m, m, s);
        biased_softmax(P, scale, static_cast<const T*>(nullptr), false,
                       opt.key_lengths ? opt.key_lengths[s] : -1);
        if (hook_weights) hook(HookStage::cross_weights, l, j, P.data(), n, m, m, s);
        T* y = L.cy.data() + long(s) * n * hd + j * dh;
        cross_attention_combine(n, m, dh, P, K + hd, 2 * hd, y, hd);
        if (hook_out) hook(HookStage::cross_head_output, l, j, y, n, dh, hd, s);
    });
    M<T> o(rows, d);  // [rows, d]
    linear_forward(rows, L.cy.data(), hd, b.co.w, b.co.b, b.co.s, o.data(), d, threads);
    if (wants(HookStage::cross_attn_out, l)) hook(HookStage::cross_attn_out, l, -1, o.data(), rows, d, d);
    if (c.post_norm) {               // cmid = LN(mid + cross): xhatc, rstdc are this norm's
        const M<T> sum = L.mid + o;  // [rows, d]
        norm_forward(sum, b.ln_cross.w, b.ln_cross.b, rms, c.eps, L.cmid, L.xhatc, L.rstdc);
    } else {
        L.cmid = L.mid + o;
    }
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
    const bool pre_norm = norms && !c.post_norm;
    const ForwardHooks<T>* hooks = opt.hooks;
    auto wants = [&](HookStage s, int l) { return hooks && hooks->wants(s, l); };
    auto hook = [&](HookStage s, int l, int head, T* p, int r, int cols, long ld, int seq = -1) {
        hooks->call(HookPoint{s, l, head, seq, opt.stack}, Block<T>(p, r, cols, Eigen::OuterStride<>(ld)));
    };
    auto hook_all = [&](HookStage s, int l, M<T>& m) {
        if (wants(s, l)) hook(s, l, -1, m.data(), int(m.rows()), int(m.cols()), long(m.cols()));
    };
    const T scale = c.scale_scores ? T(1) / std::sqrt(T(dh)) : T(1);
    if (c.cross && (!opt.source || opt.source_n <= 0 || opt.source->rows() != long(S) * opt.source_n))
        throw Error("decoder_forward: a cross-attention needs the encoder's output");
    // T5's relative position bias [h][n, n], the same for every layer
    if (w.rel_bias) {
        A.pos_bias =
            relative_position_bias<T>(n, n, h, w.rel_bias, !c.causal, c.rel_buckets, c.rel_max_distance);
        if (wants(HookStage::position_bias, -1))
            for (int j = 0; j < h; ++j)
                hook(HookStage::position_bias, -1, j, A.pos_bias[std::size_t(j)].data(), n, n, n);
    } else {
        A.pos_bias.clear();
    }

    // embeddings (or the residual the caller resumes from): x [rows, d]
    const int rows = S * n;
    M<T> x = opt.resume ? *opt.resume : decoder_embed(w, tab, ids, S, n, opt.token_types);
    A.layers.resize(opt.keep_layers ? std::size_t(c.n_layer) : std::size_t(1));
    for (int l = opt.resume ? std::max(0, opt.first_layer) : 0; l < c.n_layer; ++l) {
        if (opt.cancel && opt.cancel->load()) throw Cancelled();
        const BlockW<T>& b = w.blocks[std::size_t(l)];
        LayerActs<T>& L = A.layers[opt.keep_layers ? std::size_t(l) : 0];
        L.in = std::move(x);
        // ln_1 (a post-norm block's attention reads its input as it is)
        if (pre_norm)
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
            // Inference (no kept layers: the viewer, the interventions), causal, no position bias, nobody
            // looking at the scores or weights: the same values, in blocks of rows that stay in cache.
            // The trainer (keep_layers) keeps the three steps below.
            if (!opt.keep_layers && !hook_scores && !hook_weights && c.causal && A.pos_bias.empty()) {
                attention_head(n, dh, dh, Q, qkv_w, K, qkv_w, Vh, qkv_w, static_cast<M<T>*>(nullptr), scale,
                               y, long(h) * dh);
                if (hook_out) hook(HookStage::head_output, l, j, y, n, dh, long(h) * dh, s);
                return;
            }
            P.resize(n, n);
            const T* bias = A.pos_bias.empty() ? nullptr : A.pos_bias[std::size_t(j)].data();
            attention_scores(n, dh, Q, qkv_w, K, qkv_w, P.data(), hook_scores || !c.causal);
            if (hook_scores) hook(HookStage::scores, l, j, P.data(), n, n, n, s);
            const int keys = opt.key_lengths && !c.causal ? opt.key_lengths[s] : -1;
            if (bias || keys >= 0)
                biased_softmax(P, scale, bias, c.causal, keys);
            else if (c.causal)
                causal_softmax(P, scale);
            else
                full_softmax(P, scale);
            if (hook_weights) hook(HookStage::weights, l, j, P.data(), n, n, n, s);
            attention_combine(n, dh, P, Vh, qkv_w, y, long(h) * dh, c.causal);
            if (hook_out) hook(HookStage::head_output, l, j, y, n, dh, long(h) * dh, s);
        });
        // output projection, residual
        M<T> o(rows, d);  // [rows, d]
        linear_forward(rows, L.y.data(), long(h) * dh, b.o.w, b.o.b, b.o.s, o.data(), d, threads);
        hook_all(HookStage::attn_out, l, o);
        if (c.post_norm) {
            const M<T> sum = L.in + o;  // [rows, d]
            norm_forward(sum, b.ln_1.w, b.ln_1.b, rms, c.eps, L.mid, L.xhat, L.rstd);
        } else {
            L.mid = L.in + o;
        }
        hook_all(HookStage::resid_mid, l, L.mid);
        if (c.cross)
            cross_attention_block(w, b, L, l, S, n, *opt.source, opt.source_n, scale, opt, hook, wants);
        const M<T>& mid = c.cross ? L.cmid : L.mid;  // the MLP's residual input
        if (c.mlp == MlpKind::None) {
            x = mid;
            hook_all(HookStage::resid_post, l, x);
            continue;
        }
        // ln_2, MLP, residual (a post-norm block's MLP reads its input as it is)
        if (pre_norm)
            norm_forward(mid, b.ln_2.w, b.ln_2.b, rms, c.eps, L.a2, L.xhat2, L.rstd2);
        else
            L.a2 = mid;
        hook_all(HookStage::ln_2, l, L.a2);
        const int f = c.d_ff;
        if (gelu_mlp(c.mlp) || c.mlp == MlpKind::Relu) {
            L.pre.resize(rows, f);
            linear_forward(rows, L.a2.data(), d, b.fc.w, b.fc.b, b.fc.s, L.pre.data(), f, threads);
            if (c.mlp == MlpKind::Relu)
                relu_forward(L.pre, L.act);
            else if (c.mlp == MlpKind::GeluErf)
                gelu_erf_forward(L.pre, L.act);
            else
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
        if (c.post_norm) {
            const M<T> sum = mid + o;  // [rows, d]
            norm_forward(sum, b.ln_2.w, b.ln_2.b, rms, c.eps, x, L.xhat2, L.rstd2);
        } else {
            x = mid + o;
        }
        hook_all(HookStage::resid_post, l, x);
    }
    A.x_final = std::move(x);
    // a masked-LM head's transform (dense, activation), ln_f, unembedding: logits [rows, V] (or each
    // sequence's last row) = f·Uᵀ (+ b), U = unembed [V, d]
    const M<T>* top = &A.x_final;
    M<T> head_out;  // [rows, d]
    if (w.head.w) {
        linear_forward(A.x_final, w.head.w, w.head.b, w.head.s, A.head_pre, threads);
        if (c.head_act == MlpKind::GeluErf)
            gelu_erf_forward(A.head_pre, head_out);
        else
            gelu_forward(A.head_pre, head_out);
        top = &head_out;
    }
    if (norms && w.ln_f.w)
        norm_forward(*top, w.ln_f.w, w.ln_f.b, rms, c.eps, A.f, A.fhat, A.frstd);
    else
        A.f = *top;
    hook_all(HookStage::ln_f, -1, A.f);
    if (opt.skip_logits) {
        A.logits.resize(0, 0);
        return;
    }
    const LinearShape us{d, V, true, w.unembed_ld};
    const T* unembed_b = c.logit_scale != 1.0 ? nullptr : w.unembed_b;  // (added after the scale)
    if (opt.last_logits) {
        A.logits.resize(S, V);
        for (int s = 0; s < S; ++s)
            linear_forward(1, A.f.data() + (long(s) * n + n - 1) * d, d, w.unembed, unembed_b, us,
                           A.logits.data() + long(s) * V, V, threads);
    } else {
        A.logits.resize(rows, V);
        linear_forward(rows, A.f.data(), d, w.unembed, unembed_b, us, A.logits.data(), V, threads);
    }
    if (c.logit_scale != 1.0) {
        A.logits *= T(c.logit_scale);
        if (w.unembed_b) A.logits.rowwise() += Eigen::Map<const RowT<T>>(w.unembed_b, V);
    }
    hook_all(HookStage::logits, -1, A.logits);
}

/// A Hugging Face model (core/model.hpp) as the forward sees it: views of its weights.
DecoderWeights<float> decoder_weights(const ModelWeights& model);

}  // namespace attnviz

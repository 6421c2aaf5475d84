// run_model(): GPT-2 and Llama-style decoder-only transformers, block by block. See core/model.hpp.
// GCC 12 reports a false -Wmaybe-uninitialized inside its own AVX-512 intrinsics when Eigen packs a
// row-major GEMM operand (as in core/trace.cpp); it is not about our code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "core/model.hpp"

#include "core/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <mutex>
#include <numeric>

#include "core/attention.hpp"
#include "core/decoder.hpp"
#include "core/error.hpp"
#include "core/ops.hpp"
#include "core/sampling.hpp"
#include "core/thread_pool.hpp"

namespace attnviz {

namespace {

std::string dims(int r, int c) {
    return "[" + std::to_string(r) + ", " + std::to_string(c) + "]";
}

void check_ref(const WeightRef& w, int rows, int cols, const std::string& what) {
    if (w.data == nullptr) throw Error("model: " + what + " is missing");
    if (w.rows != rows || w.cols != cols || w.stride < w.cols)
        throw Error("model: " + what + " has shape " + dims(w.rows, w.cols) + ", expected " +
                    dims(rows, cols));
}

void check_linear(const Linear& L, int in, int out, bool bias_required, const std::string& what) {
    if (L.out_in)
        check_ref(L.weight, out, in, what + ".weight");
    else
        check_ref(L.weight, in, out, what + ".weight");
    if (bias_required && L.bias == nullptr) throw Error("model: " + what + ".bias is missing");
}

void check_norm(const Norm& n, int d, bool bias_required, const std::string& what) {
    if (n.weight == nullptr) throw Error("model: " + what + ".weight is missing");
    if (n.dim != d)
        throw Error("model: " + what + " has width " + std::to_string(n.dim) + ", expected " +
                    std::to_string(d));
    if (bias_required && n.bias == nullptr) throw Error("model: " + what + ".bias is missing");
}

}  // namespace

const char* kind_name(NormKind k) {
    switch (k) {
        case NormKind::LayerNorm:
            return "layernorm";
        case NormKind::RMSNorm:
            return "rmsnorm";
        case NormKind::None:
            return "none";
        case NormKind::Auto:
            break;
    }
    return "auto";
}
const char* kind_name(MlpKind k) {
    switch (k) {
        case MlpKind::Gelu:
            return "gelu";
        case MlpKind::SwiGLU:
            return "swiglu";
        case MlpKind::GeGLU:
            return "geglu";
        case MlpKind::GeluErf:
            return "gelu_erf";
        case MlpKind::None:
            return "none";
        case MlpKind::Relu:
            return "relu";
        case MlpKind::Auto:
            break;
    }
    return "auto";
}
const char* kind_name(PositionKind k) {
    switch (k) {
        case PositionKind::Learned:
            return "learned";
        case PositionKind::Sinusoidal:
            return "sinusoidal";
        case PositionKind::Rope:
            return "rope";
        case PositionKind::Relative:
            return "relative";
        case PositionKind::Auto:
            break;
    }
    return "auto";
}

NormKind norm_kind(const ModelSpec& s) {
    if (s.norm != NormKind::Auto) return s.norm;
    return s.family == ModelFamily::Gpt2 ? NormKind::LayerNorm : NormKind::RMSNorm;
}
MlpKind mlp_kind(const ModelSpec& s) {
    if (s.mlp != MlpKind::Auto) return s.mlp;
    return s.family == ModelFamily::Gpt2 ? MlpKind::Gelu : MlpKind::SwiGLU;
}
PositionKind position_kind(const ModelSpec& s) {
    if (s.positions != PositionKind::Auto) return s.positions;
    return s.family == ModelFamily::Gpt2 ? PositionKind::Learned : PositionKind::Rope;
}

void validate_model(const ModelWeights& m) {
    const ModelSpec& s = m.spec;
    if (s.n_layer <= 0 || s.n_head <= 0 || s.n_kv_head <= 0 || s.d_model <= 0 || s.d_head <= 0 ||
        s.d_ff <= 0 || s.vocab_size <= 0 || s.max_positions <= 0)
        throw Error("model: every size (layers, heads, widths, vocabulary, positions) must be positive");
    if (s.n_head % s.n_kv_head != 0)
        throw Error("model: " + std::to_string(s.n_head) + " attention heads cannot share " +
                    std::to_string(s.n_kv_head) + " key/value heads (it must divide the number of heads)");
    const NormKind nk = norm_kind(s);
    const MlpKind mk = mlp_kind(s);
    const PositionKind pk = position_kind(s);
    if (pk == PositionKind::Rope && s.d_head % 2 != 0)
        throw Error("model: RoPE needs an even head width, got " + std::to_string(s.d_head));
    if (!(s.norm_eps >= 0) || !std::isfinite(s.norm_eps)) throw Error("model: the norm epsilon must be >= 0");
    if (!(s.rope_theta > 0) || !std::isfinite(s.rope_theta)) throw Error("model: rope_theta must be > 0");
    if (int(m.blocks.size()) != s.n_layer)
        throw Error("model: expected " + std::to_string(s.n_layer) + " blocks");
    const bool gpt2 = s.family == ModelFamily::Gpt2;
    const int d = s.d_model, qd = s.n_head * s.d_head, kvd = s.n_kv_head * s.d_head;
    if (s.position_offset < 0 || s.type_vocab < 0)
        throw Error("model: negative position offset or type count");
    check_ref(m.wte, s.vocab_size, d, "token embedding");
    if (pk == PositionKind::Learned)
        check_ref(m.wpe, s.max_positions + s.position_offset, d, "position embedding");
    if (s.type_vocab > 0) check_ref(m.wtt, s.type_vocab, d, "token-type embedding");
    check_ref(m.lm_head, s.vocab_size, d, "unembedding");
    const bool norms = nk != NormKind::None, norm_bias = nk == NormKind::LayerNorm;
    // A post-norm model may end without a final norm (BART); a masked-LM head has one.
    const bool final_norm = !s.encoder_decoder || s.s2s.final_norm;
    if (norms && final_norm && (!s.post_norm || s.head_transform || m.ln_f.weight))
        check_norm(m.ln_f, d, norm_bias, "final norm");
    if (s.embed_norm) check_norm(m.ln_embed, d, norm_bias, "embedding norm");
    if (s.head_transform) check_linear(m.head_dense, d, d, false, "masked-LM head dense");
    if (s.head_transform && !gelu_mlp(s.head_act))
        throw Error("model: the masked-LM head's activation must be GELU");
    if (s.post_norm && !norms) throw Error("model: post-norm blocks need a norm");
    if (s.encoder_decoder) {
        if (int(m.encoder.blocks.size()) != s.s2s.n_encoder_layer)
            throw Error("model: expected " + std::to_string(s.s2s.n_encoder_layer) + " encoder blocks");
        if (norms && final_norm) check_norm(m.encoder.ln_f, d, norm_bias, "encoder final norm");
        if (s.embed_norm) check_norm(m.encoder.ln_embed, d, norm_bias, "encoder embedding norm");
        if (pk == PositionKind::Learned)
            check_ref(m.encoder.wpe, s.max_positions + s.position_offset, d, "encoder position embedding");
        if (s.s2s.rel_buckets > 0 && (!m.rel_bias || !m.encoder.rel_bias))
            throw Error("model: a relative_attention_bias table is missing");
    }
    const int stacks = s.encoder_decoder ? 2 : 1;
    for (int stack = 0; stack < stacks; ++stack)
        for (int l = 0; l < (stack == 0 ? s.n_layer : s.s2s.n_encoder_layer); ++l) {
            const BlockWeights& b = stack == 0 ? m.blocks[std::size_t(l)] : m.encoder.blocks[std::size_t(l)];
            const std::string p = (stack == 1 ? "encoder layer " : "layer ") + std::to_string(l) + " ";
            if (stack == 0 && s.encoder_decoder) {
                if (norms) check_norm(b.ln_cross, d, norm_bias, p + "cross-attention norm");
                check_linear(b.cq, d, qd, gpt2, p + "cross q");
                check_linear(b.ck, d, kvd, gpt2, p + "cross k");
                check_linear(b.cv, d, kvd, gpt2, p + "cross v");
                check_linear(b.co, qd, d, gpt2, p + "cross o");
            }
            if (norms) check_norm(b.ln_1, d, norm_bias, p + "ln_1");
            if (norms && mk != MlpKind::None) check_norm(b.ln_2, d, norm_bias, p + "ln_2");
            check_linear(b.q, d, qd, gpt2, p + "q");
            check_linear(b.k, d, kvd, gpt2, p + "k");
            check_linear(b.v, d, kvd, gpt2, p + "v");
            check_linear(b.o, qd, d, gpt2, p + "o");
            if (gelu_mlp(mk) || mk == MlpKind::Relu) {
                check_linear(b.fc, d, s.d_ff, gpt2, p + "mlp fc");
                check_linear(b.proj, s.d_ff, d, gpt2, p + "mlp proj");
            } else if (gated_mlp(mk)) {
                check_linear(b.gate, d, s.d_ff, false, p + "gate_proj");
                check_linear(b.up, d, s.d_ff, false, p + "up_proj");
                check_linear(b.down, s.d_ff, d, false, p + "down_proj");
            }
        }
}

// ---------------------------------------------------------------------------------------------
// Small pure functions
// ---------------------------------------------------------------------------------------------

// The model's ops are the trainer's (core/nn_ops.hpp); these wrap them for whole matrices.

Mat gelu_tanh(const Mat& X) {
    Mat Y;  // same shape as X
    nn::gelu_forward<float>(X, Y);
    return Y;
}

Mat silu(const Mat& X) {
    Mat Y(X.rows(), X.cols());  // same shape as X: SwiGLU's gate activation, as nn::swiglu_forward
    Y.array() = X.array() / (1.0f + (-X.array()).exp());
    return Y;
}

Mat rmsnorm_rows(const Mat& X, double eps) {
    const std::vector<float> ones(std::size_t(X.cols()), 1.0f);
    Mat Y, xhat;  // [rows, d]
    std::vector<float> rstd;
    nn::norm_forward<float>(X, ones.data(), nullptr, true, eps, Y, xhat, rstd);
    return Y;
}

Mat rope_rotate_half(const Mat& X, int d_head, double theta, int offset) {
    if (d_head <= 0 || d_head % 2 != 0 || X.cols() % d_head != 0)
        throw Error("rope_rotate_half: head width " + std::to_string(d_head) + " must be even and divide " +
                    std::to_string(X.cols()));
    const RopeTable t = rope_table(int(X.rows()), d_head, theta, offset);
    const nn::M<float> cosines = t.cos.cast<float>().matrix(), sines = t.sin.cast<float>().matrix();
    Mat Y = X;  // [n, heads·dh]
    nn::rope_apply<float>(Y.data(), int(Y.rows()), long(Y.cols()), int(X.cols()) / d_head, d_head,
                          std::max(1, int(Y.rows())), cosines, sines, 1.0f);
    return Y;
}

Mat apply_norm(const Mat& X, const Norm& norm, double eps) {
    return apply_norm(X, norm, norm.bias ? NormKind::LayerNorm : NormKind::RMSNorm, eps);
}

Mat apply_norm(const Mat& X, const Norm& norm, NormKind kind, double eps) {
    if (kind == NormKind::None) return X;
    if (X.cols() != norm.dim)
        throw Error("apply_norm: rows of width " + std::to_string(X.cols()) + ", norm of " +
                    std::to_string(norm.dim));
    Mat Y, xhat;  // [n, d]
    std::vector<float> rstd;
    nn::norm_forward<float>(X, norm.weight, norm.bias, kind == NormKind::RMSNorm, eps, Y, xhat, rstd);
    return Y;
}

namespace {
nn::LinearShape linear_shape(const Linear& L) {
    return nn::LinearShape{L.in_features(), L.out_features(), L.out_in, long(L.weight.stride)};
}
}  // namespace

Mat apply_linear(const Mat& X, const Linear& L, int threads) {
    const int in = L.in_features(), out = L.out_features();
    if (X.cols() != in)
        throw Error("apply_linear: input rows of width " + std::to_string(X.cols()) + " for a " +
                    std::to_string(in) + "-input layer");
    Mat Y(X.rows(), out);  // [n, out]
    nn::linear_forward<float>(int(X.rows()), X.data(), long(in), L.weight.data, L.bias, linear_shape(L),
                              Y.data(), long(out), threads);
    return Y;
}

HeadAttention causal_attention_head(const Mat& Q, const Mat& K, const Mat& V, bool keep) {
    const Eigen::Index n = Q.rows();
    if (K.rows() != n || V.rows() != n || K.cols() != Q.cols())
        throw Error("causal_attention_head: Q " + dims(int(Q.rows()), int(Q.cols())) + ", K " +
                    dims(int(K.rows()), int(K.cols())) + ", V " + dims(int(V.rows()), int(V.cols())) +
                    " do not fit");
    const int dh = int(Q.cols()), N = int(n);
    HeadAttention r;
    nn::M<float> P(N, N);  // [n, n]
    nn::attention_scores<float>(N, dh, Q.data(), dh, K.data(), dh, P.data(), keep);
    if (keep) r.scores = P;
    nn::causal_softmax<float>(P, 1.0f / std::sqrt(float(std::max(1, dh))));
    r.output.resize(n, V.cols());  // [n, dv]
    nn::attention_combine<float>(N, int(V.cols()), P, V.data(), long(V.cols()), r.output.data(),
                                 long(V.cols()));
    if (keep) r.weights = std::move(P);
    return r;
}

Mat rollout_step(const Mat& mean_weights, const Mat& prev) {
    const Eigen::Index n = mean_weights.rows();
    if (mean_weights.cols() != n || (prev.size() != 0 && (prev.rows() != n || prev.cols() != n)))
        throw Error("rollout_step: weights and the previous rollout must be the same square size");
    Mat A = 0.5f * mean_weights;  // [n, n]
    A.diagonal().array() += 0.5f;
    for (Eigen::Index i = 0; i < n; ++i) {
        const double sum = A.row(i).cast<double>().sum();
        if (sum != 0) A.row(i) /= float(sum);
    }
    if (prev.size() == 0) return A;
    const bool lower =
        n == 0 || A.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().cwiseAbs().maxCoeff() == 0;
    Mat R(n, n);  // [n, n]
    if (lower)
        R.noalias() = A.triangularView<Eigen::Lower>() * prev;
    else
        R.noalias() = A * prev;
    return R;
}

Vec next_token_probs(const RowVec& logits, double temperature) {
    if (!(temperature > 0) || !std::isfinite(temperature)) throw ConfigError("temperature must be > 0");
    const Eigen::ArrayXd z = logits.transpose().cast<double>().array() / temperature;
    const double mx = z.maxCoeff();
    const Eigen::ArrayXd e = (z - mx).exp();
    return (e / e.sum()).cast<float>().matrix();
}

int sample_next_token(const RowVec& logits, const SamplingOptions& o, double u) {
    return sample_from(sampling_distribution(logits, o.temperature, o.top_k, o.top_p), u);
}

// ---------------------------------------------------------------------------------------------
// The forward pass
// ---------------------------------------------------------------------------------------------

std::uint64_t model_forward_bytes(const ModelSpec& s, int n, const ModelRunOptions& o) {
    const std::uint64_t N = std::uint64_t(std::max(0, n)), f = 4;
    const std::uint64_t nd = N * std::uint64_t(s.d_model) * f, nn = N * N * f;
    const std::uint64_t heads_layer =
        std::uint64_t(s.n_head) * (4 * N * std::uint64_t(s.d_head) * f + 2 * nn);
    std::uint64_t kept_head_layers = 0;
    for (int l = 0; l < s.n_layer; ++l)
        if (o.keep_heads.empty() || (std::size_t(l) < o.keep_heads.size() && o.keep_heads[std::size_t(l)]))
            ++kept_head_layers;
    std::uint64_t bytes = kept_head_layers * heads_layer;
    if (o.keep_layers) bytes += std::uint64_t(s.n_layer) * 6 * nd + nd;  // the layers' stages, the embeddings
    bytes += (o.all_logits ? N : 1) * std::uint64_t(s.vocab_size) * f;
    if (o.rollout) bytes += 3 * nn;
    // Working set: the residual stream and norms, Q/K/V/concat, the MLP hidden layer, per-thread n×n.
    const std::uint64_t threads = std::uint64_t(std::max(1, o.threads));
    bytes += 8 * nd + 4 * N * std::uint64_t(s.n_head) * std::uint64_t(s.d_head) * f +
             3 * N * std::uint64_t(s.d_ff) * f + threads * 2 * nn + heads_layer;
    return bytes;
}

DecoderWeights<float> decoder_weights(const ModelWeights& m) {
    const ModelSpec& s = m.spec;
    DecoderWeights<float> w;
    DecoderShape& c = w.shape;
    c.n_layer = s.n_layer;
    c.n_head = s.n_head;
    c.n_kv_head = s.n_kv_head;
    c.d_model = s.d_model;
    c.d_head = s.d_head;
    c.d_ff = s.d_ff;
    c.vocab = s.vocab_size;
    c.context = s.max_positions;
    c.norm = norm_kind(s);
    c.mlp = mlp_kind(s);
    c.positions = position_kind(s);
    c.eps = s.norm_eps;
    c.theta = s.rope_theta;
    c.embed_scale = s.embed_scale;
    c.causal = s.causal;
    c.post_norm = s.post_norm;
    c.position_offset = s.position_offset;
    c.head_act = s.head_act;
    if (s.encoder_decoder) {
        c.scale_scores = s.s2s.scale_scores;
        c.rel_buckets = s.s2s.rel_buckets;
        c.rel_max_distance = s.s2s.rel_max_distance;
        c.cross = true;
        c.logit_scale = s.s2s.logit_scale;
        w.rel_bias = m.rel_bias;
    }
    w.wte = m.wte.data;
    w.wte_ld = m.wte.stride;
    w.wpe = m.wpe.data;
    w.wpe_ld = m.wpe.stride;
    w.unembed = m.lm_head.data;
    w.unembed_ld = m.lm_head.stride;
    w.ln_f = {m.ln_f.weight, m.ln_f.bias};
    auto lin = [](const Linear& L) { return LinearW<float>{L.weight.data, L.bias, linear_shape(L)}; };
    w.unembed_b = m.lm_bias;
    if (s.type_vocab > 0) {
        w.wtt = m.wtt.data;
        w.wtt_ld = m.wtt.stride;
    }
    if (s.embed_norm) w.ln_embed = {m.ln_embed.weight, m.ln_embed.bias};
    if (s.head_transform) w.head = lin(m.head_dense);
    for (const BlockWeights& b : m.blocks) {
        BlockW<float> o;
        o.ln_1 = {b.ln_1.weight, b.ln_1.bias};
        o.ln_2 = {b.ln_2.weight, b.ln_2.bias};
        o.q = lin(b.q);
        o.k = lin(b.k);
        o.v = lin(b.v);
        o.o = lin(b.o);
        if (c.cross) {
            o.ln_cross = {b.ln_cross.weight, b.ln_cross.bias};
            o.cq = lin(b.cq);
            o.ck = lin(b.ck);
            o.cv = lin(b.cv);
            o.co = lin(b.co);
        }
        if (gelu_mlp(c.mlp) || c.mlp == MlpKind::Relu) {
            o.fc = lin(b.fc);
            o.proj = lin(b.proj);
        } else if (gated_mlp(c.mlp)) {
            o.fc = lin(b.gate);
            o.up = lin(b.up);
            o.proj = lin(b.down);
        }
        w.blocks.push_back(o);
    }
    return w;
}

namespace {

/// Where keep_stage() keeps each stage: a per-head stage in that field of its head's HeadStages, a
/// whole-layer stage in that field of LayerStages. (A cross_ head stage is kept as its self-attention
/// counterpart, in the cross-attention's heads.)
struct StagePlace {
    HookStage stage;
    Mat HeadStages::*head;
    Mat LayerStages::*layer;
};
const StagePlace kStagePlaces[] = {
    {HookStage::ln_1, nullptr, &LayerStages::ln_1},
    {HookStage::Q, &HeadStages::Q, nullptr},
    {HookStage::K, &HeadStages::K, nullptr},
    {HookStage::V, &HeadStages::V, nullptr},
    {HookStage::scores, &HeadStages::scores, nullptr},
    {HookStage::weights, &HeadStages::weights, nullptr},
    {HookStage::head_output, &HeadStages::head_output, nullptr},
    {HookStage::attn_out, nullptr, &LayerStages::attn_out},
    {HookStage::resid_mid, nullptr, &LayerStages::resid_mid},
    {HookStage::cross_attn_out, nullptr, &LayerStages::cross_attn_out},
    {HookStage::ln_2, nullptr, &LayerStages::ln_2},
    {HookStage::mlp_out, nullptr, &LayerStages::mlp_out},
    {HookStage::resid_post, nullptr, &LayerStages::resid_post},
};
// cross_Q .. cross_head_output stand in the same order as Q .. head_output.
static_assert(int(HookStage::cross_head_output) - int(HookStage::cross_Q) ==
              int(HookStage::head_output) - int(HookStage::Q));

}  // namespace

void keep_stage(LayerStages& st, const HookPoint& p, const Eigen::Ref<const Mat>& v, int group,
                bool layer_stages) {
    const bool cross = p.stage >= HookStage::cross_Q && p.stage <= HookStage::cross_head_output;
    const HookStage stage =
        cross ? HookStage(int(p.stage) - int(HookStage::cross_Q) + int(HookStage::Q)) : p.stage;
    const auto place = std::find_if(std::begin(kStagePlaces), std::end(kStagePlaces),
                                    [&](const StagePlace& e) { return e.stage == stage; });
    if (place == std::end(kStagePlaces)) return;
    if (place->layer) {
        if (layer_stages) st.*(place->layer) = v;
        return;
    }
    std::vector<HeadStages>& heads = cross ? st.cross_heads : st.heads;
    if (heads.empty()) return;
    // K and V come once per key/value head: each of the `group` query heads sharing it keeps a copy
    const bool shared = p.stage == HookStage::K || p.stage == HookStage::V;
    const int first = shared ? p.head * group : p.head, end = shared ? first + group : first + 1;
    for (int j = first; j < end; ++j) heads[std::size_t(j)].*(place->head) = v;
}

void rollout_layer(const std::vector<Mat>& head_weights, Mat& rollout) {
    Mat mean = head_weights[0];  // [n, n]: the heads' mean, summed in head order
    for (std::size_t j = 1; j < head_weights.size(); ++j) mean += head_weights[j];
    mean /= float(head_weights.size());
    rollout = rollout_step(mean, rollout);
}

void check_token_ids(const ModelSpec& s, const std::vector<int>& ids, const std::string& what) {
    const std::string tokens = what.empty() ? "token" : what + " token";
    if (ids.empty()) throw Error("the model needs at least one " + tokens);
    if (int(ids.size()) > s.max_positions)
        throw Error(std::to_string(ids.size()) + " " + tokens + "s are more than the model's " +
                    std::to_string(s.max_positions) + " positions");
    for (int id : ids)
        if (id < 0 || id >= s.vocab_size)
            throw Error("token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                        std::to_string(s.vocab_size - 1) + ")");
}

ModelForward run_model(const ModelWeights& model, const std::vector<int>& ids, const ModelRunOptions& o) {
    return run_model(model, ids, {}, o);
}

ModelForward run_model(const ModelWeights& model, const std::vector<int>& ids, const std::vector<int>& types,
                       const ModelRunOptions& o) {
    const ModelSpec& s = model.spec;
    if (s.encoder_decoder)
        throw Error(s.architecture + " is an encoder–decoder: it is run with a source and a target " +
                    "(attnviz dump / generate), not as a decoder-only model");
    const int n = int(ids.size());
    if (!types.empty() && types.size() != ids.size())
        throw Error("token types: " + std::to_string(types.size()) + " for " + std::to_string(n) + " tokens");
    for (int t : types)
        if (t < 0 || t >= std::max(1, s.type_vocab))
            throw Error("token type " + std::to_string(t) + " is outside the model's " +
                        std::to_string(std::max(1, s.type_vocab)) + " segment(s)");
    check_token_ids(s, ids);
    if (!o.keep_heads.empty() && int(o.keep_heads.size()) != s.n_layer)
        throw Error("keep_heads must have one entry per layer");
    const int h = s.n_head, group = s.n_head / s.n_kv_head;
    const DecoderWeights<float> w = decoder_weights(model);
    const Tables<float> tab = make_tables<float>(w.shape, n);

    // What to keep is recorded through the forward's hook points; a caller's own hooks (patching,
    // ablation) act first, so the stages kept are the ones the rest of the forward saw.
    ModelForward out;
    out.layers.resize(std::size_t(s.n_layer));
    std::vector<Mat> layer_weights;  // [h][n, n]: the current layer's weights, for the rollout
    if (o.rollout) layer_weights.resize(std::size_t(h));
    ForwardHooks<float> rec;
    for (int l = 0; l < s.n_layer; ++l) {
        const bool keep_h = o.keep_heads.empty() || o.keep_heads[std::size_t(l)];
        if (keep_h) {
            out.layers[std::size_t(l)].heads.resize(std::size_t(h));
            for (HookStage st : {HookStage::Q, HookStage::K, HookStage::V, HookStage::scores,
                                 HookStage::weights, HookStage::head_output})
                rec.add(st, l);
        }
        if (o.keep_layers)
            for (HookStage st : {HookStage::ln_1, HookStage::attn_out, HookStage::resid_mid, HookStage::ln_2,
                                 HookStage::mlp_out, HookStage::resid_post})
                rec.add(st, l);
        if (o.rollout) {
            rec.add(HookStage::weights, l);
            rec.add(HookStage::resid_mid, l);  // (the layer's heads are all done by then)
        }
    }
    const ForwardHooks<float>* user = o.hooks;
    if (user) {
        for (std::size_t l = 0; l < user->layer_stages.size(); ++l)
            for (int st = 0; st < int(HookStage::count); ++st)
                if (user->layer_stages[l] & (1u << st)) rec.add(HookStage(st), int(l));
        rec.end_stages |= user->end_stages;
    }
    rec.call = [&](const HookPoint& p, nn::Block<float> v) {
        if (user && user->wants(p.stage, p.layer)) user->call(p, v);
        if (p.layer < 0) return;
        if (o.rollout && p.stage == HookStage::weights) layer_weights[std::size_t(p.head)] = v;
        if (o.rollout && p.stage == HookStage::resid_mid) rollout_layer(layer_weights, out.rollout);
        keep_stage(out.layers[std::size_t(p.layer)], p, v, group, o.keep_layers);
    };

    SeqActs<float> A;
    ForwardOptions<float> fo;
    fo.keep_layers = false;
    fo.last_logits = !o.all_logits;
    fo.threads = std::max(1, o.threads);
    fo.hooks = &rec;
    fo.cancel = o.cancel;
    fo.token_types = types.empty() ? nullptr : types.data();
    fo.skip_logits = !s.unembeds;
    decoder_forward(w, tab, ids.data(), 1, n, A, fo);
    if (o.cancel && o.cancel->load()) throw Cancelled();
    if (o.keep_layers) out.embed = decoder_embed(w, tab, ids.data(), 1, n, fo.token_types);
    if (o.keep_layers && w.wtt) {
        out.token_type.resize(n, s.d_model);
        for (int t = 0; t < n; ++t)
            out.token_type.row(t) = Eigen::Map<const RowVec>(
                w.wtt + long(types.empty() ? 0 : types[std::size_t(t)]) * w.wtt_ld, s.d_model);
    }
    if (s.unembeds) out.ln_f = std::move(A.f);
    out.logits = std::move(A.logits);
    return out;
}

}  // namespace attnviz

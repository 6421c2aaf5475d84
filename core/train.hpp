// A small trainable decoder: token embeddings + learned / sinusoidal / RoPE positions, L blocks of
// [norm] → causal multi-head attention → residual → ([norm] → GELU or SwiGLU MLP → residual), [final
// norm], tied or untied unembedding, cross-entropy. Norms: LayerNorm, RMSNorm or none. Without an MLP
// the model is attention-only, as in the circuits papers (the default).
//
// The model owns its parameters: one contiguous buffer with named views whose names and shapes are a
// Hugging Face checkpoint's, so the buffer can be written tensor by tensor. GPT-2 names and layout
// (wte.weight, h.0.attn.c_attn.weight [d, 3d] Conv1D, biases) for LayerNorm / no norm, GELU / no MLP,
// learned / sinusoidal positions; Llama names (model.embed_tokens.weight,
// model.layers.0.self_attn.q_proj.weight [d, d] nn.Linear [out, in], no biases) as soon as a choice
// is Llama's: RMSNorm, SwiGLU or RoPE. io/model_loader reads both (config.json says the mix). Forward keeps
// the activations backward needs; each backward sits beside its forward (llm.c style), in
// core/train_kernels.hpp. Templated on the scalar so the tests can check every backward against finite
// differences in double precision (core/ instantiates float; the tests instantiate double).
//
// Shapes: B sequences, n tokens each (n <= context), d = d_model, h = n_head, dh = d/h, V = vocab.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/model.hpp"

namespace attnviz {

struct TrainConfig {
    int n_layer = 2;   // 1–6
    int n_head = 4;    // 1–8, divides d_model
    int d_model = 64;  // 16–256
    int context = 48;  // 8–256
    int vocab_size = 64;
    bool layer_norm = true;  // norms present: ln_1 per block, ln_2 before an MLP, ln_f (kind: `norm`)
    bool tied = false;       // unembedding = wte (else its own lm_head.weight [V, d])
    double norm_eps = 1e-5;
    NormKind norm = NormKind::LayerNorm;             // LayerNorm or RMSNorm, when layer_norm
    MlpKind mlp = MlpKind::None;                     // None (attention-only), Gelu (tanh form) or SwiGLU
    PositionKind positions = PositionKind::Learned;  // Learned, Sinusoidal (base 10000) or Rope (θ 10000)
    int d_ff = 0;                                    // MLP width, 1–1024; 0 = 4·d_model
    /// 0: a decoder (the above). 1–6: an encoder–decoder in T5's layout (core/train_seq2seq.hpp):
    /// this many encoder blocks and n_layer decoder blocks, each with cross-attention; RMSNorm,
    /// gated-GELU MLPs, T5's relative position buckets, an untied lm_head (norm, mlp, positions and
    /// tied are not read).
    int encoder_layers = 0;
};

/// Throws ConfigError naming the first option outside its range.
void validate_train_config(const TrainConfig& config);
/// The norm in effect (None without layer_norm), the MLP width, and whether the checkpoint uses
/// Llama names (RMSNorm, SwiGLU or RoPE) rather than GPT-2's.
NormKind train_norm(const TrainConfig& config);
int train_d_ff(const TrainConfig& config);
bool llama_layout(const TrainConfig& config);

/// One named tensor inside the parameter buffer.
struct ParamView {
    std::string name;        // checkpoint name, e.g. "h.0.attn.c_attn.weight"
    std::vector<int> shape;  // e.g. {d, 3d}
    std::size_t offset = 0;  // into the buffer
    std::size_t size = 0;    // product of shape
};

/// The parameter layout of a config: every tensor's name, shape and offset, in checkpoint order.
std::vector<ParamView> param_layout(const TrainConfig& config);
std::size_t param_count(const TrainConfig& config);

template <typename T>
using MatT = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Parameters (or gradients, or optimizer moments): one buffer laid out by param_layout.
template <typename T>
struct Params {
    TrainConfig config;
    std::vector<ParamView> layout;
    std::vector<T> data;  // [param_count]
};

template <typename T>
Params<T> make_params(const TrainConfig& config);  // zero-filled
/// GPT-2 initialisation: N(0, 0.02) for matrices (output projections c_proj / o_proj / down_proj
/// scaled by 1/√(2L)), zero biases, unit gains.
Params<float> init_params(const TrainConfig& config, std::uint64_t seed);

/// A batch: B rows of n input ids and n targets (target −1 = not scored); for an encoder–decoder
/// also the encoder's m source ids of each row (inputs are then the decoder's).
struct Batch {
    int B = 0, n = 0;
    std::vector<int> inputs;   // [B, n]
    std::vector<int> targets;  // [B, n]
    int m = 0;
    std::vector<int> source;  // [B, m]
};

/// Mean cross-entropy over scored targets; when grad is non-null it is overwritten with dLoss/dθ.
/// per_token_loss (optional) receives [B, n] losses (0 where not scored). Sequences run in parallel
/// on `threads` threads; one gradient partial per sequence, reduced in a fixed order, so results are
/// deterministic for the inputs and thread count (across thread counts they agree to rounding).
template <typename T>
double loss_and_grad(const Params<T>& params, const Batch& batch, Params<T>* grad, int threads = 1,
                     std::vector<double>* per_token_loss = nullptr);

/// Attention weights of one sequence: [layer][head] → [n, n] (forward only, for head scores).
std::vector<std::vector<MatT<float>>> attention_patterns(const Params<float>& params,
                                                         const std::vector<int>& ids);

/// Cross-attention weights of an encoder–decoder: [decoder layer][head] → [n, m], rows the decoder's
/// input `target` (n ids), columns the encoder's input `source` (m ids).
std::vector<std::vector<MatT<float>>> cross_attention_patterns(const Params<float>& params,
                                                               const std::vector<int>& source,
                                                               const std::vector<int>& target);

/// Logits [V] of the token after `ids` (1 to context ids of the vocabulary; ConfigError otherwise).
std::vector<double> next_token_logits(const Params<float>& params, const std::vector<int>& ids);

struct AdamWConfig {
    double lr = 1e-3;
    double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    double weight_decay = 0.01;
};

struct AdamWState {
    std::vector<float> m, v;  // [param_count]
    long step = 0;
};

/// One torch.optim.AdamW step with learning rate `lr` (decay applied to every parameter, like
/// torch with a single param group): p ← p·(1 − lr·wd); p ← p − lr·m̂/(√v̂ + eps).
void adamw_step(std::vector<float>& params, const std::vector<float>& grad, AdamWState& state,
                const AdamWConfig& config, double lr);

/// The same update on raw buffers of n floats, at AdamW step `step` (1 = first); m and v are the
/// moments, updated in place. Bit-for-bit the same wherever the buffers lie.
void adamw_update(float* params, const float* grad, float* m, float* v, std::size_t n, long step,
                  const AdamWConfig& config, double lr);

/// Scales grad so its global L2 norm is at most max_norm (> 0); returns the norm before clipping.
double clip_grad_norm(std::vector<float>& grad, double max_norm);
double clip_grad_norm(float* grad, std::size_t n, double max_norm);

/// Linear warm-up over `warmup` steps to `lr`, then cosine decay to lr·min_ratio at `total` steps.
double lr_schedule(long step, long warmup, long total, double lr, double min_ratio = 0.1);

}  // namespace attnviz

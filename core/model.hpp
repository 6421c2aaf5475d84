// Real transformers (decoders: GPT-2 and Llama-style: llama, qwen2, mistral, gemma; encoders: bert,
// roberta, distilbert), computed stage by stage. L blocks, each: norm → causal multi-head attention →
// residual → norm → MLP → residual; then the final norm, the unembedding and the next-token
// distribution. An encoder attends over every token, normalises after each residual sum (post-norm)
// and ends in a masked-LM head whose logits at every position guess a hidden word.
//
// Weights are viewed in place (WeightRef: a pointer into a mapped checkpoint or a converted buffer),
// never copied; the buffers are kept alive by ModelWeights::storage. This file knows nothing of
// files or JSON: io/model_loader.hpp fills ModelWeights from a Hugging Face folder.
//
// Shapes: n tokens, d = d_model, h = n_head, g = n_kv_head, dh = d_head, f = d_ff, V = vocab_size.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/shapes.hpp"

namespace attnviz {

template <typename T>
struct ForwardHooks;  // core/decoder.hpp

enum class ModelFamily { Gpt2, Llama };

/// The parts of a block that vary (Auto = the family's own: GPT-2 LayerNorm, GELU, learned positions;
/// Llama RMSNorm, SwiGLU, RoPE). attnviz's own checkpoints (`attnviz train`) mix them, e.g. no norm
/// and no MLP (attention-only, as in the circuits papers).
enum class NormKind { Auto, LayerNorm, RMSNorm, None };
enum class MlpKind { Auto, Gelu, SwiGLU, None, GeGLU, GeluErf, Relu };
/// SwiGLU and GeGLU: an activated gate times a linear branch (gate, up, down projections).
inline bool gated_mlp(MlpKind k) {
    return k == MlpKind::SwiGLU || k == MlpKind::GeGLU;
}
/// GELU's tanh form (GPT-2's gelu_new) or its exact erf form (BERT's and BART's "gelu"): d → f → d.
inline bool gelu_mlp(MlpKind k) {
    return k == MlpKind::Gelu || k == MlpKind::GeluErf;
}
/// Relative: no position embedding; T5's bias per (key − query) bucket on the scores (core/seq2seq.hpp).
enum class PositionKind { Auto, Learned, Sinusoidal, Rope, Relative };

/// A read-only float32 matrix viewed in place: [rows, cols], row-major, `stride` floats between rows.
struct WeightRef {
    const float* data = nullptr;
    int rows = 0;
    int cols = 0;
    int stride = 0;  // >= cols

    using ConstMap = Eigen::Map<const Mat, 0, Eigen::OuterStride<>>;
    bool empty() const { return data == nullptr; }
    ConstMap map() const { return ConstMap(data, rows, cols, Eigen::OuterStride<>(stride)); }
    /// Columns [c0, c0 + count) of this matrix, still in place.
    WeightRef cols_slice(int c0, int count) const { return WeightRef{data + c0, rows, count, stride}; }
};

/// y = x·W + b with W stored as [out, in] (nn.Linear, out_in = true: y = x·Wᵀ + b) or as [in, out]
/// (GPT-2's Conv1D, out_in = false).
struct Linear {
    WeightRef weight;
    bool out_in = true;
    const float* bias = nullptr;  // [out] or null
    int in_features() const { return out_in ? weight.cols : weight.rows; }
    int out_features() const { return out_in ? weight.rows : weight.cols; }
};

/// LayerNorm (weight and bias) or RMSNorm (weight only, bias null), over rows of width `dim`.
struct Norm {
    const float* weight = nullptr;  // [dim]
    const float* bias = nullptr;    // [dim] or null (RMSNorm)
    int dim = 0;
};

struct BlockWeights {
    Norm ln_1, ln_2;
    Linear q, k, v, o;      // q: d → h·dh, k, v: d → g·dh, o: h·dh → d
    Linear fc, proj;        // GPT-2 MLP: d → f → d
    Linear gate, up, down;  // gated MLP: down(act(gate(x)) ⊙ up(x)), act = SiLU (SwiGLU) or GELU (GeGLU)
    Norm ln_cross;          // an encoder–decoder's decoder block: the cross-attention's norm
    Linear cq, ck, cv, co;  // cross-attention: cq: d → h·dh (target), ck, cv: d → h·dh (source), co: h·dh → d
};

/// What an encoder–decoder (t5, bart) adds to a ModelSpec; the ModelSpec's own sizes and kinds are the
/// decoder's, which the encoder shares (n_layer = decoder layers).
struct Seq2SeqSpec {
    int n_encoder_layer = 0;
    int decoder_start = 0;  // decoder_start_token_id: the decoder's first input token
    int eos = -1;           // eos_token_id: generation stops after it
    int rel_buckets = 0;    // T5's relative positions: buckets (0 = none) and max distance
    int rel_max_distance = 0;
    bool scale_scores = true;  // divide the scores by √dh (T5 does not)
    double logit_scale = 1.0;  // the decoder's output times this before the unembedding (T5 tied: d^−½)
    bool final_norm = true;    // each stack ends with a norm (T5), or not (BART)
};

struct ModelSpec {
    std::string architecture;  // the config's model_type: "gpt2", "llama", "qwen2", "mistral"
    ModelFamily family = ModelFamily::Gpt2;
    int n_layer = 0;
    int n_head = 0;
    int n_kv_head = 0;
    int d_model = 0;
    int d_head = 0;
    int d_ff = 0;
    int vocab_size = 0;
    int max_positions = 0;  // longest input accepted (n_positions / max_position_embeddings)
    double norm_eps = 1e-5;
    double rope_theta = 10000.0;  // RoPE only
    double embed_scale = 1.0;     // token embeddings are multiplied by it (Gemma: √d_model)
    NormKind norm = NormKind::Auto;
    MlpKind mlp = MlpKind::Auto;
    PositionKind positions = PositionKind::Auto;
    // Encoders (BERT, RoBERTa, DistilBERT); the defaults are a decoder's.
    bool causal = true;       // false: every token attends to every token (no mask)
    bool post_norm = false;   // blocks x = LN(x + attn(x)); x = LN(x + mlp(x)) (ln_1, ln_2 after the sums)
    bool embed_norm = false;  // a LayerNorm on the summed embeddings (ModelWeights::ln_embed)
    int position_offset = 0;  // token t reads row t + offset of the learned positions (RoBERTa: pad + 1)
    int type_vocab = 0;       // token-type (segment) embeddings' rows; 0 = none
    bool head_transform = false;  // a masked-LM head: dense d → d, head_act, ln_f, then the unembedding
    MlpKind head_act = MlpKind::GeluErf;  // the head's activation (Gelu or GeluErf)
    bool unembeds = true;                 // false: a bare encoder (BertModel): no head, no ln_f, no logits
    bool encoder_decoder = false;  // t5, bart: two stacks (core/seq2seq.hpp), not run_model; causal and
                                   // the sizes above are the decoder's
    Seq2SeqSpec s2s;
};

/// An encoder (BERT, RoBERTa, DistilBERT): bidirectional attention, a masked-LM head; it fills masks
/// instead of predicting the next token.
inline bool is_encoder(const ModelSpec& s) {
    return !s.causal;
}

/// The kinds' names, one table each (Auto has none): attnviz's own checkpoints' config.json fields
/// attnviz_norm, attnviz_mlp and attnviz_positions, and `attnviz train`'s --norm, --mlp, --positions.
const char* kind_name(NormKind k);      // "layernorm", "rmsnorm", "none"
const char* kind_name(MlpKind k);       // "gelu", "swiglu", "geglu", "none", "gelu_erf"
const char* kind_name(PositionKind k);  // "learned", "sinusoidal", "rope"
/// The kind named `name` among `allowed`, else false.
template <typename Kind>
bool kind_from_name(const std::string& name, const std::vector<Kind>& allowed, Kind* out) {
    for (Kind k : allowed)
        if (name == kind_name(k)) {
            *out = k;
            return true;
        }
    return false;
}
/// "a, b or c" (`or` = true) or "a, b, c": the allowed kinds' names, for messages.
template <typename Kind>
std::string kind_names(const std::vector<Kind>& allowed, bool or_last = true) {
    std::string out;
    for (std::size_t i = 0; i < allowed.size(); ++i)
        out += std::string(i == 0                                 ? ""
                           : (or_last && i + 1 == allowed.size()) ? " or "
                                                                  : ", ") +
               kind_name(allowed[i]);
    return out;
}

/// The spec's norm, MLP and positions with Auto resolved from the family.
NormKind norm_kind(const ModelSpec& spec);
MlpKind mlp_kind(const ModelSpec& spec);
PositionKind position_kind(const ModelSpec& spec);

/// An encoder–decoder's encoder stack (its token embeddings are the model's wte).
struct EncoderWeights {
    WeightRef wpe;                     // [max_positions + offset, d] (learned positions only)
    Norm ln_embed;                     // the embeddings' norm (BART's layernorm_embedding), or none
    std::vector<BlockWeights> blocks;  // s2s.n_encoder_layer entries, no cross-attention
    Norm ln_f;                         // the final norm (T5), or none
    const float* rel_bias = nullptr;   // [buckets, h] T5's relative_attention_bias of block 0
};

struct ModelWeights {
    ModelSpec spec;
    WeightRef wte;  // [V, d]
    WeightRef wpe;  // [max_positions, d] (learned positions only)
    std::vector<BlockWeights> blocks;
    Norm ln_f;
    WeightRef lm_head;                                 // [V, d] (the same memory as wte when tied)
    const float* lm_bias = nullptr;                    // [V] added to the logits, or null
    WeightRef wtt;                                     // [type_vocab, d] token-type embeddings, or empty
    Norm ln_embed;                                     // the embeddings' LayerNorm (embed_norm)
    Linear head_dense;                                 // the masked-LM head's d → d (head_transform)
    const float* rel_bias = nullptr;                   // [buckets, h] the decoder's relative_attention_bias
    EncoderWeights encoder;                            // encoder–decoders only
    std::vector<std::shared_ptr<const void>> storage;  // mapped files / converted buffers
    std::uint64_t weight_bytes = 0;  // memory the weights take: float32 bytes (mapped in place or converted)
                                     // plus the mapped stored bytes of converted tensors
};

/// Checks every shape against the spec; throws attnviz::Error naming the first mismatch.
void validate_model(const ModelWeights& model);

// ---------------------------------------------------------------------------------------------
// Small pure functions (also used by the tests)
// ---------------------------------------------------------------------------------------------

/// GELU, tanh form (GPT-2's gelu_new): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), elementwise.
Mat gelu_tanh(const Mat& X);
/// SiLU: x·σ(x), elementwise.
Mat silu(const Mat& X);
/// RMSNorm without gain: x / sqrt(mean(x²) + eps), per row. X: [rows, d].
Mat rmsnorm_rows(const Mat& X, double eps);
/// Rotate-half RoPE (Hugging Face's Llama convention) on each head of X [n, heads·dh]: within a head,
/// coordinate i pairs with i + dh/2, rotated by angle p·θ^(−2i/dh) for the token at position p.
Mat rope_rotate_half(const Mat& X, int d_head, double theta, int offset = 0);
/// A norm applied to rows: LayerNorm (with bias) or RMSNorm (without), times the gain. X: [n, d].
Mat apply_norm(const Mat& X, const Norm& norm, double eps);
/// The norm of a given kind: None returns X, LayerNorm with or without a bias, RMSNorm. X: [n, d].
Mat apply_norm(const Mat& X, const Norm& norm, NormKind kind, double eps);
/// x·W (+ b) for rows of X [n, in] → [n, out], split in row blocks over `threads` threads.
Mat apply_linear(const Mat& X, const Linear& L, int threads = 1);

/// One head of causal self-attention. Q, K: [n, dh], V: [n, dv].
struct HeadAttention {
    Mat scores;   // [n, n] Q·Kᵀ unscaled and unmasked (only when keep)
    Mat weights;  // [n, n] softmax of the causally masked scores/√dh (only when keep)
    Mat output;   // [n, dv] weights·V
};
/// With keep = false, only `output` is filled and the hidden upper triangle is never computed.
HeadAttention causal_attention_head(const Mat& Q, const Mat& K, const Mat& V, bool keep);

/// One rollout step (Abnar & Zuidema 2020): Â = row-normalise(0.5·mean_h A + 0.5·I), rollout = Â·prev
/// (prev empty: the first layer, rollout = Â). mean_weights: [n, n].
Mat rollout_step(const Mat& mean_weights, const Mat& prev);

/// softmax(logits / T) for one row of logits: [V]. T > 0.
Vec next_token_probs(const RowVec& logits, double temperature);

struct SamplingOptions {
    double temperature = 1.0;  // 0 = greedy (argmax)
    int top_k = 0;             // 0 = off
    double top_p = 1.0;        // 1 = off
};
/// Picks the next token from one row of logits [V]: greedy when T = 0, else a draw (u uniform in
/// [0, 1)) from core/sampling.hpp's sampling_distribution (softmax(logits/T), top-k, then top-p).
int sample_next_token(const RowVec& logits, const SamplingOptions& options, double u);

// ---------------------------------------------------------------------------------------------
// The forward pass
// ---------------------------------------------------------------------------------------------

struct HeadStages {
    Mat Q, K, V;      // [n, dh] (Q, K after RoPE; K, V the ones this query head uses)
    Mat scores;       // [n, n]
    Mat weights;      // [n, n]
    Mat head_output;  // [n, dh]
};

struct LayerStages {
    Mat ln_1;                             // [n, d]
    Mat attn_out;                         // [n, d]
    Mat resid_mid;                        // [n, d]
    Mat ln_2;                             // [n, d] (empty without an MLP)
    Mat mlp_out;                          // [n, d] (empty without an MLP)
    Mat resid_post;                       // [n, d]
    std::vector<HeadStages> heads;        // h entries when this layer's per-head stages are kept, else empty
    std::vector<HeadStages> cross_heads;  // an encoder–decoder's decoder layer: its cross-attention's heads
    Mat cross_attn_out;                   // [n, d] the cross-attention's output projection
};

struct HookPoint;  // core/decoder.hpp

/// Keeps one recorded hook value in its layer's stages: a self-attention head stage in heads[p.head]
/// (K and V, one per key/value head, in each of the `group` query heads sharing it), a cross-attention
/// head stage in cross_heads[p.head], a whole-layer stage in its field when `layer_stages`. Head stages
/// of a layer whose heads (or cross_heads) are not sized are not kept; other stages are ignored.
void keep_stage(LayerStages& st, const HookPoint& p, const Eigen::Ref<const Mat>& v, int group,
                bool layer_stages);
/// One layer's rollout step from its heads' weights [h][n, n] (their mean, summed in head order).
void rollout_layer(const std::vector<Mat>& head_weights, Mat& rollout);

struct ModelRunOptions {
    std::vector<bool> keep_heads;  // per layer: keep its per-head stages (empty = every layer)
    bool keep_layers = true;       // keep the [n, d] stages of every layer
    bool all_logits = true;        // logits for every position, else only the last row
    bool rollout = true;
    int threads = 1;
    const std::atomic<bool>* cancel = nullptr;
    /// The caller's own hook points (core/decoder.hpp), called before the stages are kept: patching and
    /// ablation change what the rest of the forward, and what is kept, sees.
    const ForwardHooks<float>* hooks = nullptr;
};

struct ModelForward {
    Mat embed;                        // [n, d] token + position embeddings, block 0's input (keep_layers)
    std::vector<LayerStages> layers;  // n_layer entries (empty matrices when not kept)
    Mat token_type;                   // [n, d] the token-type embeddings added (keep_layers, type_vocab > 0)
    Mat ln_f;                         // [n, d]
    Mat logits;                       // [n, V] (or [1, V] with all_logits = false)
    Mat rollout;                      // [n, n] (empty without rollout)
};

/// Throws attnviz::Error unless there are 1..max_positions ids, each inside the vocabulary; `what`
/// (e.g. "source") names the tokens in the message.
void check_token_ids(const ModelSpec& spec, const std::vector<int>& ids, const std::string& what = "");

/// Runs the model on token ids. Throws attnviz::Error for an empty input, an id outside the
/// vocabulary or more tokens than max_positions.
ModelForward run_model(const ModelWeights& model, const std::vector<int>& ids,
                       const ModelRunOptions& options = {});
/// The same with the tokens' segments (token type ids [n], each below type_vocab; empty = all 0).
ModelForward run_model(const ModelWeights& model, const std::vector<int>& ids,
                       const std::vector<int>& type_ids, const ModelRunOptions& options);

/// Bytes run_model needs beyond the weights (the kept stages), to refuse requests over the limit.
std::uint64_t model_forward_bytes(const ModelSpec& spec, int n, const ModelRunOptions& options);

}  // namespace attnviz

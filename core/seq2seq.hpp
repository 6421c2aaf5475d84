// Encoder–decoders (t5, bart; and the trainer's translation models): two stacks of the one block of
// core/decoder.hpp. The encoder is decoder_forward() with bidirectional attention over the source; the
// decoder is decoder_forward() with causal attention over the target and, in every block, a
// cross-attention whose keys and values come from the encoder's output (ForwardOptions::source).
// Nothing here is a second copy of the block: these functions only chain the two stacks.
//
// Shapes: S sequences; the source has m tokens, the target n; rows = S·n (decoder) or S·m (encoder);
// d = d_model, h = heads, dh = head width, V = vocabulary.
//
// The API (templated on the scalar like decoder_forward; double for gradient checks):
//   Seq2SeqWeights<T>{encoder, decoder}: two DecoderWeights views. The encoder's shape has causal =
//       false, no unembedding; the decoder's has causal = true, cross = true and blocks with cq, ck, cv,
//       co (and ln_cross). T5's relative positions: rel_bias [buckets, h] in each stack's weights.
//   seq2seq_encode(w, src [S·m], S, m, E, opt): E = the encoder's SeqActs; its output, the source of
//       every cross-attention, is E.f [S·m, d] (after the encoder's final norm, or its last block's
//       output when there is none). opt.hooks / opt.keep_layers as for decoder_forward; logits are
//       never made.
//   Sources of different lengths: pad each to m and set opt.key_lengths [S] (the real tokens of each
//       source) for both calls; no query attends to padding (its weights are 0, so no gradient).
//   seq2seq_decode(w, E.f, m, tgt [S·n], S, n, D, opt): D = the decoder's SeqActs; D.logits [S·n, V]
//       (or [S, V] with last_logits). Each kept LayerActs holds, besides the self-attention's
//       activations: ac / xhatc / rstdc (the cross-attention's norm: pre-norm, ac = its output, the
//       queries' input; post-norm (BART), ac = resid_mid and xhatc / rstdc belong to the norm of
//       resid_mid + cross_attn_out, which is cmid), cq [S·n, h·dh] (queries),
//       ckv [S·m, 2·h·dh] (keys | values of the source), catt [S·h][n, m] (cross weights, sequence s
//       head j at s·h + j), cy [S·n, h·dh] (heads concatenated), cmid [S·n, d] (residual after the
//       cross-attention). D.pos_bias [h][n, n] / E.pos_bias [h][m, m]: T5's bias as added to the scores.
//   Scores are scaled by 1/√dh unless shape.scale_scores is false (T5); logits = (f·Uᵀ)·logit_scale
//   + unembed_b.
//   The backward of cross-attention per head is nn::cross_attention_head_backward (core/nn_ops.hpp;
//   with causal = true and a bias it is also T5's decoder self-attention), of the bias table
//   nn::relative_position_bias_backward, of ReLU nn::relu_backward.
//
// For a Hugging Face model (ModelWeights with spec.encoder_decoder): seq2seq_weights(model) gives the
// views; run_seq2seq(model, src, tgt, options) records every stage of both stacks (Seq2SeqForward).
#pragma once

#include <atomic>
#include <vector>

#include "core/decoder.hpp"
#include "core/model.hpp"

namespace attnviz {

template <typename T>
struct Seq2SeqWeights {
    DecoderWeights<T> encoder;  // its unembed is null: the encoder makes no logits
    DecoderWeights<T> decoder;
};

/// The encoder over S sources of m tokens. E.f [S·m, d] is its output.
template <typename T>
void seq2seq_encode(const Seq2SeqWeights<T>& w, const int* src, int S, int m, SeqActs<T>& E,
                    ForwardOptions<T> opt) {
    opt.stack = StackKind::Encoder;
    opt.skip_logits = true;
    opt.source = nullptr;
    decoder_forward(w.encoder, Tables<T>{}, src, S, m, E, opt);
}

/// The decoder over S targets of n tokens, cross-attending to `source` [S·m, d] (the encoder's E.f).
template <typename T>
void seq2seq_decode(const Seq2SeqWeights<T>& w, const nn::M<T>& source, int m, const int* tgt, int S, int n,
                    SeqActs<T>& D, ForwardOptions<T> opt) {
    opt.stack = StackKind::Decoder;
    opt.source = &source;
    opt.source_n = m;
    decoder_forward(w.decoder, Tables<T>{}, tgt, S, n, D, opt);
}

// ---------------------------------------------------------------------------------------------
// A Hugging Face encoder–decoder
// ---------------------------------------------------------------------------------------------

/// Views of a loaded t5 / bart model's weights, both stacks.
Seq2SeqWeights<float> seq2seq_weights(const ModelWeights& model);

/// One stack's recorded stages. LayerStages as run_model's; a decoder layer's cross-attention in
/// cross_heads (Q [n, dh], K and V [m, dh], scores and weights [n, m], head_output [n, dh]) and
/// cross_attn_out [n, d].
struct StackStages {
    std::vector<LayerStages> layers;
    std::vector<Mat> position_bias;  // [h][rows, rows] T5's bias (empty for BART)
    Mat ln_f;                        // [rows, d] the final norm's output (empty without one)
    Mat rollout;                     // [rows, rows] of the self-attention (empty unless asked)
};

struct Seq2SeqForward {
    StackStages encoder;  // rows = source tokens
    StackStages decoder;  // rows = target tokens
    Mat encoder_output;   // [m, d] what every cross-attention reads
    Mat logits;           // [n, V] (or [1, V] with all_logits = false)
};

struct Seq2SeqRunOptions {
    bool keep = true;        // every stage of every layer (else only the logits)
    bool all_logits = true;  // logits for every target position, else only the last
    bool rollout = true;
    int threads = 1;
    const std::atomic<bool>* cancel = nullptr;
};

/// Runs a t5 / bart model on source ids and decoder input ids (the start token first). Throws
/// attnviz::Error for an empty input, an id outside the vocabulary or more tokens than the positions.
Seq2SeqForward run_seq2seq(const ModelWeights& model, const std::vector<int>& source,
                           const std::vector<int>& target, const Seq2SeqRunOptions& options = {});

/// Bytes run_seq2seq needs beyond the weights, to refuse requests over the limit.
std::uint64_t seq2seq_forward_bytes(const ModelSpec& spec, int m, int n, const Seq2SeqRunOptions& options);

}  // namespace attnviz

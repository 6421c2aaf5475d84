// A real model's forward pass (core/model.hpp) shown with the single layer's tools: one layer's kept
// stages as a Trace (heatmaps, hover derivations, pin, export, step-through and the heads grid all
// draw a Trace), plus the model-wide summaries (residual stream norms, attention rollout).
//
// Stage names are the `attnviz dump --model` manifest's: ln_1, per head Q, K, V, scores, weights,
// head_output, then attn_out, resid_mid, ln_2, mlp_out, resid_post; and the summaries
// residual_stream ([L, n]: ‖resid_post‖₂ of every token after every layer) and rollout ([n, n]).
// The matrices are not copied: every Stage::data aliases the shared ModelForward.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/trace.hpp"

namespace attnviz {

/// Layer `layer` of `forward` as a Trace, followed by the summary stages. Per-head stages appear only
/// when that layer's heads were kept; the [n, d] stages only when keep_layers was set. tokens: [n].
/// Throws attnviz::Error for a layer out of range or tokens that do not match the forward's n.
/// With `weights` (the model the forward came from), hover derivations of Q, K, V, attn_out, ln_1 and
/// ln_2 also show the sums with the checkpoint's own weights; the trace then keeps them alive.
/// The whole model end to end: `embed` (token + position embeddings) first, then the layer's stages, then
/// `ln_f`, `logits` and `probs` ([1, V]: the last position, or `logits_row` when the forward kept every
/// row (an encoder's [MASK]); `vocab` [V] labels their columns, else the columns are numbered), then
/// the summaries.
Trace model_layer_trace(const ModelSpec& spec, std::shared_ptr<const ModelForward> forward, int layer,
                        std::shared_ptr<const std::vector<std::string>> tokens,
                        std::shared_ptr<const ModelWeights> weights = nullptr,
                        std::shared_ptr<const std::vector<std::string>> vocab = nullptr, int logits_row = -1);

/// A stage of a real model named as in the manifest, with model_stage_text()'s title, formula and
/// explanation; `data` is not copied.
Stage model_stage(const ModelSpec& spec, const std::string& name, int head, std::shared_ptr<const Mat> data,
                  Axis rows, Axis cols, ValueKind kind, double flops);

/// Per-layer L2 norm of each token's residual stream after the layer: [L, n] (rows of layers whose
/// resid_post was not kept are 0).
Mat residual_norms(const ModelForward& forward, int n);

/// Mean over heads of one layer's attention weights: [n, n] (empty when the heads were not kept).
Mat head_mean_weights(const LayerStages& layer);

/// The K/V head a query head reads (grouped-query attention: heads share K and V in groups).
int kv_head_of(const ModelSpec& spec, int head);

struct TokenProb {
    int id = 0;
    double p = 0;
};
/// The k most likely entries of a probability vector [V], most likely first (ties: lower id first).
std::vector<TokenProb> top_tokens(const Vec& probs, int k);

}  // namespace attnviz

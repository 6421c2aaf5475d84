// The parameters of one attention layer, as an input to compute_trace(): the trace computes with
// these and keeps a shared pointer to them, so hover explanations (core/stages/) read the very
// matrices the trace used instead of re-deriving them from a seed.
//
// Sources (each returns a LayerWeights for a config and the tokenised vocabulary):
//   seeded_layer_weights      random init from cfg.seed: the numbers attnviz has always drawn
//   apply_designed_heads      designed preset heads (head 0's W_Q, W_K built by hand, the
//                             embedding table's reserved dimensions rewritten)
//   layer_weights             seeded, then designed when cfg.preset is set (what compute_trace(cfg) uses)
//   checkpoint_layer_weights  one layer of a real model's checkpoint (core/model.hpp)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/shapes.hpp"

namespace attnviz {

struct ModelWeights;

/// Extra parameters of additive and bilinear scoring for one head (empty for other scorings).
struct ScoringParams {
    Mat W_q;  // [d_k, hidden] (additive)
    Mat W_k;  // [d_k, hidden] (additive)
    Vec w_v;  // [hidden]      (additive)
    Mat W;    // [d_k, d_k]    (bilinear)
};

struct HeadWeights {
    std::shared_ptr<const Mat> W_Q;  // [d_model, d_k]
    std::shared_ptr<const Mat> W_K;  // [d_model, d_k]
    std::shared_ptr<const Mat> W_V;  // [d_model, d_v]
    RowVec b_Q, b_K, b_V;            // [1, d_k], [1, d_k], [1, d_v]; empty = no bias
    ScoringParams scoring;           // additive / bilinear parameters
    std::string designed;            // how a designed head was built ("" for learned or random)
};

struct LayerWeights {
    std::string source;                    // "seeded", "designed" or "checkpoint: <model> layer L"
    std::vector<std::string> vocab;        // [V]: the token each embedding row belongs to
    std::shared_ptr<const Mat> embedding;  // [V, d_model]
    std::shared_ptr<const Mat> positions;  // [P, d_model] learned PE rows (null unless learned)
    std::vector<HeadWeights> heads;        // h
    std::shared_ptr<const Mat> W_O;        // [h·d_v, d_model]
    RowVec b_O;                            // [1, d_model]; empty = no bias
    std::string embedding_note;            // sentence for the embedding stage ("" when none)
};

/// Seed of one weight matrix of the seeded source, from (config seed, head, slot); see
/// core/trace_internal.hpp for the slots.
ScoringParams seeded_scoring_params(const Config& cfg, int head, int d_k);

/// Random init from cfg.seed for `vocab` and `positions` learned-PE rows (used only with learned
/// PE): N(0, 1/d_model) for W_Q, W_K, W_V, N(0, 1/(h·d_v)) for W_O, N(0, 1) embeddings.
LayerWeights seeded_layer_weights(const Config& cfg, const std::vector<std::string>& vocab, int positions);

/// Designed heads: head kPresetHead's W_Q and W_K built by hand for cfg.preset, the embedding
/// table's reserved dimensions rewritten (core/presets.hpp). No-op for HeadPreset::None. Call
/// check_preset(cfg) first.
void apply_designed_heads(LayerWeights& w, const Config& cfg);

/// seeded_layer_weights, then apply_designed_heads: the weights compute_trace(cfg) uses.
LayerWeights layer_weights(const Config& cfg, const std::vector<std::string>& vocab, int positions);

/// One attention layer of a checkpoint: per head W_Q, W_K, W_V (a grouped-query head reads its
/// key/value group's), their biases, W_O and its bias; embedding rows model.wte[ids[v]] for each
/// vocab[v]; GPT-2's learned positions. cfg must match the model (d_model, heads, d_k = d_v =
/// d_head); throws attnviz::Error naming the first field or token that does not.
LayerWeights checkpoint_layer_weights(const ModelWeights& model, int layer, const Config& cfg,
                                      const std::vector<std::string>& vocab, const std::vector<int>& ids);

/// Throws attnviz::Error naming the first tensor of `w` whose shape does not fit `cfg` with n
/// queries, m keys (or that is missing).
void check_layer_weights(const LayerWeights& w, const Config& cfg, int n, int m);

}  // namespace attnviz

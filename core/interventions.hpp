// Interventions on a model's forward (issue 25): knock heads out, patch them from another run, and
// split the next token's logit into the parts of the residual stream. Everything goes through the one
// forward (core/decoder.hpp) and its hook points; these are pure functions of the loaded model and
// token ids, safe to call off the GUI's frame (each call reads the model, writes only its result).
//
// Definitions (issue 25; the CLI's `attnviz ablate | patch | attribute` and the GUI use exactly these):
// - loss of a text: mean natural-log cross-entropy of token i+1 given tokens 0..i, i = 0..n−2.
// - z(l, h): the `head_output` stage of layer l, head h ([n, dh], before the output projection).
//   Zero ablation sets it to 0 at every position; mean ablation sets every row to its mean over the n
//   positions (the mean of z(l, h) as it arrives in that run: with several heads ablated, a later
//   head's mean is taken after the earlier ablations; with one head it is the clean run's mean).
// - direct logit attribution at the last position: see direct_logit_attribution().
//
// Speed: a CleanRun keeps the residual entering every block, so a sweep over the heads of layer l
// resumes from layer l's input (earlier layers never run again) with the heads of that layer batched
// as sequences of one forward (one ablated head per sequence).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/model.hpp"

namespace attnviz {

/// One attention head: layer l, query head h. Written "L.H" ("3.7").
struct HeadRef {
    int layer = 0;
    int head = 0;
    bool operator==(const HeadRef& o) const { return layer == o.layer && head == o.head; }
};
/// "L.H".
std::string head_name(const HeadRef& head);
/// Parses "L.H" and checks it against the model: throws attnviz::Error naming the text ("head '3.x'
/// is not LAYER.HEAD", "head '12.0': layer 12 is out of range (the model has layers 0..11)").
HeadRef parse_head(const std::string& text, const ModelSpec& spec);
/// Throws attnviz::Error naming the head when it is outside the model.
void check_head(const HeadRef& head, const ModelSpec& spec);

enum class AblationMode { Zero, Mean };
const char* ablation_mode_name(AblationMode mode);  // "zero", "mean"

struct InterventionOptions {
    int threads = 1;                            // within each forward (heads, matrix columns)
    const std::atomic<bool>* cancel = nullptr;  // checked between blocks: throws Cancelled
    /// Sweeps only: called on the calling thread after each batch of heads, with heads done / total.
    std::function<void(int done, int total)> progress;
    /// ablation_sweep only: its losses average the predictions of tokens i + 1 for i ≥ loss_from (e.g.
    /// the repeated half of a text; compare with mean_loss(clean.token_loss, loss_from)); 0 = the text's
    /// loss as defined above.
    int loss_from = 0;
};

/// One unchanged run of the model on a text: what the interventions reuse.
struct CleanRun {
    std::vector<int> ids;
    std::vector<Mat> resid;    // [n_layer + 1][n, d]: resid[l] enters block l; resid[n_layer] is the
                               // final residual (before the final norm); resid[0] the embeddings
    std::vector<Mat> z;        // [n_layer][n, h·dh]: head outputs, head j in columns [j·dh, (j+1)·dh)
    std::vector<Mat> mlp_out;  // [n_layer][n, d]: each MLP's output with its bias (empty without MLP)
    RowVec last_logits;        // [V]: logits at the last position
    double loss = 0;           // the text's loss (NaN for a single token: nothing to predict)
    std::vector<double> token_loss;  // [n − 1]: −ln p(token i + 1 | tokens 0..i), i = 0..n−2
};

/// Runs the model once, keeping what the interventions reuse. Throws attnviz::Error for an empty input,
/// an id outside the vocabulary, more tokens than the model's positions.
CleanRun clean_run(const ModelWeights& model, const std::vector<int>& ids, const InterventionOptions& o = {});

/// Bytes a CleanRun of n tokens and a sweep's batched forward need beyond the weights (to refuse
/// requests over the app's memory limit before starting).
std::uint64_t intervention_bytes(const ModelSpec& spec, int n);

/// The loss of a text from its logits [n, V] (all positions): NaN when n < 2.
double text_loss(const Mat& logits, const std::vector<int>& ids);

/// logit(answer) − logit(wrong) of one row of logits.
double logit_difference(const RowVec& logits, int answer, int wrong);

struct InterventionResult {
    double loss = 0;                 // the text's loss in the changed run (NaN for one token)
    RowVec last_logits;              // [V]: its logits at the last position
    std::vector<double> token_loss;  // [n − 1]: each prediction's loss in the changed run
};

/// The mean of token_loss[from..] (the loss of the predictions i ≥ from); NaN when there are none.
double mean_loss(const std::vector<double>& token_loss, int from);

/// The text of `clean` run with the listed heads ablated together (empty list: the clean run's values).
InterventionResult run_ablated(const ModelWeights& model, const CleanRun& clean,
                               const std::vector<HeadRef>& heads, AblationMode mode,
                               const InterventionOptions& o = {});

/// Every head ablated alone: the loss of each run, [n_layer, n_head] (row l, column h); with
/// o.loss_from > 0, the loss of the predictions i ≥ loss_from.
Eigen::MatrixXd ablation_sweep(const ModelWeights& model, const CleanRun& clean, AblationMode mode,
                               const InterventionOptions& o = {});

/// The `target` run (the corrupt text) with the listed heads' z replaced by the `source` run's (the
/// clean text; both the same length).
InterventionResult run_patched(const ModelWeights& model, const CleanRun& source, const CleanRun& target,
                               const std::vector<HeadRef>& heads, const InterventionOptions& o = {});

/// Activation patching of every head alone, metric m = logit(answer) − logit(wrong) at the last position.
struct PatchSweep {
    double m_clean = 0, m_corrupt = 0;
    Eigen::MatrixXd m_patched;         // [n_layer, n_head]: m of the corrupt run with z(l, h) from the clean
    Eigen::MatrixXd patched_fraction;  // (m_patched − m_corrupt) / (m_clean − m_corrupt); NaN when
                                       // m_clean == m_corrupt
};
PatchSweep patch_sweep(const ModelWeights& model, const CleanRun& clean, const CleanRun& corrupt, int answer,
                       int wrong, const InterventionOptions& o = {});

/// One part of the final residual at the last position, as it reaches the target's logit.
struct AttributionPart {
    enum class Kind { Embed, Head, AttnBias, Mlp, NormBias };
    Kind kind = Kind::Embed;
    int layer = -1, head = -1;  // Head: both; AttnBias, Mlp: the layer
    std::string name;           // "embed", "L.H", "attn_bias.L", "mlp.L", "ln_f_bias"
    double value = 0;
};
struct Attribution {
    int target = 0;
    double logit = 0;  // the model's logit of the target at the last position
    double parts_sum = 0;  // Σ parts (equals logit up to float rounding: |Σ − logit| ≤ 1e-4·max(1, |logit|))
    std::vector<AttributionPart> parts;
};
/// Direct logit attribution of `target` at the last position. The final residual is the sum of: the
/// embedding ("embed": token + learned or sinusoidal position; RoPE models: the token embedding only),
/// each head's z(l, h) times its rows of the output projection ("L.H"), each attention output bias
/// ("attn_bias.L", only where the model has one), each MLP output with its bias ("mlp.L", only with an
/// MLP). Each part p goes through the final norm's linear part with the whole residual x's scale:
/// LayerNorm (p − mean(p)) / √(var(x) + ε) ⊙ w, RMSNorm p / √(mean(x²) + ε) ⊙ w, no norm p; the
/// LayerNorm bias is its own part ("ln_f_bias"); then the dot product with the target's unembedding
/// row. Order: embed, then per layer its heads, attn_bias, mlp; ln_f_bias last. Computed in double.
Attribution direct_logit_attribution(const ModelWeights& model, const CleanRun& run, int target);

/// The logit lens at the last position: the residual after the embeddings (layer −1) and after each
/// block (layers 0..n_layer−1) through the final norm and the unembedding, its top k tokens.
struct LensRow {
    int layer = -1;             // −1: the embeddings
    std::vector<int> ids;       // top k, most likely first (ties: lower id first)
    std::vector<double> probs;  // their softmax probabilities
};
std::vector<LensRow> logit_lens(const ModelWeights& model, const CleanRun& run, int k = 5);

}  // namespace attnviz

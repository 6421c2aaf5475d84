// Trace: the ordered list of named stages of one attention layer, computed in one call from a
// Config. Each stage carries its matrix, axis labels, shape, formula and a short explanation. The
// trace knows nothing about stepping through it or drawing it: the app holds a cursor into it.
//
// Stage names are fixed (other tools read them from `attnviz dump` manifests):
//   one_hot, embedding, positional, input, [source], [layernorm],
//   per head: W_Q, W_K, W_V, Q, K, V, [Q_rot, K_rot], [alibi],
//             softmax attention: scores, scaled, masked, weights
//             linear attention:  phi_Q, phi_K, KV, normalizer, weights (implied, display only)
//             head_output
//   concat, W_O, output, [residual], [layernorm_post]
// Bracketed stages appear only when the config uses them.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/layer_weights.hpp"
#include "core/shapes.hpp"

namespace attnviz {

/// What the numbers of a stage mean; decides the colour map and how hover explains a cell.
enum class ValueKind {
    Signed,       // any real number: diverging map symmetric about 0 (Q, K, V, scores, outputs)
    Probability,  // in [0, 1], rows sum to 1: sequential map with fixed 0..1 range (weights)
    NonNegative,  // >= 0, unbounded: sequential map from 0 to max (kernel values, normalizer, phi)
    Indicator,    // 0/1 (one_hot)
};

/// One axis of a stage's matrix.
struct Axis {
    enum class Kind { QueryTokens, KeyTokens, Vocabulary, Dimension, Single };
    Kind kind = Kind::Dimension;
    std::string name;  // e.g. "query tokens", "d_k", "vocabulary", "d_model"
    int size = 0;
    std::shared_ptr<const std::vector<std::string>> tokens;  // for token/vocabulary axes

    /// Label of index i: the token text for token/vocabulary axes, "i" for dimensions.
    std::string label(int i) const;
};

/// The language of the single layer's stage texts. Chinese gives a stage's Chinese title and explanation
/// where its entry has them (the formula is the same math); a variant without them stays English.
enum class TextLanguage { English, Chinese };

struct Stage {
    std::string name;         // stable id from the list above, e.g. "scores"
    int head = -1;            // head index, or -1 for stages that are not per head
    std::string title;        // human title, e.g. "Scores  S = QKᵀ"
    std::string formula;      // Unicode formula, e.g. "S = Q Kᵀ"
    std::string explanation;  // one paragraph for the learner
    /// The title and paragraph in Chinese (TextLanguage::Chinese), empty where the stage has none.
    std::string title_zh, explanation_zh;
    Axis rows, cols;
    ValueKind kind = ValueKind::Signed;
    double flops = 0;  // floating-point operations to compute this stage from the previous ones
    double bytes = 0;  // bytes of this stage's matrix (rows * cols * 4), even when derived lazily

    int n_rows() const { return rows.size; }
    int n_cols() const { return cols.size; }
    std::string shape_text() const;  // e.g. "n×d_k = 8×16"
    /// The title and paragraph to show for a language: the Chinese ones when asked for and present,
    /// else the English ones (never empty where the English is not).
    const std::string& title_for(TextLanguage l) const {
        return l == TextLanguage::Chinese && !title_zh.empty() ? title_zh : title;
    }
    const std::string& explanation_for(TextLanguage l) const {
        return l == TextLanguage::Chinese && !explanation_zh.empty() ? explanation_zh : explanation;
    }

    /// The matrix. Either stored, or derived on demand from stored stages (e.g. `scaled` is
    /// scores / √d_k and `masked` adds -inf; they are cheap and would otherwise cost n*m*4 bytes per
    /// head each). Thread-safe: deriving does not mutate the stage.
    Mat matrix() const;
    /// True when matrix() returns stored data without computing anything.
    bool stored() const { return data != nullptr; }
    /// Pointer to stored data, or nullptr for a derived stage.
    const Mat* stored_matrix() const { return data.get(); }

    /// One cell without copying the matrix: stored data read in place, a derived stage's cell
    /// computed on its own (whole-matrix derivation only for stages that have no cell rule).
    float at(int i, int j) const;
    /// Row i, [1, n_cols]: a view-sized copy of one row, never of the whole matrix (for stored
    /// stages and stages with a cell rule).
    RowVec row(int i) const;

    std::shared_ptr<const Mat> data;             // set for stored stages
    std::function<Mat()> derive;                 // set for derived stages
    std::function<float(int, int)> derive_cell;  // optional: one cell of derive(), same numbers
};

/// Where a stage lives, the way the app's cursor and the dump manifest name it: the layer of a model
/// (-1 for the single layer), the stage's name ("scores", "weights", ...) and its head (-1 for a stage
/// shared by all heads).
struct StageId {
    int layer = -1;
    std::string name;
    int head = -1;

    friend bool operator==(const StageId& a, const StageId& b) {
        return a.layer == b.layer && a.head == b.head && a.name == b.name;
    }
    friend bool operator!=(const StageId& a, const StageId& b) { return !(a == b); }
};

struct Trace {
    Config config;                                                 // what was computed (validated)
    std::shared_ptr<const std::vector<std::string>> query_tokens;  // n
    std::shared_ptr<const std::vector<std::string>> key_tokens;    // m (== query_tokens for self)
    std::shared_ptr<const std::vector<std::string>> vocab;         // V
    int n = 0, m = 0, d_model = 0, heads = 0, d_k = 0, d_v = 0;
    int layer = -1;                // the model layer this trace is (-1: the single layer)
    std::vector<Stage> stages;     // in computation order
    std::vector<Vec> row_entropy;  // per head: n entropies of the weight rows (nats)
    double compute_seconds = 0;    // wall time of compute_trace
    /// The parameters the trace computed with (null for traces that are not compute_trace's).
    std::shared_ptr<const LayerWeights> weights;
    /// Optional: how a cell of this trace was made, for traces that are not compute_trace's (a real
    /// model's layer, core/model_trace.hpp). explain_cell() calls it when set.
    std::function<std::vector<std::string>(const Trace&, int stage_index, int i, int j)> explain_hook;

    /// Index of the stage with this name and head (head ignored for non-head stages), or -1.
    int find(const std::string& name, int head = -1) const;
    const Stage* get(const std::string& name, int head = -1) const;
    /// Distinct stage names in order, each once (what a pipeline strip shows).
    std::vector<std::string> stage_names() const;
    /// The step-through list at head `head` (clamped to the trace's heads): each stage once, in
    /// computation order, per-head stages at that head, the others with head -1; layer = `layer`.
    std::vector<StageId> stage_ids(int head) const;
    /// The stage `id` names: its name and head (the head ignored for stages shared by all heads); a
    /// different layer than this trace's is nullptr.
    const Stage* get(const StageId& id) const;
    double total_flops() const;
    /// Bytes actually held by stored stages (shared data counted once).
    double stored_bytes() const;
};

struct ComputeOptions {
    int threads = 0;  // worker threads for the per-head work; 0 = hardware concurrency
    /// Polled between passes; when it becomes true compute_trace throws Cancelled.
    const std::atomic<bool>* cancel = nullptr;
};

/// Computes every stage for `cfg`. Throws ConfigError (invalid config), TextError (bad text) or
/// Cancelled. Heads are computed in parallel on `threads` threads; Eigen itself is single-threaded,
/// so the cost degrades gracefully when the other core is busy.
/// `weights` must fit cfg (check_layer_weights) and hold an embedding row for every token.
Trace compute_trace(const Config& cfg, std::shared_ptr<const LayerWeights> weights,
                    const ComputeOptions& options = {});
/// Convenience: the weights of layer_weights(cfg, ...) (seeded, designed heads when cfg.preset).
Trace compute_trace(const Config& cfg, const ComputeOptions& options = {});

/// The stage's matrix as it is drawn (GUI heatmaps and exported figures alike): the same numbers,
/// except that in `weights` the keys the mask hides are −∞ instead of 0. Their weight is exactly 0
/// because of the mask, not the data; drawn as 0 it would read as "attends a little", drawn hatched
/// the mask stays visible after softmax.
Mat display_matrix(const Trace& trace, const Stage& stage);

/// Vocabulary, ids and token strings the trace would use for `cfg` (tokenizes, applies `length`).
struct Tokenized {
    std::vector<std::string> query_tokens;  // n
    std::vector<std::string> key_tokens;    // m
    std::vector<std::string> vocab;         // V, in order of first appearance (queries then keys)
    std::vector<int> query_ids;             // n
    std::vector<int> key_ids;               // m
};
Tokenized tokenize_config(const Config& cfg);

}  // namespace attnviz

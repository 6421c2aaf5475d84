// The stage catalogue: one entry per stage name that any trace produces (a single attention layer's
// compute_trace and a real model's layer, core/model_trace.hpp), with its phase and value kind. What
// a stage IS lives here once; the traces and the app read it.
#pragma once

#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/trace.hpp"

namespace attnviz {

struct StageEntry {
    const char* name;   // the stable id, as in dumps and the state log ("scores")
    const char* phase;  // "embed", "project", "score", "normalise" or "combine" (the pipeline strip's groups)
    ValueKind kind;     // what its numbers usually mean
    bool kind_varies;   // true when the config can change the kind (kernel scores are NonNegative)
    const char* role;   // one line: what the stage is, independent of the config
};

/// Every entry, in computation order.
const std::vector<StageEntry>& stage_catalogue();
/// The entry for a stage name, or nullptr when no trace produces that name.
const StageEntry* find_stage_entry(const std::string& name);
/// A stage's texts as the app shows them (title, formula, one paragraph for the learner).
struct StageText {
    std::string title, formula, explanation;
};
/// The texts of a real model's layer stage (core/model_trace.hpp), worded for the model's family
/// (LayerNorm vs RMSNorm, learned positions vs RoPE, grouped-query heads); head −1 for per-token stages.
StageText model_stage_text(const ModelSpec& spec, const std::string& name, int head);

/// What the single layer's stage texts need beyond the config: sizes and what the weights say.
struct LayerTextContext {
    int n = 0, m = 0, V = 0;            // query tokens, key tokens, vocabulary size
    std::vector<std::string> designed;  // per head: how a designed head was built ("" otherwise)
    std::string embedding_note;         // what the weights' source changed in the embedding table
    bool implied_weights = true;        // linear attention: the implied n×m weights are shown
};
/// The texts of a stage of compute_trace's single layer (title, formula, explanation), worded for
/// the config: "the formula for stage X" lives here, compute_trace only computes and records.
StageText layer_stage_text(const Config& cfg, const LayerTextContext& context, const std::string& name,
                           int head);

/// The phase of a stage name ("combine" for names not in the catalogue).
std::string stage_phase_of(const std::string& name);

}  // namespace attnviz

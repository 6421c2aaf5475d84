// One stage, one entry. A stage of the single attention layer (core/trace.hpp) or of a real model's
// block (core/model_trace.hpp) is described in one place: its name, phase, value kind and role, its
// texts for the single layer and for a model, how hover explains one of its cells, and how the single
// layer records it from the forward pass (axes, FLOPs, stored or derived matrix).
//
// The entries live one file per phase, in computation order: core/stages/embed.cpp, project.cpp,
// score.cpp, normalise.cpp, combine.cpp and block.cpp (a real model's block); core/stage_catalogue.cpp
// lists the phases. Adding a stage is one entry in one of those files.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/config.hpp"
#include "core/model.hpp"
#include "core/trace.hpp"

namespace attnviz {

/// A stage's texts as the app shows them (title, formula, one paragraph for the learner).
struct StageText {
    std::string title, formula, explanation;
};

/// What the single layer's stage texts need beyond the config: sizes and what the weights say.
struct LayerTextContext {
    int n = 0, m = 0, V = 0;            // query tokens, key tokens, vocabulary size
    std::vector<std::string> designed;  // per head: how a designed head was built ("" otherwise)
    std::string embedding_note;         // what the weights' source changed in the embedding table
    bool implied_weights = true;        // linear attention: the implied n×m weights are shown
};

/// What a single-layer text function reads: the config, the context, the head (−1 for a stage shared
/// by the heads) and the pieces of wording several stages share.
struct LayerWords {
    LayerWords(const Config& cfg, const LayerTextContext& x, int head,
               TextLanguage language = TextLanguage::English);
    const Config& cfg;
    const LayerTextContext& x;
    int hd;
    TextLanguage lang;
    LayerModes modes;
    int d_k, d_v;
    std::string dk_s, dm_s;  // d_k and d_model as text

    bool zh() const { return lang == TextLanguage::Chinese; }
    /// The text in this language: `zh` when Chinese is asked for, else `en` (the two side by side in
    /// one entry, so a stage's wording has one home).
    std::string tr(std::string en, std::string zh) const {
        return this->zh() ? std::move(zh) : std::move(en);
    }
    std::string H() const;         // " (head 2)"
    std::string H_zh() const;      // "（头 2）"
    std::string in() const;        // what Q reads: "X" or "LN(X)"
    std::string kin() const;       // what K and V read: the query input, "Y" or "LN(Y)"
    std::string designed() const;  // this head's designed-head text ("" for a random head)
};

/// What a model text function reads: the spec, the head (−1 for per-token stages) and the wording of
/// the model's family (LayerNorm vs RMSNorm, learned positions vs RoPE, grouped-query heads).
struct ModelWords {
    ModelWords(const ModelSpec& spec, int head);
    const ModelSpec& s;
    int head;
    bool gpt2, layernorm, rope_pos, gelu, geglu;
    std::string h;                             // the head as a subscript ("" for −1)
    std::string norm, norm_formula, norm_why;  // "LayerNorm" / "RMSNorm" and how it works
    std::string shared;                        // grouped-query attention: which heads share K and V
    std::string rope, rope_end, bias;          // "RoPE(" … ")" and " + b" when the family has them
};

/// One cell of one single-layer stage, as hover asks about it.
struct CellQuery {
    const Trace& t;
    const Stage& st;
    const Config& c;
    int h;                     // the stage's head (−1 if shared)
    int i, j;                  // the cell, in range
    std::string ri, cj, cell;  // row label, column label, "[ri, cj]"
    BoolMat allowed;           // n × m, what the mask lets a query see
    bool visible(int qi, int kj) const { return allowed(qi, kj); }
};

class LayerRecorder;  // core/stages/layer_run.hpp

struct StageEntry {
    const char* name;   // the stable id, as in dumps and the state log ("scores")
    const char* phase;  // "embed", "project", "score", "normalise", "combine" or "output" (a model's
                        // final norm, logits and probabilities): the pipeline strip's groups
    ValueKind kind;     // what its numbers usually mean
    bool kind_varies;   // true when the config can change the kind (kernel scores are NonNegative)
    const char* role;   // one line: what the stage is, independent of the config
    bool per_head;      // one stage per head (the single layer records it inside the heads' loop)
    /// The single layer's texts (null: the single layer has no such stage).
    StageText (*layer_text)(const LayerWords&);
    /// A real model's texts (null: a model has no such stage).
    StageText (*model_text)(const ModelWords&);
    /// Hover: the lines deriving cell (i, j) of the single layer's stage (null: the value alone).
    void (*explain)(const CellQuery&, std::vector<std::string>& lines);
    /// Records the stage into the single layer's trace when the config uses it (null: not a stage
    /// of the single layer).
    void (*record)(LayerRecorder&, int head);
};

/// Every entry, in computation order (the phases' tables one after the other).
const std::vector<StageEntry>& stage_catalogue();
/// The entry for a stage name, or nullptr when no trace produces that name.
const StageEntry* find_stage_entry(const std::string& name);

/// The single layer's recording order: the entries before the heads, the per-head entries (recorded
/// for head 0, then head 1, …), the entries after the heads.
struct LayerStagePlan {
    std::vector<const StageEntry*> before, per_head, after;
};
const LayerStagePlan& layer_stage_plan();
/// The plan of any table: throws std::logic_error when its per-head entries are not contiguous.
LayerStagePlan make_layer_stage_plan(const std::vector<StageEntry>& entries);

/// Each phase's table (core/stages/<phase>.cpp), in computation order.
std::vector<StageEntry> embed_stages();
std::vector<StageEntry> project_stages();
std::vector<StageEntry> score_stages();
std::vector<StageEntry> normalise_stages();
std::vector<StageEntry> combine_stages();
std::vector<StageEntry> block_stages();

}  // namespace attnviz

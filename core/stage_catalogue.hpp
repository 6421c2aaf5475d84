// The stage catalogue: one entry per stage name that any trace produces (a single attention layer's
// compute_trace and a real model's layer, core/model_trace.hpp). The entries themselves (core/stage.hpp)
// live one file per phase in core/stages/; this is the lookup the traces and the app use.
#pragma once

#include <string>

#include "core/model.hpp"
#include "core/stage.hpp"
#include "core/trace.hpp"

namespace attnviz {

/// The texts of a real model's layer stage (core/model_trace.hpp), worded for the model's family
/// (LayerNorm vs RMSNorm, learned positions vs RoPE, grouped-query heads); head −1 for per-token stages.
StageText model_stage_text(const ModelSpec& spec, const std::string& name, int head);

/// The texts of a stage of compute_trace's single layer (title, formula, explanation), worded for
/// the config and the language: its entry's layer_text. Only meaningful for a stage the config's trace has.
StageText layer_stage_text(const Config& cfg, const LayerTextContext& context, const std::string& name,
                           int head, TextLanguage language = TextLanguage::English);

/// The phase of a stage name ("combine" for names not in the catalogue).
std::string stage_phase_of(const std::string& name);

}  // namespace attnviz

// An encoder–decoder (t5, bart) in the GUI: tokenizes the source and the target, runs run_seq2seq
// (core/seq2seq.hpp) and turns both stacks into the Traces the views draw. No OpenGL, no ImGui.
//
// Every encoder layer is a Trace of the source's bidirectional self-attention (no mask; T5's
// position_bias per head after the scores). Every decoder layer is one Trace of the whole block in
// computation order: the causal self-attention, resid_mid, then the cross-attention cross_Q, cross_K,
// cross_V, cross_scores, cross_weights, cross_head_output (rows = target tokens, columns = source
// tokens) and cross_attn_out, then the MLP, and the next-token logits and probs. The names are the
// `attnviz dump --model` manifest's.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "app/model_session.hpp"

namespace attnviz::app {

/// Runs `model` (spec.encoder_decoder) on `source` (the encoder's input, with the tokenizer's special
/// tokens) and the decoder's start token followed by `target`'s tokens. The result's forward, tokens,
/// ids and layers are the decoder's; encoder_layers, source_tokens and source_ids the encoder's.
/// Throws attnviz::Error (no source tokens, too many tokens, over the memory limit) or Cancelled.
ModelRun run_seq2seq_on_text(const LoadedModel& model, const std::string& source, const std::string& target,
                             int threads, const std::atomic<bool>* cancel);

/// The cross-attention rows' labels, one per target token: row i reads target token i (the first is the
/// start token) and writes token i + 1, so it is labelled "→ " + that token, a leading space dropped
/// (" lo" reads "→ lo"). The last row writes the token not chosen yet: "→ " + `next` + "?" when the
/// model's pick is known (the next-token panel's first token: "→ vidas?"), else "→ ?".
std::vector<std::string> cross_row_labels(const std::vector<std::string>& target,
                                          const std::optional<std::string>& next);

}  // namespace attnviz::app

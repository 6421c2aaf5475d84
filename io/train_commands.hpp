// Headless training:
//   attnviz train --task induction --layers 2 --heads 4 --d-model 64 --context 48 --steps N --seed S
//                 --out DIR [--threads T] [--lr LR] [--batch B] [--vocab V] [--weight-decay WD]
//                 [--no-norm] [--tied] [--eval-every K]
// writes DIR/model.safetensors + DIR/config.json (GPT-2 tensor names, Conv1D layout), DIR/metrics.csv
// (step, train_loss, heldout_loss, heldout_first_loss, heldout_repeat_loss, then L{l}H{h}_{score} for
// previous_token, induction, first_token, same_token) and DIR/summary.json (final losses, head scores,
// cliff_step: the first evaluated step whose held-out repeated-part loss fell below 1.0, or null).
#pragma once

#include <string>

#include "core/train.hpp"

namespace attnviz {

/// Writes DIR/model.safetensors and DIR/config.json of trained parameters (what `attnviz train`
/// writes; the GUI's Training lab saves through it too). DIR must exist. Each file is written whole
/// or not at all. Throws attnviz::Error naming the file.
void write_train_checkpoint(const std::string& dir, const Params<float>& params);

int run_train_command(int argc, char** argv);  // argv[0] == "train"

}  // namespace attnviz

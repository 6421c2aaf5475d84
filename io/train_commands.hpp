// Headless training:
//   attnviz train --task induction --layers 2 --heads 4 --d-model 64 --context 48 --steps N --seed S
//                 --out DIR [--threads T] [--lr LR] [--batch B] [--vocab V] [--weight-decay WD]
//                 [--no-norm | --norm layernorm|rmsnorm|none] [--mlp none|gelu|swiglu] [--d-ff F]
//                 [--positions learned|sinusoidal|rope] [--tied] [--eval-every K] [--init CHECKPOINT_DIR]
// writes DIR/model.safetensors + DIR/config.json (GPT-2 tensor names and Conv1D layout for GPT-2 choices,
// Llama names once a choice is Llama's: RMSNorm, SwiGLU or RoPE; config.json's attnviz_norm,
// attnviz_mlp, attnviz_positions say the mix for io/model_loader), DIR/metrics.csv
// (step, train_loss, heldout_loss, heldout_first_loss, heldout_repeat_loss, then L{l}H{h}_{score} for
// previous_token, induction, first_token, same_token) and DIR/summary.json (final losses, head scores,
// cliff_step: the first evaluated step whose held-out repeated-part loss fell below 1.0, or null).
//
//   attnviz grad --model DIR --tokens FILE.npy --out OUT [--threads T] [--adamw-steps K --lr LR
//   --weight-decay WD]
// loads a checkpoint written by `attnviz train`, reads integer token ids ([n] or [B, n]; inputs ids[...,
// :-1], targets ids[..., 1:]) and writes OUT/loss.npy (float64 scalar, mean cross-entropy), OUT/<tensor
// name>.npy (float32, the checkpoint's shape) for every parameter and OUT/manifest.json; with --adamw-steps K
// also OUT/adamw/ (config.json + model.safetensors) after K torch.optim.AdamW steps on that batch (fresh
// moments, constant lr, no clipping), to check the optimizer against torch from outside.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/train.hpp"

#include "io/checkpoint.hpp"  // the checkpoint folders train writes and --init reads
#include "io/files.hpp"

namespace attnviz {

int run_train_command(int argc, char** argv);  // argv[0] == "train"
int run_grad_command(int argc, char** argv);   // argv[0] == "grad"
/// Every check `attnviz train` / `grad` makes of its command line (flags, values, the model, the
/// token file, the output folder), without training, computing or writing anything; a text task's
/// file is not read. Throws UsageError / attnviz::Error as the commands do. For tests and fuzzing.
void check_train_arguments(int argc, char** argv);
void check_grad_arguments(int argc, char** argv);

/// Largest token file `attnviz grad` reads: 64 MiB (8 M int64 ids).
inline constexpr std::uint64_t kMaxTokenFileBytes = 64ull << 20;
/// Token ids from the bytes of a .npy file (`path` names it in messages): integer dtype (i1/i2/i4/i8,
/// u1/u2/u4/u8, little-endian), shape [n] or [B, n] with n >= 2, C or Fortran order. rows receives B (1
/// for [n]), cols n; the ids are [B, n] in C order. Throws attnviz::Error naming the file.
std::vector<std::int64_t> parse_token_npy(const std::string& bytes, const std::string& path, int& rows,
                                          int& cols);

}  // namespace attnviz

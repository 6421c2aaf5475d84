// Interventions on real models (issue 25; the math is core/interventions.hpp), each writing one JSON
// file whole or not at all:
//   attnviz ablate --model DIR (--text T | --ids I,J,…) [--mode zero|mean] [--heads L.H,…] --out OUT.json
//   attnviz patch --model DIR --clean T1 --corrupt T2 --answer A --wrong B --out OUT.json
//   attnviz attribute --model DIR (--text T | --ids I,J,…) [--target TOKEN] --out OUT.json
// Bad input (an unknown or out-of-range head, a target or answer that is not one token, texts of
// unequal length, an empty text) is one line on stderr naming the value, exit status 2.
#pragma once

namespace attnviz {

/// {"loss": <the text's loss>, "mode": "zero"|"mean", "heads": [{"layer", "head", "loss", "delta_loss"}, …]}:
/// every head ablated alone; with --heads, the listed heads together as one entry
/// {"heads_ablated": ["L.H", …], "loss", "delta_loss"} (with "layer" and "head" too when one head is listed).
int run_ablate_command(int argc, char** argv);  // argv[0] == "ablate"

/// {"answer", "answer_id", "wrong", "wrong_id", "m_clean", "m_corrupt", "heads": [{"layer", "head",
/// "m_patched", "patched_fraction"}, …]} with m = logit(answer) − logit(wrong) at the last position and
/// patched_fraction = (m_patched − m_corrupt) / (m_clean − m_corrupt).
int run_patch_command(int argc, char** argv);  // argv[0] == "patch"

/// {"target", "target_id", "logit", "parts_sum", "parts": [{"name", "value"}, …], "logit_lens":
/// [{"layer": "embed" | L, "top": [{"token", "id", "prob"} × 5]}, …]}.
int run_attribute_command(int argc, char** argv);  // argv[0] == "attribute"

}  // namespace attnviz

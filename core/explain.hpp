// Hover explanations: how one cell of one stage was made, written out with the real numbers.
//   S[creature, fluffy] = q₃·k₁ = Σₖ q₃ₖ k₁ₖ
//   = (0.12)(−0.40) + (0.98)(0.33) + … (16 terms)
//   = 1.234
// The last line is always "= <value>" (or "= −∞" for a masked score), recomputed from the inputs
// shown, so it can be checked against the stage's matrix.
#pragma once

#include <string>
#include <vector>

#include "core/trace.hpp"

namespace attnviz {

/// Lines explaining cell (i, j) of trace.stages[stage_index]. Out-of-range indices give a single
/// line saying so (never throws for bad indices).
std::vector<std::string> explain_cell(const Trace& trace, int stage_index, int i, int j);

}  // namespace attnviz

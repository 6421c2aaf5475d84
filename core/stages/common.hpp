// Helpers the phase files (core/stages/*.cpp) share: numbers in texts, reading a trace's stages,
// and the hover derivations that stages of different phases have in common. Internal to core/.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/cell_text.hpp"
#include "core/layer_weights.hpp"
#include "core/stage.hpp"

namespace attnviz::stages {

using cell_text::f;
using cell_text::final_line;
using cell_text::sub;
using Lines = std::vector<std::string>;

/// A number as a text shows it (ostream's default: 6 significant digits, no trailing zeros).
std::string text_num(double v);

/// "(a)(b) + (c)(d) + … (N terms)" and the exact sum of all N products.
struct DotText {
    std::string text;
    double sum = 0;
};
DotText dot_text(int count, const std::function<double(int)>& a, const std::function<double(int)>& b);

/// Why a key is hidden: "the causal mask (a token may not see later tokens)", …
std::string mask_reason(const Config& c);
/// The matrix of a stage of the trace (empty when the trace has none).
Mat stage_matrix(const Trace& t, const std::string& name, int head = -1);
/// What Q reads (LN(X) or X) and what K, V read (LN(Y) or Y).
Mat query_input(const Trace& t);
Mat key_input(const Trace& t);
/// The parameters of head h the trace computed with (never re-derived from a seed here).
const HeadWeights& head_weights(const Trace& t, int h);

/// Hover for a sum of two stages (input = embedding + positional, residual = input + output).
void explain_sum(const CellQuery& q, Lines& L);
/// Hover for a LayerNorm of a stage (layernorm of input, layernorm_post of residual or output).
void explain_layernorm(const CellQuery& q, Lines& L);
/// Hover for a weight matrix (W_Q, W_K, W_V, W_O): a learned or designed parameter.
void explain_parameter(const CellQuery& q, Lines& L);

}  // namespace attnviz::stages

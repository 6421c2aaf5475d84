// Which tokens sampling can draw: the next-token distribution at temperature T, cut by top-k and then
// top-p (renormalised over the top-k first, as Hugging Face's TopK then TopP warpers). The model
// strip draws it: the tokens sampling cannot pick greyed, the cut-off marked.
#pragma once

#include <vector>

#include "core/shapes.hpp"

namespace attnviz {

struct SamplingCutView {
    Vec tempered;            // [V] softmax(logits / T)
    std::vector<int> order;  // [V] ids by descending probability (ties: lower id first)
    int kept = 0;            // sampling draws only order[0 .. kept)
    int kept_by_k = 0;       // how many top-k alone keeps (V when off)
    double kept_mass = 0;    // Σ tempered over the kept tokens
};

/// logits [V]; T > 0; top_k >= 0 (0 = off); top_p in (0, 1] (1 = off). At least one token is kept.
/// Throws ConfigError for knobs out of range, Error for empty logits.
SamplingCutView sampling_cut(const RowVec& logits, double temperature, int top_k, double top_p);

}  // namespace attnviz

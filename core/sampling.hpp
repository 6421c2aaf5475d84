// What sampling does to the model's next-token distribution: temperature, then top-k, then top-p
// (nucleus), renormalised. One function, used by the next-token panel (to show which tokens can be
// drawn) and by sample_next_token (`attnviz generate`, the panel's "Append sampled").
#pragma once

#include <vector>

#include "core/shapes.hpp"

namespace attnviz {

/// Which rule set the last token sampling can pick (order[kept - 1]).
enum class SamplingCut { None, Greedy, TopK, TopP };

struct SamplingDistribution {
    Vec model;               // [V] softmax(logits): the model's raw probabilities (T = 1)
    Vec tempered;            // [V] softmax(logits / T); T = 0: one-hot at the argmax (greedy)
    Vec sampling;            // [V] tempered, kept tokens only, renormalised to sum 1; 0 for the others
    std::vector<int> order;  // [V] token ids by descending logit (ties: lower id first)
    int kept = 0;            // sampling can draw exactly order[0 .. kept)
    SamplingCut cut = SamplingCut::None;
};

/// logits: [V], one row. temperature >= 0 (0 = greedy: only the argmax is kept); top_k >= 0 (0 = off):
/// keep the k most likely; top_p in (0, 1] (1 = off): of those, keep the smallest most-likely-first
/// prefix whose probability, renormalised over the top-k, reaches top_p (as Hugging Face's
/// TopKLogitsWarper then TopPLogitsWarper). At least one token is always kept. Throws ConfigError on
/// knobs out of range, Error on empty logits.
SamplingDistribution sampling_distribution(const RowVec& logits, double temperature, int top_k, double top_p);

/// Draws from d.sampling with u uniform in [0, 1): walks order[0 .. kept) summing probabilities.
int sample_from(const SamplingDistribution& d, double u);

}  // namespace attnviz

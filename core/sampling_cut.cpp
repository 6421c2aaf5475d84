#include "core/sampling_cut.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "core/model.hpp"

namespace attnviz {

SamplingCutView sampling_cut(const RowVec& logits, double temperature, int top_k, double top_p) {
    if (logits.size() == 0) throw Error("sampling: no logits");
    if (!(temperature > 0) || !std::isfinite(temperature)) throw ConfigError("temperature must be > 0");
    if (top_k < 0) throw ConfigError("top-k must be >= 0");
    if (!(top_p > 0 && top_p <= 1)) throw ConfigError("top-p must be in (0, 1]");
    SamplingCutView v;
    v.tempered = next_token_probs(logits, temperature);  // [V]
    const int V = int(v.tempered.size());
    v.order.resize(std::size_t(V));
    std::iota(v.order.begin(), v.order.end(), 0);
    std::stable_sort(v.order.begin(), v.order.end(),
                     [&](int a, int b) { return v.tempered(a) > v.tempered(b); });
    v.kept_by_k = top_k > 0 ? std::min(top_k, V) : V;
    double mass_k = 0;
    for (int r = 0; r < v.kept_by_k; ++r) mass_k += v.tempered(v.order[std::size_t(r)]);
    // top-p over the top-k renormalised: the fewest most-likely tokens whose share reaches p
    v.kept = v.kept_by_k;
    if (top_p < 1) {
        double cum = 0;
        for (int r = 0; r < v.kept_by_k; ++r) {
            cum += v.tempered(v.order[std::size_t(r)]) / mass_k;
            if (cum >= top_p) {
                v.kept = r + 1;
                break;
            }
        }
    }
    v.kept = std::max(1, v.kept);
    for (int r = 0; r < v.kept; ++r) v.kept_mass += v.tempered(v.order[std::size_t(r)]);
    return v;
}

}  // namespace attnviz

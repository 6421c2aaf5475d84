#include "core/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"

namespace attnviz {

SamplingDistribution sampling_distribution(const RowVec& logits, double temperature, int top_k,
                                           double top_p) {
    if (logits.size() == 0) throw Error("sampling: no logits");
    if (!(temperature >= 0) || !std::isfinite(temperature)) throw ConfigError("temperature must be >= 0");
    if (top_k < 0) throw ConfigError("top-k must be >= 0");
    if (!(top_p > 0 && top_p <= 1)) throw ConfigError("top-p must be in (0, 1]");
    const Eigen::Index V = logits.size();
    SamplingDistribution d;
    d.order.resize(std::size_t(V));
    std::iota(d.order.begin(), d.order.end(), 0);
    std::stable_sort(d.order.begin(), d.order.end(), [&](int a, int b) { return logits(a) > logits(b); });

    // softmax(z / t) in double, max subtracted (the max is order[0]'s logit).
    const double top = double(logits(d.order[0]));
    auto softmax = [&](double t) {
        Eigen::ArrayXd e(V);
        for (Eigen::Index i = 0; i < V; ++i) e(i) = std::exp((double(logits(i)) - top) / t);
        return Eigen::ArrayXd(e / e.sum());
    };
    const Eigen::ArrayXd model = softmax(1.0);  // [V]
    Eigen::ArrayXd tempered;                    // [V]
    std::size_t keep = std::size_t(V);
    if (temperature == 0) {
        tempered = Eigen::ArrayXd::Zero(V);
        tempered(d.order[0]) = 1.0;
        keep = 1;
        d.cut = SamplingCut::Greedy;
    } else {
        tempered = softmax(temperature);
        if (top_k > 0 && std::size_t(top_k) < keep) {
            keep = std::size_t(top_k);
            d.cut = SamplingCut::TopK;
        }
        if (top_p < 1) {
            double in_k = 0;
            for (std::size_t i = 0; i < keep; ++i) in_k += tempered(d.order[i]);
            double cum = 0;
            for (std::size_t i = 0; i < keep; ++i) {
                cum += tempered(d.order[i]) / in_k;
                if (cum >= top_p) {
                    if (i + 1 < keep) {
                        keep = i + 1;
                        d.cut = SamplingCut::TopP;
                    }
                    break;
                }
            }
        }
    }
    double total = 0;
    for (std::size_t i = 0; i < keep; ++i) total += tempered(d.order[i]);
    Eigen::ArrayXd sampling = Eigen::ArrayXd::Zero(V);
    for (std::size_t i = 0; i < keep; ++i) sampling(d.order[i]) = tempered(d.order[i]) / total;
    d.model = model.cast<float>().matrix();
    d.tempered = tempered.cast<float>().matrix();
    d.sampling = sampling.cast<float>().matrix();
    d.kept = int(keep);
    return d;
}

int sample_from(const SamplingDistribution& d, double u) {
    if (d.kept <= 0) throw Error("sampling: nothing to sample from");
    double total = 0;
    for (int i = 0; i < d.kept; ++i) total += double(d.sampling(d.order[std::size_t(i)]));
    const double target = std::clamp(u, 0.0, 1.0) * total;
    double acc = 0;
    for (int i = 0; i < d.kept; ++i) {
        acc += double(d.sampling(d.order[std::size_t(i)]));
        if (target < acc) return d.order[std::size_t(i)];
    }
    return d.order[std::size_t(d.kept - 1)];
}

}  // namespace attnviz

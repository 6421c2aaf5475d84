// Softmax vs linear attention on the same Q, K, V: the math behind the app's compare view, in core
// so that it is tested and the GUI only draws it.
#pragma once

#include "core/config.hpp"
#include "core/shapes.hpp"

namespace attnviz {

struct SoftmaxLinearComparison {
    Mat A_soft;  // [n, m]  softmax(mask(QKᵀ/√d_k) / T); hidden keys −∞ when hide_masked
    Mat A_lin;   // [n, m]  φ(q_i)·φ(k_j) / Σ_j' φ(q_i)·φ(k_j'); hidden keys −∞ when hide_masked
    Mat D;       // [n, m]  A_soft − A_lin (hidden keys 0)
    double out_diff = 0;   // ‖O_soft − O_lin‖_F with O = A V
    double out_rel = 0;    // out_diff / ‖O_soft‖_F (0 when O_soft is 0)
    double max_abs_d = 0;  // max |D|
};

/// Q: [n, d_k], K: [m, d_k], V: [m, d_v], allowed: [n, m] (empty: no mask); temperature > 0.
/// With hide_masked, the keys the mask hides read −∞ in A_soft and A_lin (drawn hatched).
SoftmaxLinearComparison compare_softmax_linear(const Mat& Q, const Mat& K, const Mat& V,
                                               const BoolMat& allowed, double temperature, PhiKind phi,
                                               bool hide_masked);

}  // namespace attnviz

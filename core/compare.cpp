// GCC 12 false positive inside its AVX-512 intrinsics when Eigen multiplies (GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "core/compare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "core/ops.hpp"

namespace attnviz {

SoftmaxLinearComparison compare_softmax_linear(const Mat& Q, const Mat& K, const Mat& V,
                                               const BoolMat& allowed, double temperature, PhiKind phi,
                                               bool hide_masked) {
    if (Q.cols() != K.cols() || K.rows() != V.rows())
        throw Error("compare: Q is " + std::to_string(Q.rows()) + "×" + std::to_string(Q.cols()) + ", K is " +
                    std::to_string(K.rows()) + "×" + std::to_string(K.cols()) + ", V is " +
                    std::to_string(V.rows()) + "×" + std::to_string(V.cols()) +
                    ": need Q and K with the same width and K, V with the same rows");
    SoftmaxLinearComparison r;
    // Softmax attention: A = softmax(mask(Q Kᵀ / √d_k) / T).
    const Mat S = dot_scores(Q, K) / std::sqrt(float(std::max<Eigen::Index>(1, Q.cols())));  // [n, m]
    r.A_soft = softmax_rows(apply_mask(S, allowed), temperature);                            // [n, m]

    // Linear attention's implied weights: φ(q_i)·φ(k_j), normalised per row.
    const Mat phi_Q = phi_map(Q, phi, /*is_key=*/false);        // [n, d_k]
    const Mat phi_K = phi_map(K, phi, /*is_key=*/true);         // [m, d_k]
    r.A_lin = linear_attention_weights(phi_Q, phi_K, allowed);  // [n, m]

    const Mat O_soft = r.A_soft * V;  // [n, d_v]
    const Mat O_lin = r.A_lin * V;    // [n, d_v] (equals linear attention's O(n) output)
    r.D = r.A_soft - r.A_lin;         // [n, m]
    r.out_diff = double((O_soft - O_lin).norm());
    const double base = double(O_soft.norm());
    r.out_rel = base > 0 ? r.out_diff / base : 0.0;
    r.max_abs_d = r.D.size() ? double(r.D.cwiseAbs().maxCoeff()) : 0.0;
    if (hide_masked && allowed.size() != 0) {
        const Mat hidden = Mat::Constant(r.A_soft.rows(), r.A_soft.cols(),
                                         -std::numeric_limits<float>::infinity());  // [n, m]
        r.A_soft = allowed.select(r.A_soft, hidden);
        r.A_lin = allowed.select(r.A_lin, hidden);
    }
    return r;
}

}  // namespace attnviz

#include "core/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnviz {

std::vector<RowSpan> visible_spans(const BoolMat* allowed, Eigen::Index n, Eigen::Index m) {
    std::vector<RowSpan> spans(std::size_t(n), RowSpan{0, m - 1});
    if (!allowed) return spans;
    for (Eigen::Index i = 0; i < n; ++i) {
        const bool* b = allowed->data() + i * m;
        Eigen::Index lo = 0, hi = m - 1;
        while (lo < m && !b[lo]) ++lo;
        while (hi >= lo && !b[hi]) --hi;
        spans[std::size_t(i)] = RowSpan{lo, hi};
    }
    return spans;
}

float softmax_row(const float* s_row, Eigen::Index i, Eigen::Index lo, Eigen::Index len, float scale,
                  double slope, const bool* allowed_row, float inv_T, Eigen::ArrayXf& x, Mat& A,
                  Eigen::Index a_row, bool entropy) {
    const Eigen::Index m = A.cols();
    const float neg_inf = -std::numeric_limits<float>::infinity();
    auto row = A.row(a_row).array();  // [1, m]
    if (len <= 0) {
        row.setZero();
        return 0;
    }
    row.head(lo).setZero();
    row.tail(m - lo - len).setZero();
    auto xs = x.head(len);  // one row of `masked`, visible span only
    xs = Eigen::Map<const Eigen::ArrayXf>(s_row + lo, len) * scale;
    if (slope != 0.0)
        for (Eigen::Index j = 0; j < len; ++j) xs(j) -= float(slope * std::abs(double(i - (lo + j))));
    if (allowed_row) {  // a plain loop vectorises; Eigen 3.4's select() does not
        const bool* b = allowed_row + lo;
        float* xp = xs.data();
        for (Eigen::Index j = 0; j < len; ++j) xp[j] = b[j] ? xp[j] : neg_inf;
    }
    const float mx = xs.maxCoeff();
    auto a = row.segment(lo, len);
    if (mx == neg_inf) {
        a.setZero();
        return 0;
    }
    xs = (xs - mx) * inv_T;  // ≤ 0, −∞ for hidden keys
    a = xs.exp().transpose();
    // Eigen's SSE exp(−∞) returns a denormal, not 0: hidden keys must get exactly 0 weight.
    float* ap = A.row(a_row).data() + lo;
    const float* xp = xs.data();
    for (Eigen::Index j = 0; j < len; ++j) ap[j] = xp[j] == neg_inf ? 0.0f : ap[j];
    const float Z = a.sum();  // ≥ 1: the max contributes exp(0)
    a *= 1.0f / Z;
    if (!entropy) return 0;
    // Σ a_j (x_j − max)/T over visible keys (hidden ones have a_j = 0 and x_j = −∞: skip them).
    float ax = 0;
    for (Eigen::Index j = 0; j < len; ++j) ax += ap[j] > 0.0f ? ap[j] * xp[j] : 0.0f;
    return std::log(Z) - ax;
}

void fused_softmax(const Mat& S, float scale, double alibi_slope_or_0, const BoolMat* allowed,
                   const std::vector<RowSpan>& spans, double T, Mat& A, Vec& H) {
    const Eigen::Index n = S.rows(), m = S.cols();
    A.resize(n, m);  // n x m
    H.resize(n);     // n
    const float inv_T = float(1.0 / T);
    Eigen::ArrayXf x(m);  // scratch: one row of `masked`
    for (Eigen::Index i = 0; i < n; ++i) {
        const Eigen::Index lo = spans[std::size_t(i)].first, len = spans[std::size_t(i)].last - lo + 1;
        H(i) = softmax_row(S.row(i).data(), i, lo, len, scale, alibi_slope_or_0,
                           allowed ? allowed->data() + i * m : nullptr, inv_T, x, A, i, true);
    }
}

Mat weights_times_values(const Mat& A, const Mat& V, const std::vector<RowSpan>& spans) {
    const Eigen::Index n = A.rows();
    Mat out(n, V.cols());  // n x d_v
    constexpr Eigen::Index kBlock = 128;
    for (Eigen::Index r0 = 0; r0 < n; r0 += kBlock) {
        const Eigen::Index rows = std::min(kBlock, n - r0);
        Eigen::Index lo = A.cols(), hi = -1;
        for (Eigen::Index i = r0; i < r0 + rows; ++i) {
            const RowSpan& sp = spans[std::size_t(i)];
            if (sp.first > sp.last) continue;
            lo = std::min(lo, sp.first);
            hi = std::max(hi, sp.last);
        }
        if (hi < lo) {
            out.middleRows(r0, rows).setZero();
            continue;
        }
        out.middleRows(r0, rows).noalias() =
            A.block(r0, lo, rows, hi - lo + 1) * V.middleRows(lo, hi - lo + 1);
    }
    return out;
}

}  // namespace attnviz

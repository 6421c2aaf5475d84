// Tests of the mask predicate (one cell of make_mask) and of compare_softmax_linear (the compare
// view's math): against the mask matrices, the compare view's former inline composition of the ops,
// and a plain-loop reference in double.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "core/compare.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/matrix_expect.hpp"
#include "core/error.hpp"
#include "core/ops.hpp"

namespace attnviz {
namespace {

Mat random_mat(int rows, int cols, std::uint64_t seed) {
    Rng rng(seed);
    Mat M(rows, cols);  // [rows, cols]
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) M(i, j) = float(rng.normal());
    return M;
}

Config config_with(MaskKind kind) {
    Config c;
    c.mask = kind;
    c.window = 2;
    c.valid_length = 3;
    c.custom_mask.set_blocked(0, 1, true);
    c.custom_mask.set_blocked(2, 0, true);
    c.custom_mask.set_blocked(4, 4, true);
    return c;
}

constexpr MaskKind kAllMasks[] = {MaskKind::None, MaskKind::Causal, MaskKind::Padding, MaskKind::Window,
                                  MaskKind::Custom};

TEST(MaskPredicate, AgreesWithTheMaskMatrixInEveryCell) {
    for (MaskKind kind : kAllMasks) {
        for (int valid : {-1, 0, 3}) {
            Config c = config_with(kind);
            c.valid_length = valid;
            for (auto [n, m] : {std::pair{5, 5}, std::pair{3, 6}, std::pair{6, 2}}) {
                const BoolMat allowed = make_mask(c, n, m);  // [n, m]
                for (int i = 0; i < n; ++i)
                    for (int j = 0; j < m; ++j) {
                        EXPECT_EQ(masked(c, i, j), !allowed(i, j))
                            << "mask " << int(kind) << " valid " << valid << " " << n << "x" << m << " cell ("
                            << i << ", " << j << ")";
                        EXPECT_EQ(mask_allows(c, i, j), allowed(i, j)) << "cell (" << i << ", " << j << ")";
                    }
            }
        }
    }
}

TEST(MaskPredicate, KnownCells) {
    EXPECT_FALSE(masked(config_with(MaskKind::None), 0, 9));
    EXPECT_TRUE(masked(config_with(MaskKind::Causal), 1, 2));
    EXPECT_FALSE(masked(config_with(MaskKind::Causal), 2, 2));
    EXPECT_TRUE(masked(config_with(MaskKind::Padding), 0, 3));
    EXPECT_FALSE(masked(config_with(MaskKind::Padding), 9, 2));
    EXPECT_TRUE(masked(config_with(MaskKind::Window), 3, 1));  // window 2: keys 2, 3
    EXPECT_FALSE(masked(config_with(MaskKind::Window), 3, 2));
    EXPECT_TRUE(masked(config_with(MaskKind::Custom), 2, 0));
    EXPECT_FALSE(masked(config_with(MaskKind::Custom), 0, 0));
}

// The compare view's former code, verbatim (app/panels/compare_view.cpp before the move to core).
SoftmaxLinearComparison old_compare(const Mat& Q, const Mat& K, const Mat& V, const Config& cfg,
                                    PhiKind phi) {
    SoftmaxLinearComparison r;
    const BoolMat allowed = make_mask(cfg, int(Q.rows()), int(K.rows()));
    const Mat S = dot_scores(Q, K) / std::sqrt(float(std::max<Eigen::Index>(1, Q.cols())));
    Mat A_soft = softmax_rows(apply_mask(S, allowed), cfg.temperature);
    const Mat phi_Q = phi_map(Q, phi, false);
    const Mat phi_K = phi_map(K, phi, true);
    Mat A_lin = linear_attention_weights(phi_Q, phi_K, allowed);
    const Mat O_soft = A_soft * V;
    const Mat O_lin = A_lin * V;
    r.D = A_soft - A_lin;
    r.out_diff = double((O_soft - O_lin).norm());
    const double base = double(O_soft.norm());
    r.out_rel = base > 0 ? r.out_diff / base : 0.0;
    r.max_abs_d = r.D.size() ? double(r.D.cwiseAbs().maxCoeff()) : 0.0;
    if (cfg.mask != MaskKind::None) {
        const Mat hidden =
            Mat::Constant(A_soft.rows(), A_soft.cols(), -std::numeric_limits<float>::infinity());
        A_soft = allowed.select(A_soft, hidden);
        A_lin = allowed.select(A_lin, hidden);
    }
    r.A_soft = A_soft;
    r.A_lin = A_lin;
    return r;
}

TEST(CompareSoftmaxLinear, MatchesTheCompareViewsFormerNumbersExactly) {
    const Mat Q = random_mat(5, 4, 1), K = random_mat(5, 4, 2),
              V = random_mat(5, 3, 3);  // [5, 4] [5, 4] [5, 3]
    for (MaskKind kind : kAllMasks) {
        for (PhiKind phi : {PhiKind::Elu1, PhiKind::Relu, PhiKind::Softmax}) {
            Config cfg = config_with(kind);
            cfg.temperature = 0.7;
            const SoftmaxLinearComparison want = old_compare(Q, K, V, cfg, phi);
            const SoftmaxLinearComparison got = compare_softmax_linear(
                Q, K, V, make_mask(cfg, 5, 5), cfg.temperature, phi, kind != MaskKind::None);
            SCOPED_TRACE("mask " + std::to_string(int(kind)) + " phi " + std::to_string(int(phi)));
            EXPECT_MATRIX_NEAR(got.A_soft, want.A_soft, 0.0);
            EXPECT_MATRIX_NEAR(got.A_lin, want.A_lin, 0.0);
            EXPECT_MATRIX_NEAR(got.D, want.D, 0.0);
            EXPECT_EQ(got.out_diff, want.out_diff);
            EXPECT_EQ(got.out_rel, want.out_rel);
            EXPECT_EQ(got.max_abs_d, want.max_abs_d);
        }
    }
}

TEST(CompareSoftmaxLinear, AgreesWithAPlainLoopReference) {
    const int n = 4, m = 6, d = 3;
    const Mat Q = random_mat(n, d, 11), K = random_mat(m, d, 12), V = random_mat(m, 2, 13);
    Config cfg = config_with(MaskKind::Causal);
    const SoftmaxLinearComparison got =
        compare_softmax_linear(Q, K, V, make_mask(cfg, n, m), 1.0, PhiKind::Elu1, /*hide_masked=*/true);
    auto elu1 = [](double x) { return x > 0 ? x + 1 : std::exp(x); };
    Mat soft(n, m), lin(n, m);  // [n, m]
    for (int i = 0; i < n; ++i) {
        double zs = 0, zl = 0, mx = -1e300;
        for (int j = 0; j <= i && j < m; ++j) {
            double s = 0;
            for (int k = 0; k < d; ++k) s += double(Q(i, k)) * K(j, k);
            mx = std::max(mx, s / std::sqrt(double(d)));
        }
        for (int j = 0; j < m; ++j) {
            double s = 0, l = 0;
            for (int k = 0; k < d; ++k) s += double(Q(i, k)) * K(j, k), l += elu1(Q(i, k)) * elu1(K(j, k));
            soft(i, j) = j <= i ? float(std::exp(s / std::sqrt(double(d)) - mx)) : 0.0f;
            lin(i, j) = j <= i ? float(l) : 0.0f;
            zs += soft(i, j), zl += lin(i, j);
        }
        for (int j = 0; j < m; ++j) {
            soft(i, j) = j <= i ? float(soft(i, j) / zs) : -std::numeric_limits<float>::infinity();
            lin(i, j) = j <= i ? float(lin(i, j) / zl) : -std::numeric_limits<float>::infinity();
        }
    }
    EXPECT_MATRIX_NEAR(got.A_soft, soft, 1e-5);
    EXPECT_MATRIX_NEAR(got.A_lin, lin, 1e-5);
    EXPECT_GT(got.max_abs_d, 0.0);
}

TEST(CompareSoftmaxLinear, MismatchedShapesThrowOneLine) {
    EXPECT_THROW(compare_softmax_linear(random_mat(2, 3, 1), random_mat(2, 4, 2), random_mat(2, 1, 3),
                                        BoolMat(), 1.0, PhiKind::Elu1, false),
                 Error);
    EXPECT_THROW(compare_softmax_linear(random_mat(2, 3, 1), random_mat(2, 3, 2), random_mat(3, 1, 3),
                                        BoolMat(), 1.0, PhiKind::Elu1, false),
                 Error);
}

}  // namespace
}  // namespace attnviz

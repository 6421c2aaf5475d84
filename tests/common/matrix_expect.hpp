// Matrix comparisons for GoogleTest that say which cell failed and both values, e.g.
//   weights(3, 5): actual 0.2500001 vs expected 0.3 (|diff| 0.05 > tol 1e-05)
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>

#include <Eigen/Core>

namespace attnviz::testing {

/// Passes when A and B have the same shape and every cell satisfies
/// |a - b| <= abs_tol + rel_tol * max(|a|, |b|). Infinities must match exactly (same sign);
/// NaN never matches. Reports the first few failing cells by (i, j).
template <typename DA, typename DB>
::testing::AssertionResult MatrixNear(const char* a_expr, const char* b_expr, const char* /*tol_expr*/,
                                      const Eigen::DenseBase<DA>& A, const Eigen::DenseBase<DB>& B,
                                      double rel_tol, double abs_tol = 1e-6) {
    if (A.rows() != B.rows() || A.cols() != B.cols()) {
        return ::testing::AssertionFailure() << a_expr << " is " << A.rows() << "x" << A.cols() << " but "
                                             << b_expr << " is " << B.rows() << "x" << B.cols();
    }
    std::ostringstream out;
    int failures = 0;
    for (Eigen::Index i = 0; i < A.rows(); ++i) {
        for (Eigen::Index j = 0; j < A.cols(); ++j) {
            const double a = double(A(i, j)), b = double(B(i, j));
            bool ok;
            if (std::isinf(a) || std::isinf(b))
                ok = (a == b);
            else if (std::isnan(a) || std::isnan(b))
                ok = false;
            else
                ok = std::abs(a - b) <= abs_tol + rel_tol * std::max(std::abs(a), std::abs(b));
            if (!ok) {
                if (failures < 5) {
                    out << "\n  " << a_expr << "(" << i << ", " << j << "): actual " << a << " vs expected ("
                        << b_expr << ") " << b << " (|diff| " << std::abs(a - b) << ")";
                }
                ++failures;
            }
        }
    }
    if (failures == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << failures << " of " << A.size() << " cells differ (rel_tol "
                                         << rel_tol << ", abs_tol " << abs_tol << "):" << out.str();
}

}  // namespace attnviz::testing

/// EXPECT_MATRIX_NEAR(actual, expected, rel_tol): cell-by-cell, naming the failing (i, j).
#define EXPECT_MATRIX_NEAR(A, B, REL) EXPECT_PRED_FORMAT3(::attnviz::testing::MatrixNear, A, B, REL)
#define ASSERT_MATRIX_NEAR(A, B, REL) ASSERT_PRED_FORMAT3(::attnviz::testing::MatrixNear, A, B, REL)

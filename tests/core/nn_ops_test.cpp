// The MLP activations of core/nn_ops.hpp: each backward against central finite differences of its
// forward, in double (the loss is Σ dz ⊙ z for a fixed random dz, so its gradient is the backward's).
#include "core/nn_ops.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace attnviz {
namespace {

using Md = nn::M<double>;

Md random_matrix(int rows, int cols, unsigned seed) {
    Md m(rows, cols);
    unsigned s = seed;
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) {
            s = s * 1664525u + 1013904223u;
            m(i, j) = (double(s >> 8) / double(1u << 24)) * 4.0 - 2.0;  // in [-2, 2)
        }
    return m;
}

using Forward = std::function<void(const Md&, Md&)>;
using Backward = std::function<void(const Md& dz, const Md& x, Md& dx)>;

void expect_gradient(const std::string& name, const Forward& fwd, const Backward& bwd, int in_cols,
                     int out_cols) {
    const Md x = random_matrix(3, in_cols, 7), dz = random_matrix(3, out_cols, 11);
    Md dx;
    bwd(dz, x, dx);
    ASSERT_EQ(dx.rows(), x.rows());
    ASSERT_EQ(dx.cols(), x.cols());
    const double h = 1e-6;
    for (int i = 0; i < x.rows(); ++i)
        for (int j = 0; j < x.cols(); ++j) {
            Md xp = x, xm = x, zp, zm;
            xp(i, j) += h;
            xm(i, j) -= h;
            fwd(xp, zp);
            fwd(xm, zm);
            const double numeric = ((zp - zm).array() * dz.array()).sum() / (2 * h);
            EXPECT_NEAR(dx(i, j), numeric, 1e-7 * (1 + std::abs(numeric)))
                << name << " d/dx(" << i << ", " << j << ")";
        }
}

TEST(NnOps, GeluBackwardMatchesFiniteDifferences) {
    expect_gradient("gelu", nn::gelu_forward<double>, nn::gelu_backward<double>, 5, 5);
}

TEST(NnOps, SwigluBackwardMatchesFiniteDifferences) {
    expect_gradient("swiglu", nn::swiglu_forward<double>, nn::swiglu_backward<double>, 8, 4);
}

TEST(NnOps, GegluBackwardMatchesFiniteDifferences) {
    expect_gradient("geglu", nn::geglu_forward<double>, nn::geglu_backward<double>, 8, 4);
}

TEST(NnOps, GegluIsGeluOfTheGateTimesTheLinearBranch) {
    const Md gu = random_matrix(2, 6, 3);
    Md z, g;
    nn::geglu_forward<double>(gu, z);
    nn::gelu_forward<double>(gu.leftCols(3), g);
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            EXPECT_DOUBLE_EQ(z(i, j), g(i, j) * gu(i, 3 + j)) << "(" << i << ", " << j << ")";
}

}  // namespace
}  // namespace attnviz

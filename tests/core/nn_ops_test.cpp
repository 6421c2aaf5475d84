// The MLP activations and one head's attention of core/nn_ops.hpp: each backward against central
// finite differences of its forward, in double (the loss is Σ dz ⊙ z for a fixed random dz, so its
// gradient is the backward's).
#include "core/nn_ops.hpp"

#include <gtest/gtest.h>

#include <cmath>
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

TEST(NnOps, GeluErfBackwardMatchesFiniteDifferences) {
    expect_gradient("gelu_erf", nn::gelu_erf_forward<double>, nn::gelu_erf_backward<double>, 5, 5);
}

TEST(NnOps, GeluErfIsTheExactFormInFloatAndDouble) {
    const Md x = random_matrix(4, 16, 5) * 2.0;  // in [-4, 4)
    Md yd;
    nn::gelu_erf_forward<double>(x, yd);
    const nn::M<float> xf = x.cast<float>();
    nn::M<float> yf;
    nn::gelu_erf_forward<float>(xf, yf);
    for (int i = 0; i < x.rows(); ++i)
        for (int j = 0; j < x.cols(); ++j) {
            const double v = x(i, j), exact = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
            EXPECT_NEAR(yd(i, j), exact, 1e-15) << "double (" << i << ", " << j << ")";
            EXPECT_NEAR(yf(i, j), float(0.5 * double(xf(i, j)) * (1 + std::erf(double(xf(i, j)) / std::sqrt(2.0)))),
                        1e-6)
                << "float (" << i << ", " << j << ")";
        }
    // The tanh form is another function: they differ by up to ~5e-4 near |x| = 2.
    Md yt;
    nn::gelu_forward<double>(x, yt);
    EXPECT_GT((yt - yd).cwiseAbs().maxCoeff(), 1e-5);
}

// One head: y = softmax(Q·Kᵀ/√dh, causal or not)·V; its backward against finite differences of Q, K, V.
void expect_attention_gradient(bool causal) {
    const int n = 4, dh = 3;
    const Md qkv = random_matrix(n, 3 * dh, 13), dy = random_matrix(n, dh, 17);
    auto forward = [&](const Md& in, Md& y) {
        Md P(n, n);
        nn::attention_scores<double>(n, dh, in.data(), 3 * dh, in.data() + dh, 3 * dh, P.data(), !causal);
        if (causal)
            nn::causal_softmax<double>(P, 1 / std::sqrt(double(dh)));
        else
            nn::full_softmax<double>(P, 1 / std::sqrt(double(dh)));
        y.resize(n, dh);
        nn::attention_combine<double>(n, dh, P, in.data() + 2 * dh, 3 * dh, y.data(), dh, causal);
        return P;
    };
    Md y, dqkv(n, 3 * dh), dP, dS;
    const Md P = [&] {
        Md P(n, n);
        nn::attention_scores<double>(n, dh, qkv.data(), 3 * dh, qkv.data() + dh, 3 * dh, P.data(), !causal);
        if (causal)
            nn::causal_softmax<double>(P, 1 / std::sqrt(double(dh)));
        else
            nn::full_softmax<double>(P, 1 / std::sqrt(double(dh)));
        return P;
    }();
    if (!causal) EXPECT_GT(P(0, n - 1), 0.0) << "an encoder's first token sees the last";
    if (causal) EXPECT_EQ(P(0, n - 1), 0.0) << "a decoder's first token does not see the last";
    nn::attention_head_backward<double>(n, dh, qkv.data(), qkv.data() + dh, qkv.data() + 2 * dh, 3 * dh, P,
                                        dy.data(), dh, dqkv.data(), dqkv.data() + dh, dqkv.data() + 2 * dh,
                                        3 * dh, dP, dS, causal);
    const double h = 1e-6;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < 3 * dh; ++j) {
            Md xp = qkv, xm = qkv, yp, ym;
            xp(i, j) += h;
            xm(i, j) -= h;
            forward(xp, yp);
            forward(xm, ym);
            const double numeric = ((yp - ym).array() * dy.array()).sum() / (2 * h);
            EXPECT_NEAR(dqkv(i, j), numeric, 1e-7 * (1 + std::abs(numeric)))
                << (causal ? "causal" : "bidirectional") << " d/dqkv(" << i << ", " << j << ")";
        }
}

TEST(NnOps, CausalAttentionBackwardMatchesFiniteDifferences) {
    expect_attention_gradient(true);
}

TEST(NnOps, BidirectionalAttentionBackwardMatchesFiniteDifferences) {
    expect_attention_gradient(false);
}

}  // namespace
}  // namespace attnviz

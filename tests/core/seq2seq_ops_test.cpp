// The encoder–decoder ops of core/nn_ops.hpp: T5's relative position buckets against values computed
// by hand (and by Hugging Face's _relative_position_bucket), cross-attention's and ReLU's backward
// against central finite differences in double.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/nn_ops.hpp"

namespace attnviz {
namespace {

using Md = nn::M<double>;

Md s2s_random_matrix(int rows, int cols, unsigned seed) {
    Md m(rows, cols);
    unsigned s = seed;
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) {
            s = s * 1664525u + 1013904223u;
            m(i, j) = (double(s >> 8) / double(1u << 24)) * 2.0 - 1.0;  // in [-1, 1)
        }
    return m;
}

TEST(RelativePositionBucket, MatchesHandComputedValues) {
    // num_buckets 32, max_distance 128. Bidirectional: 16 buckets a side, exact below 8, then
    // 8 + ⌊log(|r|/8) / log(16) · 8⌋ (16 → 10 exactly: log 2 / log 16 · 8 = 2), capped at 15; keys
    // after the query add 16.
    const int rel[] = {-200, -128, -127, -65, -64, -63, -33, -32, -31, -17, -16, -15, -9, -8,  -7,  -1, 0,
                       1,    7,    8,    9,   15,  16,  17,  31,  32,  33,  63,  64,  65, 127, 128, 200};
    const int bidir[] = {15, 15, 15, 14, 14, 13, 12, 12, 11, 10, 10, 9,  8,  8,  7,  1, 0,
                         17, 23, 24, 24, 25, 26, 26, 27, 28, 28, 29, 30, 30, 31, 31, 31};
    // Causal (decoder): only keys before the query count, 32 buckets, exact below 16, then
    // 16 + ⌊log(r/16) / log(8) · 16⌋ capped at 31 (r = 64: 16 + ⌊10.67⌋); keys after the query are
    // bucket 0. (The same values as Hugging Face's _relative_position_bucket.)
    const int causal[] = {31, 31, 31, 26, 26, 26, 21, 21, 21, 16, 16, 15, 9, 8, 7, 1, 0,
                          0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0, 0, 0, 0};
    for (std::size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); ++i) {
        EXPECT_EQ(nn::relative_position_bucket(rel[i], true, 32, 128), bidir[i])
            << "bidirectional r = " << rel[i];
        EXPECT_EQ(nn::relative_position_bucket(rel[i], false, 32, 128), causal[i]) << "causal r = " << rel[i];
    }
    // A small table (8 buckets, max distance 20): bidirectional 4 a side, exact below 2.
    EXPECT_EQ(nn::relative_position_bucket(-1, true, 8, 20), 1);
    EXPECT_EQ(nn::relative_position_bucket(-2, true, 8, 20), 2);  // 2 + ⌊log(1)/log(10)·2⌋
    EXPECT_EQ(nn::relative_position_bucket(-6, true, 8, 20), 2);  // 2 + ⌊log 3 / log 10 · 2⌋ = 2 + 0
    EXPECT_EQ(nn::relative_position_bucket(-7, true, 8, 20), 3);  // 2 + ⌊1.088⌋
    EXPECT_EQ(nn::relative_position_bucket(3, true, 8, 20), 6);   // 4 + 2 + ⌊log 1.5 / log 10 · 2⌋
}

TEST(RelativePositionBucket, BiasTableLooksUpEachHeadsColumn) {
    const int h = 2, buckets = 8;
    std::vector<double> table(std::size_t(buckets * h));
    for (int b = 0; b < buckets; ++b)
        for (int j = 0; j < h; ++j) table[std::size_t(b * h + j)] = 10.0 * b + j;
    const auto bias = nn::relative_position_bias<double>(3, 4, h, table.data(), true, buckets, 20);
    ASSERT_EQ(bias.size(), 2u);
    for (int j = 0; j < h; ++j)
        for (int q = 0; q < 3; ++q)
            for (int k = 0; k < 4; ++k)
                EXPECT_EQ(bias[std::size_t(j)](q, k),
                          10.0 * nn::relative_position_bucket(k - q, true, buckets, 20) + j)
                    << "head " << j << " (" << q << ", " << k << ")";
}

// Loss = Σ dy ⊙ y of one head's attention output y = softmax(Q·Kᵀ·scale + bias, masked)·V.
double attention_loss(const Md& Q, const Md& K, const Md& V, const Md& bias, const Md& dy, double scale,
                      bool causal) {
    const int n = int(Q.rows()), m = int(K.rows()), dh = int(Q.cols());
    Md P(n, m), y(n, dh);
    nn::cross_attention_scores<double>(n, m, dh, Q.data(), dh, K.data(), dh, P.data());
    nn::biased_softmax<double>(P, scale, bias.data(), causal);
    nn::cross_attention_combine<double>(n, m, dh, P, V.data(), dh, y.data(), dh);
    return (y.array() * dy.array()).sum();
}

void check_cross_backward(int n, int m, bool causal) {
    const int dh = 3;
    const double scale = 0.7;
    Md Q = s2s_random_matrix(n, dh, 1), K = s2s_random_matrix(m, dh, 2), V = s2s_random_matrix(m, dh, 3);
    Md bias = s2s_random_matrix(n, m, 4), dy = s2s_random_matrix(n, dh, 5);
    Md P(n, m);
    nn::cross_attention_scores<double>(n, m, dh, Q.data(), dh, K.data(), dh, P.data());
    nn::biased_softmax<double>(P, scale, bias.data(), causal);
    Md dQ(n, dh), dK(m, dh), dV(m, dh), dbias = Md::Zero(n, m), dP, dS;
    nn::cross_attention_head_backward<double>(n, m, dh, Q.data(), dh, K.data(), V.data(), dh, P, scale,
                                              causal, dy.data(), dh, dQ.data(), dK.data(), dV.data(), dh,
                                              dbias.data(), dP, dS);
    const double h = 1e-6;
    auto check = [&](const std::string& what, Md& x, const Md& grad) {
        for (int i = 0; i < x.rows(); ++i)
            for (int j = 0; j < x.cols(); ++j) {
                const double keep = x(i, j);
                x(i, j) = keep + h;
                const double lp = attention_loss(Q, K, V, bias, dy, scale, causal);
                x(i, j) = keep - h;
                const double lm = attention_loss(Q, K, V, bias, dy, scale, causal);
                x(i, j) = keep;
                const double numeric = (lp - lm) / (2 * h);
                EXPECT_NEAR(grad(i, j), numeric, 1e-7 * (1 + std::abs(numeric)))
                    << what << "(" << i << ", " << j << ") n=" << n << " m=" << m
                    << (causal ? " causal" : "");
            }
    };
    check("dQ", Q, dQ);
    check("dK", K, dK);
    check("dV", V, dV);
    check("dbias", bias, dbias);
}

TEST(CrossAttention, BackwardMatchesFiniteDifferences) {
    check_cross_backward(3, 5, false);  // target 3 tokens, source 5
    check_cross_backward(4, 2, false);
    check_cross_backward(4, 4, true);  // causal self-attention with a bias (T5's decoder)
}

TEST(CrossAttention, RowsAreDistributionsOverEverySourceToken) {
    Md Q = s2s_random_matrix(2, 4, 8), K = s2s_random_matrix(6, 4, 9);
    Md P(2, 6);
    nn::cross_attention_scores<double>(2, 6, 4, Q.data(), 4, K.data(), 4, P.data());
    const Md S = P;
    nn::biased_softmax<double>(P, 0.5, nullptr, false);
    for (int i = 0; i < 2; ++i) {
        EXPECT_NEAR(P.row(i).sum(), 1.0, 1e-12);
        const double z = (S.row(i).array() * 0.5 - (S.row(i) * 0.5).maxCoeff()).exp().sum();
        for (int j = 0; j < 6; ++j)
            EXPECT_NEAR(P(i, j), std::exp(S(i, j) * 0.5 - (S.row(i) * 0.5).maxCoeff()) / z, 1e-12)
                << i << "," << j;
    }
}

TEST(Relu, BackwardMatchesFiniteDifferences) {
    const Md x = s2s_random_matrix(3, 5, 21), dy = s2s_random_matrix(3, 5, 22);
    Md dx;
    nn::relu_backward<double>(dy, x, dx);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 5; ++j) EXPECT_EQ(dx(i, j), x(i, j) > 0 ? dy(i, j) : 0.0) << i << "," << j;
    Md y;
    nn::relu_forward<double>(x, y);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 5; ++j) EXPECT_EQ(y(i, j), std::max(x(i, j), 0.0));
}

}  // namespace
}  // namespace attnviz

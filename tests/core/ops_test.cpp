// Tests of core/ops: each function against a plain-loop reference written here (in double), plus
// the mathematical properties the app teaches.
// GCC 12 with -march=native (AVX-512) reports false "may be used uninitialized" warnings inside
// Eigen's vectorised kernels (in the compiler's own intrinsics headers); they are not our code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "core/ops.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "common/matrix_expect.hpp"
#include "core/error.hpp"

namespace attnviz {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// ---------------------------------------------------------------------------------------------
// Plain-loop references
// ---------------------------------------------------------------------------------------------

Mat ref_softmax(const Mat& S, double T) {
    Mat A(S.rows(), S.cols());
    for (int i = 0; i < S.rows(); ++i) {
        double mx = -std::numeric_limits<double>::infinity();
        for (int j = 0; j < S.cols(); ++j) mx = std::max(mx, double(S(i, j)));
        double sum = 0;
        for (int j = 0; j < S.cols(); ++j) sum += std::exp((S(i, j) - mx) / T);
        for (int j = 0; j < S.cols(); ++j) A(i, j) = float(std::exp((S(i, j) - mx) / T) / sum);
    }
    return A;
}

Mat ref_matmul(const Mat& A, const Mat& B) {
    Mat C(A.rows(), B.cols());
    for (int i = 0; i < A.rows(); ++i)
        for (int j = 0; j < B.cols(); ++j) {
            double s = 0;
            for (int k = 0; k < A.cols(); ++k) s += double(A(i, k)) * B(k, j);
            C(i, j) = float(s);
        }
    return C;
}

Mat ref_transpose(const Mat& A) {
    Mat T(A.cols(), A.rows());
    for (int i = 0; i < A.rows(); ++i)
        for (int j = 0; j < A.cols(); ++j) T(j, i) = A(i, j);
    return T;
}

double ref_dist(const Mat& Q, int i, const Mat& K, int j) {
    double s = 0;
    for (int c = 0; c < Q.cols(); ++c) s += (double(Q(i, c)) - K(j, c)) * (double(Q(i, c)) - K(j, c));
    return std::sqrt(s);
}

float ref_phi(float x, PhiKind phi) {
    if (phi == PhiKind::Elu1) return x > 0 ? x + 1.0f : float(std::exp(double(x)));
    return x > 0 ? x : 0.0f;
}

// Materialised linear attention, written the slow way: Σ_j allowed·sim(i,j) v_j / Σ_j allowed·sim(i,j).
Mat ref_linear_out(const Mat& phiQ, const Mat& phiK, const Mat& V, const BoolMat& allowed) {
    Mat out = Mat::Zero(phiQ.rows(), V.cols());
    for (int i = 0; i < phiQ.rows(); ++i) {
        double z = 0;
        std::vector<double> num(std::size_t(V.cols()), 0.0);
        for (int j = 0; j < phiK.rows(); ++j) {
            if (!allowed(i, j)) continue;
            double sim = 0;
            for (int c = 0; c < phiQ.cols(); ++c) sim += double(phiQ(i, c)) * phiK(j, c);
            z += sim;
            for (int c = 0; c < V.cols(); ++c) num[std::size_t(c)] += sim * V(j, c);
        }
        if (z > 0)
            for (int c = 0; c < V.cols(); ++c) out(i, c) = float(num[std::size_t(c)] / z);
    }
    return out;
}

Mat rowvec_mat(std::initializer_list<std::initializer_list<float>> rows) {
    Mat M(int(rows.size()), int(rows.begin()->size()));
    int i = 0;
    for (const auto& r : rows) {
        int j = 0;
        for (float v : r) M(i, j++) = v;
        ++i;
    }
    return M;
}

// ---------------------------------------------------------------------------------------------
// Random numbers
// ---------------------------------------------------------------------------------------------

TEST(Rng, IsDeterministicAndSeedDependent) {
    Rng a(7), b(7), c(8);
    for (int k = 0; k < 100; ++k) {
        const std::uint64_t x = a.next_u64();
        EXPECT_EQ(x, b.next_u64());
        EXPECT_NE(x, c.next_u64());
    }
}

TEST(Rng, SplitMix64KnownValues) {
    // Reference values of splitmix64 seeded with 0 (Vigna's reference implementation).
    Rng r(0);
    EXPECT_EQ(r.next_u64(), 0xE220A8397B1DCDAFULL);
    EXPECT_EQ(r.next_u64(), 0x6E789E6AA1B965F4ULL);
    EXPECT_EQ(r.next_u64(), 0x06C45D188009454FULL);
}

TEST(Rng, UniformAndNormalHaveTheRightMoments) {
    Rng r(123);
    const int N = 200000;
    double su = 0, sn = 0, sn2 = 0;
    double umin = 1, umax = 0;
    for (int k = 0; k < N; ++k) {
        const double u = r.uniform();
        umin = std::min(umin, u);
        umax = std::max(umax, u);
        su += u;
        const double z = r.normal();
        ASSERT_TRUE(std::isfinite(z));
        sn += z;
        sn2 += z * z;
    }
    EXPECT_GE(umin, 0.0);
    EXPECT_LT(umax, 1.0);
    EXPECT_NEAR(su / N, 0.5, 0.005);
    EXPECT_NEAR(sn / N, 0.0, 0.01);
    EXPECT_NEAR(sn2 / N, 1.0, 0.02);
}

TEST(Rng, HashStringIsFnv1a) {
    EXPECT_EQ(hash_string(""), 14695981039346656037ULL);
    EXPECT_EQ(hash_string("a"), 0xAF63DC4C8601EC8CULL);
    EXPECT_EQ(hash_string("foobar"), 0x85944171F73967E8ULL);
}

TEST(Rng, RandomNormalIsSeededAndScaled) {
    const Mat A = random_normal(50, 40, 2.0, 5);  // 50 x 40
    EXPECT_MATRIX_NEAR(A, random_normal(50, 40, 2.0, 5), 0.0);
    EXPECT_FALSE(A.isApprox(random_normal(50, 40, 2.0, 6)));
    const double mean = A.mean();
    const double var = (A.array() - float(mean)).square().mean();
    EXPECT_NEAR(mean, 0.0, 0.15);
    EXPECT_NEAR(var, 4.0, 0.4);
    // Growing the row count keeps the earlier rows (so the matrices don't reshuffle as you type).
    EXPECT_MATRIX_NEAR(random_normal(60, 40, 2.0, 5).topRows(50), A, 0.0);
}

// ---------------------------------------------------------------------------------------------
// Tokens, embeddings
// ---------------------------------------------------------------------------------------------

TEST(OneHot, HasASingleOnePerRow) {
    const Mat O = one_hot({2, 0, 2, 1}, 3);  // 4 x 3
    const Mat expect = rowvec_mat({{0, 0, 1}, {1, 0, 0}, {0, 0, 1}, {0, 1, 0}});
    EXPECT_MATRIX_NEAR(O, expect, 0.0);
    EXPECT_THROW(one_hot({3}, 3), Error);
    EXPECT_THROW(one_hot({-1}, 3), Error);
}

TEST(Embedding, RowDependsOnlyOnTokenSeedAndWidth) {
    const Mat E1 = embedding_table({"the", "cat", "sat"}, 16, 42);  // 3 x 16
    const Mat E2 = embedding_table({"dog", "sat", "the"}, 16, 42);  // 3 x 16
    EXPECT_MATRIX_NEAR(E1.row(0), E2.row(2), 0.0);                  // "the"
    EXPECT_MATRIX_NEAR(E1.row(2), E2.row(1), 0.0);                  // "sat"
    EXPECT_FALSE(E1.row(0).isApprox(E1.row(1)));
    const Mat E3 = embedding_table({"the"}, 16, 43);
    EXPECT_FALSE(E3.row(0).isApprox(E1.row(0)));
    // Rows are N(0, 1) draws from Rng(hash(token) ^ f(seed)): check the distribution loosely.
    std::vector<std::string> vocab;
    for (int k = 0; k < 200; ++k) vocab.push_back("w" + std::to_string(k));
    const Mat E = embedding_table(vocab, 64, 1);
    EXPECT_NEAR(E.mean(), 0.0, 0.05);
    EXPECT_NEAR((E.array() - E.mean()).square().mean(), 1.0, 0.05);
}

// ---------------------------------------------------------------------------------------------
// Positional encodings
// ---------------------------------------------------------------------------------------------

TEST(SinusoidalPE, MatchesTheFormula) {
    const int n = 20, d = 10;
    const double base = 10000.0;
    const Mat P = sinusoidal_pe(n, d, base, 3);  // n x d
    Mat expect(n, d);
    for (int p = 0; p < n; ++p)
        for (int i = 0; 2 * i < d; ++i) {
            const double angle = (p + 3) / std::pow(base, 2.0 * i / d);
            expect(p, 2 * i) = float(std::sin(angle));
            expect(p, 2 * i + 1) = float(std::cos(angle));
        }
    EXPECT_MATRIX_NEAR(P, expect, 1e-6);
    // First row without offset: sin 0 = 0, cos 0 = 1.
    const Mat P0 = sinusoidal_pe(1, 4, base);
    EXPECT_MATRIX_NEAR(P0, rowvec_mat({{0, 1, 0, 1}}), 0.0);
    // Two exact values: p = 1, i = 0 -> sin 1, cos 1; i = 1 (d = 4) -> sin(1/100).
    const Mat P1 = sinusoidal_pe(2, 4, base);
    EXPECT_NEAR(P1(1, 0), std::sin(1.0), 1e-7);
    EXPECT_NEAR(P1(1, 1), std::cos(1.0), 1e-7);
    EXPECT_NEAR(P1(1, 2), std::sin(0.01), 1e-7);
    EXPECT_NEAR(pe_frequency(1, 4, base), 0.01, 1e-15);
    EXPECT_NEAR(pe_frequency(0, 4, base), 1.0, 0.0);
}

TEST(SinusoidalPE, OddWidthEndsWithASine) {
    const Mat P = sinusoidal_pe(5, 5, 100.0);
    for (int p = 0; p < 5; ++p) EXPECT_NEAR(P(p, 4), std::sin(p * std::pow(100.0, -4.0 / 5.0)), 1e-6);
}

TEST(SinusoidalPE, ShiftIsALinearMapForManyPositionsAndOffsets) {
    // PE(p+δ)ᵀ = R(δ)·PE(p)ᵀ: relative position is a rotation, the same for every p.
    for (int d : {2, 8, 16, 64}) {
        for (int delta : {0, 1, 2, 5, 17, 100, -3}) {
            const Mat R = pe_shift_matrix(delta, d, 10000.0);  // d x d
            const int n = 200;
            const Mat P = sinusoidal_pe(n, d, 10000.0, 10);                  // n x d, rows p
            const Mat Pshift = sinusoidal_pe(n, d, 10000.0, 10 + delta);     // n x d, rows p + δ
            const Mat RPt = ref_transpose(ref_matmul(R, ref_transpose(P)));  // n x d
            SCOPED_TRACE("d=" + std::to_string(d) + " delta=" + std::to_string(delta));
            EXPECT_MATRIX_NEAR(RPt, Pshift, 1e-5);
        }
    }
}

TEST(SinusoidalPE, ShiftMatrixIsBlockRotation) {
    const Mat R = pe_shift_matrix(2.0, 4, 100.0);  // 4 x 4
    const double a0 = 2.0, a1 = 2.0 / 10.0;
    const Mat expect = rowvec_mat({{float(std::cos(a0)), float(std::sin(a0)), 0, 0},
                                   {float(-std::sin(a0)), float(std::cos(a0)), 0, 0},
                                   {0, 0, float(std::cos(a1)), float(std::sin(a1))},
                                   {0, 0, float(-std::sin(a1)), float(std::cos(a1))}});
    EXPECT_MATRIX_NEAR(R, expect, 1e-7);
    // Odd width: last coordinate untouched, property holds on the pairs.
    const Mat R5 = pe_shift_matrix(3.0, 5, 100.0);
    EXPECT_EQ(R5(4, 4), 1.0f);
    EXPECT_EQ(R5.row(4).head(4).squaredNorm(), 0.0f);
    const Mat P = sinusoidal_pe(30, 5, 100.0);
    const Mat P3 = sinusoidal_pe(30, 5, 100.0, 3);
    const Mat RPt = ref_transpose(ref_matmul(R5, ref_transpose(P)));
    EXPECT_MATRIX_NEAR(RPt.leftCols(4), P3.leftCols(4), 1e-5);
}

TEST(LearnedPE, IsSeededWithStd05) {
    const Mat P = learned_pe(100, 32, 9);
    EXPECT_MATRIX_NEAR(P, learned_pe(100, 32, 9), 0.0);
    EXPECT_FALSE(P.isApprox(learned_pe(100, 32, 10)));
    EXPECT_NEAR(std::sqrt((P.array() - P.mean()).square().mean()), 0.5, 0.03);
}

TEST(Rope, MatchesThePairRotationFormula) {
    const Mat X = random_normal(7, 6, 1.0, 3);  // 7 x 6
    const Mat R = rope_rotate(X, 100.0, 2);
    for (int p = 0; p < 7; ++p)
        for (int i = 0; i < 3; ++i) {
            const double a = (p + 2) * std::pow(100.0, -2.0 * i / 6);
            const double x0 = X(p, 2 * i), x1 = X(p, 2 * i + 1);
            EXPECT_NEAR(R(p, 2 * i), x0 * std::cos(a) - x1 * std::sin(a), 1e-5);
            EXPECT_NEAR(R(p, 2 * i + 1), x0 * std::sin(a) + x1 * std::cos(a), 1e-5);
        }
    EXPECT_THROW(rope_rotate(Mat::Ones(2, 3), 100.0), ConfigError);
}

TEST(Rope, DotProductDependsOnlyOnRelativePosition) {
    // (R_p q)·(R_s k) = qᵀ R_{s−p} k: place the same q at p and the same k at s.
    const int d = 16, n = 64;
    const Mat q = random_normal(1, d, 1.0, 1);  // 1 x d
    const Mat k = random_normal(1, d, 1.0, 2);  // 1 x d
    const Mat Qs = q.replicate(n, 1);           // n x d, row p holds q
    const Mat Ks = k.replicate(n, 1);           // n x d
    const Mat Qr = rope_rotate(Qs, 10000.0);
    const Mat Kr = rope_rotate(Ks, 10000.0);
    for (int offset : {-5, 0, 1, 7, 20}) {
        // Reference: the pair at p = 0, s = offset (or p = -offset, s = 0).
        const int p0 = std::max(0, -offset), s0 = p0 + offset;
        double ref = 0;
        for (int c = 0; c < d; ++c) ref += double(Qr(p0, c)) * Kr(s0, c);
        for (int p = 0; p < n; ++p) {
            const int s = p + offset;
            if (s < 0 || s >= n) continue;
            double dot = 0;
            for (int c = 0; c < d; ++c) dot += double(Qr(p, c)) * Kr(s, c);
            EXPECT_NEAR(dot, ref, 1e-4) << "p=" << p << " s=" << s;
        }
    }
    // And rotation preserves length.
    for (int p = 0; p < n; ++p) EXPECT_NEAR(Qr.row(p).norm(), q.norm(), 1e-5);
}

TEST(Alibi, SlopesAndBias) {
    EXPECT_DOUBLE_EQ(alibi_slope(0, 8), 0.5);
    EXPECT_DOUBLE_EQ(alibi_slope(7, 8), 1.0 / 256.0);
    EXPECT_DOUBLE_EQ(alibi_slope(0, 1), 1.0 / 256.0);
    const Mat B = alibi_bias(2, 3, 0.5);
    EXPECT_MATRIX_NEAR(B, rowvec_mat({{0, -0.5f, -1.0f}, {-0.5f, 0, -0.5f}}), 0.0);
}

// ---------------------------------------------------------------------------------------------
// Masks
// ---------------------------------------------------------------------------------------------

std::string pattern(const BoolMat& M) {
    std::string s;
    for (int i = 0; i < M.rows(); ++i) {
        if (i) s += ';';
        for (int j = 0; j < M.cols(); ++j) s += M(i, j) ? '1' : '0';
    }
    return s;
}

TEST(Masks, PatternsOnSquareAndRectangularGrids) {
    EXPECT_EQ(pattern(no_mask(2, 3)), "111;111");
    EXPECT_EQ(pattern(causal_mask(3, 3)), "100;110;111");
    EXPECT_EQ(pattern(causal_mask(2, 4)), "1000;1100");
    EXPECT_EQ(pattern(causal_mask(4, 2)), "10;11;11;11");
    EXPECT_EQ(pattern(padding_mask(2, 4, 3)), "1110;1110");
    EXPECT_EQ(pattern(padding_mask(2, 3, -1)), "111;111");
    EXPECT_EQ(pattern(padding_mask(2, 3, 0)), "000;000");
    EXPECT_EQ(pattern(window_mask(4, 4, 2)), "1000;1100;0110;0011");
    EXPECT_EQ(pattern(window_mask(3, 5, 1)), "10000;01000;00100");
    MaskGrid g;
    g.set_blocked(0, 1, true);
    g.set_blocked(2, 0, true);
    EXPECT_EQ(pattern(custom_mask(3, 3, g)), "101;111;011");
    EXPECT_EQ(pattern(custom_mask(4, 2, g)), "10;11;01;11");  // outside the grid: visible
}

TEST(Masks, MakeMaskFollowsTheConfig) {
    Config c;
    c.mask = MaskKind::Causal;
    EXPECT_EQ(pattern(make_mask(c, 3, 3)), "100;110;111");
    c.mask = MaskKind::Padding;
    c.valid_length = 2;
    EXPECT_EQ(pattern(make_mask(c, 2, 3)), "110;110");
    c.mask = MaskKind::Window;
    c.window = 2;
    EXPECT_EQ(pattern(make_mask(c, 3, 3)), "100;110;011");
    c.mask = MaskKind::Custom;
    c.custom_mask.set_blocked(1, 1, true);
    EXPECT_EQ(pattern(make_mask(c, 2, 2)), "11;10");
    c.mask = MaskKind::None;
    EXPECT_EQ(pattern(make_mask(c, 2, 2)), "11;11");
}

TEST(Masks, ApplyMaskPutsMinusInfinity) {
    const Mat S = rowvec_mat({{1, 2}, {3, 4}});
    const Mat M = apply_mask(S, causal_mask(2, 2));
    EXPECT_MATRIX_NEAR(M, rowvec_mat({{1, -kInf}, {3, 4}}), 0.0);
    EXPECT_MATRIX_NEAR(apply_mask(S, BoolMat()), S, 0.0);
    EXPECT_THROW(apply_mask(S, causal_mask(3, 2)), Error);
}

// ---------------------------------------------------------------------------------------------
// Scores
// ---------------------------------------------------------------------------------------------

TEST(Scores, DotAndBilinearMatchLoops) {
    const Mat Q = random_normal(5, 4, 1.0, 1);  // n x d_k
    const Mat K = random_normal(7, 4, 1.0, 2);  // m x d_k
    const Mat W = random_normal(4, 4, 1.0, 3);  // d_k x d_k
    EXPECT_MATRIX_NEAR(dot_scores(Q, K), ref_matmul(Q, ref_transpose(K)), 1e-5);
    EXPECT_MATRIX_NEAR(bilinear_scores(Q, K, W), ref_matmul(ref_matmul(Q, W), ref_transpose(K)), 1e-5);
    EXPECT_THROW(dot_scores(Q, random_normal(3, 5, 1.0, 1)), Error);
}

TEST(Scores, AdditiveMatchesLoop) {
    const int n = 4, m = 6, dk = 3, hidden = 5;
    const Mat Q = random_normal(n, dk, 1.0, 1);
    const Mat K = random_normal(m, dk, 1.0, 2);
    const Mat Wq = random_normal(dk, hidden, 1.0, 3);
    const Mat Wk = random_normal(dk, hidden, 1.0, 4);
    const Vec wv = random_normal(hidden, 1, 1.0, 5).col(0);
    Mat expect(n, m);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j) {
            double s = 0;
            for (int h = 0; h < hidden; ++h) {
                double pre = 0;
                for (int c = 0; c < dk; ++c) pre += double(Wq(c, h)) * Q(i, c) + double(Wk(c, h)) * K(j, c);
                s += wv(h) * std::tanh(pre);
            }
            expect(i, j) = float(s);
        }
    EXPECT_MATRIX_NEAR(additive_scores(Q, K, Wq, Wk, wv), expect, 1e-5);
}

TEST(Scores, KernelsMatchTheNotesFormulas) {
    const Mat Q = random_normal(6, 3, 0.7, 1);  // n x d_k
    Mat K = random_normal(8, 3, 0.7, 2);        // m x d_k
    K.row(2) = Q.row(1);                        // an exact match: distance 0
    for (double h : {0.5, 1.0, 2.5}) {
        Mat G(6, 8), B(6, 8), E(6, 8);
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 8; ++j) {
                const double u = ref_dist(Q, i, K, j) / h;
                G(i, j) = float(std::exp(-u * u / 2));
                B(i, j) = u <= 1 ? 1.0f : 0.0f;
                E(i, j) = float(std::max(0.0, 1 - u));
            }
        SCOPED_TRACE("bandwidth " + std::to_string(h));
        EXPECT_MATRIX_NEAR(kernel_scores(Q, K, Scoring::Gaussian, h), G, 1e-5);
        EXPECT_MATRIX_NEAR(kernel_scores(Q, K, Scoring::Boxcar, h), B, 0.0);
        EXPECT_MATRIX_NEAR(kernel_scores(Q, K, Scoring::Epanechnikov, h), E, 1e-5);
        EXPECT_EQ(kernel_scores(Q, K, Scoring::Gaussian, h)(1, 2), 1.0f);
        EXPECT_EQ(kernel_scores(Q, K, Scoring::Boxcar, h)(1, 2), 1.0f);
    }
    EXPECT_TRUE(is_kernel(Scoring::Gaussian) && is_kernel(Scoring::Boxcar) &&
                is_kernel(Scoring::Epanechnikov));
    EXPECT_FALSE(is_kernel(Scoring::ScaledDot) || is_kernel(Scoring::Additive));
    EXPECT_THROW(kernel_scores(Q, K, Scoring::Dot, 1.0), Error);
    EXPECT_THROW(kernel_scores(Q, K, Scoring::Gaussian, 0.0), ConfigError);
}

// ---------------------------------------------------------------------------------------------
// Softmax and friends
// ---------------------------------------------------------------------------------------------

TEST(Softmax, MatchesReferenceAndRowsSumToOne) {
    const Mat S = random_normal(9, 13, 3.0, 4);  // n x m
    for (double T : {0.1, 0.5, 1.0, 2.0, 10.0}) {
        const Mat A = softmax_rows(S, T);
        SCOPED_TRACE("T=" + std::to_string(T));
        EXPECT_MATRIX_NEAR(A, ref_softmax(S, T), 1e-5);
        for (int i = 0; i < A.rows(); ++i) EXPECT_NEAR(A.row(i).sum(), 1.0f, 1e-6);
        EXPECT_GE(A.minCoeff(), 0.0f);
    }
}

TEST(Softmax, KnownValues) {
    const Mat A = softmax_rows(rowvec_mat({{0, 0}, {0, float(std::log(3.0))}}));
    EXPECT_MATRIX_NEAR(A, rowvec_mat({{0.5f, 0.5f}, {0.25f, 0.75f}}), 1e-6);
}

TEST(Softmax, ShiftInvariantPerRow) {
    const Mat S = random_normal(6, 10, 2.0, 5);
    Mat shifted = S;
    for (int i = 0; i < S.rows(); ++i) shifted.row(i).array() += float(100 * i - 250);
    EXPECT_MATRIX_NEAR(softmax_rows(shifted), softmax_rows(S), 1e-4);
}

TEST(Softmax, TemperatureScalesScores) {
    // softmax(S / T) == softmax applied to S / T at T = 1.
    const Mat S = random_normal(5, 7, 2.0, 6);
    for (double T : {0.25, 3.0})
        EXPECT_MATRIX_NEAR(softmax_rows(S, T), softmax_rows(S / float(T), 1.0), 1e-5);
    // Low T sharpens toward argmax, high T flattens toward uniform.
    const Mat sharp = softmax_rows(S, 1e-3);
    const Mat flat = softmax_rows(S, 1e6);
    for (int i = 0; i < S.rows(); ++i) {
        Eigen::Index arg;
        S.row(i).maxCoeff(&arg);
        EXPECT_NEAR(sharp(i, arg), 1.0f, 1e-6);
        EXPECT_NEAR(flat.row(i).maxCoeff(), 1.0f / 7, 1e-5);
        EXPECT_NEAR(flat.row(i).minCoeff(), 1.0f / 7, 1e-5);
    }
}

TEST(Softmax, ExtremeInputsStayFinite) {
    // Scores of 1e4 at T = 1e-3: exp(1e7) would overflow without subtracting the max.
    const Mat S = rowvec_mat({{1e4f, 1e4f - 0.001f, 0.0f}, {-1e4f, 1e4f, 1e4f}});
    const Mat A = softmax_rows(S, 1e-3);
    ASSERT_TRUE(A.allFinite());
    // The gap is 0.001 rounded to float spacing at 1e4 (≈ 0.00098); divided by T it is ≈ 1.
    const double gap = (double(S(0, 0)) - double(S(0, 1))) / 1e-3;
    EXPECT_NEAR(A(0, 0), 1.0 / (1.0 + std::exp(-gap)), 1e-6);
    EXPECT_EQ(A(0, 2), 0.0f);
    EXPECT_MATRIX_NEAR(A.row(1), rowvec_mat({{0.0f, 0.5f, 0.5f}}), 1e-6);
    const Mat B = softmax_rows(rowvec_mat({{3e38f, -3e38f}}), 1e-3);
    EXPECT_MATRIX_NEAR(B, rowvec_mat({{1.0f, 0.0f}}), 0.0);
}

TEST(Softmax, MaskedEntriesAreExactlyZeroAndAllMaskedRowIsZero) {
    const Mat S = random_normal(4, 4, 1.0, 7);
    const Mat A = softmax_rows(apply_mask(S, causal_mask(4, 4)), 0.7);
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
            if (j > i) {
                EXPECT_EQ(A(i, j), 0.0f) << i << "," << j;
            }
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(A.row(i).sum(), 1.0f, 1e-6);
    EXPECT_EQ(A(0, 0), 1.0f);
    const Mat Z = softmax_rows(rowvec_mat({{-kInf, -kInf, -kInf}, {1, -kInf, 1}}));
    EXPECT_MATRIX_NEAR(Z, rowvec_mat({{0, 0, 0}, {0.5f, 0, 0.5f}}), 0.0);
    EXPECT_TRUE(Z.allFinite());
    // +∞ scores: the weight is shared among them, no NaN.
    const Mat P = softmax_rows(rowvec_mat({{kInf, 1, kInf}}));
    EXPECT_MATRIX_NEAR(P, rowvec_mat({{0.5f, 0, 0.5f}}), 0.0);
}

TEST(Softmax, BadTemperatureThrows) {
    const Mat S = Mat::Zero(2, 2);
    EXPECT_THROW(softmax_rows(S, 0.0), ConfigError);
    EXPECT_THROW(softmax_rows(S, -1.0), ConfigError);
    EXPECT_THROW(softmax_rows(S, std::nan("")), ConfigError);
    EXPECT_THROW(softmax_rows(S, std::numeric_limits<double>::infinity()), ConfigError);
    try {
        softmax_rows(S, 0.0);
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("temperature must be > 0"), std::string::npos);
    }
}

TEST(Softmax, EmptyShapes) {
    EXPECT_EQ(softmax_rows(Mat(0, 5)).rows(), 0);
    const Mat A = softmax_rows(Mat(3, 0));
    EXPECT_EQ(A.rows(), 3);
    EXPECT_EQ(A.cols(), 0);
}

TEST(NormalizeRows, DividesByRowSumAndHonoursTheMask) {
    const Mat W = rowvec_mat({{1, 3}, {0, 0}, {2, 2}});
    EXPECT_MATRIX_NEAR(normalize_rows(W), rowvec_mat({{0.25f, 0.75f}, {0, 0}, {0.5f, 0.5f}}), 1e-7);
    BoolMat allowed = no_mask(3, 2);
    allowed(2, 1) = false;
    allowed(0, 0) = false;
    EXPECT_MATRIX_NEAR(normalize_rows(W, allowed), rowvec_mat({{0, 1}, {0, 0}, {1, 0}}), 0.0);
    EXPECT_THROW(normalize_rows(W, no_mask(2, 2)), Error);
}

TEST(Entropy, UniformRowIsLnMAndOneHotIsZero) {
    for (int m : {1, 2, 7, 4096}) {
        const Mat U = Mat::Constant(2, m, 1.0f / float(m));
        const Vec H = row_entropy(U);
        EXPECT_NEAR(H(0), std::log(double(m)), 1e-5 * std::max(1.0, std::log(double(m))));
    }
    const Vec H = row_entropy(rowvec_mat({{0, 1, 0}, {0.5f, 0.5f, 0}, {0.25f, 0.25f, 0.5f}}));
    EXPECT_EQ(H(0), 0.0f);
    EXPECT_NEAR(H(1), std::log(2.0), 1e-6);
    EXPECT_NEAR(H(2), 1.5 * std::log(2.0), 1e-6);
}

TEST(LayerNorm, RowsHaveMeanZeroAndVarianceOne) {
    Mat X = random_normal(10, 32, 3.0, 8);
    X.array() += 5.0f;
    const Mat Y = layernorm_rows(X);
    for (int i = 0; i < Y.rows(); ++i) {
        double mean = 0, var = 0;
        for (int c = 0; c < 32; ++c) mean += Y(i, c);
        mean /= 32;
        for (int c = 0; c < 32; ++c) var += (Y(i, c) - mean) * (Y(i, c) - mean);
        var /= 32;
        EXPECT_NEAR(mean, 0.0, 1e-6);
        EXPECT_NEAR(var, 1.0, 1e-5);  // eps = 1e-5 against a variance of ~9
    }
    // A constant row has variance 0: eps keeps it finite (all zeros).
    const Mat C = layernorm_rows(Mat::Constant(1, 4, 2.0f));
    EXPECT_MATRIX_NEAR(C, Mat::Zero(1, 4), 0.0);
}

// ---------------------------------------------------------------------------------------------
// Linear attention
// ---------------------------------------------------------------------------------------------

TEST(Phi, FeatureMaps) {
    const Mat X = rowvec_mat({{-1, 0, 2}, {0.5f, -3, 1}});
    Mat elu(2, 3), relu(2, 3);
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j) {
            elu(i, j) = ref_phi(X(i, j), PhiKind::Elu1);
            relu(i, j) = ref_phi(X(i, j), PhiKind::Relu);
        }
    EXPECT_MATRIX_NEAR(phi_map(X, PhiKind::Elu1, false), elu, 1e-6);
    EXPECT_MATRIX_NEAR(phi_map(X, PhiKind::Relu, true), relu, 0.0);
    // Softmax: queries over features (rows sum to 1), keys over tokens (columns sum to 1).
    EXPECT_MATRIX_NEAR(phi_map(X, PhiKind::Softmax, false), ref_softmax(X, 1.0), 1e-6);
    EXPECT_MATRIX_NEAR(phi_map(X, PhiKind::Softmax, true), ref_transpose(ref_softmax(ref_transpose(X), 1.0)),
                       1e-6);
    // Hidden keys: zero row, and the column softmax is over visible keys only.
    const Mat K = random_normal(4, 3, 1.0, 3);
    const Mat P = phi_map(K, PhiKind::Softmax, true, {true, false, true, true});
    EXPECT_EQ(P.row(1).squaredNorm(), 0.0f);
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(P.col(c).sum(), 1.0f, 1e-6);
    EXPECT_THROW(phi_map(K, PhiKind::Elu1, true, {true}), Error);
}

struct LinearCase {
    PhiKind phi;
    bool causal;
    bool padding;
    int n, m;
};

class LinearAttentionTest : public ::testing::TestWithParam<LinearCase> {};

TEST_P(LinearAttentionTest, OnTheFlyEqualsMaterialisedWeightsTimesV) {
    const LinearCase c = GetParam();
    const int dk = 5, dv = 3;
    const Mat Q = random_normal(c.n, dk, 1.0, 11);  // n x d_k
    const Mat K = random_normal(c.m, dk, 1.0, 12);  // m x d_k
    const Mat V = random_normal(c.m, dv, 1.0, 13);  // m x d_v
    std::vector<bool> valid;
    BoolMat allowed = c.causal ? causal_mask(c.n, c.m) : no_mask(c.n, c.m);
    if (c.padding) {
        valid.assign(std::size_t(c.m), true);
        valid[std::size_t(c.m) - 1] = false;
        valid[1] = false;
        for (int i = 0; i < c.n; ++i) allowed(i, 1) = allowed(i, c.m - 1) = false;
    }
    const LinearAttention r = linear_attention(Q, K, V, c.phi, c.causal, valid);
    ASSERT_EQ(r.out.rows(), c.n);
    ASSERT_EQ(r.out.cols(), dv);
    ASSERT_EQ(r.KV.rows(), dk);
    ASSERT_EQ(r.KV.cols(), dv);
    // The materialised n×m weights, for display, times V ...
    const Mat A = linear_attention_weights(r.phi_Q, r.phi_K, allowed);  // n x m
    EXPECT_MATRIX_NEAR(r.out, ref_matmul(A, V), 1e-5);
    // ... and an independent plain-loop reference.
    EXPECT_MATRIX_NEAR(r.out, ref_linear_out(r.phi_Q, r.phi_K, V, allowed), 1e-5);
    // Weights rows sum to 1 (or 0 when the query sees no key), hidden keys get exactly 0.
    for (int i = 0; i < c.n; ++i) {
        const float s = A.row(i).sum();
        EXPECT_TRUE(std::abs(s - 1.0f) < 1e-5 || s == 0.0f) << s;
        for (int j = 0; j < c.m; ++j)
            if (!allowed(i, j)) {
                EXPECT_EQ(A(i, j), 0.0f);
            }
    }
    // φ(K) of the independent maps (Elu1 / Relu are elementwise).
    if (c.phi != PhiKind::Softmax) {
        for (int j = 0; j < c.m; ++j)
            for (int d = 0; d < dk; ++d) {
                const float expect = (c.padding && !valid[std::size_t(j)]) ? 0.0f : ref_phi(K(j, d), c.phi);
                EXPECT_NEAR(r.phi_K(j, d), expect, 1e-6);
            }
    }
    if (!c.causal) {
        EXPECT_MATRIX_NEAR(r.KV, ref_matmul(ref_transpose(r.phi_K), V), 1e-5);
    }
}

INSTANTIATE_TEST_SUITE_P(
    AllPhis, LinearAttentionTest,
    ::testing::Values(
        LinearCase{PhiKind::Elu1, false, false, 6, 6}, LinearCase{PhiKind::Elu1, true, false, 6, 6},
        LinearCase{PhiKind::Elu1, false, true, 5, 7}, LinearCase{PhiKind::Elu1, true, true, 7, 5},
        LinearCase{PhiKind::Relu, false, false, 6, 6}, LinearCase{PhiKind::Relu, true, false, 8, 8},
        LinearCase{PhiKind::Relu, false, true, 4, 9}, LinearCase{PhiKind::Relu, true, true, 9, 4},
        LinearCase{PhiKind::Softmax, false, false, 6, 6}, LinearCase{PhiKind::Softmax, true, false, 6, 6},
        LinearCase{PhiKind::Softmax, false, true, 5, 8}, LinearCase{PhiKind::Softmax, true, true, 8, 5}));

TEST(LinearAttention, SoftmaxPhiIsTheNotesFormula) {
    // Non-causal: softmax₂(Q)·(softmax₁(K)ᵀV) with no further normalisation (the normaliser is 1).
    const Mat Q = random_normal(6, 4, 1.0, 21);
    const Mat K = random_normal(9, 4, 1.0, 22);
    const Mat V = random_normal(9, 3, 1.0, 23);
    const Mat sQ = ref_softmax(Q, 1.0);                                   // softmax over features
    const Mat sK = ref_transpose(ref_softmax(ref_transpose(K), 1.0));     // softmax over tokens
    const Mat expect = ref_matmul(sQ, ref_matmul(ref_transpose(sK), V));  // n x d_v
    const LinearAttention r = linear_attention(Q, K, V, PhiKind::Softmax, false);
    EXPECT_MATRIX_NEAR(r.out, expect, 1e-5);
    EXPECT_MATRIX_NEAR(r.normalizer, Mat::Ones(6, 1), 1e-5);
}

TEST(LinearAttention, ZeroNormalizerGivesZeroRow) {
    // ReLU of all-negative queries is 0: the query matches nothing, output 0 rather than 0/0.
    Mat Q = random_normal(3, 4, 1.0, 31);
    Q.row(1) = -Q.row(1).cwiseAbs();
    Q(1, 0) = -1;
    const Mat K = random_normal(5, 4, 1.0, 32).cwiseAbs();
    const Mat V = random_normal(5, 2, 1.0, 33);
    for (bool causal : {false, true}) {
        const LinearAttention r = linear_attention(Q, K, V, PhiKind::Relu, causal);
        EXPECT_EQ(r.normalizer(1, 0), 0.0f);
        EXPECT_EQ(r.out.row(1).squaredNorm(), 0.0f);
        EXPECT_TRUE(r.out.allFinite());
    }
    // All keys hidden.
    const LinearAttention r =
        linear_attention(Q.cwiseAbs(), K, V, PhiKind::Elu1, false, std::vector<bool>(5, false));
    EXPECT_MATRIX_NEAR(r.out, Mat::Zero(3, 2), 0.0);
}

TEST(LinearAttention, RejectsMismatchedShapes) {
    const Mat Q = Mat::Ones(3, 4), K = Mat::Ones(5, 4), V = Mat::Ones(4, 2);
    EXPECT_THROW(linear_attention(Q, K, V, PhiKind::Elu1, false), Error);
    EXPECT_THROW(linear_attention(Q, Mat::Ones(4, 3), V, PhiKind::Elu1, false), Error);
    EXPECT_THROW(linear_attention(Q, K, Mat::Ones(5, 2), PhiKind::Elu1, false, {true}), Error);
}

TEST(LinearAttention, LongCausalSequenceStaysAccurate) {
    // Prefix sums over 3000 keys: compare the last rows with the materialised form.
    const int n = 3000, dk = 8, dv = 4;
    const Mat Q = random_normal(n, dk, 1.0, 41);
    const Mat K = random_normal(n, dk, 1.0, 42);
    const Mat V = random_normal(n, dv, 1.0, 43);
    const LinearAttention r = linear_attention(Q, K, V, PhiKind::Elu1, true);
    const Mat tailQ = r.phi_Q.bottomRows(5);
    BoolMat allowed(5, n);
    for (int i = 0; i < 5; ++i)
        for (int j = 0; j < n; ++j) allowed(i, j) = j <= n - 5 + i;
    EXPECT_MATRIX_NEAR(r.out.bottomRows(5), ref_linear_out(tailQ, r.phi_K, V, allowed), 1e-5);
}

}  // namespace
}  // namespace attnviz

// Tests of core/gemm: every layout the trainer uses (A row-major or transposed, B row-major or
// transposed, C overwritten or added to, C a block of a wider matrix), every size around the kernel's
// tiles (6, 12 rows; 16, 32, 64 columns; 128 inner terms per panel; 144 rows and 256 columns per
// block), each
// Triangle, against a plain double loop; and the reproducibility the trainer's determinism rests on.
#include "core/gemm.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace attnviz {
namespace {

/// A row-major rows × cols matrix in a buffer with row stride ld >= cols.
struct Buf {
    int rows = 0, cols = 0;
    long ld = 0;
    std::vector<float> v;
    float& at(int i, int j) { return v[std::size_t(i * ld + j)]; }
    float at(int i, int j) const { return v[std::size_t(i * ld + j)]; }
};

Buf random_buf(int rows, int cols, long ld, std::mt19937& rng) {
    std::normal_distribution<float> nd;
    Buf b{rows, cols, ld, std::vector<float>(std::size_t(std::max(1L, rows * ld)))};
    for (float& x : b.v) x = nd(rng);
    return b;
}

struct Case {
    int M, N, K;
    bool a_trans, b_trans, accumulate;
    Triangle tri;
    std::string name() const {
        return "M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K) +
               (a_trans ? " Aᵀ" : " A") + (b_trans ? " Bᵀ" : " B") + (accumulate ? " C+=" : " C=") +
               " tri=" + std::to_string(int(tri));
    }
};

/// Runs one case against a double loop; the tolerance is float rounding over K terms of the size
/// of the terms actually summed.
void check(const Case& c, std::mt19937& rng) {
    // logical A [M, K]; zeros where the Triangle says so
    Buf a = c.a_trans ? random_buf(c.K, c.M, c.M + 3, rng) : random_buf(c.M, c.K, c.K + 5, rng);
    auto A = [&](int i, int k) -> float& { return c.a_trans ? a.at(k, i) : a.at(i, k); };
    for (int i = 0; i < c.M; ++i)
        for (int k = 0; k < c.K; ++k)
            if ((c.tri == Triangle::LowerA && k > i) || (c.tri == Triangle::UpperA && k < i)) A(i, k) = 0;
    Buf b = c.b_trans ? random_buf(c.N, c.K, c.K + 1, rng) : random_buf(c.K, c.N, c.N + 7, rng);
    auto B = [&](int k, int j) { return c.b_trans ? b.at(j, k) : b.at(k, j); };
    Buf C = random_buf(c.M, c.N, c.N + 2, rng);  // C is a block of a wider matrix
    const Buf before = C;
    const GemmOperand ga{a.v.data(), c.a_trans ? 1 : a.ld, c.a_trans ? a.ld : 1};
    const GemmOperand gb{b.v.data(), c.b_trans ? 1 : b.ld, c.b_trans ? b.ld : 1};
    gemm(c.M, c.N, c.K, ga, gb, C.v.data(), C.ld, c.accumulate, c.tri);
    for (int i = 0; i < c.M; ++i) {
        for (int j = 0; j < c.N; ++j) {
            if (c.tri == Triangle::LowerC && j > i) continue;  // unspecified above the diagonal
            double want = c.accumulate ? double(before.at(i, j)) : 0.0, scale = std::abs(want);
            for (int k = 0; k < c.K; ++k) {
                want += double(A(i, k)) * double(B(k, j));
                scale += std::abs(double(A(i, k)) * double(B(k, j)));
            }
            ASSERT_NEAR(C.at(i, j), want, 1e-6 * (scale + 1)) << c.name() << " at (" << i << ", " << j << ")";
        }
        // the padding between rows of C (columns N .. ld) is never written
        for (long j = c.N; j < C.ld && i * C.ld + j < long(C.v.size()); ++j)
            ASSERT_EQ(C.v[std::size_t(i * C.ld + j)], before.v[std::size_t(i * C.ld + j)])
                << c.name() << ": wrote past column " << c.N << " in row " << i;
    }
}

TEST(Gemm, EveryLayoutAndSizeAroundTheTiles) {
    std::mt19937 rng(7);
    int cases = 0;
    for (int M : {1, 5, 6, 7, 12, 13, 150})
        for (int N : {1, 3, 16, 17, 32, 33, 64, 65, 130})
            for (int K : {1, 2, 31, 128, 129, 300})
                for (int layout = 0; layout < 8; ++layout) {
                    check(Case{M, N, K, bool(layout & 1), bool(layout & 2), bool(layout & 4), Triangle::None},
                          rng);
                    ++cases;
                }
    EXPECT_EQ(cases, 7 * 9 * 6 * 8);
}

TEST(Gemm, WideProductsArePackedInBlocksOfColumns) {
    std::mt19937 rng(11);
    for (int M : {7, 13})
        for (int N : {255, 256, 257, 530})
            for (int K : {5, 129})
                for (int layout = 0; layout < 8; ++layout)
                    check(Case{M, N, K, bool(layout & 1), bool(layout & 2), bool(layout & 4), Triangle::None},
                          rng);
}

TEST(Gemm, TrianglesGiveTheWholeProductWhereItIsWanted) {
    std::mt19937 rng(8);
    for (Triangle tri : {Triangle::LowerA, Triangle::UpperA, Triangle::LowerC})
        for (int n : {1, 6, 13, 48, 64, 65, 140, 200, 300})
            for (int dh : {1, 16, 32, 40, 64})
                for (int layout = 0; layout < 8; ++layout) {
                    // causal shapes: A [n, n] against B [n, dh], or [n, dh] against [dh, n] for LowerC
                    const Case c =
                        tri == Triangle::LowerC
                            ? Case{n, n, dh, bool(layout & 1), bool(layout & 2), bool(layout & 4), tri}
                            : Case{n, dh, n, bool(layout & 1), bool(layout & 2), bool(layout & 4), tri};
                    check(c, rng);
                }
}

/// Operands with no stride 1 (every other element of a buffer, columns far apart): B is gathered,
/// an A like that goes to Eigen's product. Same double-loop check.
TEST(Gemm, OperandsWithNoUnitStride) {
    std::mt19937 rng(10);
    std::normal_distribution<float> nd;
    for (int M : {1, 7, 40})
        for (int N : {1, 5, 33, 70})
            for (int K : {1, 9, 130})
                for (bool a_strided : {false, true}) {
                    const long a_rs = a_strided ? 2 * K + 3 : K, a_cs = a_strided ? 2 : 1;
                    const long b_rs = 3, b_cs = 3 * K + 5;  // B(k, j) at b[3k + (3K + 5)j]
                    std::vector<float> a(std::size_t(M * a_rs + K * a_cs + 1)),
                        b(std::size_t(K * b_rs + N * b_cs + 1));
                    for (float& x : a) x = nd(rng);
                    for (float& x : b) x = nd(rng);
                    std::vector<float> C(std::size_t(M) * N, 7.0f);
                    gemm(M, N, K, GemmOperand{a.data(), a_rs, a_cs}, GemmOperand{b.data(), b_rs, b_cs},
                         C.data(), N, false);
                    for (int i = 0; i < M; ++i)
                        for (int j = 0; j < N; ++j) {
                            double want = 0, scale = 0;
                            for (int k = 0; k < K; ++k) {
                                const double t = double(a[std::size_t(i * a_rs + k * a_cs)]) *
                                                 double(b[std::size_t(k * b_rs + j * b_cs)]);
                                want += t;
                                scale += std::abs(t);
                            }
                            ASSERT_NEAR(C[std::size_t(i * N + j)], want, 1e-6 * (scale + 1))
                                << "M=" << M << " N=" << N << " K=" << K << (a_strided ? " A strided" : "")
                                << " at (" << i << ", " << j << ")";
                        }
                }
}

TEST(Gemm, InnerDimensionZeroClearsOrKeeps) {
    std::vector<float> C(6, 5.0f);
    const float one = 1.0f;
    gemm(2, 3, 0, GemmOperand{&one, 1, 1}, GemmOperand{&one, 1, 1}, C.data(), 3, true);
    for (float x : C) EXPECT_EQ(x, 5.0f);
    gemm(2, 3, 0, GemmOperand{&one, 1, 1}, GemmOperand{&one, 1, 1}, C.data(), 3, false);
    for (float x : C) EXPECT_EQ(x, 0.0f);
}

/// The trainer's determinism: the same product gives the same bits on every call and every thread,
/// and with AVX-512 a Triangle's skipped terms (exact zeros) leave the bits of the whole product.
TEST(Gemm, BitForBitOnEveryCallAndThread) {
    std::mt19937 rng(9);
    const int M = 300, N = 200, K = 333;
    Buf a = random_buf(M, K, K, rng), b = random_buf(K, N, N, rng);
    for (int i = 0; i < M; ++i)
        for (int k = i + 1; k < K; ++k) a.at(i, k) = 0;  // lower-triangular
    auto run = [&](Triangle tri) {
        std::vector<float> C(std::size_t(M) * N);
        gemm(M, N, K, GemmOperand{a.v.data(), K, 1}, GemmOperand{b.v.data(), N, 1}, C.data(), N, false, tri);
        return C;
    };
    const std::vector<float> first = run(Triangle::None);
    std::vector<float> on_thread;
    std::thread([&] { on_thread = run(Triangle::None); }).join();
    EXPECT_EQ(std::memcmp(first.data(), run(Triangle::None).data(), first.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(first.data(), on_thread.data(), first.size() * sizeof(float)), 0);
    if (!gemm_own_kernel()) GTEST_SKIP() << "no AVX-512 on this CPU: gemm is Eigen's product";
    {
        const std::vector<float> lower = run(Triangle::LowerA);
        for (std::size_t i = 0; i < first.size(); ++i)
            ASSERT_EQ(first[i], lower[i]) << "(" << i / N << ", " << i % N << ")";
    }
}

/// The summation order every element follows, written out: KC = 128 inner terms at a time, each panel
/// summed from zero with fused multiply-adds in k order, the panels' sums added to C in k order. Any
/// change of blocking that keeps it (tile shapes, loop order, block sizes) leaves every trained model's
/// bits alone; a change of it shows here.
TEST(Gemm, SummationOrderIsPanelsOf128TermsInOrder) {
    if (!gemm_own_kernel()) GTEST_SKIP() << "no AVX-512 on this CPU: gemm is Eigen's product";
    std::mt19937 rng(11);
    for (const auto& [M, N, K] :
         std::vector<std::array<int, 3>>{{7, 70, 300}, {150, 300, 800}, {13, 33, 1000}, {128, 100, 77}})
        for (int layout = 0; layout < 4; ++layout) {
            // B row-major, or Bᵀ (nn.Linear's W: packed from W's rows by the transposing path)
            const bool accumulate = layout & 1, b_trans = layout & 2;
            Buf a = random_buf(M, K, K, rng), c = random_buf(M, N, N, rng);
            const Buf bt = random_buf(N, K, K, rng);
            Buf b{K, N, N, std::vector<float>(std::size_t(K) * N)};
            for (int k = 0; k < K; ++k)
                for (int j = 0; j < N; ++j) b.at(k, j) = bt.at(j, k);
            std::vector<float> want = c.v;
            for (int i = 0; i < M; ++i)
                for (int j = 0; j < N; ++j) {
                    float& out = want[std::size_t(i * N + j)];
                    for (int k0 = 0; k0 < K; k0 += 128) {
                        float acc = 0;
                        for (int k = k0; k < std::min(K, k0 + 128); ++k)
                            acc = std::fma(a.at(i, k), b.at(k, j), acc);
                        out = (k0 == 0 && !accumulate) ? acc : out + acc;
                    }
                }
            gemm(M, N, K, GemmOperand{a.v.data(), K, 1},
                 b_trans ? GemmOperand{bt.v.data(), 1, K} : GemmOperand{b.v.data(), N, 1}, c.v.data(), N,
                 accumulate);
            ASSERT_EQ(std::memcmp(want.data(), c.v.data(), want.size() * sizeof(float)), 0)
                << "M=" << M << " N=" << N << " K=" << K << (accumulate ? " C+=" : " C=")
                << (b_trans ? " Bᵀ" : "");
        }
}

/// gemm_blocks hands over every element of the product once, with gemm's bits, block by block.
TEST(Gemm, BlocksVisitEveryElementWithGemmsBits) {
    std::mt19937 rng(12);
    for (const auto& [M, N, K] : std::vector<std::array<int, 3>>{
             {1, 1, 1}, {5, 20, 9}, {150, 300, 770}, {300, 1000, 64}, {40, 50257 / 60, 768}})
        for (bool b_trans : {false, true}) {
            Buf a = random_buf(M, K, K, rng);
            Buf b = b_trans ? random_buf(N, K, K, rng) : random_buf(K, N, N, rng);
            const GemmOperand ga{a.v.data(), K, 1};
            const GemmOperand gb = b_trans ? GemmOperand{b.v.data(), 1, K} : GemmOperand{b.v.data(), N, 1};
            std::vector<float> want(std::size_t(M) * N), got(std::size_t(M) * N, std::nanf(""));
            std::vector<int> seen(std::size_t(M) * N, 0);
            gemm(M, N, K, ga, gb, want.data(), N, false);
            gemm_blocks(M, N, K, ga, gb, [&](int i0, int rows, int j0, int cols, const float* c, long ldc) {
                ASSERT_LE(rows, 144);
                ASSERT_LE(cols, 256);
                for (int i = 0; i < rows; ++i)
                    for (int j = 0; j < cols; ++j) {
                        got[std::size_t((i0 + i) * N + j0 + j)] = c[i * ldc + j];
                        ++seen[std::size_t((i0 + i) * N + j0 + j)];
                    }
            });
            for (int x : seen) ASSERT_EQ(x, 1);
            EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0)
                << "M=" << M << " N=" << N << " K=" << K << (b_trans ? " Bᵀ" : " B");
        }
}

}  // namespace
}  // namespace attnviz

// The sizes a learner reaches: a 4096-token softmax trace, a 16384-token linear-attention trace, and
// the cost lab's measured growth (CPU-time ratios, meaningless when instrumented). Release only: the
// same code runs under the sanitizers at small sizes in tests/core.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positive in Eigen's AVX-512 code
#endif
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/labs.hpp"
#include "core/trace.hpp"

namespace attnviz {
namespace {

TEST(Trace, LongSoftmaxTrace4096) {
    Config c;
    c.length = 4096;
    c.heads = 2;
    c.d_model = 32;
    c.mask = MaskKind::Causal;
    const Trace t = compute_trace(c);
    EXPECT_EQ(t.n, 4096);
    const Mat A = t.get("weights", 1)->matrix();
    EXPECT_NEAR(A.row(4095).sum(), 1.0, 1e-4);
    EXPECT_NEAR(A.row(0).sum(), 1.0, 1e-6);
    EXPECT_EQ(A(0, 1), 0.0f);
    EXPECT_FALSE(t.get("residual")->matrix().array().isNaN().any());
    // scaled and masked are derived, not stored: the trace holds about 2 n×m matrices per head.
    EXPECT_LT(t.stored_bytes(), 2.2 * 2 * 4096.0 * 4096.0 * 4);
}

TEST(Trace, LinearAttentionOmitsHugeImpliedWeights) {
    Config c;
    c.attention = AttentionKind::Linear;
    c.length = 16384;
    c.d_model = 16;
    c.heads = 2;
    c.mask = MaskKind::Causal;
    const Trace t = compute_trace(c);
    EXPECT_EQ(t.get("weights", 0), nullptr);
    EXPECT_NE(t.get("head_output", 0)->explanation.find("not shown"), std::string::npos);
    EXPECT_FALSE(t.get("output")->matrix().array().isNaN().any());
}

TEST(LinearLab, MeasuredCostGrowsQuadraticallyForSoftmaxOnlyLinearlyForLinear) {
    // Small sizes only: the full sweep runs in the GUI. The ratios use the thread's CPU time, which
    // another process competing for the core does not inflate (the wall-clock minimum did, under load).
    const CostSample s1 = measure_cost(CostKind::Softmax, 512, 32, 5);
    const CostSample s2 = measure_cost(CostKind::Softmax, 2048, 32, 3);
    const CostSample l1 = measure_cost(CostKind::Linear, 2048, 32, 5);
    const CostSample l2 = measure_cost(CostKind::Linear, 8192, 32, 5);
    EXPECT_EQ(s2.matrix_bytes, 2048.0 * 2048 * 4);
    EXPECT_EQ(l2.matrix_bytes, 32.0 * 32 * 4 + 8192.0 * 32 * 4);
    EXPECT_GT(s1.seconds, 0.0);
    EXPECT_LE(s1.seconds, s1.median_seconds);
    EXPECT_GT(s1.cpu_seconds, 0.0);
    const double softmax_ratio = s2.cpu_seconds / s1.cpu_seconds;  // ideal 16 for 4× n
    const double linear_ratio = l2.cpu_seconds / l1.cpu_seconds;   // ideal 4 for 4× n
    EXPECT_GT(softmax_ratio, 6.0);
    EXPECT_LT(linear_ratio, 0.6 * softmax_ratio);
    EXPECT_THROW(measure_cost(CostKind::Softmax, 40000, 64, 1), ConfigError);
    EXPECT_THROW(measure_cost(CostKind::Linear, 0, 64, 1), ConfigError);
}

}  // namespace
}  // namespace attnviz

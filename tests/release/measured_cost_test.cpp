// The cost lab's measured growth: CPU-time ratios of softmax and linear attention as n grows, which
// only mean something optimised and uninstrumented (Release only; the same measure_cost runs under
// the sanitizers at a small size in tests/core/labs_test.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positive in Eigen's AVX-512 code
#endif
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/labs.hpp"

namespace attnviz {
namespace {

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

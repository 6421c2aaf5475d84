// sampling_distribution against hand computations: temperature, top-k, top-p (renormalised over the
// top-k, as Hugging Face's warpers), the greedy limit and the knobs' limits.
#include "core/sampling.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "core/model.hpp"

namespace attnviz {
namespace {

RowVec five_logits() {
    RowVec logits(5);
    logits << 1.0f, 3.0f, 2.0f, 0.5f, 2.9f;
    return logits;
}

TEST(Sampling, OrderAndModelProbabilities) {
    const SamplingDistribution d = sampling_distribution(five_logits(), 1.0, 0, 1.0);
    EXPECT_EQ(d.order, (std::vector<int>{1, 4, 2, 0, 3}));
    // exp(x - 3): 0.135335, 1, 0.367879, 0.082085, 0.904837; their sum 2.490136.
    const double expect[5] = {0.054348, 0.401584, 0.147735, 0.032964, 0.363368};
    for (int i = 0; i < 5; ++i) {
        EXPECT_NEAR(d.model(i), expect[i], 2e-6) << "model(" << i << ")";
        EXPECT_NEAR(d.tempered(i), expect[i], 2e-6) << "tempered(" << i << ")";
        EXPECT_NEAR(d.sampling(i), expect[i], 2e-6) << "sampling(" << i << ")";
    }
    EXPECT_EQ(d.kept, 5);
    EXPECT_EQ(d.cut, SamplingCut::None);
}

TEST(Sampling, TopPHalfKeepsTheTwoThatReachIt) {
    // top-k 5 (no cut at V = 5), top-p 0.5: 0.4016 < 0.5, 0.4016 + 0.3634 >= 0.5, so two tokens,
    // renormalised: 1 / (1 + e^-0.1) and e^-0.1 / (1 + e^-0.1).
    const SamplingDistribution d = sampling_distribution(five_logits(), 1.0, 5, 0.5);
    EXPECT_EQ(d.kept, 2);
    EXPECT_EQ(d.cut, SamplingCut::TopP);
    EXPECT_NEAR(d.sampling(1), 0.524979, 2e-6);
    EXPECT_NEAR(d.sampling(4), 0.475021, 2e-6);
    for (int id : {0, 2, 3}) EXPECT_EQ(d.sampling(id), 0.0f) << "token " << id << " cannot be drawn";
    EXPECT_NEAR(d.model(2), 0.147735, 2e-6) << "the raw probability stays";
}

TEST(Sampling, TopPIsMeasuredOnTheTopKRenormalised) {
    // T = 2: exp((x - 3) / 2) = 0.367879, 1, 0.606531, 0.286505, 0.951229. Top-3 = {1, 4, 2}, sum
    // 2.557760, renormalised 0.390967, 0.371900, 0.237133: cumulative 0.7629 >= 0.75 after two tokens.
    // (Measured on the whole vocabulary it would be 0.6075 and keep three.)
    const SamplingDistribution d = sampling_distribution(five_logits(), 2.0, 3, 0.75);
    EXPECT_NEAR(d.tempered(1), 1.0 / 3.212144, 2e-6);
    EXPECT_EQ(d.kept, 2);
    EXPECT_EQ(d.cut, SamplingCut::TopP);
    EXPECT_NEAR(d.sampling(1), 0.512498, 2e-6);
    EXPECT_NEAR(d.sampling(4), 0.487502, 2e-6);
    // top-p 0.9 is reached only with the third: the top-k is the cut.
    const SamplingDistribution k = sampling_distribution(five_logits(), 2.0, 3, 0.9);
    EXPECT_EQ(k.kept, 3);
    EXPECT_EQ(k.cut, SamplingCut::TopK);
    EXPECT_NEAR(k.sampling(2), 0.237133, 2e-6);
}

TEST(Sampling, GreedyAndLimits) {
    const SamplingDistribution g = sampling_distribution(five_logits(), 0.0, 0, 1.0);
    EXPECT_EQ(g.kept, 1);
    EXPECT_EQ(g.cut, SamplingCut::Greedy);
    EXPECT_EQ(g.sampling(1), 1.0f);
    EXPECT_NEAR(g.model(1), 0.401584, 2e-6);
    // A tiny top-p still keeps one token; ties keep the lower id first.
    EXPECT_EQ(sampling_distribution(five_logits(), 1.0, 0, 1e-9).kept, 1);
    RowVec tie(3);
    tie << 2.0f, 5.0f, 5.0f;
    EXPECT_EQ(sampling_distribution(tie, 1.0, 1, 1.0).order[0], 1);
    EXPECT_THROW(sampling_distribution(five_logits(), -1, 0, 1.0), ConfigError);
    EXPECT_THROW(sampling_distribution(five_logits(), 1, -1, 1.0), ConfigError);
    EXPECT_THROW(sampling_distribution(five_logits(), 1, 0, 0.0), ConfigError);
    EXPECT_THROW(sampling_distribution(RowVec(), 1, 0, 1.0), Error);
}

TEST(Sampling, TheSamplerDrawsOnlyWhatTheDistributionKeeps) {
    // sample_next_token (attnviz generate, the panel's Append sampled) draws from this distribution.
    const SamplingOptions o{1.0, 5, 0.5};
    const SamplingDistribution d = sampling_distribution(five_logits(), 1.0, 5, 0.5);
    for (int i = 0; i < 1000; ++i) {
        const double u = (i + 0.5) / 1000.0;
        const int id = sample_next_token(five_logits(), o, u);
        EXPECT_GT(d.sampling(id), 0.0f) << "u = " << u << " drew token " << id;
        EXPECT_EQ(id, u < 0.524979 ? 1 : 4) << "u = " << u;
    }
}

}  // namespace
}  // namespace attnviz

// Tests of the teaching labs (core/labs.hpp): the numbers each lab shows must be the mathematics
// the lab claims, not just "something was computed".
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC bug 105593 (AVX-512 + Eigen), see labs.cpp
#endif

#include "core/labs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "common/matrix_expect.hpp"
#include "core/error.hpp"
#include "core/ops.hpp"

namespace attnviz {
namespace {

// ---------------------------------------------------------------------------------------------
// 1. Positional encoding
// ---------------------------------------------------------------------------------------------

TEST(PeLab, ShapesAndMatrixMatchTheFormula) {
    PeLabParams p;
    p.positions = 20;
    p.dims = 16;
    p.base = 100.0;
    const PeLab L = positional_encoding_lab(p);
    ASSERT_EQ(L.PE.rows(), 20);
    ASSERT_EQ(L.PE.cols(), 16);
    // Spot-check the formula directly: PE(p, 2i) = sin(p·base^(−2i/d)), PE(p, 2i+1) = cos(...).
    for (int pos : {0, 3, 19}) {
        for (int i = 0; i < 8; ++i) {
            const double w = std::pow(100.0, -2.0 * i / 16.0);
            EXPECT_NEAR(L.PE(pos, 2 * i), std::sin(pos * w), 1e-6);
            EXPECT_NEAR(L.PE(pos, 2 * i + 1), std::cos(pos * w), 1e-6);
        }
    }
    // Similarity = PE·PEᵀ: symmetric, diagonal = d/2 (sin² + cos² per pair), largest on the diagonal.
    ASSERT_EQ(L.similarity.rows(), 20);
    EXPECT_MATRIX_NEAR(L.similarity, Mat(L.similarity.transpose()), 1e-6);
    for (int i = 0; i < 20; ++i) {
        EXPECT_NEAR(L.similarity(i, i), 8.0, 1e-4);
        for (int j = 0; j < 20; ++j) {
            if (j != i) {
                EXPECT_LT(L.similarity(i, j), L.similarity(i, i));
            }
        }
    }
    // Nearby positions look more alike than distant ones.
    EXPECT_GT(L.similarity(10, 11), L.similarity(10, 19));
    // Curves are the chosen columns.
    ASSERT_EQ(L.curves.cols(), 4);
    EXPECT_MATRIX_NEAR(L.curves.col(0), L.PE.col(6), 0.0);
    EXPECT_MATRIX_NEAR(L.curves.col(3), L.PE.col(9), 0.0);
    ASSERT_EQ(L.curve_wavelengths.size(), 4u);
    EXPECT_NEAR(L.curve_wavelengths[0], 2.0 * M_PI / std::pow(100.0, -6.0 / 16.0), 1e-9);
}

TEST(PeLab, RotationTakesPeOfPToPeOfPPlusDelta) {
    for (int delta : {1, 3, 17}) {
        for (int pos : {0, 5, 250}) {
            PeLabParams p;
            p.dims = 64;
            p.p = pos;
            p.delta = delta;
            const PeLab L = positional_encoding_lab(p);
            EXPECT_LT(L.rotation_max_abs_diff, 1e-5) << "p = " << pos << ", delta = " << delta;
            // The check must compare against the real PE(p+δ), not against itself.
            EXPECT_MATRIX_NEAR(L.pe_p_delta, sinusoidal_pe(1, 64, 10000.0, pos + delta), 1e-6);
            // And a shift really moves the code (PE(p) ≠ PE(p+δ)), so the test is not trivial.
            EXPECT_GT((L.pe_p - L.pe_p_delta).cwiseAbs().maxCoeff(), 1e-3f);
        }
    }
}

TEST(PeLab, OddDimensionsLeaveTheUnpairedSineOutOfTheCheck) {
    PeLabParams p;
    p.dims = 9;
    p.curve_dims = {0, 8};
    const PeLab L = positional_encoding_lab(p);
    EXPECT_LT(L.rotation_max_abs_diff, 1e-5);
    EXPECT_EQ(L.difference(8), 0.0f);
    EXPECT_EQ(L.q.size(), 8);  // RoPE on the even part
}

TEST(PeLab, RopeDotProductDependsOnlyOnTheOffset) {
    PeLabParams p;
    p.dims = 32;
    p.rope_positions = 20;
    const PeLab L = positional_encoding_lab(p);
    ASSERT_EQ(L.rope_table.size(), 39u);  // offsets −19 .. 19
    EXPECT_EQ(L.rope_table.front().offset, -19);
    EXPECT_EQ(L.rope_table[19].offset, 0);
    EXPECT_EQ(L.rope_table[19].pairs, 20);
    EXPECT_LT(L.rope_max_spread, 1e-4);
    // Constant along each diagonal of the matrix, and equal to the table's mean.
    for (int a = 0; a < 20; ++a) {
        for (int b = 0; b < 20; ++b) {
            EXPECT_NEAR(L.rope_dots(a, b), L.rope_table[std::size_t(b - a + 19)].mean, 1e-4);
        }
    }
    // Offset 0 is the plain dot product q·k (rotating both by the same angle changes nothing).
    EXPECT_NEAR(L.rope_table[19].mean, double(L.q.dot(L.k)), 1e-4);
    // Different offsets give different dot products (otherwise the position would carry no signal).
    std::set<long> distinct;
    for (const RopeOffsetRow& r : L.rope_table) distinct.insert(std::lround(r.mean * 1000));
    EXPECT_GT(distinct.size(), 30u);
    // Additive absolute PE is not offset-invariant.
    EXPECT_GT(L.additive_max_spread, 0.1);
}

TEST(PeLab, BadParametersGiveClearErrors) {
    PeLabParams p;
    p.base = 1.0;
    EXPECT_THROW(positional_encoding_lab(p), ConfigError);
    p = PeLabParams();
    p.curve_dims = {40};
    p.dims = 32;
    EXPECT_THROW(positional_encoding_lab(p), ConfigError);
    p = PeLabParams();
    p.p = 2;
    p.delta = -5;
    EXPECT_THROW(positional_encoding_lab(p), ConfigError);
    p = PeLabParams();
    p.dims = 1;
    EXPECT_THROW(positional_encoding_lab(p), ConfigError);
}

// ---------------------------------------------------------------------------------------------
// 2. Nadaraya–Watson
// ---------------------------------------------------------------------------------------------

TEST(NwLab, TrainingDataIsSortedSeededAndFollowsTheTarget) {
    NwLabParams p;
    p.noise = 0.0;
    const NwLab L = nadaraya_watson_lab(p);
    ASSERT_EQ(L.x_train.size(), 50);
    for (int i = 1; i < 50; ++i) EXPECT_LE(L.x_train(i - 1), L.x_train(i));
    for (int i = 0; i < 50; ++i) {
        EXPECT_GE(L.x_train(i), 0.0f);
        EXPECT_LT(L.x_train(i), 5.0f);
        const double x = L.x_train(i);
        EXPECT_NEAR(L.y_train(i), 2.0 * std::sin(x) + std::pow(x, 0.8), 1e-5);
    }
    EXPECT_EQ(L.train_noise_mse, 0.0);
    // Same seed, same data; another seed, other data.
    const NwLab again = nadaraya_watson_lab(p);
    EXPECT_MATRIX_NEAR(again.x_train, L.x_train, 0.0);
    p.seed = 43;
    const NwLab other = nadaraya_watson_lab(p);
    EXPECT_GT((other.x_train - L.x_train).cwiseAbs().maxCoeff(), 1e-3f);
}

TEST(NwLab, WeightRowsSumToOneAndFitIsWeightedAverage) {
    for (Scoring kernel : {Scoring::Gaussian, Scoring::Boxcar, Scoring::Epanechnikov}) {
        NwLabParams p;
        p.kernel = kernel;
        p.bandwidth = 0.8;
        const NwLab L = nadaraya_watson_lab(p);
        ASSERT_EQ(L.A.rows(), 101);
        ASSERT_EQ(L.A.cols(), 50);
        EXPECT_EQ(L.uncovered, 0);
        for (int i = 0; i < L.A.rows(); ++i) {
            EXPECT_NEAR(L.A.row(i).sum(), 1.0f, 1e-5) << "row " << i;
            EXPECT_GE(L.A.row(i).minCoeff(), 0.0f);
            // ŷ is a weighted average of y: within [min y, max y].
            EXPECT_GE(L.y_hat(i), L.y_train.minCoeff() - 1e-4f);
            EXPECT_LE(L.y_hat(i), L.y_train.maxCoeff() + 1e-4f);
        }
        EXPECT_MATRIX_NEAR(L.y_hat, Vec(L.A * L.y_train), 1e-6);
        EXPECT_TRUE(std::isfinite(L.mse));
    }
}

TEST(NwLab, GaussianWithTinyBandwidthInterpolatesTheTrainingPoints) {
    NwLabParams p;
    p.train = 20;
    p.bandwidth = 1e-3;
    const NwLab base = nadaraya_watson_lab(p);
    p.query_points.assign(base.x_train.data(), base.x_train.data() + base.x_train.size());
    const NwLab L = nadaraya_watson_lab(p);
    // Each query sits on a training point; every other point is far away in units of h.
    EXPECT_MATRIX_NEAR(L.y_hat, base.y_train, 1e-4);
    EXPECT_EQ(L.uncovered, 0);
}

TEST(NwLab, WiderBandwidthFlattensTowardsTheMean) {
    NwLabParams p;
    p.bandwidth = 100.0;
    const NwLab L = nadaraya_watson_lab(p);
    const float mean = L.y_train.mean();
    for (int i = 0; i < L.y_hat.size(); ++i) EXPECT_NEAR(L.y_hat(i), mean, 0.02f);
    // A moderate bandwidth fits the d2l curve better than a flat line.
    p.bandwidth = 0.3;
    EXPECT_LT(nadaraya_watson_lab(p).mse, L.mse);
}

TEST(NwLab, BoxcarWithSmallBandwidthReportsUncoveredQueriesWithoutNaN) {
    NwLabParams p;
    p.kernel = Scoring::Boxcar;
    p.bandwidth = 0.01;
    p.train = 10;
    const NwLab L = nadaraya_watson_lab(p);
    EXPECT_GT(L.uncovered, 50);
    int counted = 0;
    for (int i = 0; i < L.y_hat.size(); ++i) {
        EXPECT_TRUE(std::isfinite(L.y_hat(i)));
        const bool has_weight = L.A.row(i).sum() > 0.0f;
        EXPECT_EQ(bool(L.covered[std::size_t(i)]), has_weight);
        if (!has_weight) {
            EXPECT_EQ(L.y_hat(i), 0.0f);
            ++counted;
        }
    }
    EXPECT_EQ(counted, L.uncovered);
    bool mentions = false;
    for (const std::string& f : L.findings) mentions |= f.find("no training point") != std::string::npos;
    EXPECT_TRUE(mentions);
}

TEST(NwLab, AdditiveAndDotScoresMatchTheirFormulas) {
    NwLabParams p;
    const NwLab L = nadaraya_watson_lab(p);
    ASSERT_EQ(L.S_additive.rows(), 4);
    ASSERT_EQ(L.S_additive.cols(), 6);
    // Recompute one additive score and one dot score by hand.
    for (int i : {0, 3}) {
        for (int j : {0, 5}) {
            const Vec h =
                (L.W_q.transpose() * L.Q.row(i).transpose() + L.W_k.transpose() * L.K.row(j).transpose());
            EXPECT_NEAR(L.S_additive(i, j), L.w_v.dot(Vec(h.array().tanh())), 1e-4);
            EXPECT_NEAR(L.S_dot(i, j), L.Q.row(i).dot(L.K.row(j)) / std::sqrt(8.0f), 1e-4);
        }
    }
    for (const Mat* A : {&L.A_additive, &L.A_dot}) {
        for (int i = 0; i < 4; ++i) EXPECT_NEAR(A->row(i).sum(), 1.0f, 1e-5);
    }
    // They are different scoring functions: the weights differ.
    EXPECT_GT((L.A_additive - L.A_dot).cwiseAbs().maxCoeff(), 1e-2f);
}

TEST(NwLab, GaussianKernelEqualsDotSoftmaxWhenKeysHaveEqualNorm) {
    NwLabParams p;
    p.equal_norm_keys = false;
    const NwLab unequal = nadaraya_watson_lab(p);
    p.equal_norm_keys = true;
    const NwLab equal = nadaraya_watson_lab(p);
    for (int j = 0; j < equal.K.rows(); ++j) EXPECT_NEAR(equal.K.row(j).norm(), std::sqrt(8.0f), 1e-4);
    EXPECT_LT(equal.gaussian_vs_dot_max_diff, 1e-4);
    EXPECT_GT(unequal.gaussian_vs_dot_max_diff, 1e-2);
}

TEST(NwLab, BadParametersGiveClearErrors) {
    NwLabParams p;
    p.kernel = Scoring::ScaledDot;
    EXPECT_THROW(nadaraya_watson_lab(p), ConfigError);
    p = NwLabParams();
    p.bandwidth = 0.0;
    EXPECT_THROW(nadaraya_watson_lab(p), ConfigError);
    p = NwLabParams();
    p.train = 0;
    EXPECT_THROW(nadaraya_watson_lab(p), ConfigError);
    p = NwLabParams();
    p.query_points = {1.0, std::nan("")};
    EXPECT_THROW(nadaraya_watson_lab(p), ConfigError);
}

TEST(NwLab, TargetFunctions) {
    EXPECT_NEAR(nw_target_value(NwTarget::D2l, 1.0), 2.0 * std::sin(1.0) + 1.0, 1e-12);
    EXPECT_NEAR(nw_target_value(NwTarget::Sin, 0.5), std::sin(0.5), 1e-12);
    EXPECT_EQ(nw_target_value(NwTarget::Step, 2.4), 0.0);
    EXPECT_EQ(nw_target_value(NwTarget::Step, 2.6), 2.0);
    EXPECT_EQ(nw_target_value(NwTarget::Linear, 3.25), 3.25);
    EXPECT_EQ(to_string(NwTarget::Step), "step");
}

// ---------------------------------------------------------------------------------------------
// 3. Temperature & scaling
// ---------------------------------------------------------------------------------------------

TEST(TemperatureLab, WeightRowsAndEntropyLimits) {
    TemperatureLabParams p;
    const TemperatureLab L = temperature_lab(p);
    const int m = int(p.scores.size());
    ASSERT_EQ(L.weights.rows(), int(p.temperatures.size()));
    ASSERT_EQ(L.weights.cols(), m);
    for (int t = 0; t < L.weights.rows(); ++t) EXPECT_NEAR(L.weights.row(t).sum(), 1.0f, 1e-5);
    // T = 1 is plain softmax.
    const RowVec s = Eigen::Map<const RowVec>(p.scores.data(), m);
    const RowVec e = (s.array() - s.maxCoeff()).exp().matrix();
    EXPECT_MATRIX_NEAR(L.weights.row(2), RowVec(e / e.sum()), 1e-5);
    // Entropy limits: → 0 (argmax) as T → 0 and → ln m (uniform) as T → ∞.
    EXPECT_NEAR(L.max_entropy, std::log(double(m)), 1e-12);
    EXPECT_LT(L.entropy(0), 1e-3f);
    EXPECT_GT(L.entropy(L.entropy.size() - 1), L.max_entropy - 0.01);
    EXPECT_LE(L.entropy(L.entropy.size() - 1), L.max_entropy + 1e-5);
    // Log grid from 0.01 to 100, and entropy never decreases as T grows.
    EXPECT_NEAR(L.entropy_T(0), 0.01f, 1e-6);
    EXPECT_NEAR(L.entropy_T(L.entropy_T.size() - 1), 100.0f, 1e-3);
    EXPECT_NEAR(L.entropy_T(20), 1.0f, 1e-5);  // middle of 41 log-spaced points
    for (int i = 1; i < L.entropy.size(); ++i) EXPECT_GE(L.entropy(i), L.entropy(i - 1) - 1e-5f);
    // The per-temperature entropies agree with the curve's definition.
    EXPECT_NEAR(L.weight_entropy(2), row_entropy(softmax_rows(Mat(s), 1.0))(0), 1e-6);
}

TEST(ScalingLab, DotProductVarianceGrowsLikeDAndScalingFixesIt) {
    ScalingLabParams p;
    p.dims = {1, 4, 16, 64, 256};
    p.samples = 2000;
    p.saturation_trials = 10;
    const ScalingLab L = scaling_lab(p);
    for (std::size_t i = 0; i < p.dims.size(); ++i) {
        const double d = p.dims[i];
        // q·k is a sum of d products with kurtosis 9, so the sample variance of 2000 draws has a
        // relative standard error ≤ √(8/2000) ≈ 6.3%; allow 4 standard errors.
        EXPECT_NEAR(L.var_unscaled(Eigen::Index(i)) / d, 1.0, 0.25) << "d = " << d;
        EXPECT_NEAR(L.var_scaled(Eigen::Index(i)), 1.0, 0.25) << "d = " << d;
    }
    // The unscaled variance really grows: 256 vs 1 differ by two orders of magnitude.
    EXPECT_GT(L.var_unscaled(4), 100.0f * L.var_unscaled(0));
}

TEST(ScalingLab, WithoutScalingSoftmaxSaturates) {
    ScalingLabParams p;
    p.dims = {1, 1024};
    p.samples = 100;
    const ScalingLab L = scaling_lab(p);
    EXPECT_EQ(L.saturation_keys, 16);
    EXPECT_GT(L.mean_max_unscaled(1), 0.8f);  // nearly one-hot
    EXPECT_LT(L.mean_max_scaled(1), 0.5f);    // still spread out
    // With 1/√d the typical sharpness does not depend on d.
    EXPECT_NEAR(L.mean_max_scaled(0), L.mean_max_scaled(1), 0.1f);
    for (int i = 0; i < 2; ++i) {
        EXPECT_GE(L.mean_max_scaled(i), 1.0f / 16.0f);  // never below uniform
        EXPECT_LE(L.mean_max_unscaled(i), 1.0f);
    }
}

TEST(TemperatureLab, BadParametersGiveClearErrors) {
    TemperatureLabParams p;
    p.temperatures = {1.0, 0.0};
    EXPECT_THROW(temperature_lab(p), ConfigError);
    p = TemperatureLabParams();
    p.scores = {1.0f};
    EXPECT_THROW(temperature_lab(p), ConfigError);
    p = TemperatureLabParams();
    p.t_min = 10.0;
    p.t_max = 1.0;
    EXPECT_THROW(temperature_lab(p), ConfigError);
    ScalingLabParams q;
    q.dims = {0};
    EXPECT_THROW(scaling_lab(q), ConfigError);
    q = ScalingLabParams();
    q.samples = 1;
    EXPECT_THROW(scaling_lab(q), ConfigError);
}

// ---------------------------------------------------------------------------------------------
// 4. Softmax vs linear
// ---------------------------------------------------------------------------------------------

TEST(LinearLab, ComparesSoftmaxWithEveryFeatureMap) {
    for (bool causal : {false, true}) {
        LinearLabParams p;
        p.causal = causal;
        const LinearLab L = softmax_vs_linear_lab(p);
        ASSERT_EQ(L.A_softmax.rows(), 12);
        ASSERT_EQ(L.phis.size(), 3u);
        // The softmax reference is softmax(QKᵀ/√d), causal-masked when asked.
        Mat S = dot_scores(L.Q, L.K) / std::sqrt(8.0f);
        const Mat ref = softmax_rows(apply_mask(S, causal ? causal_mask(12, 12) : no_mask(12, 12)));
        EXPECT_MATRIX_NEAR(L.A_softmax, ref, 1e-6);
        if (causal) {
            EXPECT_EQ(L.A_softmax(0, 5), 0.0f);
        }
        for (const PhiComparison& c : L.phis) {
            SCOPED_TRACE(to_string(c.phi));
            ASSERT_EQ(c.A_linear.rows(), 12);
            ASSERT_EQ(c.out_linear.cols(), 8);
            // The O(n) route and the displayed weights agree: out = A_linear·V.
            EXPECT_LT(c.weights_vs_output, 1e-4);
            EXPECT_MATRIX_NEAR(c.A_diff, Mat(c.A_linear - L.A_softmax), 0.0);
            EXPECT_NEAR(c.weight_diff_norm, c.A_diff.norm(), 1e-5);
            EXPECT_NEAR(c.output_diff_norm, c.out_diff.norm(), 1e-5);
            // A different similarity: the weights really differ from softmax.
            EXPECT_GT(c.weight_max_abs, 1e-3);
            if (causal) {
                EXPECT_EQ(c.A_linear(0, 5), 0.0f);
            }
            for (int i = 0; i < 12; ++i) {
                const float sum = c.A_linear.row(i).sum();
                EXPECT_TRUE(std::abs(sum - 1.0f) < 1e-4f || sum == 0.0f) << "row " << i << " sums to " << sum;
            }
        }
    }
}

TEST(LinearLab, LogLogSlopeIsExactOnPowerLaws) {
    const std::vector<double> ns = {256, 512, 1024, 2048, 4096};
    std::vector<double> quad, lin, cubic;
    for (double n : ns) {
        quad.push_back(3e-9 * n * n);
        lin.push_back(7e-6 * n);
        cubic.push_back(2.0 * n * n * n);
    }
    EXPECT_NEAR(fit_loglog_slope(ns, quad), 2.0, 1e-12);
    EXPECT_NEAR(fit_loglog_slope(ns, lin), 1.0, 1e-12);
    EXPECT_NEAR(fit_loglog_slope(ns, cubic), 3.0, 1e-12);
    // Least squares, not endpoints: log2 n = 0,1,2,3 and log2 y = 0,2,2,3 give slope 4.5/5 = 0.9
    // (the endpoints alone would say 1).
    EXPECT_NEAR(fit_loglog_slope({1, 2, 4, 8}, {1, 4, 4, 8}), 0.9, 1e-12);
    EXPECT_THROW(fit_loglog_slope({1}, {1}), ConfigError);
    EXPECT_THROW(fit_loglog_slope({1, 2}, {1}), ConfigError);
    EXPECT_THROW(fit_loglog_slope({1, 2}, {1, 0}), ConfigError);
    EXPECT_THROW(fit_loglog_slope({4, 4}, {1, 2}), ConfigError);
}

TEST(LinearLab, MeasureCostAtASmallSizeReportsBytesAndTimes) {
    // The measurement itself (its buffers, repeats and clocks) at a size the sanitized build runs
    // fast; how the cost grows with n is checked optimised (tests/release/measured_cost_test.cpp).
    const CostSample s = measure_cost(CostKind::Softmax, 64, 8, 2);
    EXPECT_EQ(s.matrix_bytes, 64.0 * 64 * 4);
    EXPECT_GT(s.seconds, 0.0);
    EXPECT_LE(s.seconds, s.median_seconds);
    EXPECT_GE(s.cpu_seconds, 0.0);
    const CostSample l = measure_cost(CostKind::Linear, 64, 8, 2);
    EXPECT_EQ(l.matrix_bytes, 8.0 * 8 * 4 + 64.0 * 8 * 4);
    EXPECT_GT(l.seconds, 0.0);
    EXPECT_THROW(measure_cost(CostKind::Softmax, 40000, 64, 1), ConfigError);
    EXPECT_THROW(measure_cost(CostKind::Linear, 0, 64, 1), ConfigError);
}

TEST(LinearLab, DefaultSweeps) {
    const std::vector<int> s = default_cost_sweep(CostKind::Softmax);
    const std::vector<int> l = default_cost_sweep(CostKind::Linear);
    EXPECT_EQ(s.front(), 256);
    EXPECT_EQ(s.back(), 16384);
    EXPECT_EQ(l.back(), 65536);
    EXPECT_EQ(s.size(), 7u);
}

// ---------------------------------------------------------------------------------------------
// 5. Size
// ---------------------------------------------------------------------------------------------

TEST(SizeLab, Gpt3NumbersFromTheNotesAreExact) {
    const SizeLab L = size_lab(SizeLabParams());
    EXPECT_EQ(L.gpt3_embedding, 617558016);
    EXPECT_EQ(L.gpt3_unembedding, 617558016);
    EXPECT_EQ(L.gpt3_embed_sum, 1235116032);
    EXPECT_EQ(L.gpt3_heads_times_dk, 12288);
    EXPECT_EQ(L.gpt3_attention_layer.total, 603979776);
    EXPECT_EQ(L.gpt3_attention_all_layers, 603979776LL * 96);
    EXPECT_EQ(L.gpt3_total_params, 175181291520LL);
}

TEST(SizeLab, LayerParameterCounts) {
    SizeLabParams p;
    p.layer = LayerSize{512, 8, 64, 64, false};
    SizeLab L = size_lab(p);
    EXPECT_TRUE(L.standard_shape);
    EXPECT_EQ(L.layer.total, 4LL * 512 * 512);
    EXPECT_EQ(L.four_d_model_sq, 4LL * 512 * 512);
    EXPECT_EQ(L.standard_layer.total, 4LL * 512 * 512);
    // General case: h·d_model·(2d_k + d_v) + h·d_v·d_model.
    p.layer = LayerSize{100, 3, 20, 10, false};
    L = size_lab(p);
    EXPECT_FALSE(L.standard_shape);
    EXPECT_EQ(L.layer.total, 3LL * 100 * (2 * 20 + 10) + 3LL * 10 * 100);
    EXPECT_EQ(L.standard_layer.total, 0);  // 3 heads do not divide d_model = 100
    p.layer.heads = 4;
    EXPECT_EQ(size_lab(p).standard_layer.total, 4LL * 100 * 100);
    p.layer.heads = 3;
    // With biases: + h·(2d_k + d_v) + d_model.
    p.layer.bias = true;
    L = size_lab(p);
    EXPECT_FALSE(L.standard_shape);
    EXPECT_EQ(L.layer.total, 3LL * 100 * 50 + 3LL * 10 * 100 + 3LL * 50 + 100);
}

TEST(SizeLab, AttentionPatternMemoryIsQuadraticWithCrossings) {
    SizeLabParams p;  // 96 heads, float32, 128 .. 131072
    const SizeLab L = size_lab(p);
    ASSERT_EQ(L.context_n.size(), 11u);
    EXPECT_EQ(L.context_n.front(), 128);
    EXPECT_EQ(L.context_n.back(), 131072);
    for (std::size_t i = 0; i < L.context_n.size(); ++i) {
        const double n = double(L.context_n[i]);
        EXPECT_DOUBLE_EQ(L.pattern_bytes[i], 96.0 * n * n * 4.0);
        if (i > 0) {
            EXPECT_DOUBLE_EQ(L.pattern_bytes[i] / L.pattern_bytes[i - 1], 4.0);
        }  // 2× n → 4× memory
    }
    ASSERT_EQ(L.crossings.size(), 3u);
    const double gib = 1024.0 * 1024 * 1024;
    EXPECT_NEAR(L.crossings[0].n_exact, std::sqrt(gib / 384.0), 1e-6);
    EXPECT_EQ(L.crossings[0].first_grid_n, 2048);
    EXPECT_NEAR(L.crossings[1].n_exact, 8192.0, 1e-6);  // 24 GiB / (96·4) = 8192²
    EXPECT_EQ(L.crossings[1].first_grid_n, 8192);
    EXPECT_NEAR(L.crossings[2].n_exact, std::sqrt(80.0 * gib / 384.0), 1e-6);
    EXPECT_EQ(L.crossings[2].first_grid_n, 16384);
}

TEST(SizeLab, Formatting) {
    EXPECT_EQ(format_thousands(617558016), "617,558,016");
    EXPECT_EQ(format_thousands(12), "12");
    EXPECT_EQ(format_thousands(-1234), "-1,234");
    EXPECT_EQ(format_thousands(0), "0");
    EXPECT_EQ(format_bytes(512), "512 B");
    EXPECT_EQ(format_bytes(1.5 * 1024 * 1024 * 1024), "1.50 GiB");
    EXPECT_EQ(format_bytes(24.0 * 1024 * 1024 * 1024), "24.0 GiB");
}

TEST(SizeLab, BadParametersGiveClearErrors) {
    SizeLabParams p;
    p.layer.heads = 0;
    EXPECT_THROW(size_lab(p), ConfigError);
    p = SizeLabParams();
    p.n_max = 64;
    EXPECT_THROW(size_lab(p), ConfigError);
}

// ---------------------------------------------------------------------------------------------
// Texts
// ---------------------------------------------------------------------------------------------

TEST(LabText, EveryLabHasTitleIntroAndFormulas) {
    ASSERT_EQ(all_labs().size(), 5u);
    for (LabId id : all_labs()) {
        const LabText& t = lab_text(id);
        EXPECT_FALSE(t.title.empty());
        EXPECT_FALSE(t.intro.empty());
        ASSERT_GE(t.sections.size(), 3u) << t.title;
        for (const LabSection& s : t.sections) {
            EXPECT_FALSE(s.heading.empty()) << t.title;
            EXPECT_FALSE(s.formula.empty()) << s.heading;
            EXPECT_GT(s.explanation.size(), 40u) << s.heading;
        }
    }
    EXPECT_NE(lab_text(LabId::Size).sections[1].formula.find("617,558,016"), std::string::npos);
}

TEST(LabFindings, EveryLabReportsItsNumbers) {
    EXPECT_FALSE(positional_encoding_lab(PeLabParams()).findings.empty());
    EXPECT_FALSE(nadaraya_watson_lab(NwLabParams()).findings.empty());
    EXPECT_FALSE(softmax_vs_linear_lab(LinearLabParams()).findings.empty());
    EXPECT_FALSE(temperature_lab(TemperatureLabParams()).findings.empty());
    const SizeLab s = size_lab(SizeLabParams());
    bool found = false;
    for (const std::string& f : s.findings) found |= f.find("1,235,116,032") != std::string::npos;
    EXPECT_TRUE(found);
}

}  // namespace
}  // namespace attnviz

// Colour scale modes and zoom-out reduction levels (io/colormap.hpp): the pure maths behind the
// heatmap's "colours" and "zoomed out" choices, the exported figures and `render --scale-mode`.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "common/matrix_expect.hpp"
#include "core/error.hpp"
#include "core/shapes.hpp"
#include "io/colormap.hpp"

namespace attnviz {
namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();

Mat random_weights(int rows, int cols, unsigned seed, bool with_masked) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    Mat M(rows, cols);  // [rows, cols]
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j)
            M(i, j) = (with_masked && (i * 7 + j * 3) % 5 == 0) ? -kInfinity : u(rng);
    return M;
}

/// Plain-loop reference: the block of level k at (bi, bj) reduced straight from level 0.
Mat reference_level(const Mat& M, int k, ReduceMode mode) {
    const Eigen::Index b = Eigen::Index(1) << k;
    const Eigen::Index R = (M.rows() + b - 1) / b, C = (M.cols() + b - 1) / b;
    Mat D(R, C);  // [ceil(rows/2^k), ceil(cols/2^k)]
    for (Eigen::Index bi = 0; bi < R; ++bi) {
        for (Eigen::Index bj = 0; bj < C; ++bj) {
            float best = -kInfinity;
            double sum = 0;
            int n = 0;
            for (Eigen::Index i = bi * b; i < std::min(M.rows(), (bi + 1) * b); ++i)
                for (Eigen::Index j = bj * b; j < std::min(M.cols(), (bj + 1) * b); ++j) {
                    const float v = M(i, j);
                    if (!std::isfinite(v)) continue;
                    if (n == 0 || std::fabs(v) > std::fabs(best)) best = v;
                    sum += v;
                    ++n;
                }
            D(bi, bj) = n == 0 ? -kInfinity : (mode == ReduceMode::Max ? best : float(sum / n));
        }
    }
    return D;
}

TEST(ScaleMode, NamesRoundTripAndBadValuesSayWhatIsAccepted) {
    for (ScaleMode m : {ScaleMode::Auto, ScaleMode::Fixed, ScaleMode::Max, ScaleMode::Row, ScaleMode::Log})
        EXPECT_EQ(parse_scale_mode(scale_mode_name(m)), m) << scale_mode_name(m);
    try {
        parse_scale_mode("rows");
        FAIL() << "'rows' was accepted";
    } catch (const Error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("--scale-mode"), std::string::npos) << msg;
        EXPECT_NE(msg.find("auto, fixed, max, row or log"), std::string::npos) << msg;
        EXPECT_NE(msg.find("'rows'"), std::string::npos) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
}

TEST(ScaleMode, AutoIsFixedForShortRowsAndPerRowForLongOnes) {
    EXPECT_EQ(resolve_scale_mode(ScaleMode::Auto, ValueKind::Probability, kAutoFixedMaxKeys),
              ScaleMode::Fixed);
    EXPECT_EQ(resolve_scale_mode(ScaleMode::Auto, ValueKind::Probability, kAutoFixedMaxKeys + 1),
              ScaleMode::Row);
    EXPECT_EQ(resolve_scale_mode(ScaleMode::Log, ValueKind::Probability, 8), ScaleMode::Log);
    // Other kinds keep their natural linear range whatever is chosen.
    EXPECT_EQ(resolve_scale_mode(ScaleMode::Log, ValueKind::Signed, 4096), ScaleMode::Max);
    EXPECT_EQ(resolve_scale_mode(ScaleMode::Row, ValueKind::NonNegative, 4096), ScaleMode::Max);
}

TEST(ScaleMode, RangesPerMode) {
    Mat A(2, 3);  // [2, 3]
    A << 0.5f, 0.3f, 0.2f, 0.05f, 0.9f, 0.05f;
    const ColorRange fixed = color_range_for(ValueKind::Probability, A, ScaleMode::Fixed);
    EXPECT_EQ(fixed.mode, ScaleMode::Fixed);
    EXPECT_EQ(fixed.lo, 0.0f);
    EXPECT_EQ(fixed.hi, 1.0f);
    const ColorRange mx = color_range_for(ValueKind::Probability, A, ScaleMode::Max);
    EXPECT_EQ(mx.hi, 0.9f);
    const ColorRange lg = color_range_for(ValueKind::Probability, A, ScaleMode::Log);
    EXPECT_EQ(lg.hi, 0.9f);
    EXPECT_NEAR(lg.lo, 0.9e-4f, 1e-9f);
    const ColorRange row = color_range_for(ValueKind::Probability, A, ScaleMode::Row);
    EXPECT_EQ(row.mode, ScaleMode::Row);
    EXPECT_EQ(color_range_for(ValueKind::Probability, A).mode, ScaleMode::Fixed);  // auto, 3 keys
    const Mat L = Mat::Constant(4, 100, 0.01f);
    EXPECT_EQ(color_range_for(ValueKind::Probability, L).mode, ScaleMode::Row);  // auto, 100 keys
}

TEST(ScaleMode, ScaleTPerMode) {
    const ColorRange fixed{ColorMap::Sequential, 0.0f, 1.0f, ScaleMode::Fixed};
    EXPECT_FLOAT_EQ(scale_t(fixed, 0.25f), 0.25f);
    EXPECT_FLOAT_EQ(scale_t(fixed, 2.0f), 1.0f);  // clamped
    const ColorRange mx{ColorMap::Sequential, 0.0f, 0.5f, ScaleMode::Max};
    EXPECT_FLOAT_EQ(scale_t(mx, 0.25f), 0.5f);
    const ColorRange row{ColorMap::Sequential, 0.0f, 1.0f, ScaleMode::Row};
    EXPECT_FLOAT_EQ(scale_t(row, 0.002f, 0.004f), 0.5f);  // half of its row's max
    EXPECT_FLOAT_EQ(scale_t(row, 0.004f, 0.004f), 1.0f);
    EXPECT_FLOAT_EQ(scale_t(row, 0.0f, 0.0f), 0.0f);  // a row of zeros stays dark, no NaN
    const ColorRange lg{ColorMap::Sequential, 1e-4f, 1.0f, ScaleMode::Log};
    EXPECT_NEAR(scale_t(lg, 1.0f), 1.0f, 1e-6f);
    EXPECT_NEAR(scale_t(lg, 1e-4f), 0.0f, 1e-6f);
    EXPECT_NEAR(scale_t(lg, 1e-2f), 0.5f, 1e-5f);
    EXPECT_NEAR(scale_t(lg, 1e-3f), 0.25f, 1e-5f);
    EXPECT_EQ(scale_t(lg, 1e-7f), 0.0f);
    EXPECT_EQ(scale_t(lg, 0.0f), 0.0f);
    EXPECT_EQ(scale_t(lg, -kInfinity), 0.0f);
    // The colour of a value follows its t.
    EXPECT_EQ(value_rgb(lg, 1e-2f), colormap_rgb(ColorMap::Sequential, 0.5f));
    EXPECT_EQ(value_rgb(row, 0.002f, 0.004f), colormap_rgb(ColorMap::Sequential, 0.5f));
}

TEST(ScaleMode, LongUniformRowsAreFlatFixedButShowTheirPeakPerRow) {
    // 2048 keys, every weight 1/2048 except one peak of 4/2048 per row: the flat heatmap.
    const int n = 2048;
    Mat A = Mat::Constant(4, n, 1.0f / n);  // [4, n]
    for (int i = 0; i < 4; ++i) A(i, i * 100) = 4.0f / n;
    const ColorRange fixed = color_range_for(ValueKind::Probability, A, ScaleMode::Fixed);
    const Rgb8 peak = value_rgb(fixed, A(0, 0)), rest = value_rgb(fixed, A(0, 1));
    EXPECT_LE(std::abs(int(peak.g) - int(rest.g)), 2);  // the peak is invisible (one step of green)
    const ColorRange autor = color_range_for(ValueKind::Probability, A);
    const std::vector<float> mx = row_maxima(A);
    EXPECT_EQ(scale_t(autor, A(0, 0), mx[0]), 1.0f);
    EXPECT_FLOAT_EQ(scale_t(autor, A(0, 1), mx[0]), 0.25f);
}

TEST(ScaleMode, PrescaleDividesEachRowByItsMaxAndKeepsMasked) {
    Mat A(3, 3);  // [3, 3]
    A << 0.5f, 0.25f, -kInfinity, 0.1f, 0.2f, 0.7f, -kInfinity, -kInfinity, -kInfinity;
    const ColorRange row = color_range_for(ValueKind::Probability, A, ScaleMode::Row);
    Mat expected(3, 3);  // [3, 3]
    expected << 1.0f, 0.5f, -kInfinity, 0.1f / 0.7f, 0.2f / 0.7f, 1.0f, -kInfinity, -kInfinity, -kInfinity;
    EXPECT_MATRIX_NEAR(prescale_for_display(A, row), expected, 1e-6);
    const ColorRange shown = display_range(row);
    EXPECT_EQ(shown.mode, ScaleMode::Fixed);
    EXPECT_EQ(shown.hi, 1.0f);
    // Other modes leave the matrix alone.
    EXPECT_MATRIX_NEAR(prescale_for_display(A, color_range_for(ValueKind::Probability, A, ScaleMode::Log)), A,
                       0);
}

TEST(ScaleMode, ColourBarTicksAndCaptions) {
    const ColorRange row{ColorMap::Sequential, 0.0f, 1.0f, ScaleMode::Row};
    EXPECT_EQ(colorbar_tick(row, 1.0f), "row max");
    EXPECT_EQ(colorbar_tick(row, 0.0f), "0");
    EXPECT_EQ(colorbar_tick(row, 0.5f), "0.5\u00b7max");
    EXPECT_EQ(scale_caption(row), "per row: \u00f7 row max");
    const ColorRange lg{ColorMap::Sequential, 1e-4f, 1.0f, ScaleMode::Log};
    EXPECT_NEAR(colorbar_value(lg, 0.5f), 1e-2f, 1e-6f);  // geometric middle
    EXPECT_EQ(colorbar_tick(lg, 0.5f), "0.01");
    EXPECT_EQ(scale_caption(lg), "log scale, 4 decades");
    EXPECT_EQ(scale_caption(ColorRange{ColorMap::Sequential, 0.0f, 1.0f, ScaleMode::Fixed}),
              "fixed 0\u20131");
    EXPECT_EQ(scale_caption(ColorRange{ColorMap::Sequential, 0.0f, 0.3f, ScaleMode::Max}), "0\u2026max");
    EXPECT_EQ(scale_caption(ColorRange{ColorMap::Diverging, -2.0f, 2.0f, ScaleMode::Max}), "");
    EXPECT_EQ(colorbar_tick(ColorRange{ColorMap::Diverging, -2.0f, 2.0f, ScaleMode::Max}, 0.0f), "\u22122");
}

TEST(ReductionLevels, EveryLevelEqualsTheBlockReductionOfLevelZero) {
    for (ReduceMode mode : {ReduceMode::Max, ReduceMode::Mean}) {
        const Mat M = random_weights(37, 53, 7, true);  // odd sizes: edge blocks are partial
        const std::vector<Mat> levels = reduction_levels(M, mode);
        ASSERT_EQ(levels.size(), 6u);  // 53 -> 27 -> 14 -> 7 -> 4 -> 2 -> 1
        EXPECT_EQ(levels.back().rows(), 1);
        EXPECT_EQ(levels.back().cols(), 1);
        for (std::size_t k = 0; k < levels.size(); ++k) {
            SCOPED_TRACE("level " + std::to_string(k + 1) + (mode == ReduceMode::Max ? " max" : " mean"));
            if (mode == ReduceMode::Max) {
                EXPECT_MATRIX_NEAR(levels[k], reference_level(M, int(k) + 1, mode), 0.0);
            } else if (k == 0) {
                // Mean of means is not the mean of the block beyond level 1; level 1 is exact.
                EXPECT_MATRIX_NEAR(levels[k], reference_level(M, 1, mode), 1e-6);
            }
        }
    }
}

TEST(ReductionLevels, MaxKeepsTheSignOfTheLargestMagnitudeAndMaskedOnlyWhenAllMasked) {
    Mat M(2, 4);  // [2, 4]
    M << 0.5f, -3.0f, -kInfinity, -kInfinity, 1.0f, 2.0f, -kInfinity, -kInfinity;
    Mat expected(1, 2);  // [1, 2]
    expected << -3.0f, -kInfinity;
    EXPECT_MATRIX_NEAR(reduce_2x2(M, ReduceMode::Max), expected, 0.0);
    expected << 0.125f, -kInfinity;
    EXPECT_MATRIX_NEAR(reduce_2x2(M, ReduceMode::Mean), expected, 1e-6);
}

TEST(ReductionLevels, ASharpDiagonalSurvivesEveryLevel) {
    // T = 0.05: one peak per row on the diagonal, everything else tiny (1024 tokens keep it quick).
    const int n = 1024;
    Mat A = Mat::Constant(n, n, 1e-6f);  // [n, n]
    for (int i = 0; i < n; ++i) A(i, i) = 0.99f;
    const std::vector<Mat> levels = reduction_levels(A, ReduceMode::Max);
    ASSERT_EQ(levels.size(), 10u);
    for (std::size_t k = 0; k < levels.size(); ++k) {
        const Mat& L = levels[k];
        Mat expected = Mat::Constant(L.rows(), L.cols(), 1e-6f);  // [n/2^k, n/2^k]
        for (Eigen::Index i = 0; i < L.rows(); ++i) expected(i, i) = 0.99f;
        SCOPED_TRACE("level " + std::to_string(k + 1));
        EXPECT_MATRIX_NEAR(L, expected, 0.0);
    }
}

TEST(ReductionLevels, LevelForCellsPerPixel) {
    EXPECT_EQ(level_for(0.25f, 12), 0);
    EXPECT_EQ(level_for(1.0f, 12), 0);
    EXPECT_EQ(level_for(1.5f, 12), 1);
    EXPECT_EQ(level_for(2.0f, 12), 1);
    EXPECT_EQ(level_for(7.0f, 12), 3);  // the 7 cells per pixel: 8-cell blocks, none skipped
    EXPECT_EQ(level_for(8.0f, 12), 3);
    EXPECT_EQ(level_for(9.0f, 12), 4);
    EXPECT_EQ(level_for(5000.0f, 12), 12);
    EXPECT_EQ(level_for(9.0f, 2), 2);  // clamped to the levels present
    EXPECT_EQ(level_for(9.0f, 0), 0);
    EXPECT_EQ(level_for(std::numeric_limits<float>::quiet_NaN(), 4), 0);
}

}  // namespace
}  // namespace attnviz

// Pure helpers of the lab windows (app/panels/lab_common.hpp): tick placement on linear and log
// axes, tick labels, axis mapping, auto ranges, the framebuffer crop used by "Export PNG", file names.
#include <gtest/gtest.h>

#include <cmath>

#include "app/panels/lab_common.hpp"

namespace attnviz::app {
namespace {

TEST(LabLinearTicks, RoundStepsInsideTheRange) {
    const std::vector<double> t = linear_ticks(0.0, 1.0, 6);
    ASSERT_EQ(t.size(), 6u);  // 0, 0.2, ..., 1
    EXPECT_DOUBLE_EQ(t.front(), 0.0);
    EXPECT_NEAR(t[1], 0.2, 1e-12);
    EXPECT_NEAR(t.back(), 1.0, 1e-12);
}

TEST(LabLinearTicks, RespectsMaxTicksAndBounds) {
    for (int max_ticks : {2, 3, 5, 7, 11}) {
        for (auto [lo, hi] : {std::pair{-1.15, 1.6}, std::pair{0.0, 64.0}, std::pair{-3e-7, 4e-7},
                              std::pair{1234.0, 98765.0}}) {
            const std::vector<double> t = linear_ticks(lo, hi, max_ticks);
            ASSERT_FALSE(t.empty()) << lo << " " << hi;
            EXPECT_LE(int(t.size()), max_ticks) << lo << " " << hi;
            for (double v : t) {
                EXPECT_GE(v, lo - 1e-12 * std::fabs(lo));
                EXPECT_LE(v, hi + 1e-12 * std::fabs(hi));
            }
            for (std::size_t i = 1; i < t.size(); ++i) EXPECT_GT(t[i], t[i - 1]);
        }
    }
}

TEST(LabLinearTicks, ZeroIsExactlyZeroAndDegenerateRanges) {
    const std::vector<double> t = linear_ticks(-1.0, 1.0, 5);
    bool has_zero = false;
    for (double v : t) has_zero |= (v == 0.0 && !std::signbit(v));
    EXPECT_TRUE(has_zero);
    EXPECT_EQ(linear_ticks(3.0, 3.0, 5), std::vector<double>{3.0});
    EXPECT_EQ(linear_ticks(1.0, 0.0, 3), linear_ticks(0.0, 1.0, 3));  // swapped
    EXPECT_TRUE(linear_ticks(NAN, 1.0, 5).empty());
}

TEST(LabLogTicks, PowersOfTenOverManyDecades) {
    const std::vector<double> t = log_ticks(0.5, 2e4, 10);
    ASSERT_EQ(t.size(), 5u);  // 1, 10, 100, 1000, 10000
    EXPECT_DOUBLE_EQ(t[0], 1.0);
    EXPECT_DOUBLE_EQ(t[4], 1e4);
}

TEST(LabLogTicks, ThinsDecadesWhenCrowded) {
    const std::vector<double> t = log_ticks(1.0, 1e12, 4);  // 13 decades, at most 4 ticks
    EXPECT_LE(t.size(), 4u);
    EXPECT_GE(t.size(), 2u);
    EXPECT_DOUBLE_EQ(t[0], 1.0);
}

TEST(LabLogTicks, ShortRangeUsesOneTwoFive) {
    const std::vector<double> t = log_ticks(1.5, 60.0, 10);  // 2, 5, 10, 20, 50
    ASSERT_EQ(t.size(), 5u);
    EXPECT_DOUBLE_EQ(t[0], 2.0);
    EXPECT_DOUBLE_EQ(t[4], 50.0);
    EXPECT_TRUE(log_ticks(0.0, 10.0, 5).empty());
    EXPECT_TRUE(log_ticks(-1.0, 10.0, 5).empty());
}

TEST(LabTickLabel, ShortForms) {
    EXPECT_EQ(tick_label(0.0), "0");
    EXPECT_EQ(tick_label(0.5), "0.5");
    EXPECT_EQ(tick_label(20.0), "20");
    EXPECT_EQ(tick_label(1000.0), "1000");
    EXPECT_EQ(tick_label(1e5), "1e+05");
    EXPECT_EQ(tick_label(1e-7), "1e-07");
    EXPECT_EQ(tick_label(-0.25), "-0.25");
}

TEST(LabAxisFraction, LinearAndLog) {
    EXPECT_DOUBLE_EQ(axis_fraction(5, 0, 10, false), 0.5);
    EXPECT_DOUBLE_EQ(axis_fraction(100, 1, 10000, true), 0.5);
    EXPECT_DOUBLE_EQ(axis_fraction(3, 3, 3, false), 0.5);
    EXPECT_TRUE(std::isinf(axis_fraction(0, 1, 10, true)));
    EXPECT_LT(axis_fraction(-1, 0, 10, false), 0.0);  // outside maps outside
}

TEST(LabAutoRange, IgnoresNonFiniteAndNonPositiveOnLog) {
    const std::vector<double> a = {1, 2, NAN, 4, INFINITY};
    const std::vector<double> b = {-5, 0, 8};
    double lo = 0, hi = 0;
    auto_range({&a, &b}, false, 0.0, &lo, &hi);
    EXPECT_DOUBLE_EQ(lo, -5);
    EXPECT_DOUBLE_EQ(hi, 8);
    auto_range({&a, &b}, true, 0.0, &lo, &hi);
    EXPECT_DOUBLE_EQ(lo, 1);
    EXPECT_DOUBLE_EQ(hi, 8);
    const std::vector<double> none = {NAN};
    auto_range({&none}, false, 0.1, &lo, &hi);
    EXPECT_DOUBLE_EQ(lo, 0);
    EXPECT_DOUBLE_EQ(hi, 1);
    const std::vector<double> one = {2.0};
    auto_range({&one}, false, 0.0, &lo, &hi);  // a single value still gets a non-empty range
    EXPECT_LT(lo, 2.0);
    EXPECT_GT(hi, 2.0);
}

TEST(LabCrop, CopiesTheRectangleAndClips) {
    // 4 x 3 image, pixel (x, y) has r = x, g = y.
    std::vector<unsigned char> rgba(4 * 3 * 4);
    for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 4; ++x) {
            rgba[(y * 4 + x) * 4 + 0] = static_cast<unsigned char>(x);
            rgba[(y * 4 + x) * 4 + 1] = static_cast<unsigned char>(y);
        }
    int w = 0, h = 0;
    std::vector<unsigned char> c = crop_rgba(rgba, 4, 3, 1, 1, 3, 3, &w, &h);
    ASSERT_EQ(w, 2);
    ASSERT_EQ(h, 2);
    EXPECT_EQ(c[0], 1);  // (1, 1)
    EXPECT_EQ(c[1], 1);
    EXPECT_EQ(c[(1 * 2 + 1) * 4 + 0], 2);  // (2, 2)
    EXPECT_EQ(c[(1 * 2 + 1) * 4 + 1], 2);
    c = crop_rgba(rgba, 4, 3, -5, -5, 100, 100, &w, &h);  // clipped to the image
    EXPECT_EQ(w, 4);
    EXPECT_EQ(h, 3);
    EXPECT_EQ(c, rgba);
    c = crop_rgba(rgba, 4, 3, 10, 10, 20, 20, &w, &h);  // entirely outside
    EXPECT_EQ(w, 0);
    EXPECT_TRUE(c.empty());
}

TEST(LabExportName, SluggedWithTimestamp) {
    EXPECT_EQ(lab_export_file_name("positional_encoding", "20260101-120000"),
              "lab_positional_encoding_20260101-120000.png");
    EXPECT_EQ(lab_export_file_name("softmax vs/linear", "1"), "lab_softmax_vs_linear_1.png");
}

}  // namespace
}  // namespace attnviz::app

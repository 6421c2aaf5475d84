// The heatmap widget's pure parts: zoom/pan window maths, hit testing, label thinning, layout and
// value formatting. None of this needs a display.
// GCC 12 false positive inside its AVX-512 intrinsics when Eigen multiplies (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "app/panels/heatmap_widget.hpp"
#include "common/matrix_expect.hpp"

using attnviz::Mat;
using attnviz::render::ViewWindow;
using namespace attnviz::app;

namespace {

void expect_window(const ViewWindow& v, float x0, float y0, float x1, float y1) {
    EXPECT_NEAR(v.x0, x0, 1e-4f);
    EXPECT_NEAR(v.y0, y0, 1e-4f);
    EXPECT_NEAR(v.x1, x1, 1e-4f);
    EXPECT_NEAR(v.y1, y1, 1e-4f);
}

}  // namespace

TEST(ViewWindowMath, FullViewCoversTheMatrix) {
    expect_window(full_view(8, 16), 0, 0, 16, 8);  // x = columns, y = rows
    EXPECT_TRUE(is_full_view(full_view(8, 16), 8, 16));
}

TEST(ViewWindowMath, ZoomInAboutCursorKeepsThePointUnderTheCursor) {
    const ViewWindow v = full_view(100, 100);
    // Zoom ×2 about cell (25, 75): the point keeps its relative position (25 % from the left).
    const ViewWindow z = zoom_view(v, 100, 100, 2.0f, 25.0f, 75.0f);
    expect_window(z, 12.5f, 37.5f, 62.5f, 87.5f);
    const float rel_x = (25.0f - z.x0) / (z.x1 - z.x0), rel_y = (75.0f - z.y0) / (z.y1 - z.y0);
    EXPECT_NEAR(rel_x, 0.25f, 1e-5f);
    EXPECT_NEAR(rel_y, 0.75f, 1e-5f);
    EXPECT_FALSE(is_full_view(z, 100, 100));
}

TEST(ViewWindowMath, ZoomInThenOutReturnsToFullView) {
    ViewWindow v = full_view(64, 32);
    v = zoom_view(v, 64, 32, 4.0f, 3.0f, 60.0f);
    EXPECT_NEAR(v.x1 - v.x0, 8.0f, 1e-4f);
    EXPECT_NEAR(v.y1 - v.y0, 16.0f, 1e-4f);
    v = zoom_view(v, 64, 32, 0.01f, 3.0f, 60.0f);  // far out: clamped to the whole matrix
    expect_window(v, 0, 0, 32, 64);
}

TEST(ViewWindowMath, ZoomStopsAtMinimumVisibleCells) {
    ViewWindow v = zoom_view(full_view(10, 10), 10, 10, 1000.0f, 5.0f, 5.0f);
    EXPECT_NEAR(v.x1 - v.x0, kMinVisibleCells, 1e-4f);
    EXPECT_NEAR(v.y1 - v.y0, kMinVisibleCells, 1e-4f);
    // A 1-row matrix cannot show fewer than its one row.
    v = zoom_view(full_view(1, 10), 1, 10, 1000.0f, 5.0f, 0.5f);
    EXPECT_NEAR(v.y1 - v.y0, 1.0f, 1e-4f);
    EXPECT_NEAR(v.x1 - v.x0, kMinVisibleCells, 1e-4f);
}

TEST(ViewWindowMath, ZoomNearTheEdgeStaysInside) {
    const ViewWindow v = zoom_view(full_view(10, 10), 10, 10, 2.0f, 0.0f, 10.0f);
    expect_window(v, 0, 5, 5, 10);
}

TEST(ViewWindowMath, BadZoomFactorIsIgnored) {
    const ViewWindow v = zoom_view(full_view(10, 10), 10, 10, std::numeric_limits<float>::quiet_NaN(), 5, 5);
    expect_window(v, 0, 0, 10, 10);
    expect_window(zoom_view(full_view(10, 10), 10, 10, -2.0f, 5, 5), 0, 0, 10, 10);
}

TEST(ViewWindowMath, PanMovesAndClampsAtTheEdges) {
    ViewWindow v = zoom_view(full_view(100, 100), 100, 100, 4.0f, 50.0f, 50.0f);  // 25 x 25 cells
    v = pan_view(v, 100, 100, 10.0f, -5.0f);
    expect_window(v, 47.5f, 32.5f, 72.5f, 57.5f);
    v = pan_view(v, 100, 100, 1000.0f, -1000.0f);  // pushed against the right and top edges
    expect_window(v, 75.0f, 0.0f, 100.0f, 25.0f);
    // Panning the full view does nothing.
    expect_window(pan_view(full_view(10, 20), 10, 20, 3.0f, 3.0f), 0, 0, 20, 10);
}

TEST(ViewWindowMath, ClampRepairsBrokenWindows) {
    ViewWindow bad;
    bad.x0 = 5;
    bad.x1 = 3;  // inverted
    bad.y0 = -50;
    bad.y1 = 500;  // larger than the matrix
    expect_window(clamp_view(bad, 10, 8), 0, 0, 8, 10);
}

TEST(CellHitTest, PixelToCellMapsTheWindow) {
    // A 400 x 200 px image at (100, 50) showing columns [10, 30) and rows [0, 10): 20 px per cell.
    ViewWindow v;
    v.x0 = 10;
    v.x1 = 30;
    v.y0 = 0;
    v.y1 = 10;
    int r = -1, c = -1;
    ASSERT_TRUE(cell_at_pixel(v, 10, 40, 100, 50, 400, 200, 100.0f, 50.0f, &r, &c));
    EXPECT_EQ(r, 0);
    EXPECT_EQ(c, 10);
    ASSERT_TRUE(
        cell_at_pixel(v, 10, 40, 100, 50, 400, 200, 100.0f + 20 * 3 + 19.5f, 50.0f + 20 * 7 + 1, &r, &c));
    EXPECT_EQ(r, 7);
    EXPECT_EQ(c, 13);
    EXPECT_FALSE(cell_at_pixel(v, 10, 40, 100, 50, 400, 200, 99.0f, 60.0f, &r, &c));   // left of the image
    EXPECT_FALSE(cell_at_pixel(v, 10, 40, 100, 50, 400, 200, 500.0f, 60.0f, &r, &c));  // right edge excluded
    // Window larger than a tiny matrix: pixels past the last cell are no cell.
    EXPECT_FALSE(cell_at_pixel(full_view(2, 2), 1, 1, 0, 0, 100, 100, 75.0f, 75.0f, &r, &c));
}

TEST(LabelThinning, StrideIsOneWhenLabelsFit) {
    EXPECT_EQ(label_stride(20.0f, 14.0f), 1);
    EXPECT_EQ(label_stride(14.0f, 14.0f), 1);
}

TEST(LabelThinning, StrideRoundsUpToOneTwoFive) {
    EXPECT_EQ(label_stride(10.0f, 14.0f), 2);   // need 1.4 cells
    EXPECT_EQ(label_stride(5.0f, 14.0f), 5);    // need 2.8
    EXPECT_EQ(label_stride(2.0f, 14.0f), 10);   // need 7
    EXPECT_EQ(label_stride(1.0f, 14.0f), 20);   // need 14
    EXPECT_EQ(label_stride(0.2f, 14.0f), 100);  // need 70
    // 4096 tokens in 800 px: every 500th or so -- a handful of labels, never thousands.
    const int k = label_stride(800.0f / 4096.0f, 14.0f);
    EXPECT_GE(k * (800.0f / 4096.0f), 14.0f);
    EXPECT_LE(4096 / k, 60);
}

// Crowded columns turn their labels vertical; a label of one character stands upright instead.
TEST(ColumnLabels, OneCharacterIsTheLabelWithoutItsSpaces) {
    EXPECT_EQ(single_character_label("a"), "a");
    EXPECT_EQ(single_character_label(" a"), "a");  // (GPT-2's " a": the space is not drawn)
    EXPECT_EQ(single_character_label("."), ".");
    EXPECT_EQ(single_character_label(" , "), ",");
    EXPECT_EQ(single_character_label("\u4e2d"), "\u4e2d");  // 中: one character of three bytes
    EXPECT_EQ(single_character_label("\u00e9"), "\u00e9");  // é
    EXPECT_EQ(single_character_label("ab"), "");
    EXPECT_EQ(single_character_label(" to"), "");
    EXPECT_EQ(single_character_label("a b"), "");
    EXPECT_EQ(single_character_label("2 a"), "");  // a thinned label with its index
    EXPECT_EQ(single_character_label("\u4e2d\u6587"), "");
    EXPECT_EQ(single_character_label(""), "");
    EXPECT_EQ(single_character_label("   "), "");
}

TEST(ColumnLabels, OneCharacterTakesTheLargestFontItsColumnHolds) {
    // "a": 9 px in the regular font, 7 px in the small one.
    EXPECT_EQ(single_character_font(9, 7, 14), ColumnLabelFont::UprightRegular);
    EXPECT_EQ(single_character_font(9, 7, 12), ColumnLabelFont::UprightRegular);  // 9 + 3 px apart
    EXPECT_EQ(single_character_font(9, 7, 11.9f), ColumnLabelFont::UprightSmall);
    EXPECT_EQ(single_character_font(9, 7, 10), ColumnLabelFont::UprightSmall);
    EXPECT_EQ(single_character_font(9, 7, 9.9f), ColumnLabelFont::Rotated);  // too narrow even small
    EXPECT_EQ(single_character_font(15, 12, 14), ColumnLabelFont::Rotated);  // "m" in a 14 px column
    EXPECT_EQ(single_character_font(9, 0, 10), ColumnLabelFont::Rotated);    // no small font
    EXPECT_EQ(single_character_font(0, 0, 40), ColumnLabelFont::Rotated);    // nothing to draw
}

TEST(LabelThinning, ZeroPixelsPerCellShowsNoLabels) {
    EXPECT_GT(label_stride(0.0f, 14.0f), 1 << 20);
}

TEST(ImageLayout, SquareCellsWhenTheyFit) {
    const ImageSize s = fit_image(800, 600, 8, 8);
    EXPECT_FLOAT_EQ(s.w, 600);
    EXPECT_FLOAT_EQ(s.h, 600);
    const ImageSize t = fit_image(800, 600, 16, 8);  // 50 px cells
    EXPECT_FLOAT_EQ(t.w, 800);
    EXPECT_FLOAT_EQ(t.h, 400);
}

TEST(ImageLayout, ExtremeShapesAreStretchedToAMinimumFill) {
    const ImageSize s = fit_image(800, 600, 16, 4096, 0.3f);  // a hairline if square
    EXPECT_FLOAT_EQ(s.h, 600);
    EXPECT_FLOAT_EQ(s.w, 240);  // 30 % of the width
    const ImageSize z = fit_image(0, 600, 16, 16);
    EXPECT_EQ(z.w, 0);
}

TEST(ValueFormat, FourSignificantDigitsAndMaskedAsMinusInfinity) {
    EXPECT_EQ(format_value(0.123456f), "0.1235");
    EXPECT_EQ(format_value(-12.5f), "\u221212.5");
    EXPECT_EQ(format_value(-0.0f), "0");
    EXPECT_EQ(format_value(-std::numeric_limits<float>::infinity()), "\u2212\u221e");
    EXPECT_EQ(format_value(std::numeric_limits<float>::quiet_NaN()), "NaN");
}

TEST(Downsample, KeepsTheLargestMagnitudeAndFullyMaskedBlocks) {
    const float ninf = -std::numeric_limits<float>::infinity();
    Mat M(4, 4);                  // 4 x 4
    M << 0.1f, 0.2f, ninf, ninf,  //
        -0.9f, 0.3f, ninf, ninf,  //
        0.0f, 0.0f, 0.5f, ninf,   //
        0.0f, 0.4f, ninf, ninf;
    Mat expected(2, 2);       // 2 x 2
    expected << -0.9f, ninf,  //
        0.4f, 0.5f;
    EXPECT_MATRIX_NEAR(attnviz::app::downsample_max_abs(M, 2), expected, 0.0);
    // Small matrices are returned unchanged.
    EXPECT_MATRIX_NEAR(attnviz::app::downsample_max_abs(M, 8), M, 0.0);
}

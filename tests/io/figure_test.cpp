// Figures: golden images, scale, downsampling, PNG round trip, failures.
//
// Golden tolerance: a pixel matches when every channel is within 2/255 of the golden; a figure
// matches when >= 99.5% of its pixels match and the sizes are equal. That absorbs tiny anti-aliasing
// differences between stb_truetype/font builds while still catching any change of colour map, layout
// or label. Regenerate the goldens (after checking the new look!) with
//   ATTNVIZ_UPDATE_GOLDENS=1 ./attnviz_io_tests --gtest_filter='FigureGolden*'
// On a mismatch the actual image is written to ./golden_actual/<name>.png (the test's working
// directory, i.e. inside the build tree) and the message says where.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>

#include "core/error.hpp"
#include "core/trace.hpp"
#include "io/colormap.hpp"
#include "io/figure.hpp"
#include "io/figure_fixtures.hpp"
#include "io/files.hpp"

namespace attnviz {
namespace {

using namespace attnviz::testing;

std::string golden_path(const std::string& name) {
    return std::string(ATTNVIZ_TEST_DATA) + "/golden/" + name + ".png";
}

void expect_matches_golden(const Image& actual, const std::string& name) {
    const std::string path = golden_path(name);
    const char* update = std::getenv("ATTNVIZ_UPDATE_GOLDENS");
    if (update && std::string(update) == "1") {
        write_png(path, actual);
        std::printf("updated golden %s (%dx%d)\n", path.c_str(), actual.width, actual.height);
        return;
    }
    Image golden;
    try {
        golden = read_png(path);
    } catch (const Error& e) {
        FAIL() << "missing golden " << path << " (" << e.what()
               << "); create it with ATTNVIZ_UPDATE_GOLDENS=1 after looking at the figure";
    }
    long mismatched = 0;
    int worst = 0, first_x = -1, first_y = -1;
    if (golden.width == actual.width && golden.height == actual.height) {
        for (int y = 0; y < actual.height; ++y) {
            for (int x = 0; x < actual.width; ++x) {
                const std::size_t o = (std::size_t(y) * std::size_t(actual.width) + std::size_t(x)) * 4;
                int d = 0;
                for (int c = 0; c < 4; ++c)
                    d = std::max(d, std::abs(int(actual.rgba[o + c]) - int(golden.rgba[o + c])));
                worst = std::max(worst, d);
                if (d > 2) {
                    if (mismatched == 0) first_x = x, first_y = y;
                    ++mismatched;
                }
            }
        }
    }
    const double total = double(actual.width) * double(actual.height);
    const bool same_size = golden.width == actual.width && golden.height == actual.height;
    const bool ok = same_size && double(mismatched) <= 0.005 * total;
    if (!ok) {
        ::mkdir("golden_actual", 0755);
        const std::string out = "golden_actual/" + name + ".png";
        write_png(out, actual);
        char cwd[4096];
        const std::string where = ::getcwd(cwd, sizeof cwd) ? std::string(cwd) + "/" + out : out;
        if (!same_size) {
            ADD_FAILURE() << name << ": size " << actual.width << "x" << actual.height
                          << " differs from golden " << golden.width << "x" << golden.height
                          << "; actual image written to " << where;
        } else {
            ADD_FAILURE() << name << ": " << mismatched << " of " << long(total) << " pixels ("
                          << 100.0 * double(mismatched) / total << "%) differ by more than 2/255 (worst "
                          << worst << ", first at " << first_x << "," << first_y
                          << "); actual image written to " << where
                          << "; if the change is intended, regenerate with ATTNVIZ_UPDATE_GOLDENS=1";
        }
    }
}

Rgb8 pixel(const Image& img, int x, int y) {
    const std::size_t o = (std::size_t(y) * std::size_t(img.width) + std::size_t(x)) * 4;
    return Rgb8{img.rgba[o], img.rgba[o + 1], img.rgba[o + 2]};
}

long count_color(const Image& img, Rgb8 c) {
    long k = 0;
    for (int y = 0; y < img.height; ++y)
        for (int x = 0; x < img.width; ++x) k += pixel(img, x, y) == c;
    return k;
}

TEST(FigureGolden, CausalWeights) {
    const auto toks = english_tokens();
    const Trace t = trace_with({causal_weights_stage(toks, 2)}, toks);
    expect_matches_golden(render_stage_figure(t, t.stages[0]), "weights_causal_h2");
}

TEST(FigureGolden, SignedQueriesWithDimensionAxis) {
    const auto toks = english_tokens();
    const Trace t = trace_with({signed_q_stage(toks, 16)}, toks);
    expect_matches_golden(render_stage_figure(t, t.stages[0]), "q_signed");
}

TEST(FigureGolden, ChineseTokenLabels) {
    const auto toks = chinese_tokens();
    const Trace t = trace_with({causal_weights_stage(toks, 0)}, toks);
    expect_matches_golden(render_stage_figure(t, t.stages[0]), "weights_chinese");
}

TEST(FigureGolden, HeadsGrid) {
    const auto toks = english_tokens();
    std::vector<Stage> stages;
    for (int h = 0; h < 4; ++h) stages.push_back(causal_weights_stage(toks, h));
    const Trace t = trace_with(stages, toks);
    expect_matches_golden(render_heads_grid_figure(t, "weights"), "heads_grid");
}

TEST(Figure, HeatmapCellsUseTheColourMapAndMaskedCellsTheHatch) {
    const auto toks = english_tokens();
    const Stage st = causal_weights_stage(toks, 1);
    const Trace t = trace_with({st}, toks);
    const Image img = render_stage_figure(t, st);
    // Every colour value_rgb gives for a finite weight must appear in the figure (cells are flat).
    const ColorRange range = color_range_for(st.kind, *st.data);
    EXPECT_EQ(range.map, ColorMap::Sequential);
    for (int i = 0; i < 8; ++i)
        EXPECT_GT(count_color(img, value_rgb(range, (*st.data)(i, 0))), 100) << "row " << i;
    // The hatch greys appear (28 masked cells) and the background is white.
    EXPECT_GT(count_color(img, kHatchDark), 1000);
    EXPECT_GT(count_color(img, kHatchLight), 1000);
    EXPECT_EQ(pixel(img, 0, 0), (Rgb8{255, 255, 255}));
}

TEST(Figure, ScaleTwoIsATrueHighResolutionRender) {
    const auto toks = english_tokens();
    const Trace t = trace_with({causal_weights_stage(toks, 2)}, toks);
    FigureOptions o;
    const Image a = render_stage_figure(t, t.stages[0], o);
    o.scale = 2;
    const Image b = render_stage_figure(t, t.stages[0], o);
    // Twice the size (within a few pixels of rounding in the text metrics) ...
    EXPECT_NEAR(b.width, 2 * a.width, 6);
    EXPECT_NEAR(b.height, 2 * a.height, 6);
    // ... and not a pixel-doubled copy: text edges have intermediate greys that an upscale of `a`
    // would not place at odd coordinates. Count pixels that differ from their 2x2 block's top-left.
    long differing = 0;
    for (int y = 0; y + 1 < b.height; y += 2)
        for (int x = 0; x + 1 < b.width; x += 2)
            if (pixel(b, x + 1, y + 1) != pixel(b, x, y)) ++differing;
    EXPECT_GT(differing, 500);
}

TEST(Figure, LargeMatrixIsDownsampledKeepingASingleBrightCell) {
    const int n = 3001;       // over the 2048-pixel cap, and not a multiple of it: uneven blocks
    Mat A = Mat::Zero(n, n);  // n x n
    A(1234, 3000) = 1.0f;     // one bright cell must survive the reduction (the last column: a partial block)
    Stage st;
    st.name = "weights";
    st.head = 0;
    st.formula = "A = softmax(S/T)";
    st.rows = dim_axis("n", n);
    st.rows.kind = Axis::Kind::QueryTokens;
    st.cols = dim_axis("m", n);
    st.cols.kind = Axis::Kind::KeyTokens;
    st.kind = ValueKind::Probability;
    st.data = std::make_shared<const Mat>(A);
    Trace t;
    t.stages = {st};
    const Image img = render_stage_figure(t, t.stages[0]);
    EXPECT_LE(img.width, 2048 + 400);
    EXPECT_LE(img.height, 2048 + 400);
    const Rgb8 top = colormap_rgb(ColorMap::Sequential, 1.0f);
    EXPECT_GE(count_color(img, top), 1) << "the single weight of 1 vanished in the downsampled figure";
    EXPECT_LT(count_color(img, top), 200);  // only that block (and none of the colour bar rows ... nearly)
}

TEST(Figure, PngRoundTripIsLossless) {
    Image img;
    img.width = 3;
    img.height = 2;
    img.rgba = {255, 0,  0,  255, 0,  255, 0,  255, 0,  0,  255, 255,
                10,  20, 30, 255, 40, 50,  60, 255, 70, 80, 90,  255};
    const std::string path = ::testing::TempDir() + "attnviz_roundtrip.png";
    write_png(path, img);
    const Image back = read_png(path);
    EXPECT_EQ(back.width, 3);
    EXPECT_EQ(back.height, 2);
    EXPECT_EQ(back.rgba, img.rgba);
    EXPECT_EQ(png_bytes(img).substr(1, 3), "PNG");
}

TEST(Figure, WritePngToAMissingDirectoryThrowsNamingThePath) {
    Image img;
    img.width = img.height = 1;
    img.rgba = {1, 2, 3, 255};
    const std::string path = "/nonexistent-attnviz-dir/fig.png";
    try {
        write_png(path, img);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
    struct stat sb;
    EXPECT_NE(::stat(path.c_str(), &sb), 0);
}

TEST(Figure, ReadPngOfANonImageThrows) {
    const std::string path = ::testing::TempDir() + "attnviz_not_png.png";
    std::ofstream(path) << "hello";
    EXPECT_THROW(read_png(path), Error);
}

TEST(Figure, HeadsGridWithoutSuchStageThrows) {
    const auto toks = english_tokens();
    const Trace t = trace_with({signed_q_stage(toks, 4)}, toks);
    EXPECT_THROW(render_heads_grid_figure(t, "weights"), Error);
}

// A real causal trace stores its hidden weights as exact zeros; the figure draws them hatched (as the
// GUI does, both through display_matrix), so a figure shows the mask and never "weight 0.00".
TEST(Figure, RealCausalWeightsShowTheMaskHatched) {
    Config cfg;
    cfg.mask = MaskKind::Causal;
    const Trace trace = compute_trace(cfg);
    const Stage* weights = trace.get("weights", 0);
    ASSERT_NE(weights, nullptr);
    EXPECT_EQ(weights->matrix()(0, 1), 0.0f) << "the stored weight of a hidden key is exactly 0";
    const Mat shown = display_matrix(trace, *weights);  // n x m
    EXPECT_TRUE(std::isinf(shown(0, 1)) && shown(0, 1) < 0);
    EXPECT_EQ(shown(1, 0), weights->matrix()(1, 0)) << "visible weights are unchanged";
    const Image img = render_stage_figure(trace, *weights);
    EXPECT_GT(count_color(img, kHatchDark), 1000);
    EXPECT_GT(count_color(img, kHatchLight), 1000);
    // Without a mask nothing is hatched.
    const Trace plain = compute_trace(Config{});
    const Image plain_img = render_stage_figure(plain, *plain.get("weights", 0));
    EXPECT_LT(count_color(plain_img, kHatchDark), 100) << "only stray anti-aliased text pixels";
}

TEST(Figure, PerRowScaleMakesEveryRowsLargestWeightTheBrightestColour) {
    const auto toks = english_tokens();
    const Stage st = causal_weights_stage(toks, 1);
    const Trace t = trace_with({st}, toks);
    FigureOptions fixed, row;
    fixed.scale_mode = ScaleMode::Fixed;
    row.scale_mode = ScaleMode::Row;
    const Rgb8 top = colormap_stops(ColorMap::Sequential).back();
    const Image a = render_stage_figure(t, st, fixed), b = render_stage_figure(t, st, row);
    // Fixed: only a weight of exactly 1 (query 0 on itself) is the top colour; per row: one cell per
    // row (8), so about 8 times the pixels (the colour bar's top is in both).
    const long top_fixed = count_color(a, top), top_row = count_color(b, top);
    EXPECT_GT(top_row, top_fixed * 4) << "fixed " << top_fixed << " vs per row " << top_row;
}

TEST(Figure, CellValuesArePrintedWhenTheyFit) {
    const auto toks = english_tokens();
    const Stage st = causal_weights_stage(toks, 1);
    const Trace t = trace_with({st}, toks);
    FigureOptions plain, values;
    values.cell_values = true;
    const Image a = render_stage_figure(t, st, plain), b = render_stage_figure(t, st, values);
    ASSERT_EQ(a.width, b.width);
    ASSERT_EQ(a.height, b.height);
    long differ = 0;
    for (std::size_t k = 0; k < a.rgba.size(); k += 4)
        differ += a.rgba[k] != b.rgba[k] || a.rgba[k + 1] != b.rgba[k + 1];
    EXPECT_GT(differ, 36 * 20) << "36 visible weights should each get a number";
}

TEST(Figure, SvgHasTheSameLayoutWithVectorText) {
    const auto toks = english_tokens();
    const Stage st = causal_weights_stage(toks, 1);
    const Trace t = trace_with({st}, toks);
    const Image png = render_stage_figure(t, st);
    const std::string svg = render_stage_figure_svg(t, st);
    EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
    EXPECT_NE(
        svg.find("width=\"" + std::to_string(png.width) + "\" height=\"" + std::to_string(png.height) + "\""),
        std::string::npos);
    EXPECT_NE(svg.find("data:image/png;base64,"), std::string::npos);
    EXPECT_NE(svg.find(">weights \u00b7 head 1</text>"), std::string::npos) << "title as vector text";
    EXPECT_NE(svg.find(">" + (*toks)[3] + "</text>"), std::string::npos) << "a token label as vector text";
    EXPECT_NE(svg.find("rotate(-90)"), std::string::npos) << "the rotated axis title";
    EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
    EXPECT_TRUE(is_svg_path("fig.SVG"));
    EXPECT_FALSE(is_svg_path("fig.png"));
}

}  // namespace
}  // namespace attnviz

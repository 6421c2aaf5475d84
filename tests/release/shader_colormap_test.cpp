// The GPU heatmap (app/render/heatmap_texture + shaders/heatmap.frag) against the CPU colour maps
// (io/colormap): known matrices are uploaded as GL_R32F textures, coloured by the real shader into
// the offscreen target, read back, and EVERY pixel is compared with value_rgb() / masked_rgb(x, y).
// So the GUI and the exported PNG figures show the same colours and the same hatch.
//
// Tolerance: 1/255 per channel. Both sides interpolate the same sRGB stops linearly, but the GPU
// works in [0, 1] ((a + (b - a)·f) / 255, then the framebuffer's float -> unorm8 conversion
// rounds x·255) while the CPU rounds a + (b - a)·f with std::lround. Where the exact value sits on a
// half (e.g. the midpoint of 68 and 71 is 69.5) a last-bit difference in f or in the /255·255 round
// trip can round the other way: at most one level. Anything larger is a real mismatch.
//
// Needs a display: under the full suite it runs inside Xvfb. Without one it is skipped with the
// reason, except when the environment variable CI is set (then missing GL is a failure).
#include <gtest/gtest.h>

#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "app/render/heatmap_texture.hpp"
#include "core/shapes.hpp"
#include "io/colormap.hpp"

namespace attnviz {
namespace {

using render::HeatmapTexture;
using render::Highlight;
using render::ViewWindow;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int kTolerance = 1;  // per channel, in 1/255 steps (see the file comment)

// One hidden window with a GL 3.3 core context for the whole test binary.
struct GlContext {
    bool ok = false;
    std::string why;
    GLFWwindow* window = nullptr;
};

std::string g_glfw_error;

GlContext& gl() {
    static GlContext ctx = [] {
        GlContext c;
        glfwSetErrorCallback([](int, const char* msg) { g_glfw_error = msg ? msg : "unknown GLFW error"; });
        if (!glfwInit()) {
            c.why = "glfwInit failed: " + g_glfw_error;
            return c;
        }
        glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
        glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
        glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
        glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
        glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
        c.window = glfwCreateWindow(64, 64, "shader_colormap_test", nullptr, nullptr);
        if (!c.window) {
            c.why = "cannot create an OpenGL 3.3 core window: " + g_glfw_error;
            glfwTerminate();
            return c;
        }
        glfwMakeContextCurrent(c.window);
        std::string error;
        if (!render::init_heatmap_shader(&error)) {
            c.why = "heatmap shader: " + error;
            return c;  // a shader that does not compile is a failure even without CI (see below)
        }
        c.ok = true;
        return c;
    }();
    return ctx;
}

// Skips (or fails under CI) when there is no GL; a shader compile error always fails.
#define REQUIRE_GL()                                                                      \
    do {                                                                                  \
        GlContext& ctx_ = gl();                                                           \
        if (!ctx_.ok) {                                                                   \
            if (ctx_.window || std::getenv("CI")) FAIL() << ctx_.why;                     \
            GTEST_SKIP() << "no OpenGL 3.3 context (" << ctx_.why << "); run under Xvfb"; \
        }                                                                                 \
    } while (0)

struct Pixels {
    int width = 0, height = 0;
    std::vector<unsigned char> rgba;
    const unsigned char* at(int x, int y) const {
        return rgba.data() + (std::size_t(y) * std::size_t(width) + std::size_t(x)) * 4;
    }
};

Pixels render_and_read(HeatmapTexture& tex, const ColorRange& range, const ViewWindow& view, int w, int h,
                       const Highlight& hl = {}) {
    Pixels p;
    EXPECT_NE(tex.render(range, view, w, h, hl), 0u) << "render() returned no texture";
    EXPECT_TRUE(tex.read_pixels(&p.rgba, &p.width, &p.height));
    EXPECT_EQ(p.width, w);
    EXPECT_EQ(p.height, h);
    return p;
}

// Compares every pixel with expected(x, y) (opaque). Reports the count of off-by-one pixels, the
// worst difference and the first pixel beyond the tolerance.
template <class Expected>
void expect_every_pixel(const Pixels& p, Expected expected, const std::string& what) {
    ASSERT_EQ(p.rgba.size(), std::size_t(p.width) * std::size_t(p.height) * 4);
    int worst = 0;
    long off_by_one = 0, bad = 0;
    std::string first;
    for (int y = 0; y < p.height; ++y) {
        for (int x = 0; x < p.width; ++x) {
            const unsigned char* g = p.at(x, y);
            const Rgb8 e = expected(x, y);
            const int d =
                std::max({std::abs(int(g[0]) - e.r), std::abs(int(g[1]) - e.g), std::abs(int(g[2]) - e.b)});
            worst = std::max(worst, d);
            off_by_one += d == 1;
            if (d > kTolerance || g[3] != 255) {
                if (bad++ == 0) {
                    first = "pixel (" + std::to_string(x) + ", " + std::to_string(y) + "): GPU (" +
                            std::to_string(g[0]) + ", " + std::to_string(g[1]) + ", " + std::to_string(g[2]) +
                            ", a=" + std::to_string(g[3]) + "), CPU (" + std::to_string(e.r) + ", " +
                            std::to_string(e.g) + ", " + std::to_string(e.b) + ")";
                }
            }
        }
    }
    EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << p.width * p.height << " pixels differ by more than "
                      << kTolerance << "/255; first " << first;
    ::testing::Test::RecordProperty(what + "_worst", worst);
    ::testing::Test::RecordProperty(what + "_off_by_one", int(off_by_one));
}

Rgb8 mix(Rgb8 c, float grey, float a) {
    auto ch = [&](std::uint8_t v) {
        const float f = float(v) / 255.0f;
        return std::uint8_t(std::lround((f + (grey - f) * a) * 255.0f));
    };
    return Rgb8{ch(c.r), ch(c.g), ch(c.b)};
}

TEST(ShaderColormap, SequentialRampMatchesCpuEveryPixel) {
    REQUIRE_GL();
    Mat M(1, 256);  // 1 x 256: 0, 1/255, ..., 1 — every sequential colour the GUI can show
    for (int j = 0; j < 256; ++j) M(0, j) = float(j) / 255.0f;
    HeatmapTexture tex;
    ASSERT_TRUE(tex.set_matrix(M));
    const ColorRange range{ColorMap::Sequential, 0.0f, 1.0f};
    // Cells are 1 x 4 px (below the 12 px grid-line threshold).
    const Pixels p = render_and_read(tex, range, ViewWindow{0, 0, 256, 1}, 256, 4);
    expect_every_pixel(
        p, [&](int x, int) { return value_rgb(range, M(0, x)); }, "sequential");
    // Sanity: the ends are the first and last stops exactly.
    EXPECT_EQ(p.at(0, 0)[0], colormap_stops(ColorMap::Sequential).front().r);
    EXPECT_EQ(p.at(255, 3)[1], colormap_stops(ColorMap::Sequential).back().g);
}

TEST(ShaderColormap, SignedRampMatchesCpuEveryPixel) {
    REQUIRE_GL();
    const int m = 97;
    Mat M(2, m);  // 2 x 97: -3 .. 3 in steps of 1/16 (row 1 reversed)
    for (int j = 0; j < m; ++j) {
        M(0, j) = -3.0f + 6.0f * float(j) / float(m - 1);
        M(1, j) = -M(0, j);
    }
    HeatmapTexture tex;
    ASSERT_TRUE(tex.set_matrix(M));
    const ColorRange range{ColorMap::Diverging, -3.0f, 3.0f};
    // 3 x 5 px per cell: cell = (x / 3, y / 5).
    const Pixels p = render_and_read(tex, range, ViewWindow{0, 0, float(m), 2}, 3 * m, 10);
    expect_every_pixel(
        p, [&](int x, int y) { return value_rgb(range, M(y / 5, x / 3)); }, "diverging");
    // Zero is the white middle stop.
    const unsigned char* mid = p.at(3 * 48 + 1, 2);
    EXPECT_NEAR(mid[0], 247, kTolerance);
    EXPECT_NEAR(mid[2], 247, kTolerance);
}

TEST(ShaderColormap, MaskedCellsShowTheSameHatchAsTheFigures) {
    REQUIRE_GL();
    const int n = 5;
    Mat A(n, n);  // n x n causal weights: -inf above the diagonal
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) A(i, j) = j <= i ? float(j + 1) / float(i + 1) / 2.0f : -kInf;
    A(0, 0) = std::nanf("");  // NaN is shown as masked too
    HeatmapTexture tex;
    ASSERT_TRUE(tex.set_matrix(A));
    const ColorRange range{ColorMap::Sequential, 0.0f, 1.0f};
    // 10 x 10 px cells (no grid lines): the hatch is a function of the target pixel, (x + y) mod 8
    // with y counted from the TOP — the same as masked_rgb and so as the exported figure.
    const Pixels p = render_and_read(tex, range, ViewWindow{0, 0, float(n), float(n)}, 10 * n, 10 * n);
    expect_every_pixel(
        p,
        [&](int x, int y) {
            const float v = A(y / 10, x / 10);
            return std::isfinite(v) ? value_rgb(range, v) : masked_rgb(x, y);
        },
        "masked");
    // Orientation spelled out: "/" stripes, i.e. one right + one up keeps the colour, in the GPU image.
    const unsigned char* a = p.at(30, 10);  // inside masked cell (row 1, col 3)
    const unsigned char* b = p.at(31, 9);   // inside masked cell (row 0, col 3)
    const unsigned char* c = p.at(34, 10);  // x + y = 44: the other half of the 8 px period
    EXPECT_EQ(a[0], b[0]);
    EXPECT_NE(a[0], c[0]);
}

TEST(ShaderColormap, ViewWindowShowsTheRightCells) {
    REQUIRE_GL();
    Mat M(4, 4);  // 4 x 4, every cell a different value
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) M(i, j) = float(i * 4 + j) / 15.0f;
    HeatmapTexture tex;
    ASSERT_TRUE(tex.set_matrix(M));
    const ColorRange range{ColorMap::Sequential, 0.0f, 1.0f};
    {
        // Zoom: the 2 x 2 window of rows 1..2, columns 1..2, 10 px per cell.
        const Pixels p = render_and_read(tex, range, ViewWindow{1, 1, 3, 3}, 20, 20);
        expect_every_pixel(
            p, [&](int x, int y) { return value_rgb(range, M(1 + y / 10, 1 + x / 10)); }, "zoom");
    }
    {
        // A non-square window: columns 2..3 of row 3 only (bottom-right), 8 x 6 px per cell.
        const Pixels p = render_and_read(tex, range, ViewWindow{2, 3, 4, 4}, 16, 6);
        expect_every_pixel(
            p, [&](int x, int) { return value_rgb(range, M(3, 2 + x / 8)); }, "pan");
    }
    {
        // Panned past the top-left corner: outside the matrix is transparent (the panel shows).
        const Pixels p = render_and_read(tex, range, ViewWindow{-1, -1, 1, 1}, 20, 20);
        for (int y = 0; y < 20; ++y) {
            for (int x = 0; x < 20; ++x) {
                const unsigned char* g = p.at(x, y);
                if (x < 10 || y < 10) {
                    ASSERT_EQ(g[3], 0) << x << "," << y;
                } else {
                    const Rgb8 e = value_rgb(range, M(0, 0));
                    ASSERT_EQ(g[3], 255);
                    ASSERT_NEAR(g[0], e.r, kTolerance);
                    ASSERT_NEAR(g[1], e.g, kTolerance);
                    ASSERT_NEAR(g[2], e.b, kTolerance);
                }
            }
        }
    }
}

TEST(ShaderColormap, HighlightOutlinesThePinnedRow) {
    REQUIRE_GL();
    Mat M(4, 4);  // 4 x 4
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) M(i, j) = 0.1f + 0.05f * float(i * 4 + j);
    HeatmapTexture tex;
    ASSERT_TRUE(tex.set_matrix(M));
    const ColorRange range{ColorMap::Sequential, 0.0f, 1.0f};
    const Rgb8 kBlack{0, 0, 0}, kWhite{255, 255, 255};
    // Row 1 pinned, 10 px cells: 1 px black then 1 px white just inside the row's outer border
    // (top y = 10, bottom y = 19, left x = 0, right x = 39); everything else untouched.
    const Pixels p = render_and_read(tex, range, ViewWindow{0, 0, 4, 4}, 40, 40, Highlight{1, -1, false});
    expect_every_pixel(
        p,
        [&](int x, int y) {
            if (y >= 10 && y < 20) {
                if (y == 10 || y == 19 || x == 0 || x == 39) return kBlack;
                if (y == 11 || y == 18 || x == 1 || x == 38) return kWhite;
            }
            return value_rgb(range, M(y / 10, x / 10));
        },
        "highlight_row");

    // Column 2 pinned with dim_others: the column is outlined, every other cell is dimmed
    // (mixed 55% towards a 35% grey).
    const Pixels q = render_and_read(tex, range, ViewWindow{0, 0, 4, 4}, 40, 40, Highlight{-1, 2, true});
    expect_every_pixel(
        q,
        [&](int x, int y) {
            if (x >= 20 && x < 30) {
                if (x == 20 || x == 29 || y == 0 || y == 39) return kBlack;
                if (x == 21 || x == 28 || y == 1 || y == 38) return kWhite;
                return value_rgb(range, M(y / 10, x / 10));
            }
            return mix(value_rgb(range, M(y / 10, x / 10)), 0.35f, 0.55f);
        },
        "highlight_col_dim");
}

TEST(ShaderColormap, GridLinesOnlyWhenCellsAreBig) {
    REQUIRE_GL();
    Mat M(2, 2);  // 2 x 2
    M << 0.0f, 0.25f, 0.5f, 1.0f;
    HeatmapTexture tex;
    ASSERT_TRUE(tex.set_matrix(M));
    const ColorRange range{ColorMap::Sequential, 0.0f, 1.0f};
    // 16 px cells: the first pixel row/column of each cell is mixed 35% towards mid grey.
    const Pixels p = render_and_read(tex, range, ViewWindow{0, 0, 2, 2}, 32, 32);
    expect_every_pixel(
        p,
        [&](int x, int y) {
            const Rgb8 c = value_rgb(range, M(y / 16, x / 16));
            return (x % 16 == 0 || y % 16 == 0) ? mix(c, 0.5f, 0.35f) : c;
        },
        "grid");
    // 11 px cells: no grid lines.
    const Pixels q = render_and_read(tex, range, ViewWindow{0, 0, 2, 2}, 22, 22);
    expect_every_pixel(
        q, [&](int x, int y) { return value_rgb(range, M(y / 11, x / 11)); }, "no_grid");
}

TEST(ShaderColormap, Upload4096x4096) {
    REQUIRE_GL();
    int max_size = 0;
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_size);
    ASSERT_GE(max_size, 4096) << "GL 3.3 guarantees only 1024; this driver cannot hold a 4096 matrix";
    const int n = 4096;
    Mat S(n, n);  // n x m scores with a causal-looking pattern of masked cells
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            S(i, j) = (i * 7 + j * 13) % 251 == 0 ? -kInf : float((i * 31 + j * 17) % 1001) / 1000.0f;
    HeatmapTexture tex;
    ASSERT_TRUE(tex.set_matrix(S));
    EXPECT_EQ(tex.rows(), n);
    EXPECT_EQ(tex.cols(), n);
    const ColorRange range{ColorMap::Sequential, 0.0f, 1.0f};
    {
        // Whole matrix at 1024 x 1024: pixel x samples the cell under its centre, column 4x + 2.
        const Pixels p = render_and_read(tex, range, ViewWindow{0, 0, float(n), float(n)}, 1024, 1024);
        expect_every_pixel(
            p,
            [&](int x, int y) {
                const float v = S(4 * y + 2, 4 * x + 2);
                return std::isfinite(v) ? value_rgb(range, v) : masked_rgb(x, y);
            },
            "4096_overview");
    }
    {
        // The bottom-right 8 x 8 cells at 8 px each: the far corner of the texture is addressed right.
        const Pixels p =
            render_and_read(tex, range, ViewWindow{float(n - 8), float(n - 8), float(n), float(n)}, 64, 64);
        expect_every_pixel(
            p,
            [&](int x, int y) {
                const float v = S(n - 8 + y / 8, n - 8 + x / 8);
                return std::isfinite(v) ? value_rgb(range, v) : masked_rgb(x, y);
            },
            "4096_corner");
    }
    // Same size again: the texture is updated in place and shows the new values.
    S.setConstant(1.0f);
    ASSERT_TRUE(tex.set_matrix(S));
    const Pixels p = render_and_read(tex, range, ViewWindow{0, 0, float(n), float(n)}, 64, 64);
    expect_every_pixel(
        p, [&](int, int) { return colormap_stops(ColorMap::Sequential).back(); }, "4096_update");
}

TEST(ShaderColormap, TooLargeOrEmptyIsRefused) {
    REQUIRE_GL();
    int max_size = 0;
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_size);
    HeatmapTexture tex;
    EXPECT_FALSE(tex.set_matrix(Mat(1, max_size + 1)));
    EXPECT_TRUE(tex.empty());
    EXPECT_FALSE(tex.set_matrix(Mat(0, 3)));
    EXPECT_EQ(tex.render(ColorRange{}, ViewWindow{}, 8, 8), 0u);  // nothing uploaded: no texture, no crash
    std::vector<unsigned char> rgba;
    int w = 0, h = 0;
    EXPECT_FALSE(tex.read_pixels(&rgba, &w, &h));
}

TEST(ShaderColormap, LogScaleMatchesCpuEveryPixel) {
    REQUIRE_GL();
    Mat M(1, 200);  // 1 x 200: 1e-6 .. 1 geometrically, below and across the 4 decades shown
    for (int j = 0; j < 200; ++j) M(0, j) = std::pow(10.0f, -6.0f + 6.0f * float(j) / 199.0f);
    HeatmapTexture tex;
    ASSERT_TRUE(tex.set_matrix(M));
    const ColorRange range = color_range_for(ValueKind::Probability, M, ScaleMode::Log);
    ASSERT_EQ(range.mode, ScaleMode::Log);
    const Pixels p = render_and_read(tex, range, ViewWindow{0, 0, 200, 1}, 200, 3);
    expect_every_pixel(
        p, [&](int x, int) { return value_rgb(range, M(0, x)); }, "log");
}

TEST(ShaderColormap, ZoomedOutMaxLevelsKeepEverySharpPeak) {
    REQUIRE_GL();
    // 4096 tokens at T = 0.05: one peak per row on the diagonal. Drawn into 512 px, 8 cells share a
    // pixel; nearest sampling of level 0 shows about one peak in 8, the max level shows every one.
    const int n = 4096, px = 512;
    Mat A = Mat::Constant(n, n, 1e-6f);                            // [n, n]
    for (int i = 0; i < n; ++i) A(i, (i * 7919 + 3) % n) = 0.98f;  // one peak per row, scattered columns
    const ColorRange range{ColorMap::Sequential, 0.0f, 1.0f, ScaleMode::Fixed};
    HeatmapTexture tex;
    ASSERT_TRUE(tex.set_matrix(A));
    auto bright_pixels = [&](const Pixels& p) {
        int count = 0;
        for (int y = 0; y < p.height; ++y)
            for (int x = 0; x < p.width; ++x) count += p.at(x, y)[1] > 200;  // yellow-green
        return count;
    };
    const Pixels nearest = render_and_read(tex, range, ViewWindow{0, 0, float(n), float(n)}, px, px);
    EXPECT_EQ(tex.last_level(), 0);
    tex.set_levels(reduction_levels(A, ReduceMode::Max));
    const Pixels reduced = render_and_read(tex, range, ViewWindow{0, 0, float(n), float(n)}, px, px);
    EXPECT_EQ(tex.last_level(), 3);
    // Every peak's 8x8 block is one pixel: each row of pixels holds the peaks of 8 rows.
    std::vector<int> want(std::size_t(px) * px, 0);
    for (int i = 0; i < n; ++i) want[std::size_t(i / 8) * px + std::size_t(((i * 7919 + 3) % n) / 8)] = 1;
    int missing = 0, first_i = -1;
    for (int i = 0; i < n; ++i) {
        const int y = i / 8, x = ((i * 7919 + 3) % n) / 8;
        if (reduced.at(x, y)[1] <= 200) {
            if (missing++ == 0) first_i = i;
        }
    }
    EXPECT_EQ(missing, 0) << "peaks lost when zoomed out; first: row " << first_i;
    int expected_bright = 0;
    for (int w : want) expected_bright += w;
    EXPECT_EQ(bright_pixels(reduced), expected_bright);
    EXPECT_LT(bright_pixels(nearest), expected_bright / 4) << "nearest sampling should drop most peaks";
    ::testing::Test::RecordProperty("nearest_bright", bright_pixels(nearest));
    ::testing::Test::RecordProperty("max_level_bright", bright_pixels(reduced));
}

}  // namespace
}  // namespace attnviz

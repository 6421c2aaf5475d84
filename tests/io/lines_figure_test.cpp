// The lines view's geometry (io/lines_figure.hpp): every line joins its query's row on the left to its
// key's row on the right, its width and opacity follow the weight, heads are coloured apart, one head
// or a hovered token keeps only its lines; and the PNG / SVG figures draw exactly those lines.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <regex>
#include <string>

#include "core/error.hpp"
#include "io/lines_figure.hpp"

using namespace attnviz;

namespace {

// Two heads over 3 queries × 3 keys: head 0 looks at the previous token, head 1 spreads evenly.
LinesInput two_heads() {
    LinesInput in;
    Mat a(3, 3), b(3, 3);
    a << 1.0f, 0, 0,    //
        0.9f, 0.1f, 0,  //
        0.005f, 0.8f, 0.195f;
    b << 1.0f, 0, 0,    //
        0.5f, 0.5f, 0,  //
        1.0f / 3, 1.0f / 3, 1.0f / 3;
    in.weights = {a, b};
    in.queries = in.keys = {"the", "cat", "sat"};
    return in;
}

LinesOptions plain() {
    LinesOptions o;
    o.label_width = 100;
    o.gap = 200;
    o.row_height = 20;
    o.top = 10;
    o.min_width = 1;
    o.max_width = 5;
    o.min_weight = 0.01f;
    return o;
}

const LineSegment* find(const LinesLayout& L, int head, int q, int k) {
    for (const LineSegment& s : L.lines)
        if (s.head == head && s.query == q && s.key == k) return &s;
    return nullptr;
}

}  // namespace

TEST(LinesGeometry, EndpointsAreTheTokenRows) {
    const LinesLayout L = plan_lines(two_heads(), plain());
    EXPECT_FLOAT_EQ(L.left_x, 100);
    EXPECT_FLOAT_EQ(L.right_x, 300);
    EXPECT_FLOAT_EQ(L.width, 400);
    ASSERT_EQ(L.query_y.size(), 3u);
    for (int i = 0; i < 3; ++i) {
        EXPECT_FLOAT_EQ(L.query_y[std::size_t(i)], 10 + 20 * (i + 0.5f)) << "row " << i;
        EXPECT_FLOAT_EQ(L.key_y[std::size_t(i)], L.query_y[std::size_t(i)]);
    }
    const LineSegment* s = find(L, 0, 2, 1);  // query "sat" → key "cat", weight 0.8
    ASSERT_NE(s, nullptr);
    EXPECT_FLOAT_EQ(s->x0, 100);
    EXPECT_FLOAT_EQ(s->y0, 60);
    EXPECT_FLOAT_EQ(s->x1, 300);
    EXPECT_FLOAT_EQ(s->y1, 40);
}

TEST(LinesGeometry, WidthAndOpacityFollowTheWeight) {
    const LinesLayout L = plan_lines(two_heads(), plain());
    for (const LineSegment& s : L.lines) {
        const float w = two_heads().weights[std::size_t(s.head)](s.query, s.key);
        EXPECT_FLOAT_EQ(s.weight, w);
        EXPECT_FLOAT_EQ(s.width, 1 + 4 * w) << "head " << s.head << " (" << s.query << ", " << s.key << ")";
        EXPECT_FLOAT_EQ(s.opacity, w);
        EXPECT_EQ(s.colour, head_colour(s.head));
    }
    // A weight below min_weight and the masked zeros draw nothing: 5 lines of head 0, 6 of head 1.
    EXPECT_EQ(find(L, 0, 2, 0), nullptr);
    EXPECT_EQ(find(L, 0, 0, 1), nullptr);
    EXPECT_EQ(L.lines.size(), 11u);
    EXPECT_NE(head_colour(0), head_colour(1));
}

// Every head drawn: weakest first (the strong lines on top), except the head in focus, drawn last of
// all so the head the stage view shows is not buried under the others.
TEST(LinesGeometry, TheHeadInFocusIsDrawnOnTop) {
    LinesOptions o = plain();
    const LinesLayout by_weight = plan_lines(two_heads(), o);
    for (std::size_t k = 1; k < by_weight.lines.size(); ++k)
        EXPECT_LE(by_weight.lines[k - 1].weight, by_weight.lines[k].weight);
    o.front_head = 0;
    const LinesLayout L = plan_lines(two_heads(), o);
    ASSERT_EQ(L.lines.size(), 11u);
    for (std::size_t k = 0; k < 6; ++k) EXPECT_EQ(L.lines[k].head, 1) << k;
    for (std::size_t k = 6; k < 11; ++k) EXPECT_EQ(L.lines[k].head, 0) << k;
    for (std::size_t k = 7; k < 11; ++k) EXPECT_LE(L.lines[k - 1].weight, L.lines[k].weight);
}

TEST(LinesGeometry, OneHeadOrAHoveredTokenKeepsOnlyItsLines) {
    LinesOptions o = plain();
    o.head = 1;
    for (const LineSegment& s : plan_lines(two_heads(), o).lines) EXPECT_EQ(s.head, 1);
    EXPECT_EQ(plan_lines(two_heads(), o).lines.size(), 6u);
    o.head = -1;
    o.hover_side = LinesSide::Query;
    o.hover_token = 2;
    LinesLayout L = plan_lines(two_heads(), o);
    EXPECT_EQ(L.lines.size(), 5u);  // head 0: sat→cat, sat→sat; head 1: three
    for (const LineSegment& s : L.lines) EXPECT_EQ(s.query, 2);
    o.hover_side = LinesSide::Key;
    o.hover_token = 0;
    L = plan_lines(two_heads(), o);
    for (const LineSegment& s : L.lines) EXPECT_EQ(s.key, 0);
    EXPECT_EQ(L.lines.size(), 5u);  // head 0: the→the, cat→the; head 1: all three
}

TEST(LinesGeometry, BadInputIsOneLine) {
    LinesOptions o = plain();
    o.head = 2;
    EXPECT_THROW(plan_lines(two_heads(), o), Error);
    LinesInput in = two_heads();
    in.keys.pop_back();
    EXPECT_THROW(plan_lines(in, plain()), Error);
    in = two_heads();
    in.weights[0](1, 2) = -std::numeric_limits<float>::infinity();
    in.weights[0](1, 1) = std::numeric_limits<float>::quiet_NaN();
    const LinesLayout L = plan_lines(in, plain());
    EXPECT_EQ(find(L, 0, 1, 2), nullptr);
    EXPECT_EQ(find(L, 0, 1, 1), nullptr);
}

TEST(LinesFigure, SvgHasOneVectorLinePerSegment) {
    LinesInput in = two_heads();
    in.title = "attention lines <test> & co";
    LinesOptions o;
    const std::string svg = render_lines_figure_svg(in, o);
    std::smatch m;
    int lines = 0;
    std::string::const_iterator it = svg.begin();
    const std::regex line_re(
        "<line x1=\"([0-9.]+)\" y1=\"([0-9.]+)\" x2=\"([0-9.]+)\" y2=\"([0-9.]+)\" "
        "stroke=\"(#[0-9a-f]{6})\" stroke-width=\"([0-9.]+)\" stroke-opacity=\"([0-9.]+)\"");
    double widest = 0;
    while (std::regex_search(it, svg.cend(), m, line_re)) {
        ++lines;
        EXPECT_LT(std::stod(m[1]), std::stod(m[3]));  // left to right
        widest = std::max(widest, std::stod(m[6]));
        const double opacity = std::stod(m[7]);
        EXPECT_GT(opacity, 0.0);
        EXPECT_LE(opacity, 1.0);
        it = m.suffix().first;
    }
    EXPECT_EQ(lines, 11);
    EXPECT_NEAR(widest, 5.0, 1e-3);  // the weight-1 lines at max_width (scale 1)
    EXPECT_NE(svg.find("attention lines &lt;test&gt; &amp; co"), std::string::npos);
    for (const char* t : {">the<", ">cat<", ">sat<"}) EXPECT_NE(svg.find(t), std::string::npos) << t;
    EXPECT_NE(svg.find("head 1"), std::string::npos);  // the legend
}

TEST(LinesFigure, PngDrawsTheLinesInTheHeadsColours) {
    LinesInput in = two_heads();
    LinesOptions o;
    o.head = 0;
    FigureOptions fo;
    const Image img = render_lines_figure(in, o, fo);
    ASSERT_GT(img.width, 300);
    ASSERT_GT(img.height, 60);
    // Redraw the plan as the figure does and sample the middle of the strongest line (weight 1: the →
    // the): its pixel is head 0's colour; a point far from every line stays white.
    const Image two = render_lines_figure(in, o, FigureOptions{2});
    EXPECT_GT(two.width, img.width * 3 / 2);  // scale 2 is a true larger render
    // Find head 0's blue along the image's middle column (the lines cross it; no text there).
    const int x = img.width / 2;
    int blue = 0;
    for (int y = 0; y < img.height; ++y) {
        const std::uint8_t* p = &img.rgba[(std::size_t(y) * std::size_t(img.width) + std::size_t(x)) * 4];
        const Rgb8 c = head_colour(0);
        if (std::abs(p[0] - c.r) < 40 && std::abs(p[1] - c.g) < 40 && std::abs(p[2] - c.b) < 40) ++blue;
    }
    EXPECT_GT(blue, 3);
    const std::uint8_t* corner = &img.rgba[(std::size_t(img.height - 2) * std::size_t(img.width) + 2) * 4];
    EXPECT_EQ(corner[0], 255);
}

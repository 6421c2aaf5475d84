// CPU colour maps (io/colormap.*): the stop tables must be the very numbers shaders/heatmap.frag uses
// (parsed from the shader source here, so editing one side without the other fails), plus the
// interpolation, range and hatch rules the figures and the GUI share. The GPU side of the same
// promise is tests/app/shader_colormap_test.cpp, which renders through the shader and compares pixels.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include "core/shapes.hpp"
#include "io/colormap.hpp"
#include "io/files.hpp"

namespace attnviz {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::string shader_source() {
    return read_file(shader_dir() + "/heatmap.frag");
}

// "vec3(68.0, 1.0, 84.0)" -> Rgb8; every component must be a whole number in 0..255.
Rgb8 parse_vec3(const std::string& a, const std::string& b, const std::string& c) {
    auto byte = [](const std::string& s) {
        const double v = std::stod(s);
        EXPECT_EQ(v, std::floor(v)) << "shader stop component " << s << " is not a whole sRGB value";
        EXPECT_GE(v, 0.0);
        EXPECT_LE(v, 255.0);
        return std::uint8_t(v);
    };
    return Rgb8{byte(a), byte(b), byte(c)};
}

const std::regex kVec3(R"(vec3\(\s*([0-9.]+)\s*,\s*([0-9.]+)\s*,\s*([0-9.]+)\s*\))");

// The entries of `const vec3 NAME[N] = vec3[N]( ... );` in the shader.
std::vector<Rgb8> shader_array(const std::string& src, const std::string& name) {
    const std::size_t at = src.find("const vec3 " + name + "[");
    if (at == std::string::npos) {
        ADD_FAILURE() << "heatmap.frag has no array " << name;
        return {};
    }
    const std::size_t open = src.find("](", at);
    const std::size_t close = src.find(");", open);
    if (open == std::string::npos || close == std::string::npos) {
        ADD_FAILURE() << "cannot find the initialiser of " << name;
        return {};
    }
    const std::string body = src.substr(open + 2, close - open - 2);
    std::vector<Rgb8> out;
    for (std::sregex_iterator it(body.begin(), body.end(), kVec3), end; it != end; ++it)
        out.push_back(parse_vec3((*it)[1], (*it)[2], (*it)[3]));
    return out;
}

// The value of `const vec3 NAME = vec3(...);` in the shader.
Rgb8 shader_const(const std::string& src, const std::string& name) {
    const std::regex re("const vec3 " + name +
                        R"(\s*=\s*vec3\(\s*([0-9.]+)\s*,\s*([0-9.]+)\s*,\s*([0-9.]+)\s*\))");
    std::smatch m;
    if (!std::regex_search(src, m, re)) {
        ADD_FAILURE() << "heatmap.frag has no constant " << name;
        return {};
    }
    return parse_vec3(m[1], m[2], m[3]);
}

std::string str(Rgb8 c) {
    return "(" + std::to_string(c.r) + ", " + std::to_string(c.g) + ", " + std::to_string(c.b) + ")";
}

void expect_same_stops(const std::vector<Rgb8>& shader, ColorMap map, const char* what) {
    const auto& cpu = colormap_stops(map);
    ASSERT_EQ(shader.size(), cpu.size())
        << what << ": the shader and io/colormap.cpp have different stop counts";
    for (std::size_t k = 0; k < cpu.size(); ++k)
        EXPECT_EQ(shader[k], cpu[k]) << what << " stop " << k << ": shader " << str(shader[k]) << ", CPU "
                                     << str(cpu[k]);
}

TEST(ColormapShader, SequentialStopsMatchTheShader) {
    expect_same_stops(shader_array(shader_source(), "SEQUENTIAL_STOPS"), ColorMap::Sequential, "sequential");
}

TEST(ColormapShader, DivergingStopsMatchTheShader) {
    expect_same_stops(shader_array(shader_source(), "DIVERGING_STOPS"), ColorMap::Diverging, "diverging");
}

TEST(ColormapShader, HatchGreysMatchTheShader) {
    const std::string src = shader_source();
    EXPECT_EQ(shader_const(src, "HATCH_DARK"), kHatchDark);
    EXPECT_EQ(shader_const(src, "HATCH_LIGHT"), kHatchLight);
    // The stripe rule itself: same period and split as masked_rgb.
    EXPECT_NE(src.find("(p.x + p.y) % 8"), std::string::npos) << "shader hatch no longer uses (x + y) mod 8";
    EXPECT_NE(src.find("(s < 4) ? HATCH_DARK : HATCH_LIGHT"), std::string::npos);
}

TEST(ColormapShader, ParserSeesADifferentTable) {
    // Guards the parser itself: a doctored copy with one changed number must not compare equal.
    std::string src = shader_source();
    const std::string needle = "vec3(68.0, 1.0, 84.0)";
    const std::size_t at = src.find(needle);
    ASSERT_NE(at, std::string::npos);
    src.replace(at, needle.size(), "vec3(69.0, 1.0, 84.0)");
    const auto stops = shader_array(src, "SEQUENTIAL_STOPS");
    ASSERT_EQ(stops.size(), 9u);
    EXPECT_NE(stops[0], colormap_stops(ColorMap::Sequential)[0]);
}

TEST(Colormap, StopsAreHitExactlyAtTheirT) {
    for (ColorMap map : {ColorMap::Sequential, ColorMap::Diverging}) {
        const auto& stops = colormap_stops(map);
        for (int k = 0; k < kColorStops; ++k) {
            const float t = float(k) / float(kColorStops - 1);
            EXPECT_EQ(colormap_rgb(map, t), stops[std::size_t(k)]) << "stop " << k;
        }
    }
}

TEST(Colormap, MidpointsAreTheRoundedMeanOfTheirStops) {
    for (ColorMap map : {ColorMap::Sequential, ColorMap::Diverging}) {
        const auto& stops = colormap_stops(map);
        for (int k = 0; k + 1 < kColorStops; ++k) {
            const Rgb8 a = stops[std::size_t(k)], b = stops[std::size_t(k) + 1];
            // Halves round away from zero (std::lround), e.g. (68 + 71) / 2 = 69.5 -> 70.
            const Rgb8 mid{std::uint8_t((a.r + b.r + 1) / 2), std::uint8_t((a.g + b.g + 1) / 2),
                           std::uint8_t((a.b + b.b + 1) / 2)};
            const float t = (float(k) + 0.5f) / float(kColorStops - 1);
            EXPECT_EQ(colormap_rgb(map, t), mid) << "between stops " << k << " and " << k + 1;
            // A quarter of the way: each channel within the segment, closer to a.
            const Rgb8 q = colormap_rgb(map, (float(k) + 0.25f) / float(kColorStops - 1));
            EXPECT_NEAR(q.r, a.r + (b.r - a.r) * 0.25, 0.5 + 1e-3);
            EXPECT_NEAR(q.g, a.g + (b.g - a.g) * 0.25, 0.5 + 1e-3);
            EXPECT_NEAR(q.b, a.b + (b.b - a.b) * 0.25, 0.5 + 1e-3);
        }
    }
}

TEST(Colormap, OutOfRangeAndNaNAreClamped) {
    for (ColorMap map : {ColorMap::Sequential, ColorMap::Diverging}) {
        const auto& stops = colormap_stops(map);
        EXPECT_EQ(colormap_rgb(map, -0.5f), stops.front());
        EXPECT_EQ(colormap_rgb(map, -kInf), stops.front());
        EXPECT_EQ(colormap_rgb(map, std::nanf("")), stops.front());
        EXPECT_EQ(colormap_rgb(map, 1.5f), stops.back());
        EXPECT_EQ(colormap_rgb(map, kInf), stops.back());
    }
}

TEST(Colormap, SequentialGetsBrighterDivergingIsWhiteInTheMiddle) {
    // Viridis-like: luma rises monotonically, so "brighter = more attention" holds in greyscale.
    float prev = -1;
    for (int i = 0; i <= 256; ++i) {
        const Rgb8 c = colormap_rgb(ColorMap::Sequential, float(i) / 256.0f);
        const float luma = 0.2126f * c.r + 0.7152f * c.g + 0.0722f * c.b;
        EXPECT_GE(luma, prev - 0.75f) << "t = " << i / 256.0;  // rounding may wobble by < 1 level
        prev = std::max(prev, luma);
    }
    EXPECT_EQ(colormap_rgb(ColorMap::Diverging, 0.5f), (Rgb8{247, 247, 247}));
    // Negative half is blue (b > r), positive half is red (r > b).
    for (float t : {0.0f, 0.1f, 0.3f, 0.45f})
        EXPECT_GT(colormap_rgb(ColorMap::Diverging, t).b, colormap_rgb(ColorMap::Diverging, t).r);
    for (float t : {0.55f, 0.7f, 0.9f, 1.0f})
        EXPECT_GT(colormap_rgb(ColorMap::Diverging, t).r, colormap_rgb(ColorMap::Diverging, t).b);
}

TEST(Colormap, HatchGreysNeverOccurInAMap) {
    // A masked cell must never be mistaken for a value.
    for (ColorMap map : {ColorMap::Sequential, ColorMap::Diverging}) {
        for (int i = 0; i <= 4096; ++i) {
            const Rgb8 c = colormap_rgb(map, float(i) / 4096.0f);
            ASSERT_NE(c, kHatchDark) << "t = " << i / 4096.0;
            ASSERT_NE(c, kHatchLight) << "t = " << i / 4096.0;
        }
    }
}

TEST(ColorRange, ProbabilityIsFixedZeroToOne) {
    Mat A(2, 2);  // n x m
    A << 0.1f, 0.2f, 0.3f, 0.4f;
    const ColorRange r = color_range_for(ValueKind::Probability, A);
    EXPECT_EQ(r.map, ColorMap::Sequential);
    EXPECT_EQ(r.lo, 0.0f);
    EXPECT_EQ(r.hi, 1.0f);  // not stretched to 0.4: two weight maps compare at a glance
    EXPECT_EQ(value_rgb(r, 0.0f), colormap_stops(ColorMap::Sequential).front());
    EXPECT_EQ(value_rgb(r, 1.0f), colormap_stops(ColorMap::Sequential).back());
    EXPECT_EQ(value_rgb(r, 0.5f), colormap_stops(ColorMap::Sequential)[4]);
    EXPECT_EQ(value_rgb(r, 0.4f), colormap_rgb(ColorMap::Sequential, 0.4f));
}

TEST(ColorRange, SignedIsSymmetricAboutZero) {
    Mat Q(2, 3);  // n x d_k
    Q << -1.0f, 0.5f, 3.0f, 0.0f, -2.0f, 1.0f;
    const ColorRange r = color_range_for(ValueKind::Signed, Q);
    EXPECT_EQ(r.map, ColorMap::Diverging);
    EXPECT_EQ(r.lo, -3.0f);
    EXPECT_EQ(r.hi, 3.0f);
    const auto& stops = colormap_stops(ColorMap::Diverging);
    EXPECT_EQ(value_rgb(r, 0.0f), stops[4]);  // zero is the white middle even though the data is lopsided
    EXPECT_EQ(value_rgb(r, 3.0f), stops[8]);
    EXPECT_EQ(value_rgb(r, -3.0f), stops[0]);
    EXPECT_EQ(value_rgb(r, -1.5f), stops[2]);
    EXPECT_EQ(value_rgb(r, 1.5f), stops[6]);

    Mat N(1, 2);  // negative side larger
    N << -4.0f, 1.0f;
    const ColorRange rn = color_range_for(ValueKind::Signed, N);
    EXPECT_EQ(rn.lo, -4.0f);
    EXPECT_EQ(rn.hi, 4.0f);
}

TEST(ColorRange, NonNegativeUsesTheMaximum) {
    Mat E(1, 3);
    E << 0.0f, 2.0f, 8.0f;
    const ColorRange r = color_range_for(ValueKind::NonNegative, E);
    EXPECT_EQ(r.map, ColorMap::Sequential);
    EXPECT_EQ(r.lo, 0.0f);
    EXPECT_EQ(r.hi, 8.0f);
    EXPECT_EQ(value_rgb(r, 4.0f), colormap_stops(ColorMap::Sequential)[4]);
}

TEST(ColorRange, ConstantMatrixStillHasAUsableRange) {
    Mat Z = Mat::Zero(3, 3);
    for (ValueKind k :
         {ValueKind::Signed, ValueKind::NonNegative, ValueKind::Indicator, ValueKind::Probability}) {
        const ColorRange r = color_range_for(k, Z);
        EXPECT_LT(r.lo, r.hi);
        EXPECT_TRUE(std::isfinite(r.lo) && std::isfinite(r.hi));
    }
    // All zero, signed: -1..1, zero is white.
    EXPECT_EQ(value_rgb(color_range_for(ValueKind::Signed, Z), 0.0f), colormap_stops(ColorMap::Diverging)[4]);
    // All 2, signed: -2..2, so every cell is the darkest red.
    Mat C = Mat::Constant(2, 2, 2.0f);
    const ColorRange rc = color_range_for(ValueKind::Signed, C);
    EXPECT_EQ(rc.lo, -2.0f);
    EXPECT_EQ(rc.hi, 2.0f);
    EXPECT_EQ(value_rgb(rc, 2.0f), colormap_stops(ColorMap::Diverging).back());
    // A degenerate range someone builds by hand shows the middle colour, not garbage.
    const ColorRange flat{ColorMap::Sequential, 1.0f, 1.0f};
    EXPECT_EQ(value_rgb(flat, 1.0f), colormap_stops(ColorMap::Sequential)[4]);
    EXPECT_EQ(value_rgb(flat, 7.0f), colormap_stops(ColorMap::Sequential)[4]);
}

TEST(ColorRange, MaskedCellsDoNotStretchTheRange) {
    Mat S(2, 2);  // n x m scores after the causal mask
    S << 0.5f, -kInf, 0.25f, 0.125f;
    const ColorRange r = color_range_for(ValueKind::NonNegative, S);
    EXPECT_EQ(r.hi, 0.5f);
    const ColorRange rs = color_range_for(ValueKind::Signed, S);
    EXPECT_EQ(rs.hi, 0.5f);
    EXPECT_EQ(rs.lo, -0.5f);
}

TEST(ColorRange, AllMaskedMatrix) {
    const Mat M = Mat::Constant(3, 4, -kInf);
    for (ValueKind k : {ValueKind::Signed, ValueKind::NonNegative, ValueKind::Probability}) {
        const ColorRange r = color_range_for(k, M);
        EXPECT_TRUE(std::isfinite(r.lo) && std::isfinite(r.hi));
        EXPECT_LT(r.lo, r.hi);
    }
    const ColorRange r = color_range_for(ValueKind::Signed, M);
    EXPECT_EQ(r.lo, -1.0f);
    EXPECT_EQ(r.hi, 1.0f);
    // Non-finite values are never coloured by the map: they get the hatch's grey.
    EXPECT_EQ(value_rgb(r, -kInf), masked_rgb(0, 0));
    EXPECT_EQ(value_rgb(r, kInf), masked_rgb(0, 0));
    EXPECT_EQ(value_rgb(r, std::nanf("")), masked_rgb(0, 0));
}

TEST(MaskedHatch, StripeFormula) {
    // (x + y) mod 8: 0..3 dark, 4..7 light; negative coordinates wrap the same way.
    for (int y = -20; y <= 20; ++y) {
        for (int x = -20; x <= 20; ++x) {
            const int s = ((x + y) % 8 + 8) % 8;
            ASSERT_EQ(masked_rgb(x, y), s < 4 ? kHatchDark : kHatchLight) << x << "," << y;
        }
    }
    EXPECT_EQ(masked_rgb(0, 0), kHatchDark);
    EXPECT_EQ(masked_rgb(3, 0), kHatchDark);
    EXPECT_EQ(masked_rgb(4, 0), kHatchLight);
    EXPECT_EQ(masked_rgb(7, 0), kHatchLight);
    EXPECT_EQ(masked_rgb(8, 0), kHatchDark);
}

TEST(MaskedHatch, StripesRunBottomLeftToTopRight) {
    // y grows downwards (image rows). "/" stripes: one step right and one step UP (y - 1) stays on
    // the same stripe; one step right and one step down does not (it moves two phases).
    for (int y = 1; y < 40; ++y)
        for (int x = 0; x < 40; ++x) ASSERT_EQ(masked_rgb(x + 1, y - 1), masked_rgb(x, y)) << x << "," << y;
    int changes = 0;
    for (int i = 0; i < 16; ++i) changes += masked_rgb(i + 1, i + 1) != masked_rgb(i, i);
    EXPECT_GE(changes, 4);
    // Equal parts dark and light along any row.
    int dark = 0;
    for (int x = 0; x < 64; ++x) dark += masked_rgb(x, 5) == kHatchDark;
    EXPECT_EQ(dark, 32);
}

}  // namespace
}  // namespace attnviz

// explain_cell(): every stage of many configs explains its cells, and the value the text arrives at
// (recomputed from the numbers it shows) equals the stage's matrix.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positive in Eigen's AVX-512 code
#endif
#include "core/explain.hpp"
#include "common/final_value.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace attnviz {
namespace {

using test::final_value;

void check_all_cells(const Config& c) {
    const Trace t = compute_trace(c);
    for (int s = 0; s < int(t.stages.size()); ++s) {
        const Stage& st = t.stages[std::size_t(s)];
        const Mat M = st.matrix();
        // Corners, the middle, and a sub-diagonal cell (masked or not depending on the mask).
        const int cells[][2] = {{0, 0},
                                {st.n_rows() - 1, st.n_cols() - 1},
                                {st.n_rows() / 2, st.n_cols() / 3},
                                {0, st.n_cols() - 1},
                                {std::min(3, st.n_rows() - 1), std::min(1, st.n_cols() - 1)}};
        for (const auto& ij : cells) {
            const int i = ij[0], j = ij[1];
            const auto lines = explain_cell(t, s, i, j);
            ASSERT_GE(lines.size(), 2u) << st.name;
            const double v = final_value(lines), expected = M(i, j);
            std::string text;
            for (const auto& l : lines) text += "\n  " + l;
            if (std::isinf(expected)) {
                EXPECT_EQ(v, expected)
                    << st.name << " head " << st.head << " (" << i << ", " << j << ")" << text;
            } else {
                EXPECT_NEAR(v, expected, 2e-4 * std::max(1.0, std::abs(expected)))
                    << st.name << " head " << st.head << " (" << i << ", " << j << ")" << text;
            }
        }
    }
}

TEST(Explain, DefaultConfigAllStages) {
    check_all_cells(Config());
}

TEST(Explain, MasksTemperatureAndPositions) {
    Config c;
    c.mask = MaskKind::Causal;
    c.temperature = 0.7;
    check_all_cells(c);
    c.positional = Positional::Rope;
    c.mask = MaskKind::Window;
    check_all_cells(c);
    c.positional = Positional::Alibi;
    c.layernorm = LayerNormMode::Post;
    check_all_cells(c);
    c.positional = Positional::Learned;
    c.layernorm = LayerNormMode::Pre;
    c.source_text = "the dark forest sleeps";
    check_all_cells(c);
}

TEST(Explain, ScoringFunctions) {
    for (Scoring sc : {Scoring::Dot, Scoring::Additive, Scoring::Bilinear, Scoring::Gaussian, Scoring::Boxcar,
                       Scoring::Epanechnikov}) {
        SCOPED_TRACE(to_string(sc));
        Config c;
        c.scoring = sc;
        c.bandwidth = 5;
        c.mask = MaskKind::Padding;
        c.valid_length = 6;
        check_all_cells(c);
    }
}

TEST(Explain, LinearAttention) {
    for (PhiKind p : {PhiKind::Elu1, PhiKind::Relu, PhiKind::Softmax}) {
        for (MaskKind mk : {MaskKind::None, MaskKind::Causal, MaskKind::Padding}) {
            SCOPED_TRACE(to_string(p) + " / " + to_string(mk));
            Config c;
            c.attention = AttentionKind::Linear;
            c.phi = p;
            c.mask = mk;
            c.valid_length = 5;
            check_all_cells(c);
        }
    }
}

TEST(Explain, TextShowsTheFormulaWithTokensAndNumbers) {
    Config c;
    c.mask = MaskKind::Causal;
    const Trace t = compute_trace(c);
    const auto s = explain_cell(t, t.find("scores", 0), 3, 1);
    EXPECT_EQ(s[0], "S[creature, fluffy] = q₃·k₁ = Σₖ q₃ₖ k₁ₖ");
    EXPECT_NE(s[1].find("(16 terms)"), std::string::npos) << s[1];
    const auto sc = explain_cell(t, t.find("scaled", 0), 3, 1);
    EXPECT_NE(sc[0].find("/ √16"), std::string::npos) << sc[0];
    const auto m = explain_cell(t, t.find("masked", 0), 1, 3);
    EXPECT_NE(m[0].find("causal"), std::string::npos) << m[0];
    EXPECT_EQ(m.back(), "= −∞");
    const auto w = explain_cell(t, t.find("weights", 0), 3, 1);
    EXPECT_NE(w[1].find("Σ of 4 terms"), std::string::npos) << w[1];
    // The softmax's s is named: the scaled score S/√d_k, not S.
    EXPECT_EQ(w[w.size() - 2].rfind("s = S/√d_k, the scaled score", 0), 0u) << w[w.size() - 2];
    const auto cc = explain_cell(t, t.find("concat"), 2, 17);
    EXPECT_NE(cc[0].find("head 1"), std::string::npos) << cc[0];
    EXPECT_EQ(explain_cell(t, 9999, 0, 0).size(), 1u);
    EXPECT_EQ(explain_cell(t, 0, -1, 0).size(), 1u);
}

}  // namespace
}  // namespace attnviz

// Designed heads: each preset's head-0 weights peak where it promises.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positive in Eigen's AVX-512 code
#endif
#include "core/presets.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/trace.hpp"

namespace attnviz {
namespace {

Mat head0_weights(HeadPreset p, const std::string& text = kDefaultSentence, int d_model = 64, int heads = 4) {
    Config c;
    c.text = text;
    c.preset = p;
    c.d_model = d_model;
    c.heads = heads;
    const Trace t = compute_trace(c);
    return t.get("weights", kPresetHead)->matrix();
}

int argmax_row(const Mat& A, int i) {
    Eigen::Index j;
    A.row(i).maxCoeff(&j);
    return int(j);
}

TEST(Presets, PreviousTokenPeaksAtPMinus1) {
    for (int d_model : {64, 128}) {
        const Mat A = head0_weights(HeadPreset::PreviousToken,
                                    "the quick brown fox jumps over the lazy dog again and again", d_model);
        for (int p = 1; p < A.rows(); ++p) {
            EXPECT_EQ(argmax_row(A, p), p - 1) << "row " << p << " d_model " << d_model;
            EXPECT_GT(A(p, p - 1), 0.5f) << "row " << p;
        }
    }
}

TEST(Presets, FirstTokenPeaksAtColumn0) {
    const Mat A = head0_weights(HeadPreset::FirstToken);
    for (int p = 0; p < A.rows(); ++p) {
        EXPECT_EQ(argmax_row(A, p), 0) << "row " << p;
        EXPECT_GT(A(p, 0), 0.5f) << "row " << p;
    }
}

TEST(Presets, SameTokenPeaksOnDiagonalAndRepeats) {
    const Mat A = head0_weights(HeadPreset::SameToken);
    for (int p = 0; p < A.rows(); ++p) EXPECT_EQ(argmax_row(A, p), p) << "row " << p;
    // A repeated word attends to both of its occurrences.
    const Mat B = head0_weights(HeadPreset::SameToken, "the cat saw the dog");
    EXPECT_GT(B(3, 0), 0.2f);
    EXPECT_GT(B(0, 3), 0.2f);
}

TEST(Presets, AdjectiveNounLinksNounsToTheirAdjectives) {
    // a fluffy blue creature roamed the verdant forest
    // 0 1      2    3        4      5   6       7
    const Mat A = head0_weights(HeadPreset::AdjectiveNoun);
    EXPECT_GT(A(3, 1) + A(3, 2), 0.8f) << "creature -> fluffy, blue";
    EXPECT_GT(A(3, 1), 0.1f) << "creature also sees fluffy";
    EXPECT_EQ(argmax_row(A, 7), 6) << "forest -> verdant";
    EXPECT_GT(A(7, 6), 0.8f);
    EXPECT_EQ(word_class("Fluffy"), WordClass::Adjective);
    EXPECT_EQ(word_class("forest"), WordClass::Noun);
    EXPECT_EQ(word_class("roamed"), WordClass::Other);
}

TEST(Presets, OtherHeadsStayRandomAndPresetNeedsRoom) {
    Config c;
    c.preset = HeadPreset::PreviousToken;
    const Trace with = compute_trace(c);
    c.preset = HeadPreset::None;
    const Trace without = compute_trace(c);
    EXPECT_TRUE(with.get("W_Q", 1)->matrix() == without.get("W_Q", 1)->matrix());
    EXPECT_FALSE(with.get("W_Q", 0)->matrix() == without.get("W_Q", 0)->matrix());
    EXPECT_NE(with.get("W_Q", 0)->explanation.find("previous token"), std::string::npos);
    EXPECT_NE(with.get("embedding")->explanation.find("reserves"), std::string::npos);

    c.preset = HeadPreset::SameToken;
    c.d_model = 8;
    c.heads = 4;
    EXPECT_THROW(compute_trace(c), ConfigError);
}

}  // namespace
}  // namespace attnviz

// The head classifier on designed attention patterns over the seeds' sentence: each pattern gets its
// own label and score, an even spread is "broad", induction is n/a without a repeat, adjective→noun
// is n/a without word classes, and the scores are the training scores (pattern_scores).
#include "core/head_types.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/tasks.hpp"

namespace attnviz {
namespace {

using WC = WordClass;

// "a fluffy blue creature roamed the verdant forest . a fluffy blue creature": 13 tokens, the last
// four repeat the first four.
const std::vector<std::string> kSeedTokens = {"a",      "fluffy",  "blue",    "creature", "roamed",
                                              "the",    "verdant", "forest",  ".",        "a",
                                              "fluffy", "blue",    "creature"};
const std::vector<WC> kSeedClasses = {WC::Other,     WC::Adjective, WC::Adjective, WC::Noun,  WC::Other,
                                      WC::Other,     WC::Adjective, WC::Noun,      WC::Other, WC::Other,
                                      WC::Adjective, WC::Adjective, WC::Noun};

Mat uniform_causal_pattern(int n) {
    Mat P = Mat::Zero(n, n);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j <= i; ++j) P(i, j) = 1.0f / float(i + 1);
    return P;
}

double label_score(const HeadLabel& l, HeadType t) {
    return l.scores[std::size_t(t)].score;
}

TEST(HeadTypes, PreviousTokenHead) {
    const int n = int(kSeedTokens.size());
    Mat P = Mat::Zero(n, n);
    P(0, 0) = 1;
    for (int t = 1; t < n; ++t) P(t, t - 1) = 1;
    const HeadLabel l = classify_head(P, ids_of_tokens(kSeedTokens), kSeedClasses);
    EXPECT_EQ(l.type, HeadType::PreviousToken) << head_type_name(l.type);
    EXPECT_DOUBLE_EQ(l.score, 1.0);
    EXPECT_STREQ(head_type_short(l.type), "prev");
    // Adjective→noun on the same pattern: "creature" gives its weight to "blue" (one of its two
    // adjectives) = 1, "forest" to "verdant" = 1, the second "creature" to "blue" = 1.
    EXPECT_DOUBLE_EQ(label_score(l, HeadType::AdjectiveNoun), 1.0);
    EXPECT_DOUBLE_EQ(label_score(l, HeadType::Self), 0.0);
}

TEST(HeadTypes, InductionHeadOnARepeat) {
    const int n = int(kSeedTokens.size());
    const std::vector<int> ids = ids_of_tokens(kSeedTokens);
    Mat P = Mat::Zero(n, n);
    for (int t = 0; t < n; ++t) P(t, t) = 1;  // no repeat yet: itself
    // The repeat: "a" (9) → "fluffy" (1), "fluffy" (10) → "blue" (2), "blue" (11) → "creature" (3),
    // "creature" (12) → "roamed" (4): the token after the earlier occurrence.
    for (int t = 9; t < n; ++t) {
        P(t, t) = 0;
        P(t, t - 8) = 1;
    }
    const HeadLabel l = classify_head(P, ids, kSeedClasses);
    EXPECT_EQ(l.type, HeadType::Induction) << head_type_name(l.type);
    EXPECT_DOUBLE_EQ(l.score, 1.0);
    EXPECT_TRUE(l.scores[std::size_t(HeadType::Induction)].defined);
    // Self: rows 1..8 on the diagonal, 9..12 not: 8 / 12.
    EXPECT_NEAR(label_score(l, HeadType::Self), 8.0 / 12.0, 1e-12);
    // The same numbers as the training scores.
    int counts[4];
    const HeadScores h = pattern_scores(P, ids, counts);
    EXPECT_EQ(counts[1], 4);
    EXPECT_DOUBLE_EQ(label_score(l, HeadType::Induction), h.induction);
    EXPECT_DOUBLE_EQ(label_score(l, HeadType::PreviousToken), h.previous_token);
    EXPECT_DOUBLE_EQ(label_score(l, HeadType::FirstToken), h.first_token);
}

TEST(HeadTypes, InductionIsUndefinedWithoutARepeat) {
    const std::vector<std::string> tokens(kSeedTokens.begin(), kSeedTokens.begin() + 8);  // no token twice
    const HeadLabel l = classify_head(uniform_causal_pattern(8), ids_of_tokens(tokens), {});
    EXPECT_FALSE(l.scores[std::size_t(HeadType::Induction)].defined);
    EXPECT_FALSE(l.scores[std::size_t(HeadType::AdjectiveNoun)].defined);  // no word classes
}

TEST(HeadTypes, AdjectiveNounHeadNeedsTheGrammar) {
    const int n = int(kSeedTokens.size());
    Mat P = uniform_causal_pattern(n);
    // Each noun splits its attention over its own adjectives: creature (3) → fluffy, blue; forest (7)
    // → verdant; creature (12) → fluffy (10), blue (11).
    auto only = [&](int t, std::vector<int> js) {
        P.row(t).setZero();
        for (int j : js) P(t, j) = 1.0f / float(js.size());
    };
    only(3, {1, 2});
    only(7, {6});
    only(12, {10, 11});
    const std::vector<int> ids = ids_of_tokens(kSeedTokens);
    const HeadLabel l = classify_head(P, ids, kSeedClasses);
    EXPECT_EQ(l.type, HeadType::AdjectiveNoun) << head_type_name(l.type);
    EXPECT_NEAR(l.score, 1.0, 1e-6);
    int nouns = 0;
    EXPECT_NEAR(adjective_noun_score(P, kSeedClasses, &nouns), 1.0, 1e-6);
    EXPECT_EQ(nouns, 3);
    // Half the weight on the adjectives: 0.5.
    P.row(3) << 0.25f, 0.25f, 0.25f, 0.25f, 0, 0, 0, 0, 0, 0, 0, 0, 0;
    P.row(7).setZero();
    P(7, 6) = 0.5f;
    P(7, 0) = 0.5f;
    P.row(12).setZero();
    P(12, 10) = 0.25f;
    P(12, 11) = 0.25f;
    P(12, 12) = 0.5f;
    EXPECT_NEAR(adjective_noun_score(P, kSeedClasses, &nouns), 0.5, 1e-6);
    // Without a grammar the same head has no adjective→noun score.
    const HeadLabel none = classify_head(P, ids, {});
    EXPECT_FALSE(none.scores[std::size_t(HeadType::AdjectiveNoun)].defined);
    EXPECT_NE(none.type, HeadType::AdjectiveNoun);
}

TEST(HeadTypes, SinkSelfAndBroad) {
    const int n = int(kSeedTokens.size());
    const std::vector<int> ids = ids_of_tokens(kSeedTokens);
    Mat sink = Mat::Zero(n, n);
    sink.col(0).setOnes();
    const HeadLabel s = classify_head(sink, ids, kSeedClasses);
    EXPECT_EQ(s.type, HeadType::FirstToken) << head_type_name(s.type);
    EXPECT_DOUBLE_EQ(s.score, 1.0);

    const HeadLabel self = classify_head(Mat(Mat::Identity(n, n)), ids, kSeedClasses);
    EXPECT_EQ(self.type, HeadType::Self) << head_type_name(self.type);
    EXPECT_DOUBLE_EQ(self.score, 1.0);

    // An even spread beats no type by its lift: broad, whatever its (small-text) first-token score.
    const HeadLabel broad = classify_head(uniform_causal_pattern(n), ids, kSeedClasses);
    EXPECT_EQ(broad.type, HeadType::Broad) << head_type_name(broad.type);
    for (int k = 0; k < kScoredHeadTypes; ++k)
        EXPECT_NEAR(broad.scores[std::size_t(k)].score, broad.scores[std::size_t(k)].uniform, 1e-6) << k;
    // On three tokens an even spread's first-token score is (1 + 1/2 + 1/3) / 3 = 0.61 > the threshold;
    // the lift keeps it broad.
    const HeadLabel tiny = classify_head(uniform_causal_pattern(3), {0, 1, 2}, {});
    EXPECT_NEAR(tiny.scores[std::size_t(HeadType::FirstToken)].score, (1 + 0.5 + 1.0 / 3) / 3, 1e-6);
    EXPECT_EQ(tiny.type, HeadType::Broad);

    // 20 % on the previous token, 80 % spread: prev = 0.2 + 0.8 · uniform's (0.18) = 0.35, below the
    // 0.4 threshold.
    Mat mix = uniform_causal_pattern(n) * 0.8f;
    mix(0, 0) += 0.2f;
    for (int t = 1; t < n; ++t) mix(t, t - 1) += 0.2f;
    const HeadLabel m = classify_head(mix, ids, {});  // (no grammar: t − 1 is often an adjective)
    EXPECT_NEAR(label_score(m, HeadType::PreviousToken), 0.2 + 0.8 * m.scores[0].uniform, 1e-6);
    EXPECT_LT(label_score(m, HeadType::PreviousToken), 0.4);
    EXPECT_EQ(m.type, HeadType::Broad) << head_type_name(m.type) << " " << m.score;
    EXPECT_THROW(classify_head(mix, {1, 2}, {}), Error);
}

TEST(HeadTypes, TokensToIds) {
    EXPECT_EQ(ids_of_tokens({"a", "b", "a", "c", "b"}), (std::vector<int>{0, 1, 0, 2, 1}));
}

// "Mia saw a red fox . she ran": the pronoun puts its weight on "Mia" -- labelled a pronoun head (on
// this text the same head once read as "induct", the classifier having no pronoun type); a pronoun
// with no noun or name before it defines nothing.
TEST(HeadTypes, PronounHead) {
    const std::vector<std::string> tokens = {"Mia", "saw", "a", "red", "fox", ".", "she", "ran"};
    const std::vector<WC> classes = {WC::Name, WC::Other, WC::Other,   WC::Adjective,
                                     WC::Noun, WC::Other, WC::Pronoun, WC::Other};
    const int n = int(tokens.size());
    Mat P = uniform_causal_pattern(n);
    P.row(6).setZero();
    P(6, 0) = 0.9f;  // she → Mia
    P(6, 6) = 0.1f;
    const HeadLabel l = classify_head(P, ids_of_tokens(tokens), classes);
    int count = 0;
    EXPECT_NEAR(pronoun_antecedent_score(P, classes, &count), 0.9, 1e-6);
    EXPECT_EQ(count, 1);
    EXPECT_EQ(l.type, HeadType::PronounAntecedent) << head_type_name(l.type);
    EXPECT_NEAR(l.score, 0.9, 1e-6);
    // The even spread gives "she" 2/7 on Mia and fox.
    EXPECT_NEAR(l.scores[std::size_t(HeadType::PronounAntecedent)].uniform, 2.0 / 7.0, 1e-6);
    const std::vector<WC> first = {WC::Pronoun, WC::Other, WC::Name};
    EXPECT_EQ(pronoun_antecedent_score(uniform_causal_pattern(3), first, &count), 0.0);
    EXPECT_EQ(count, 0);
    EXPECT_FALSE(classify_head(uniform_causal_pattern(3), {0, 1, 2}, first)
                     .scores[std::size_t(HeadType::PronounAntecedent)]
                     .defined);
}

// BERT's [SEP] heads (Clark et al. 2019): every token's weight parked on the separators. Scored only
// where the input has separators; an even spread scores (#separators / n) and is not labelled.
TEST(HeadTypes, SeparatorHeadsParkOnSep) {
    const int n = 7;  // [CLS] a b [SEP] c d [SEP]
    const std::vector<bool> sep = {false, false, false, true, false, false, true};
    Mat P = Mat::Zero(n, n);  // bidirectional: each row 0.45 / 0.45 on the two [SEP], 0.1 on itself
    for (int t = 0; t < n; ++t) {
        P(t, 3) += 0.45f;
        P(t, 6) += 0.45f;
        P(t, t) += 0.1f;
    }
    const std::vector<int> ids = {0, 1, 2, 3, 4, 5, 3};
    const HeadLabel l = classify_head(P, ids, {}, {}, sep);
    EXPECT_EQ(l.type, HeadType::Separator) << head_type_name(l.type);
    int rows = 0;
    // rows 3 and 6 (the separators themselves) keep their own 0.1 on a separator too
    EXPECT_NEAR(separator_score(P, sep, &rows), (5 * 0.9 + 2 * 1.0) / 7.0, 1e-6);
    EXPECT_EQ(rows, n);
    EXPECT_NEAR(l.scores[std::size_t(HeadType::Separator)].uniform, 2.0 / 7.0, 1e-6);
    EXPECT_STREQ(head_type_short(HeadType::Separator), "sep");
    // Without separators the type is undefined, and an even spread is never a [SEP] head.
    EXPECT_FALSE(classify_head(P, ids, {}).scores[std::size_t(HeadType::Separator)].defined);
    const Mat U = Mat::Constant(n, n, 1.0f / n);
    EXPECT_NE(classify_head(U, ids, {}, {}, sep).type, HeadType::Separator);
    EXPECT_THROW(classify_head(P, ids, {}, {}, {true, false}), Error);
}

}  // namespace
}  // namespace attnviz

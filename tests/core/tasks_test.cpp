// Tasks and head scores: the induction generator's structure, the scores on hand-made patterns and
// determinism. (The induction phase change at its seed is in tests/release/training_runs_test.cpp.)
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/tasks.hpp"

namespace attnviz {
namespace {

TEST(Tasks, InductionBatchRepeatsWithAPeriodDrawnPerSequence) {
    InductionTask t;
    const TaskBatch tb = make_induction_batch(t, 64, 9);
    ASSERT_EQ(tb.batch.inputs.size(), std::size_t(64 * 48));
    std::vector<bool> seen(24, false);
    for (int b = 0; b < 64; ++b) {
        const int* in = tb.batch.inputs.data() + b * 48;
        const int* tg = tb.batch.targets.data() + b * 48;
        const int* kind = tb.kind.data() + b * 48;
        int p = 0;  // the period: first position whose kind is repeat, plus one
        while (kind[p] != 2) ++p;
        p += 1;
        ASSERT_GE(p, 6) << "sequence " << b;
        ASSERT_LE(p, 23) << "sequence " << b;
        seen[std::size_t(p)] = true;
        for (int i = 0; i + 1 < 48; ++i) ASSERT_EQ(tg[i], in[i + 1]) << "sequence " << b << " position " << i;
        for (int i = p; i < 48; ++i) ASSERT_EQ(in[i], in[i - p]) << "sequence " << b << " position " << i;
        for (int i = 0; i < p; ++i)
            for (int j = 0; j < i; ++j)
                ASSERT_NE(in[i], in[j]) << "sequence " << b << " first copy " << j << ", " << i;
    }
    int periods = 0;
    for (bool s : seen) periods += s ? 1 : 0;
    EXPECT_GE(periods, 10);  // the period varies
    const TaskBatch again = make_induction_batch(t, 64, 9);
    EXPECT_EQ(again.batch.inputs, tb.batch.inputs);
}

TEST(Tasks, InductionRefusesAContextTooShortForTwoCopies) {
    InductionTask t;
    t.context = 40;
    EXPECT_THROW(validate_induction_task(t), ConfigError);
    t.context = 45;
    EXPECT_NO_THROW(validate_induction_task(t));
}

TEST(Tasks, PatternScoresOnHandMadePatterns) {
    const std::vector<int> ids{5, 6, 7, 5, 6, 7};
    MatT<float> prev = MatT<float>::Zero(6, 6), induction = MatT<float>::Zero(6, 6);
    prev(0, 0) = 1;
    induction(0, 0) = induction(1, 0) = induction(2, 0) = 1;
    for (int t = 1; t < 6; ++t) prev(t, t - 1) = 1;
    for (int t = 3; t < 6; ++t) induction(t, t - 2) = 1;  // token after the previous occurrence
    int c[4];
    const HeadScores p = pattern_scores(prev, ids, c);
    EXPECT_DOUBLE_EQ(p.previous_token, 1.0);
    EXPECT_DOUBLE_EQ(p.induction, 0.0);
    EXPECT_DOUBLE_EQ(p.first_token, 2.0 / 6.0);  // rows 0 and 1
    const HeadScores i = pattern_scores(induction, ids, c);
    EXPECT_DOUBLE_EQ(i.induction, 1.0);
    EXPECT_EQ(c[1], 3);
    EXPECT_DOUBLE_EQ(i.same_token, 0.0);
    EXPECT_DOUBLE_EQ(i.first_token, 0.5);
}

TEST(Tasks, SplitLossAveragesEachKind) {
    const SplitLoss s = split_loss({1, 2, 3, 5}, {1, 1, 2, 0});
    EXPECT_DOUBLE_EQ(s.first, 1.5);
    EXPECT_DOUBLE_EQ(s.repeat, 3.0);
}

TEST(Tasks, DivergingRunStopsWithAClearError) {
    TrainConfig c;
    c.n_layer = 1;
    c.n_head = 2;
    c.d_model = 16;
    c.context = 48;
    InductionTask t;
    TrainOptions o;
    o.steps = 30;
    o.warmup = 0;
    o.clip = 0;
    o.adam.lr = 1e30;
    try {
        train_induction(c, t, o);
        FAIL() << "expected the run to diverge";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("diverged"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace attnviz

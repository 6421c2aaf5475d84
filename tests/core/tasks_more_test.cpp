// The tasks beyond induction: copy / reverse / sort sequences and their answers, modular addition's
// disjoint held-out split, character-level text (Chinese included) round-tripping, and one clear line
// for a binary or invalid file. (Copy and reverse learned in 400 steps:
// tests/release/training_runs_test.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "core/tasks.hpp"

namespace attnviz {
namespace {

TEST(SequenceTasks, AnswersAreCopiedReversedSorted) {
    for (SequenceOp op : {SequenceOp::Copy, SequenceOp::Reverse, SequenceOp::Sort}) {
        SequenceTask t;
        t.op = op;
        t.symbols = 10;
        t.length = 6;
        const TaskBatch tb = make_sequence_batch(t, 8, 5);
        ASSERT_EQ(tb.batch.n, 12);
        for (int b = 0; b < 8; ++b) {
            const int* in = tb.batch.inputs.data() + b * 12;
            const int* tg = tb.batch.targets.data() + b * 12;
            const int* kind = tb.kind.data() + b * 12;
            std::vector<int> question(in, in + 6), answer;
            EXPECT_EQ(in[6], 10) << "sequence " << b << ": separator";
            for (int i = 0; i < 6; ++i) EXPECT_EQ(tg[i], -1) << "sequence " << b << " position " << i;
            for (int i = 6; i < 12; ++i) {
                EXPECT_EQ(kind[i], 2);
                answer.push_back(tg[i]);
                if (i + 1 < 12) {
                    EXPECT_EQ(in[i + 1], tg[i]);
                }
            }
            std::vector<int> expect = question;
            if (op == SequenceOp::Reverse) std::reverse(expect.begin(), expect.end());
            if (op == SequenceOp::Sort) std::sort(expect.begin(), expect.end());
            EXPECT_EQ(answer, expect) << "sequence " << b;
        }
    }
    SequenceTask bad;
    bad.length = 0;
    EXPECT_THROW(sequence_task(bad), ConfigError);
}

TEST(ModAdd, HeldOutSplitIsDisjointAndCoversEveryPair) {
    ModAddTask t;
    t.modulus = 13;
    t.train_fraction = 0.3;
    const ModAddSplit s = modadd_split(t);
    EXPECT_EQ(s.train.size() + s.heldout.size(), 169u);
    EXPECT_EQ(s.train.size(), std::size_t(0.3 * 169));
    std::set<std::pair<int, int>> train(s.train.begin(), s.train.end()),
        held(s.heldout.begin(), s.heldout.end());
    EXPECT_EQ(train.size(), s.train.size());
    for (const auto& p : held) EXPECT_EQ(train.count(p), 0u) << p.first << " + " << p.second;
    EXPECT_EQ(train.size() + held.size(), 169u);
    // Batches draw from their side only, and the answer is (a + b) mod p at '='.
    const Task task = modadd_task(t);
    EXPECT_EQ(task.vocab_size, 15);
    const TaskBatch tb = task.heldout_batch(64, 3);
    for (int b = 0; b < 64; ++b) {
        const int* in = tb.batch.inputs.data() + b * 4;
        EXPECT_EQ(held.count({in[0], in[2]}), 1u) << "held-out sequence " << b;
        EXPECT_EQ(in[1], 13);
        EXPECT_EQ(in[3], 14);
        EXPECT_EQ(tb.batch.targets[std::size_t(b) * 4 + 3], (in[0] + in[2]) % 13);
    }
    const TaskBatch tr = task.train_batch(64, 3);
    for (int b = 0; b < 64; ++b)
        EXPECT_EQ(train.count({tr.batch.inputs[std::size_t(b) * 4], tr.batch.inputs[std::size_t(b) * 4 + 2]}),
                  1u);
    t.train_fraction = 1.0;
    EXPECT_THROW(modadd_split(t), ConfigError);
}

TEST(TextTask, CharactersRoundTripChineseIncluded) {
    std::string text;
    for (int i = 0; i < 40; ++i) text += "注意力就是你所需要的。Attention is all you need! ";
    const TextCorpus c = text_corpus(text, "zh.txt", 16);
    EXPECT_EQ(decode_text(c, c.ids), text);
    EXPECT_TRUE(std::find(c.vocab.begin(), c.vocab.end(), "注") != c.vocab.end());
    const Task task = text_task(std::make_shared<const TextCorpus>(c), 16);
    EXPECT_EQ(task.vocab_size, int(c.vocab.size()));
    const TaskBatch tb = task.heldout_batch(4, 1);
    std::vector<int> window(tb.batch.inputs.begin(), tb.batch.inputs.begin() + 16);
    EXPECT_NE(text.find(decode_text(c, window)), std::string::npos);
}

TEST(TextTask, BinaryInvalidOrShortTextIsOneLineNamingTheFile) {
    std::string binary(4000, 'a');
    binary[100] = '\0';
    for (const std::string& bad : {binary, std::string(4000, 'a') + "\xff", std::string("short")}) {
        try {
            text_corpus(bad, "data.bin", 16);
            FAIL() << "expected an error";
        } catch (const Error& e) {
            const std::string m = e.what();
            EXPECT_EQ(m.rfind("data.bin: ", 0), 0u) << m;
            EXPECT_EQ(m.find('\n'), std::string::npos) << m;
        }
    }
}

}  // namespace
}  // namespace attnviz

// The successor task (core/task_successor.cpp): targets are the inputs shifted up the vocabulary,
// every position scored, and a one-layer model learns it to a low loss within a few hundred steps.
#include <gtest/gtest.h>

#include "core/task_registry.hpp"

namespace attnviz {
namespace {

TEST(SuccessorTask, TargetsAreTheNextTokenUp) {
    TaskRequest r;
    r.vocab_size = 10;
    r.context = 12;
    r.values["shift"] = 3;
    const Task task = make_task(*find_task("successor"), r);
    EXPECT_EQ(task.vocab_size, 10);
    EXPECT_EQ(task.context, 12);
    const TaskBatch b = task.train_batch(4, 2);
    ASSERT_EQ(b.batch.inputs.size(), 48u);
    for (std::size_t k = 0; k < b.batch.inputs.size(); ++k) {
        EXPECT_EQ(b.batch.targets[k], (b.batch.inputs[k] + 3) % 10) << "position " << k;
        EXPECT_EQ(b.kind[k], 1) << "position " << k;
    }
    EXPECT_NE(task.heldout_batch(4, 99).batch.inputs, b.batch.inputs);  // other seeds, other data
}

TEST(SuccessorTask, TrainsToLowLossQuickly) {
    const TaskInfo& info = *find_task("successor");
    TrainConfig c;
    TrainOptions o;
    info.lab_preset(c, o);  // one layer, 16 tokens, context 16, lr 1e-2
    TaskRequest r;
    r.vocab_size = c.vocab_size;
    r.context = c.context;
    const Task task = make_task(info, r);
    o.steps = 200;
    o.batch = 16;
    o.eval_every = 200;
    o.heldout = 8;
    o.probe = 2;
    const TrainResult result = train_task(c, task, o);
    const double loss = result.evals.back().heldout_loss;
    EXPECT_LT(loss, 0.1) << "held-out loss after 200 steps (chance: ln 16 = 2.77)";
}

}  // namespace
}  // namespace attnviz

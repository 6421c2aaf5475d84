// app/training_session: the timeline keeps a bounded, evenly spread set of frames; a run starts,
// pauses, steps once, resumes, finishes and resets; two sessions with the same seed give identical
// losses however they were paused; a setup the trainer refuses is one line.
#include "app/training_session.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <thread>

#include "core/error.hpp"
#include "io/bpe_train.hpp"
#include "io/tokenizer.hpp"

namespace attnviz::app {
namespace {

// A tiny induction run: 1 layer × 2 heads, d_model 16, 16-token sequences (fast under sanitizers).
TrainingSetup tiny_setup(long steps, std::uint64_t seed) {
    TrainingSetup s;
    s.preset = "tiny";
    s.model.n_layer = 1;
    s.model.n_head = 2;
    s.model.d_model = 16;
    s.model.context = 16;
    s.model.vocab_size = 16;
    InductionTask t;
    t.vocab_size = 16;
    t.context = 16;
    t.min_period = 3;
    t.max_period = 7;
    s.task = induction_task(t);
    s.options.steps = steps;
    s.options.batch = 4;
    s.options.heldout = 4;
    s.options.probe = 2;
    s.options.eval_every = 5;
    s.options.seed = seed;
    s.options.threads = 2;
    return s;
}

constexpr double kTimeout = 120;  // only to fail a broken run, never to pass

std::shared_ptr<const TimelineFrame> frame_at(long step) {
    auto f = std::make_shared<TimelineFrame>();
    f->step = step;
    return f;
}

TEST(Timeline, KeepsABoundedEvenlySpreadSetOfFrames) {
    Timeline t(8);
    for (long i = 0; i < 100; ++i) t.offer(frame_at(i * 10));
    ASSERT_LE(t.frames().size(), 8u);
    ASSERT_GE(t.frames().size(), 4u);
    EXPECT_EQ(t.frames().front()->step, 0);
    const long gap = t.frames()[1]->step - t.frames()[0]->step;
    EXPECT_EQ(gap, long(t.stride()) * 10);
    for (std::size_t i = 1; i < t.frames().size(); ++i)
        EXPECT_EQ(t.frames()[i]->step - t.frames()[i - 1]->step, gap) << "frame " << i;
    // The newest kept frame is within one stride of the newest offered.
    EXPECT_GE(t.frames().back()->step, 990 - long(t.stride()) * 10);
}

TEST(Timeline, CapacityFollowsTheMemoryBudget) {
    const std::size_t frame = 2 * 4 * 48 * 48 * 4;  // 2 layers × 4 heads × 48² floats
    const std::size_t cap = timeline_capacity(kTimelineBytes, frame);
    EXPECT_LE(cap * frame, kTimelineBytes);
    EXPECT_GE(cap, 100u);
    EXPECT_EQ(timeline_capacity(100, frame), 2u);
    EXPECT_EQ(timeline_capacity(std::size_t(1) << 40, 16), 512u);
}

TEST(ThinnedSeries, HalvesWhenFull) {
    ThinnedSeries s;
    s.max_points = 16;
    for (int i = 0; i < 1000; ++i) s.offer(i, 2.0 * i);
    ASSERT_LE(s.x.size(), 16u);
    EXPECT_EQ(s.x.front(), 0.0);
    for (std::size_t i = 1; i < s.x.size(); ++i) {
        EXPECT_EQ(s.x[i] - s.x[i - 1], double(s.stride)) << "point " << i;
        EXPECT_EQ(s.y[i], 2.0 * s.x[i]) << "point " << i;
    }
}

TEST(TrainingSession, StartPauseStepResumeFinishReset) {
    TrainingSession session;
    EXPECT_EQ(session.snapshot()->status, TrainingStatus::Idle);
    session.start(tiny_setup(40, 3), /*paused=*/true);
    ASSERT_TRUE(session.wait_for([](const TrainingSnapshot& s) { return s.status == TrainingStatus::Paused; },
                                 kTimeout));
    EXPECT_EQ(session.snapshot()->step, 0);
    ASSERT_EQ(session.snapshot()->evals.size(), 1u);  // the untrained model, at step 0
    ASSERT_TRUE(session.snapshot()->live);
    EXPECT_EQ(session.snapshot()->live->attention.size(), 1u);
    EXPECT_EQ(session.snapshot()->live->attention[0].size(), 2u);
    EXPECT_EQ(session.snapshot()->live->attention[0][0].rows(), 16);

    session.step_once();
    ASSERT_TRUE(session.wait_for([](const TrainingSnapshot& s) { return s.step == 1; }, kTimeout));
    const auto one = session.snapshot();
    EXPECT_EQ(one->status, TrainingStatus::Paused);
    EXPECT_EQ(one->live->step, 1);  // paused between evaluations: the live frame is the model now
    ASSERT_TRUE(one->params);

    session.resume();
    ASSERT_TRUE(session.wait_for([](const TrainingSnapshot& s) { return s.status == TrainingStatus::Done; },
                                 kTimeout));
    const auto done = session.snapshot();
    EXPECT_EQ(done->step, 40);
    EXPECT_EQ(done->train_loss.x.size(), 40u);
    EXPECT_EQ(done->evals.size(), 9u);  // steps 0, 5, ..., 40
    EXPECT_EQ(done->evals.back().step, 40);
    EXPECT_EQ(done->timeline.size(), 9u);
    EXPECT_GT(done->tokens_per_second, 0.0);
    EXPECT_GT(done->lr, 0.0);

    session.reset();
    ASSERT_TRUE(session.wait_for(
        [](const TrainingSnapshot& s) { return s.status == TrainingStatus::Idle && s.evals.empty(); },
        kTimeout));
}

TEST(TrainingSession, SameSeedSameLossesHoweverPaused) {
    TrainingSession a, b;
    a.start(tiny_setup(30, 7));
    b.start(tiny_setup(30, 7), /*paused=*/true);
    for (int i = 0; i < 3; ++i) b.step_once();
    ASSERT_TRUE(b.wait_for([](const TrainingSnapshot& s) { return s.step == 3; }, kTimeout));
    b.resume();
    b.pause();
    b.resume();
    auto done = [](const TrainingSnapshot& s) { return s.status == TrainingStatus::Done; };
    ASSERT_TRUE(a.wait_for(done, kTimeout));
    ASSERT_TRUE(b.wait_for(done, kTimeout));
    const auto sa = a.snapshot(), sb = b.snapshot();
    ASSERT_EQ(sa->train_loss.y.size(), 30u);
    EXPECT_EQ(sa->train_loss.y, sb->train_loss.y);
    ASSERT_EQ(sa->evals.size(), sb->evals.size());
    for (std::size_t i = 0; i < sa->evals.size(); ++i)
        EXPECT_EQ(sa->evals[i].heldout_loss, sb->evals[i].heldout_loss) << "eval " << i;
    EXPECT_EQ(sa->params->data, sb->params->data);

    // Another seed trains differently.
    TrainingSession c;
    c.start(tiny_setup(30, 8));
    ASSERT_TRUE(c.wait_for(done, kTimeout));
    EXPECT_NE(c.snapshot()->train_loss.y, sa->train_loss.y);
}

TEST(TrainingSession, ContinuesFromLoadedWeights) {
    TrainingSession a;
    a.start(tiny_setup(20, 4));
    auto done = [](const TrainingSnapshot& s) { return s.status == TrainingStatus::Done; };
    ASSERT_TRUE(a.wait_for(done, kTimeout));
    const auto trained = a.snapshot();
    TrainingSetup more = tiny_setup(20, 5);
    more.initial = trained->params;
    TrainingSession b;
    b.start(more, /*paused=*/true);
    ASSERT_TRUE(
        b.wait_for([](const TrainingSnapshot& s) { return s.status == TrainingStatus::Paused; }, kTimeout));
    EXPECT_EQ(b.snapshot()->params->data, trained->params->data);  // step 0 is the loaded model
    // Weights of another size are refused in one line.
    TrainingSetup wrong = tiny_setup(20, 5);
    wrong.model.d_model = 32;
    wrong.initial = trained->params;
    TrainingSession c;
    c.start(wrong);
    ASSERT_TRUE(
        c.wait_for([](const TrainingSnapshot& s) { return s.status == TrainingStatus::Failed; }, kTimeout));
    EXPECT_NE(c.snapshot()->error.find("do not match"), std::string::npos) << c.snapshot()->error;
}

TEST(TrainingSession, ARefusedSetupIsOneLine) {
    TrainingSession session;
    TrainingSetup s = tiny_setup(10, 1);
    s.model.n_head = 3;  // does not divide d_model 16
    session.start(s);
    ASSERT_TRUE(session.wait_for([](const TrainingSnapshot& x) { return x.status == TrainingStatus::Failed; },
                                 kTimeout));
    const std::string error = session.snapshot()->error;
    EXPECT_FALSE(error.empty());
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    // A good setup afterwards runs.
    session.start(tiny_setup(10, 1));
    ASSERT_TRUE(session.wait_for([](const TrainingSnapshot& x) { return x.status == TrainingStatus::Done; },
                                 kTimeout));
}

TEST(TrainingSession, EveryPresetBuildsAModelThatFitsItsTaskAndTrains) {
    const std::vector<std::string> names = training_preset_names();
    for (const char* want : {"induction", "copy", "reverse", "sort", "modadd", "text"})
        EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
    for (const std::string& name : names) {
        EXPECT_STRNE(training_preset_label(name), "custom") << name;
        const TrainingSetup s = training_preset(name);
        EXPECT_EQ(s.preset, name);
        if (name == "text") continue;  // its task comes from the learner's file when Train is pressed
        EXPECT_EQ(s.model.vocab_size, s.task.vocab_size) << name;
        EXPECT_GE(s.model.context, s.task.context) << name;
        TrainOptions o = s.options;
        o.batch = std::min(o.batch, 8);  // one step, small: the preset itself is measured in tests/release
        o.heldout = 4;
        o.probe = 2;
        Trainer trainer(s.model, s.task, o);
        const double loss = trainer.step();
        EXPECT_TRUE(std::isfinite(loss)) << name;
        EXPECT_NEAR(loss, std::log(double(s.task.vocab_size)), 1.5) << name << ": the untrained loss";
    }
    EXPECT_THROW(training_preset("nope"), ConfigError);
}

}  // namespace
}  // namespace attnviz::app

namespace attnviz::app {
namespace {

// A task made on the session's thread (the lab's BPE text): the model's vocabulary follows it, its
// files reach the snapshot (Save checkpoint writes them), and a task that cannot be made fails the run
// with its one line.
TEST(TrainingSession, TaskMadeWhenTheRunStarts) {
    TrainingSession session;
    TrainingSetup s = tiny_setup(2, 1);
    s.model.vocab_size = 999;  // wrong on purpose: the made task's vocabulary replaces it
    s.make_task = [](const std::atomic<bool>&) {
        InductionTask t;
        t.vocab_size = 12;
        t.context = 16;
        t.min_period = 3;
        t.max_period = 7;
        Task task = induction_task(t);
        task.files = {{"vocab.json", "{}"}};
        return task;
    };
    session.start(s);
    ASSERT_TRUE(session.wait_for([](const TrainingSnapshot& x) { return x.status == TrainingStatus::Done; },
                                 kTimeout));
    EXPECT_EQ(session.snapshot()->config.vocab_size, 12);
    ASSERT_EQ(session.snapshot()->task_files.size(), 1u);
    EXPECT_EQ(session.snapshot()->task_files[0].first, "vocab.json");

    s.make_task = [](const std::atomic<bool>&) -> Task {
        throw Error("book.txt: not a text file (it contains NUL bytes)");
    };
    session.start(s);
    ASSERT_TRUE(session.wait_for([](const TrainingSnapshot& x) { return x.status == TrainingStatus::Failed; },
                                 kTimeout));
    EXPECT_EQ(session.snapshot()->error, "book.txt: not a text file (it contains NUL bytes)");
}

// A task that takes long to make (a BPE of a long text) says so while it runs, and Reset, Train again
// and quitting stop it instead of waiting for it.
TEST(TrainingSession, ATaskBeingMadeSaysSoAndStopsWhenNoLongerWanted) {
    auto slow = [](const std::atomic<bool>& stop) -> Task {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (!stop.load() && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        throw BpeCancelled();
    };
    TrainingSetup s = tiny_setup(2, 1);
    s.make_task = slow;
    s.preparing = "learning 512 BPE tokens from book.txt…";
    {
        TrainingSession session;
        session.start(s);
        ASSERT_TRUE(
            session.wait_for([](const TrainingSnapshot& x) { return !x.preparing.empty(); }, kTimeout));
        EXPECT_EQ(session.snapshot()->preparing, "learning 512 BPE tokens from book.txt…");
        EXPECT_EQ(session.snapshot()->status, TrainingStatus::Running);
        session.reset();
        ASSERT_TRUE(session.wait_for(
            [](const TrainingSnapshot& x) { return x.status == TrainingStatus::Idle; }, kTimeout));
        EXPECT_TRUE(session.snapshot()->preparing.empty());
        // Train again while a task is being made: the new run (an ordinary task) is the one that runs.
        session.start(s);
        ASSERT_TRUE(
            session.wait_for([](const TrainingSnapshot& x) { return !x.preparing.empty(); }, kTimeout));
        session.start(tiny_setup(2, 1));
        ASSERT_TRUE(session.wait_for(
            [](const TrainingSnapshot& x) { return x.status == TrainingStatus::Done; }, kTimeout));
        // Quitting while a task is being made returns at once, not after the task's 60 s.
        session.start(s);
        ASSERT_TRUE(
            session.wait_for([](const TrainingSnapshot& x) { return !x.preparing.empty(); }, kTimeout));
        const auto t0 = std::chrono::steady_clock::now();
        session.shutdown();
        EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
    }
}

}  // namespace
}  // namespace attnviz::app

namespace attnviz::app {
namespace {

// Issue 24, defect 1: what Save checkpoint writes beside the weights holds a tokenizer the app's loader
// reads (a synthetic task's ids named " 0", " 1", ...), so Open in main view opens the folder.
TEST(TrainingSession, ACheckpointsFilesHoldATokenizer) {
    TrainingSession session;
    session.start(tiny_setup(2, 1));
    ASSERT_TRUE(session.wait_for([](const TrainingSnapshot& x) { return x.status == TrainingStatus::Done; },
                                 kTimeout));
    const auto snap = session.snapshot();
    ASSERT_EQ(snap->task_files.size(), 1u);
    EXPECT_EQ(snap->task_files[0].first, "tokenizer.json");
    const auto tok = Tokenizer::from_tokenizer_json(snap->task_files[0].second);
    EXPECT_EQ(tok->encode("3 1 3"), (std::vector<int>{3, 1, 3}));
}

}  // namespace
}  // namespace attnviz::app

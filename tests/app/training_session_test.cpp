// app/training_session: the timeline keeps a bounded, evenly spread set of frames; a run starts,
// pauses, steps once, resumes, finishes and resets; two sessions with the same seed give identical
// losses however they were paused; a setup the trainer refuses is one line.
#include "app/training_session.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <thread>

#include "core/error.hpp"
#include "core/task_registry.hpp"
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

// An evaluation of a 2 × 2 model with these (previous-token, induction) scores per head
// [L0H0, L0H1, L1H0, L1H1] and this held-out repeat loss.
EvalPoint eval_at(long step, const double prev[4], const double ind[4], double repeat_loss) {
    EvalPoint e;
    e.step = step;
    e.heldout_split.repeat = repeat_loss;
    e.scores.assign(2, std::vector<HeadScores>(2));
    for (int i = 0; i < 4; ++i) {
        HeadScores& s = e.scores[std::size_t(i / 2)][std::size_t(i % 2)];
        s.previous_token = prev[i];
        s.induction = ind[i];
        s.same_token = 0.9;  // high, but the task does not declare it: never marked
    }
    return e;
}

// The lab's marks: each declared score is marked once, at the first evaluation where its best head
// reaches the threshold, naming that head; a score that dips and returns is not marked again.
TEST(RunMarks, EachDeclaredScoreIsMarkedWhenItsBestHeadFirstReachesItsThreshold) {
    RunMarks marks({HeadScore::PreviousToken, HeadScore::Induction}, true);
    const double prev[5][4] = {{0.1, 0.1, 0.1, 0.1},
                               {0.2, 0.3, 0.1, 0.1},
                               {0.2, 0.62, 0.1, 0.1},
                               {0.2, 0.4, 0.1, 0.1},
                               {0.2, 0.8, 0.1, 0.1}};
    const double ind[5][4] = {{0.05, 0.05, 0.05, 0.05},
                              {0.05, 0.05, 0.1, 0.2},
                              {0.05, 0.05, 0.3, 0.2},
                              {0.05, 0.05, 0.7, 0.2},
                              {0.05, 0.05, 0.9, 0.2}};
    const double repeat[5] = {4.1, 3.9, 2.0, 0.8, 0.3};
    for (int i = 0; i < 5; ++i) marks.offer(eval_at(10 * i, prev[i], ind[i], repeat[i]), 0.5 * i);
    ASSERT_EQ(marks.marks().size(), 2u);
    const HeadScoreMark& p = marks.marks()[0];
    EXPECT_EQ(p.score, HeadScore::PreviousToken);
    EXPECT_EQ(p.step, 20);
    EXPECT_EQ(p.layer, 0);
    EXPECT_EQ(p.head, 1);
    EXPECT_DOUBLE_EQ(p.value, 0.62);
    EXPECT_FALSE(p.at_start);
    const HeadScoreMark& q = marks.marks()[1];
    EXPECT_EQ(q.score, HeadScore::Induction);
    EXPECT_EQ(q.step, 30);
    EXPECT_EQ(q.layer, 1);
    EXPECT_EQ(q.head, 0);
    EXPECT_EQ(marks.cliff_step(), 30);  // the phase change: the repeat loss falls below 1.0
    EXPECT_DOUBLE_EQ(marks.cliff_seconds(), 1.5);
    EXPECT_FALSE(marks.cliff_before_start());
}

// A resumed checkpoint that had its heads and its phase change before: no change is reported at its
// first steps; the marks say the heads were there at the start.
TEST(RunMarks, AModelLoadedPastItsPhaseChangeReportsNoChangeAtItsFirstSteps) {
    RunMarks marks({HeadScore::PreviousToken, HeadScore::Induction}, true);
    const double prev0[4] = {0.1, 0.9, 0.1, 0.1}, ind0[4] = {0.05, 0.05, 0.3, 0.2};
    const double ind1[4] = {0.05, 0.05, 0.6, 0.2};
    marks.offer(eval_at(0, prev0, ind0, 0.42));
    marks.offer(eval_at(10, prev0, ind1, 0.40));
    marks.offer(eval_at(20, prev0, ind1, 0.38));
    EXPECT_EQ(marks.cliff_step(), -1);
    EXPECT_TRUE(marks.cliff_before_start());
    EXPECT_DOUBLE_EQ(marks.start_repeat_loss(), 0.42);
    ASSERT_EQ(marks.marks().size(), 2u);
    EXPECT_EQ(marks.marks()[0].score, HeadScore::PreviousToken);
    EXPECT_TRUE(marks.marks()[0].at_start);
    EXPECT_EQ(marks.marks()[0].step, 0);
    EXPECT_EQ(marks.marks()[1].score, HeadScore::Induction);  // appeared during this run
    EXPECT_FALSE(marks.marks()[1].at_start);
    EXPECT_EQ(marks.marks()[1].step, 10);
    // A task without repeats has no phase change at all; one with no declared scores no marks.
    RunMarks none({}, false);
    none.offer(eval_at(0, prev0, ind0, 0.1));
    none.offer(eval_at(10, prev0, ind1, 0.1));
    EXPECT_TRUE(none.marks().empty());
    EXPECT_EQ(none.cliff_step(), -1);
    EXPECT_FALSE(none.cliff_before_start());
}

// Every task's declared scores have words and a threshold for the lab; the grokking task declares
// none (its four tokens have no previous-token or induction structure).
TEST(RunMarks, EveryDeclaredScoreHasALabelAnExplanationAndAThreshold) {
    for (const TaskInfo& t : task_registry())
        for (HeadScore k : t.scores) {
            const HeadScoreInfo info = head_score_info(k);
            EXPECT_FALSE(info.label.empty()) << t.name;
            EXPECT_GT(info.explanation.size(), 40u) << t.name << " " << head_score_name(k);
            EXPECT_GT(info.threshold, 0.0);
            EXPECT_LE(info.threshold, 1.0);
        }
    EXPECT_TRUE(find_task("modadd")->scores.empty());
    EXPECT_FALSE(find_task("induction")->scores.empty());
}

// A run's snapshot carries what the lab shows beside its curves: the declared scores, the marks, the
// held-out split's note and the probe's token names (the modadd preset: numbers, '+' and '=').
TEST(TrainingSession, SnapshotCarriesScoresMarksHeldoutNoteAndTokenNames) {
    TrainingSession session;
    session.start(tiny_setup(10, 1));
    ASSERT_TRUE(session.wait_for([](const TrainingSnapshot& x) { return x.status == TrainingStatus::Done; },
                                 kTimeout));
    const auto s = session.snapshot();
    EXPECT_EQ(s->scores, find_task("induction")->scores);
    EXPECT_NE(s->heldout_note.find("seeds"), std::string::npos) << s->heldout_note;
    const TrainingSetup m = training_preset("modadd");
    ASSERT_EQ(m.task.token_names.size(), std::size_t(m.task.vocab_size));
    EXPECT_EQ(m.task.token_names[97], "+");
    EXPECT_EQ(m.task.token_names[98], "=");
    EXPECT_EQ(m.task.token_names[12], "12");
    EXPECT_NE(m.task.heldout_note.find("never shown"), std::string::npos);
    const TrainingSetup c = training_preset("copy");
    EXPECT_EQ(c.task.token_names.back(), "SEP");
}

// A text read as BPE tokens says "BPE tokens" (not characters) and which tokenizer; its held-out note
// names the file's last 10 %; its token names are the tokens' text with spaces made visible.
TEST(TrainingSession, TextTaskUnderBpeSaysTokensAndExplainsTheHeldOutSplit) {
    const std::string dir = ::testing::TempDir();
    const std::string path = dir + "/labfix_book.txt";
    {
        std::string text;
        for (int i = 0; i < 400; ++i) text += "the cat sat on the mat and the dog ran to the park. ";
        FILE* f = std::fopen(path.c_str(), "wb");
        ASSERT_NE(f, nullptr);
        std::fwrite(text.data(), 1, text.size(), f);
        std::fclose(f);
    }
    const Task bpe = bpe_text_task(path, 32, 300);
    EXPECT_EQ(bpe.first_label, "BPE tokens");
    // (a short text may run out of pairs to merge before 300: the tokenizer says what was learned)
    EXPECT_EQ(bpe.tokenizer, "a byte-level BPE of " + std::to_string(bpe.vocab_size) +
                                 " tokens learned from labfix_book.txt");
    EXPECT_NE(bpe.heldout_note.find("last 10 %"), std::string::npos) << bpe.heldout_note;
    EXPECT_NE(bpe.heldout_note.find("BPE tokens"), std::string::npos) << bpe.heldout_note;
    ASSERT_EQ(bpe.token_names.size(), std::size_t(bpe.vocab_size));
    EXPECT_EQ(bpe.token_names[std::size_t(' ')], "\u00b7");
    EXPECT_EQ(bpe.token_names[0xE6], "\\xE6");  // a byte that is part of a character
    auto corpus = std::make_shared<const TextCorpus>(text_corpus(std::string(2000, 'a') + "b\n", "t", 32));
    const Task chars = text_task(corpus, 32);
    EXPECT_EQ(chars.first_label, "characters");
    EXPECT_NE(chars.tokenizer.find("one token per character"), std::string::npos);
    EXPECT_EQ(chars.token_names.back(), "b");
    EXPECT_EQ(chars.token_names.front(), "\u23ce");
    std::remove(path.c_str());
}

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

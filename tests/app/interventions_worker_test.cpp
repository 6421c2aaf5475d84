// The Interventions panel's background work (app/interventions_worker.hpp) on the shipped induction
// model: the numbers it shows are core/interventions.hpp's, the repeat mask is the pairs seen before, and the
// GUI-thread side turns choices into results: the grid, the induction head's knock-out raising the repeat
// loss, restoring it, and a corrupt text of another length refused in one line with everything else kept. GCC
// 12 false positive inside its AVX-512 intrinsics when Eigen multiplies (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "app/interventions_worker.hpp"
#include "app/model_session.hpp"

using namespace attnviz;
using namespace attnviz::app;

namespace {

const char* kText = "the quick brown fox jumps over a lazy dog. the quick brown fox jumps over a lazy dog.";

const LoadedModel& induction_model() {
    static const LoadedModel m = load_model_folder(
        std::string(ATTNVIZ_TEST_DATA) + "/../../assets/models/induction-2l", [](const char*, float) {});
    return m;
}

// Runs frames until the worker is idle and its results are taken.
void settle(InterventionsWorker& w, AppState& state, const LoadedModel& m) {
    for (int i = 0; i < 4; ++i) {
        w.frame(state, &m, true, 0.0);
        ASSERT_TRUE(w.wait_idle(60.0));
    }
    w.frame(state, &m, true, 0.0);
}

}  // namespace

TEST(InterventionsWorker, RepeatedPairsAreThoseSeenBefore) {
    // a b c a b d a b: predictions 3 (a→b) and 6 (a→b) repeat a pair; 4 (b→d) does not.
    const std::vector<bool> r = repeated_pairs({1, 2, 3, 1, 2, 4, 1, 2});
    const std::vector<bool> want = {false, false, false, true, false, false, true};
    EXPECT_EQ(r, want);
    EXPECT_TRUE(std::isnan(masked_mean({1, 2}, {false, false})));
    EXPECT_DOUBLE_EQ(masked_mean({1, 2, 4}, {true, false, true}), 2.5);
}

TEST(InterventionsWorker, KnockingOutTheInductionHeadRaisesTheRepeatLossAndRestores) {
    const LoadedModel& m = induction_model();
    AppState state;
    state.model.active = true;
    state.model.dir = m.dir;
    state.model.text = kText;
    state.model.n_layer = m.weights->spec.n_layer;
    state.model.n_head = m.weights->spec.n_head;
    InterventionsWorker w(1);
    settle(w, state, m);
    const InterventionsUi& iv = state.interventions;
    ASSERT_TRUE(iv.error.empty()) << iv.error;
    ASSERT_EQ(iv.importance.size(), 2u);
    ASSERT_EQ(iv.importance[1].size(), 4u);
    EXPECT_EQ(iv.for_text, kText);
    EXPECT_GT(iv.repeat_count, 5);
    const double base = iv.base_repeat_loss, base_all = iv.base_loss;
    EXPECT_DOUBLE_EQ(iv.repeat_loss, base);
    EXPECT_EQ(iv.bars.size(), 10u);
    EXPECT_FALSE(iv.parts.empty());
    EXPECT_NEAR(iv.parts_sum, iv.target_logit, 1e-4 * std::max(1.0, std::fabs(iv.target_logit)));
    EXPECT_EQ(iv.lens.size(), 3u);  // the embeddings and the two layers
    // The grid's Δloss of head 1.0 is the core's.
    const CleanRun clean = clean_run(*m.weights, m.tokenizer->encode(kText));
    EXPECT_NEAR(iv.importance[1][0],
                run_ablated(*m.weights, clean, {{1, 0}}, AblationMode::Zero).loss - clean.loss, 1e-9);

    state.interventions.ablated = {"1.0"};
    settle(w, state, m);
    EXPECT_GT(iv.repeat_loss, base + 0.1) << "repeat loss " << base << " → " << iv.repeat_loss;
    // The numbers shown are the core's: the loss of the same ablation, the repeat loss its mean over
    // the repeated pairs.
    const InterventionResult core = run_ablated(*m.weights, clean, {{1, 0}}, AblationMode::Zero);
    EXPECT_DOUBLE_EQ(iv.loss, core.loss);
    EXPECT_DOUBLE_EQ(iv.repeat_loss, masked_mean(core.token_loss, repeated_pairs(clean.ids)));
    ASSERT_EQ(iv.importance_repeat.size(), 2u);
    EXPECT_NEAR(iv.importance_repeat[1][0], iv.repeat_loss - base, 1e-12);
    EXPECT_GT(iv.loss, base_all);
    EXPECT_DOUBLE_EQ(iv.base_repeat_loss, base);
    for (const InterventionsUi::Bar& b : iv.bars) EXPECT_GE(b.p_base, 0.0);

    state.interventions.ablated.clear();
    w.frame(state, &m, true, 0.0);  // restored at once, from the base run
    EXPECT_DOUBLE_EQ(iv.repeat_loss, base);
    EXPECT_DOUBLE_EQ(iv.loss, base_all);

    // A corrupt text of another length: one line naming both counts; nothing else moves.
    state.interventions.ablated = {"1.0"};
    settle(w, state, m);
    const double ablated_repeat = iv.repeat_loss;
    state.interventions.patching = true;
    state.interventions.clean_text = kText;
    state.interventions.corrupt_text = "the quick brown fox";
    state.interventions.answer = " jumps";
    state.interventions.wrong = " dog";
    settle(w, state, m);
    EXPECT_NE(iv.patch_error.find("clean text is 20 tokens and the corrupt text 4"), std::string::npos)
        << iv.patch_error;
    EXPECT_EQ(iv.patch_error.find('\n'), std::string::npos);
    EXPECT_TRUE(iv.patched.empty());
    EXPECT_DOUBLE_EQ(iv.repeat_loss, ablated_repeat);
    EXPECT_EQ(iv.ablated, std::vector<std::string>{"1.0"});
    EXPECT_TRUE(iv.error.empty());
    // A corrupt text of the same length patches every head.
    state.interventions.corrupt_text =
        "the quick brown fox jumps over a lazy dog. the quick brown dog jumps over a lazy fox.";
    settle(w, state, m);
    EXPECT_TRUE(iv.patch_error.empty()) << iv.patch_error;
    ASSERT_EQ(iv.patched.size(), 2u);
    EXPECT_NE(iv.m_clean, iv.m_corrupt);
}

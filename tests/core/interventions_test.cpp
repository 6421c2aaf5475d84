// Interventions (core/interventions.hpp): the resumed, batched sweeps give what a whole forward with a
// hook gives, the attribution parts add up to the logit, the logit lens ends at the model's own
// prediction, and heads are parsed and checked. (The definitions themselves are checked against an
// independent PyTorch implementation in tests/reference/interventions_test.py.)
#include <gtest/gtest.h>

#include <cmath>

#include "common/matrix_expect.hpp"
#include "common/tiny_model.hpp"
#include "core/decoder.hpp"
#include "core/error.hpp"
#include "core/interventions.hpp"
#include "core/model.hpp"

namespace attnviz {
namespace {

using test::tiny_model;

std::vector<ModelWeights> models() {
    std::vector<ModelWeights> m;
    test::TinyModelOptions o;
    o.n_layer = 3;
    m.push_back(tiny_model(ModelFamily::Gpt2, 2, 2, o));
    m.push_back(tiny_model(ModelFamily::Llama, 4, 2, o));
    return m;
}

/// The whole forward (run_model) with the listed heads' outputs changed by `edit`.
template <typename F>
ModelForward hooked(const ModelWeights& m, const std::vector<int>& ids, const std::vector<HeadRef>& heads,
                    F edit) {
    ForwardHooks<float> h;
    for (const HeadRef& r : heads) h.add(HookStage::head_output, r.layer);
    h.call = [&](const HookPoint& p, nn::Block<float> v) {
        for (const HeadRef& r : heads)
            if (r.layer == p.layer && r.head == p.head) edit(p, v);
    };
    ModelRunOptions o;
    o.hooks = &h;
    return run_model(m, ids, o);
}

TEST(Interventions, CleanRunKeepsTheForwardsValues) {
    for (const ModelWeights& m : models()) {
        const std::vector<int> ids = {3, 1, 4, 1, 5, 9, 2, 6};
        const ModelForward f = run_model(m, ids);
        const CleanRun c = clean_run(m, ids);
        EXPECT_NEAR(c.loss, text_loss(f.logits, ids), 1e-6);
        EXPECT_MATRIX_NEAR(c.last_logits, f.logits.row(7), 0.0);
        for (int l = 0; l < m.spec.n_layer; ++l) {
            EXPECT_MATRIX_NEAR(c.resid[std::size_t(l + 1)], f.layers[std::size_t(l)].resid_post, 0.0);
            EXPECT_MATRIX_NEAR(c.mlp_out[std::size_t(l)], f.layers[std::size_t(l)].mlp_out, 0.0);
            for (int j = 0; j < m.spec.n_head; ++j)
                EXPECT_MATRIX_NEAR(Mat(c.z[std::size_t(l)].middleCols(j * m.spec.d_head, m.spec.d_head)),
                                   f.layers[std::size_t(l)].heads[std::size_t(j)].head_output, 0.0);
        }
    }
}

TEST(Interventions, SweepEqualsWholeForwardsWithAHook) {
    for (const ModelWeights& m : models())
        for (AblationMode mode : {AblationMode::Zero, AblationMode::Mean}) {
            const std::vector<int> ids = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
            const CleanRun c = clean_run(m, ids);
            InterventionOptions o;
            int calls = 0;
            o.progress = [&](int done, int total) {
                ++calls;
                EXPECT_LE(done, total);
            };
            const Eigen::MatrixXd sweep = ablation_sweep(m, c, mode, o);
            EXPECT_GT(calls, 0);
            for (int l = 0; l < m.spec.n_layer; ++l)
                for (int j = 0; j < m.spec.n_head; ++j) {
                    const ModelForward f =
                        hooked(m, ids, {{l, j}}, [&](const HookPoint&, nn::Block<float> v) {
                            if (mode == AblationMode::Zero) {
                                v.setZero();
                            } else {
                                const RowVec mean = v.colwise().mean();
                                for (Eigen::Index r = 0; r < v.rows(); ++r) v.row(r) = mean;
                            }
                        });
                    const double want = text_loss(f.logits, ids);
                    EXPECT_NEAR(sweep(l, j), want, 1e-5) << head_name({l, j});
                    const InterventionResult one = run_ablated(m, c, {{l, j}}, mode);
                    EXPECT_NEAR(one.loss, want, 1e-5);
                    EXPECT_MATRIX_NEAR(one.last_logits, f.logits.row(9), 1e-5);
                    EXPECT_NE(sweep(l, j), c.loss);  // every head matters a little in a random model
                }
        }
}

TEST(Interventions, TokenLossesAndALaterPartOfTheText) {
    for (const ModelWeights& m : models()) {
        const std::vector<int> ids = {3, 1, 4, 1, 5, 9, 3, 1, 4, 1, 5, 9};
        const CleanRun c = clean_run(m, ids);
        ASSERT_EQ(c.token_loss.size(), ids.size() - 1);
        EXPECT_DOUBLE_EQ(mean_loss(c.token_loss, 0), c.loss);
        const ModelForward f = run_model(m, ids);
        const Mat tail = f.logits.bottomRows(7);  // predictions of tokens 6..11 (and the last row)
        EXPECT_NEAR(mean_loss(c.token_loss, 5), text_loss(tail, std::vector<int>(ids.begin() + 5, ids.end())),
                    1e-6);
        EXPECT_TRUE(std::isnan(mean_loss(c.token_loss, 11)));
        InterventionOptions o;
        o.loss_from = 5;  // the repeated half
        const Eigen::MatrixXd sweep = ablation_sweep(m, c, AblationMode::Zero, o);
        for (int l = 0; l < m.spec.n_layer; ++l)
            for (int j = 0; j < m.spec.n_head; ++j) {
                const InterventionResult r = run_ablated(m, c, {{l, j}}, AblationMode::Zero);
                ASSERT_EQ(r.token_loss.size(), ids.size() - 1);
                EXPECT_NEAR(mean_loss(r.token_loss, 0), r.loss, 1e-12);
                EXPECT_NEAR(sweep(l, j), mean_loss(r.token_loss, 5), 1e-5);
            }
    }
}

TEST(Interventions, HeadsTogetherEqualAWholeForward) {
    for (const ModelWeights& m : models()) {
        const std::vector<int> ids = {2, 7, 1, 8, 2, 8};
        const CleanRun c = clean_run(m, ids);
        const std::vector<HeadRef> heads = {{2, 1}, {0, 0}};
        const ModelForward f =
            hooked(m, ids, heads, [](const HookPoint&, nn::Block<float> v) { v.setZero(); });
        const InterventionResult r = run_ablated(m, c, heads, AblationMode::Zero);
        EXPECT_NEAR(r.loss, text_loss(f.logits, ids), 1e-5);
        const InterventionResult none = run_ablated(m, c, {}, AblationMode::Zero);
        EXPECT_EQ(none.loss, c.loss);
    }
}

TEST(Interventions, PatchSweepEqualsWholeForwards) {
    for (const ModelWeights& m : models()) {
        const std::vector<int> clean_ids = {3, 1, 4, 1, 5, 9, 2}, corrupt_ids = {3, 1, 4, 2, 5, 9, 2};
        const CleanRun clean = clean_run(m, clean_ids), corrupt = clean_run(m, corrupt_ids);
        const int dh = m.spec.d_head;
        const PatchSweep p = patch_sweep(m, clean, corrupt, 4, 7);
        EXPECT_NEAR(p.m_clean, logit_difference(clean.last_logits, 4, 7), 0.0);
        for (int l = 0; l < m.spec.n_layer; ++l)
            for (int j = 0; j < m.spec.n_head; ++j) {
                const ModelForward f =
                    hooked(m, corrupt_ids, {{l, j}}, [&](const HookPoint& pt, nn::Block<float> v) {
                        v = clean.z[std::size_t(pt.layer)].middleCols(pt.head * dh, dh);
                    });
                const double want = double(f.logits(6, 4)) - double(f.logits(6, 7));
                EXPECT_NEAR(p.m_patched(l, j), want, 1e-5);
                EXPECT_NEAR(p.patched_fraction(l, j), (want - p.m_corrupt) / (p.m_clean - p.m_corrupt), 1e-4);
                const InterventionResult one = run_patched(m, clean, corrupt, {{l, j}});
                EXPECT_NEAR(logit_difference(one.last_logits, 4, 7), want, 1e-5);
            }
        // every head of every layer patched: the clean run's prediction
        std::vector<HeadRef> all;
        for (int l = 0; l < m.spec.n_layer; ++l)
            for (int j = 0; j < m.spec.n_head; ++j) all.push_back({l, j});
        const InterventionResult r = run_patched(m, clean, corrupt, all);
        EXPECT_FALSE(std::isnan(r.loss));
        EXPECT_THROW(run_patched(m, clean, clean_run(m, {1, 2}), all), Error);
    }
}

TEST(Interventions, AttributionPartsSumToTheLogit) {
    for (const ModelWeights& m : models()) {
        const CleanRun c = clean_run(m, {3, 1, 4, 1, 5, 9});
        for (int target : {0, 5, 10}) {
            const Attribution a = direct_logit_attribution(m, c, target);
            EXPECT_NEAR(a.parts_sum, a.logit, 1e-4 * std::max(1.0, std::abs(a.logit)));
            const bool gpt2 = m.spec.family == ModelFamily::Gpt2;
            const std::size_t per_layer = std::size_t(m.spec.n_head) + (gpt2 ? 2 : 1);
            EXPECT_EQ(a.parts.size(), 1 + std::size_t(m.spec.n_layer) * per_layer + (gpt2 ? 1 : 0));
            EXPECT_EQ(a.parts.front().name, "embed");
            EXPECT_EQ(a.parts[1].name, "0.0");
            EXPECT_EQ(a.parts.back().name, gpt2 ? "ln_f_bias" : "mlp.2");
        }
    }
}

TEST(Interventions, LogitLensEndsAtTheModelsPrediction) {
    for (const ModelWeights& m : models()) {
        const CleanRun c = clean_run(m, {3, 1, 4, 1, 5});
        const std::vector<LensRow> lens = logit_lens(m, c, 5);
        ASSERT_EQ(lens.size(), std::size_t(m.spec.n_layer + 1));
        EXPECT_EQ(lens.front().layer, -1);
        Eigen::Index best = 0;
        c.last_logits.maxCoeff(&best);
        EXPECT_EQ(lens.back().ids.front(), int(best));
        for (const LensRow& r : lens) {
            ASSERT_EQ(r.ids.size(), 5u);
            for (std::size_t i = 1; i < 5; ++i) EXPECT_GE(r.probs[i - 1], r.probs[i]);
        }
    }
}

TEST(Interventions, HeadsAreParsedAndChecked) {
    const ModelWeights m = tiny_model(ModelFamily::Gpt2, 2, 2);
    EXPECT_EQ(parse_head("1.0", m.spec), (HeadRef{1, 0}));
    for (const char* bad : {"1", "1.", ".1", "a.b", "1.2.3", "-1.0", "1.x", ""})
        EXPECT_THROW(parse_head(bad, m.spec), Error) << bad;
    try {
        parse_head("2.0", m.spec);
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("layer 2 is out of range"), std::string::npos) << e.what();
    }
    try {
        parse_head("0.2", m.spec);
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("head 2 is out of range"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace attnviz

// The forward's hook points (core/decoder.hpp): recording sees what run_model keeps, a hook that writes
// a value back unchanged changes nothing, zeroing one head's output (ablation) changes the logits from
// that layer on, and patching one run's head output into another moves that run toward it.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <mutex>

#include "common/matrix_expect.hpp"
#include "common/tiny_model.hpp"
#include "core/decoder.hpp"
#include "core/model.hpp"

namespace attnviz {
namespace {

using test::tiny_model;

ModelRunOptions with_hooks(const ForwardHooks<float>& hooks) {
    ModelRunOptions o;
    o.hooks = &hooks;
    return o;
}

TEST(Hooks, NamesAreTheDumpsStageNames) {
    EXPECT_STREQ(hook_stage_name(HookStage::ln_1), "ln_1");
    EXPECT_STREQ(hook_stage_name(HookStage::head_output), "head_output");
    EXPECT_STREQ(hook_stage_name(HookStage::logits), "logits");
    EXPECT_TRUE(hook_stage_per_head(HookStage::weights));
    EXPECT_FALSE(hook_stage_per_head(HookStage::attn_out));
}

TEST(Hooks, RecordingSeesWhatTheForwardKeeps) {
    for (ModelFamily fam : {ModelFamily::Gpt2, ModelFamily::Llama}) {
        const ModelWeights m = fam == ModelFamily::Gpt2 ? tiny_model(fam, 2, 2) : tiny_model(fam, 4, 2);
        const std::vector<int> ids = {3, 1, 4, 1, 5, 9};
        const ModelForward f = run_model(m, ids);
        std::mutex mu;
        std::map<std::tuple<int, int, int>, Mat> seen;
        ForwardHooks<float> h;
        for (int l = 0; l < m.spec.n_layer; ++l)
            for (HookStage s : {HookStage::ln_1, HookStage::K, HookStage::weights, HookStage::resid_post})
                h.add(s, l);
        h.add(HookStage::logits, -1);
        h.call = [&](const HookPoint& p, nn::Block<float> v) {
            std::lock_guard<std::mutex> lock(mu);
            seen[{int(p.stage), p.layer, p.head}] = v;
        };
        const ModelForward g = run_model(m, ids, with_hooks(h));
        EXPECT_MATRIX_NEAR(g.logits, f.logits, 0.0);  // recording changes nothing
        for (int l = 0; l < m.spec.n_layer; ++l) {
            const LayerStages& st = f.layers[std::size_t(l)];
            EXPECT_MATRIX_NEAR((seen[{int(HookStage::ln_1), l, -1}]), st.ln_1, 0.0);
            EXPECT_MATRIX_NEAR((seen[{int(HookStage::resid_post), l, -1}]), st.resid_post, 0.0);
            for (int j = 0; j < m.spec.n_head; ++j)
                EXPECT_MATRIX_NEAR((seen[{int(HookStage::weights), l, j}]), st.heads[std::size_t(j)].weights,
                                   0.0);
            // K is called once per key/value head; every query head of its group keeps it
            const int group = m.spec.n_head / m.spec.n_kv_head;
            for (int j = 0; j < m.spec.n_head; ++j)
                EXPECT_MATRIX_NEAR((seen[{int(HookStage::K), l, j / group}]), st.heads[std::size_t(j)].K,
                                   0.0);
            EXPECT_EQ(seen.count({int(HookStage::K), l, m.spec.n_kv_head}), 0u);
        }
        EXPECT_MATRIX_NEAR((seen[{int(HookStage::logits), -1, -1}]), f.logits, 0.0);
    }
}

TEST(Hooks, ZeroAblationOfAHeadChangesOnlyWhatFollows) {
    const ModelWeights m = tiny_model(ModelFamily::Gpt2, 2, 2);
    const std::vector<int> ids = {1, 4, 2, 9, 0, 3};
    const ModelForward base = run_model(m, ids);
    ForwardHooks<float> h;
    h.add(HookStage::head_output, 1);
    h.call = [](const HookPoint& p, nn::Block<float> v) {
        if (p.head == 0) v.setZero();
    };
    const ModelForward ab = run_model(m, ids, with_hooks(h));
    // layer 0 untouched; layer 1's head 0 output is zero, head 1's as before, and what it feeds changes
    EXPECT_MATRIX_NEAR(ab.layers[0].resid_post, base.layers[0].resid_post, 0.0);
    EXPECT_EQ(ab.layers[1].heads[0].head_output.cwiseAbs().maxCoeff(), 0.0f);
    EXPECT_MATRIX_NEAR(ab.layers[1].heads[1].head_output, base.layers[1].heads[1].head_output, 0.0);
    EXPECT_GT((ab.layers[1].attn_out - base.layers[1].attn_out).cwiseAbs().maxCoeff(), 1e-4f);
    EXPECT_GT((ab.logits - base.logits).cwiseAbs().maxCoeff(), 1e-4f);
}

TEST(Hooks, PatchingEveryHeadOutputOfACleanRunGivesTheCleanRun) {
    const ModelWeights m = tiny_model(ModelFamily::Llama, 4, 2);
    const std::vector<int> clean = {3, 1, 4, 1, 5, 9}, corrupt = {3, 1, 4, 1, 7, 9};
    const ModelForward c = run_model(m, clean), k = run_model(m, corrupt);
    ASSERT_GT((c.logits - k.logits).cwiseAbs().maxCoeff(), 1e-4f);
    // Every head output of the last layer, and the residual entering it, from the clean run: the
    // corrupt run's last layer then computes exactly the clean one's logits.
    const int last = m.spec.n_layer - 1;
    ForwardHooks<float> h;
    h.add(HookStage::resid_post, last - 1);
    h.add(HookStage::head_output, last);
    h.add(HookStage::ln_1, last);
    h.call = [&](const HookPoint& p, nn::Block<float> v) {
        const LayerStages& st = c.layers[std::size_t(p.layer)];
        if (p.stage == HookStage::resid_post) v = st.resid_post;
        if (p.stage == HookStage::ln_1) v = st.ln_1;
        if (p.stage == HookStage::head_output) v = st.heads[std::size_t(p.head)].head_output;
    };
    const ModelForward patched = run_model(m, corrupt, with_hooks(h));
    EXPECT_MATRIX_NEAR(patched.logits, c.logits, 1e-5);
}

}  // namespace
}  // namespace attnviz

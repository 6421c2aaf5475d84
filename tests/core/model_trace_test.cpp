// core/model_trace: a real model's layer as a Trace — names, shapes, shared (not copied) data, the
// causal mask in display_matrix, hover derivations that recompute every cell they explain, GQA
// wording, the residual stream norms and the next-token ranking.
#include "core/model_trace.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

#include "common/final_value.hpp"
#include "common/matrix_expect.hpp"
#include "common/tiny_model.hpp"
#include "core/error.hpp"
#include "core/explain.hpp"
#include "core/ops.hpp"
#include "core/stage_catalogue.hpp"

namespace attnviz {
namespace {

using test::tiny_model;

const std::vector<int> kIds = {3, 1, 4, 1, 5, 9};

std::shared_ptr<const std::vector<std::string>> labels() {
    return std::make_shared<const std::vector<std::string>>(
        std::vector<std::string>{"a", " cat", " sat", " on", " the", " mat"});
}

using test::final_value;

struct Fixture {
    ModelWeights model;
    std::shared_ptr<const ModelForward> fwd;
};
Fixture run(ModelFamily family, int h, int g, ModelRunOptions opt = {}) {
    Fixture fx{tiny_model(family, h, g, {false, 3, 7}), nullptr};
    fx.fwd = std::make_shared<const ModelForward>(run_model(fx.model, kIds, opt));
    return fx;
}

TEST(ModelTrace, StageNamesFollowTheDumpManifestThenTheSummaries) {
    const Fixture fx = run(ModelFamily::Gpt2, 2, 2);
    const Trace t = model_layer_trace(fx.model.spec, fx.fwd, 1, labels());
    const std::vector<std::string> expected = {
        "embed",           "ln_1",      "Q",    "K",       "V",          "scores", "weights", "head_output",
        "attn_out",        "resid_mid", "ln_2", "mlp_out", "resid_post", "ln_f",   "logits",  "probs",
        "residual_stream", "rollout"};
    EXPECT_EQ(t.stage_names(), expected);
    EXPECT_EQ(t.n, 6);
    EXPECT_EQ(t.heads, 2);
    ASSERT_NE(t.get("weights", 1), nullptr);
    EXPECT_EQ(t.get("weights", 1)->kind, ValueKind::Probability);
    EXPECT_EQ(t.get("Q", 0)->n_cols(), 4);
    EXPECT_EQ(t.get("resid_post")->n_cols(), 8);
    EXPECT_EQ(t.get("residual_stream")->n_rows(), 3);
    EXPECT_EQ(t.get("residual_stream")->n_cols(), 6);
    EXPECT_EQ(t.get("Q", 1)->rows.label(1), " cat");
    EXPECT_EQ(t.row_entropy.size(), 2u);
}

TEST(ModelTrace, EveryStageHasACatalogueEntryWithItsKind) {
    for (ModelFamily family : {ModelFamily::Gpt2, ModelFamily::Llama}) {
        const Fixture fx = run(family, 2, family == ModelFamily::Gpt2 ? 2 : 1);
        const Trace t = model_layer_trace(fx.model.spec, fx.fwd, 1, labels());
        for (const Stage& st : t.stages) {
            const StageEntry* e = find_stage_entry(st.name);
            ASSERT_NE(e, nullptr) << "model stage \"" << st.name << "\" has no catalogue entry";
            if (!e->kind_varies) {
                EXPECT_EQ(int(st.kind), int(e->kind)) << "model stage \"" << st.name << "\"";
            }
        }
    }
}

TEST(ModelTrace, StagesAliasTheForwardInsteadOfCopying) {
    const Fixture fx = run(ModelFamily::Gpt2, 2, 2);
    const Trace t = model_layer_trace(fx.model.spec, fx.fwd, 2, labels());
    EXPECT_EQ(t.get("weights", 1)->stored_matrix(), &fx.fwd->layers[2].heads[1].weights);
    EXPECT_EQ(t.get("resid_mid")->stored_matrix(), &fx.fwd->layers[2].resid_mid);
    EXPECT_EQ(t.get("rollout")->stored_matrix(), &fx.fwd->rollout);
    EXPECT_MATRIX_NEAR(t.get("scores", 0)->matrix(), fx.fwd->layers[2].heads[0].scores, 0.0);
}

TEST(ModelTrace, DisplayMatrixHatchesTheCausalMaskInWeightsOnly) {
    const Fixture fx = run(ModelFamily::Llama, 2, 1);
    const Trace t = model_layer_trace(fx.model.spec, fx.fwd, 0, labels());
    const Mat A = display_matrix(t, *t.get("weights", 1));  // [n, n]
    const Mat& W = fx.fwd->layers[0].heads[1].weights;
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) {
            if (j > i)
                EXPECT_TRUE(std::isinf(A(i, j)) && A(i, j) < 0) << "weights(" << i << ", " << j << ")";
            else
                EXPECT_EQ(A(i, j), W(i, j)) << "weights(" << i << ", " << j << ")";
        }
    const Mat S = display_matrix(t, *t.get("scores", 1));
    EXPECT_MATRIX_NEAR(S, fx.fwd->layers[0].heads[1].scores, 0.0);
}

TEST(ModelTrace, HoverDerivationsRecomputeEveryCellTheyExplain) {
    for (ModelFamily fam : {ModelFamily::Gpt2, ModelFamily::Llama}) {
        const Fixture fx = run(fam, 2, fam == ModelFamily::Gpt2 ? 2 : 1);
        for (int layer : {0, 2}) {
            const Trace t = model_layer_trace(fx.model.spec, fx.fwd, layer, labels(),
                                              std::make_shared<const ModelWeights>(fx.model));
            for (const char* name : {"weights", "scores", "head_output", "resid_mid", "resid_post",
                                     "residual_stream", "ln_1", "ln_2", "Q", "K", "V", "attn_out"}) {
                const int s = t.find(name, 1);
                ASSERT_GE(s, 0) << name;
                const Stage& st = t.stages[std::size_t(s)];
                const Mat M = st.matrix();
                for (int i = 0; i < st.n_rows(); ++i)
                    for (int j = 0; j < st.n_cols(); ++j) {
                        const auto lines = explain_cell(t, s, i, j);
                        ASSERT_GE(lines.size(), 2u);
                        EXPECT_NEAR(final_value(lines), M(i, j), 1e-4 + 1e-4 * std::abs(M(i, j)))
                            << name << "(" << i << ", " << j << ") layer " << layer << ": " << lines[1];
                    }
            }
        }
    }
}

TEST(ModelTrace, WithTheWeightsQKVShowTheirSumsAndRope) {
    const Fixture llama = run(ModelFamily::Llama, 4, 2);
    const Trace t = model_layer_trace(llama.model.spec, llama.fwd, 1, labels(),
                                      std::make_shared<const ModelWeights>(llama.model));
    const auto q = explain_cell(t, t.find("Q", 2), 3, 1);
    EXPECT_NE(q[0].find("RoPE"), std::string::npos) << q[0];
    EXPECT_NE(q[1].find("its pair [i,3]"), std::string::npos) << q[1];
    const auto v = explain_cell(t, t.find("V", 3), 2, 0);
    EXPECT_NE(v[0].find("Σ_k x̂[i,k] W_V[k,c]"), std::string::npos) << v[0];
    const auto ln = explain_cell(t, t.find("ln_1"), 2, 0);
    EXPECT_NE(ln[0].find("layer 0's resid_post"), std::string::npos) << ln[0];
    // Without the weights the same cells still end in their value.
    const Trace bare = model_layer_trace(llama.model.spec, llama.fwd, 1, labels());
    const auto q0 = explain_cell(bare, bare.find("Q", 2), 3, 1);
    EXPECT_NEAR(final_value(q0), bare.get("Q", 2)->matrix()(3, 1), 1e-4);
}

TEST(ModelTrace, WeightsDerivationShowsTheScoreScaleAndMask) {
    const Fixture fx = run(ModelFamily::Gpt2, 2, 2);
    const Trace t = model_layer_trace(fx.model.spec, fx.fwd, 0, labels());
    const int s = t.find("weights", 0);
    const auto visible = explain_cell(t, s, 4, 2);
    EXPECT_NE(visible[1].find("√d_h = √4"), std::string::npos) << visible[1];
    const auto masked = explain_cell(t, s, 1, 3);
    EXPECT_NE(masked[0].find("causal mask"), std::string::npos) << masked[0];
    const auto scores = explain_cell(t, t.find("scores", 0), 3, 1);
    EXPECT_NE(scores[0].find("Σ_c Q[i,c] K[j,c]"), std::string::npos) << scores[0];
}

TEST(ModelTrace, FamilyWordingAndGroupedQueryAttention) {
    const Fixture gpt = run(ModelFamily::Gpt2, 2, 2);
    const Trace g = model_layer_trace(gpt.model.spec, gpt.fwd, 0, labels());
    EXPECT_NE(g.get("ln_1")->title.find("LayerNorm"), std::string::npos);
    EXPECT_NE(g.get("mlp_out")->formula.find("GELU"), std::string::npos);
    const Fixture llama = run(ModelFamily::Llama, 4, 2);
    const Trace l = model_layer_trace(llama.model.spec, llama.fwd, 0, labels());
    EXPECT_NE(l.get("ln_1")->title.find("RMSNorm"), std::string::npos);
    EXPECT_NE(l.get("mlp_out")->formula.find("SiLU"), std::string::npos);
    EXPECT_NE(l.get("Q", 0)->formula.find("RoPE"), std::string::npos);
    EXPECT_NE(l.get("K", 3)->explanation.find("shared by heads 2..3"), std::string::npos)
        << l.get("K", 3)->explanation;
    EXPECT_EQ(kv_head_of(llama.model.spec, 3), 1);
    EXPECT_EQ(kv_head_of(llama.model.spec, 1), 0);
}

TEST(ModelTrace, LayersWithoutKeptHeadsHaveOnlyTheirRowStages) {
    ModelRunOptions opt;
    opt.keep_heads = {false, true, false};
    const Fixture fx = run(ModelFamily::Gpt2, 2, 2, opt);
    const Trace t0 = model_layer_trace(fx.model.spec, fx.fwd, 0, labels());
    EXPECT_EQ(t0.find("weights", 0), -1);
    EXPECT_GE(t0.find("resid_post"), 0);
    const Trace t1 = model_layer_trace(fx.model.spec, fx.fwd, 1, labels());
    EXPECT_GE(t1.find("weights", 1), 0);
    EXPECT_TRUE(head_mean_weights(fx.fwd->layers[0]).size() == 0);
    const Mat mean = head_mean_weights(fx.fwd->layers[1]);  // [n, n]
    EXPECT_MATRIX_NEAR(mean, 0.5f * (fx.fwd->layers[1].heads[0].weights + fx.fwd->layers[1].heads[1].weights),
                       1e-6);
}

TEST(ModelTrace, ResidualNormsAreRowNormsOfEveryLayersOutput) {
    const Fixture fx = run(ModelFamily::Llama, 2, 2);
    const Mat R = residual_norms(*fx.fwd, 6);  // [L, n]
    ASSERT_EQ(R.rows(), 3);
    for (int l = 0; l < 3; ++l)
        for (int t = 0; t < 6; ++t) {
            double s = 0;
            for (int c = 0; c < 8; ++c)
                s += double(fx.fwd->layers[std::size_t(l)].resid_post(t, c)) *
                     fx.fwd->layers[std::size_t(l)].resid_post(t, c);
            EXPECT_NEAR(R(l, t), std::sqrt(s), 1e-4) << "residual_stream(" << l << ", " << t << ")";
        }
}

TEST(ModelTrace, BadLayerOrTokenCountIsOneError) {
    const Fixture fx = run(ModelFamily::Gpt2, 2, 2);
    EXPECT_THROW(model_layer_trace(fx.model.spec, fx.fwd, 3, labels()), Error);
    EXPECT_THROW(model_layer_trace(fx.model.spec, fx.fwd, -1, labels()), Error);
    auto short_labels = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"a"});
    EXPECT_THROW(model_layer_trace(fx.model.spec, fx.fwd, 0, short_labels), Error);
}

TEST(ModelTrace, TopTokensAreSortedByProbabilityThenId) {
    Vec p(5);
    p << 0.1f, 0.4f, 0.1f, 0.3f, 0.1f;
    const auto top = top_tokens(p, 3);
    ASSERT_EQ(top.size(), 3u);
    EXPECT_EQ(top[0].id, 1);
    EXPECT_EQ(top[1].id, 3);
    EXPECT_EQ(top[2].id, 0);
    EXPECT_EQ(top_tokens(p, 10).size(), 5u);
    EXPECT_TRUE(top_tokens(p, 0).empty());
}

// The model end to end: the embeddings block 0 reads, then the final norm, the last position's logits
// and their softmax, each against what the forward computed.
TEST(ModelTrace, EndToEndStagesAreTheEmbeddingsAndTheNextToken) {
    const Fixture fx = run(ModelFamily::Gpt2, 2, 2);
    const Trace t = model_layer_trace(fx.model.spec, fx.fwd, 0, labels());
    const ModelSpec& s = fx.model.spec;
    const Stage* embed = t.get("embed");
    ASSERT_NE(embed, nullptr);
    EXPECT_EQ(stage_phase_of("embed"), "embed");
    EXPECT_EQ(stage_phase_of("probs"), "output");
    const Mat E = embed->matrix();  // [n, d]
    ASSERT_EQ(E.rows(), 6);
    for (int i = 0; i < 6; ++i)
        for (int c = 0; c < s.d_model; ++c) {
            const float want = fx.model.wte.map()(kIds[std::size_t(i)], c) + fx.model.wpe.map()(i, c);
            EXPECT_NEAR(E(i, c), want, 1e-6f) << "embed(" << i << ", " << c << ")";
        }
    // Block 0's input is the embeddings: resid_mid = embed + attn_out.
    const Mat mid = fx.fwd->layers[0].resid_mid;
    EXPECT_NEAR((E + fx.fwd->layers[0].attn_out - mid).cwiseAbs().maxCoeff(), 0.0f, 1e-5f);
    const Stage* logits = t.get("logits");
    const Stage* probs = t.get("probs");
    ASSERT_NE(logits, nullptr);
    ASSERT_NE(probs, nullptr);
    ASSERT_EQ(logits->n_rows(), 1);
    ASSERT_EQ(logits->n_cols(), s.vocab_size);
    EXPECT_EQ(logits->rows.kind, Axis::Kind::Single);
    const Mat z = logits->matrix(), p = probs->matrix();
    for (int v = 0; v < s.vocab_size; ++v) EXPECT_EQ(z(0, v), fx.fwd->logits(5, v)) << "logit " << v;
    EXPECT_NEAR(p.sum(), 1.0f, 1e-5f);
    const Vec want = next_token_probs(z.row(0), 1.0);
    for (int v = 0; v < s.vocab_size; ++v) EXPECT_NEAR(p(0, v), want(v), 1e-7f) << "prob " << v;
    EXPECT_EQ(t.get("ln_f")->n_rows(), 6);
    // With the vocabulary's labels, the columns are named.
    auto vocab = std::make_shared<std::vector<std::string>>();
    for (int v = 0; v < s.vocab_size; ++v) vocab->push_back("tok" + std::to_string(v));
    const Trace named = model_layer_trace(s, fx.fwd, 0, labels(), nullptr, vocab);
    EXPECT_EQ(named.get("probs")->cols.label(3), "tok3");
    EXPECT_EQ(named.get("probs")->cols.kind, Axis::Kind::Vocabulary);
}

}  // namespace
}  // namespace attnviz

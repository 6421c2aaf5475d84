// Weights are an input of compute_trace: the seeded source gives today's numbers, other weights
// change the trace exactly as they should, a checkpoint layer's attention weights compute the same
// Q, K, V and output as the model's own linear layers, and explanations read the trace's weights.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positive in Eigen's AVX-512 code
#endif
#include <gtest/gtest.h>

#include <string>

#include "common/final_value.hpp"
#include "common/matrix_expect.hpp"
#include "common/test_files.hpp"
#include "common/tiny_model.hpp"
#include "core/explain.hpp"
#include "core/layer_weights.hpp"
#include "core/model.hpp"
#include "core/trace.hpp"

namespace attnviz {
namespace {

Config small_config() {
    Config c;
    c.text = "the cat sat on the mat";
    c.d_model = 16;
    c.heads = 2;
    c.mask = MaskKind::Causal;
    return c;
}

std::shared_ptr<const LayerWeights> seeded_for(const Config& c) {
    const Tokenized tk = tokenize_config(c);
    return std::make_shared<const LayerWeights>(
        layer_weights(c, tk.vocab, int(std::max(tk.query_tokens.size(), tk.key_tokens.size()))));
}

TEST(LayerWeights, ExplicitSeededWeightsGiveTheConvenienceTraceBitForBit) {
    for (Scoring s : {Scoring::ScaledDot, Scoring::Additive, Scoring::Bilinear}) {
        for (Positional p : {Positional::Sinusoidal, Positional::Learned}) {
            Config c = small_config();
            c.scoring = s;
            c.positional = p;
            const Trace a = compute_trace(c);
            const Trace b = compute_trace(c, seeded_for(c));
            ASSERT_EQ(a.stages.size(), b.stages.size());
            for (std::size_t k = 0; k < a.stages.size(); ++k)
                EXPECT_MATRIX_NEAR(b.stages[k].matrix(), a.stages[k].matrix(), 0.0)
                    << a.stages[k].name << " head " << a.stages[k].head << " scoring " << to_string(s);
        }
    }
}

TEST(LayerWeights, TraceKeepsTheWeightsItComputedWith) {
    const Config c = small_config();
    const auto w = seeded_for(c);
    const Trace t = compute_trace(c, w);
    EXPECT_EQ(t.weights, w);
    EXPECT_EQ(t.get("W_Q", 1)->stored_matrix(), w->heads[1].W_Q.get());
    EXPECT_EQ(t.get("W_O")->stored_matrix(), w->W_O.get());
    EXPECT_EQ(compute_trace(c).weights->source, "seeded");
    Config d = c;
    d.preset = HeadPreset::PreviousToken;
    d.d_model = 64;
    d.heads = 2;
    const Trace td = compute_trace(d);
    EXPECT_EQ(td.weights->source, "designed");
    EXPECT_FALSE(td.weights->heads[0].designed.empty());
    EXPECT_TRUE(td.weights->heads[1].designed.empty());
}

TEST(LayerWeights, OtherWeightsChangeTheTraceAsTheyShould) {
    const Config c = small_config();
    const auto seeded = seeded_for(c);
    LayerWeights w = *seeded;
    w.heads[1].W_V = std::make_shared<const Mat>(2.0f * *w.heads[1].W_V);  // [d_model, d_v]
    const Trace a = compute_trace(c, seeded);
    const Trace b = compute_trace(c, std::make_shared<const LayerWeights>(w));
    EXPECT_MATRIX_NEAR(b.get("weights", 1)->matrix(), a.get("weights", 1)->matrix(), 0.0);
    EXPECT_MATRIX_NEAR(b.get("head_output", 0)->matrix(), a.get("head_output", 0)->matrix(), 0.0);
    EXPECT_MATRIX_NEAR(b.get("head_output", 1)->matrix(), Mat(2.0f * a.get("head_output", 1)->matrix()),
                       1e-6);
    // A bias on Q is added to every row.
    LayerWeights wb = *seeded;
    wb.heads[0].b_Q = RowVec::Constant(c.resolved_d_k(), 0.25f);  // [1, d_k]
    const Trace tb = compute_trace(c, std::make_shared<const LayerWeights>(wb));
    EXPECT_MATRIX_NEAR(tb.get("Q", 0)->matrix(), Mat(a.get("Q", 0)->matrix().array() + 0.25f), 1e-6);
}

TEST(LayerWeights, WeightsThatDoNotFitAreOneLineNamingTheTensor) {
    const Config c = small_config();
    LayerWeights w = *seeded_for(c);
    w.heads[1].W_K = std::make_shared<const Mat>(Mat::Zero(16, 3));
    EXPECT_NE(test::error_of([&] {
                  compute_trace(c, std::make_shared<const LayerWeights>(w));
              }).find("W_K of head 1 is 16×3, the config needs 16×8"),
              std::string::npos);
    LayerWeights v = *seeded_for(c);
    v.vocab[0] = "dog";
    EXPECT_NE(test::error_of([&] {
                  compute_trace(c, std::make_shared<const LayerWeights>(v));
              }).find("no row for token 'the'"),
              std::string::npos);
    LayerWeights h = *seeded_for(c);
    h.heads.pop_back();
    EXPECT_NE(test::error_of([&] {
                  compute_trace(c, std::make_shared<const LayerWeights>(h));
              }).find("1 heads, the config has 2"),
              std::string::npos);
    EXPECT_NE(test::error_of([&] { compute_trace(c, nullptr); }).find("no layer weights"), std::string::npos);
}

TEST(LayerWeights, CheckpointLayerComputesWhatTheModelsLinearLayersCompute) {
    const ModelWeights model = test::tiny_model(ModelFamily::Gpt2, 2, 2);
    Config c;
    c.text = "a b c a d";
    c.d_model = 8;
    c.heads = 2;
    c.positional = Positional::Learned;
    c.mask = MaskKind::Causal;
    const Tokenized tk = tokenize_config(c);
    const std::vector<int> ids = {3, 7, 1, 9};  // one model token id per vocabulary entry a, b, c, d
    ASSERT_EQ(tk.vocab.size(), ids.size());
    for (int layer = 0; layer < 2; ++layer) {
        auto w =
            std::make_shared<const LayerWeights>(checkpoint_layer_weights(model, layer, c, tk.vocab, ids));
        const Trace t = compute_trace(c, w);
        const BlockWeights& b = model.blocks[std::size_t(layer)];
        const Mat X = t.get("input")->matrix();  // [n, d_model]
        EXPECT_MATRIX_NEAR(t.get("embedding")->matrix().row(1), model.wte.map().row(7), 0.0);
        EXPECT_MATRIX_NEAR(t.get("positional")->matrix(), Mat(model.wpe.map().topRows(5)), 0.0);
        const Mat q = apply_linear(X, b.q), k = apply_linear(X, b.k), v = apply_linear(X, b.v);  // [n, 8]
        for (int hd = 0; hd < 2; ++hd) {
            EXPECT_MATRIX_NEAR(t.get("Q", hd)->matrix(), Mat(q.middleCols(hd * 4, 4)), 1e-5);
            EXPECT_MATRIX_NEAR(t.get("K", hd)->matrix(), Mat(k.middleCols(hd * 4, 4)), 1e-5);
            EXPECT_MATRIX_NEAR(t.get("V", hd)->matrix(), Mat(v.middleCols(hd * 4, 4)), 1e-5);
        }
        EXPECT_MATRIX_NEAR(t.get("output")->matrix(), apply_linear(t.get("concat")->matrix(), b.o), 1e-5);
        // Hover explanations add the checkpoint's biases and arrive at the stage's numbers.
        for (const char* name : {"Q", "V", "output"}) {
            const int s = t.find(name, 1);
            const double expected = t.stages[std::size_t(s)].at(2, 3);
            EXPECT_NEAR(test::final_value(explain_cell(t, s, 2, 3)), expected, 1e-4) << name;
        }
    }
    Config wrong = c;
    wrong.d_model = 16;
    EXPECT_NE(test::error_of([&] {
                  checkpoint_layer_weights(model, 0, wrong, tk.vocab, ids);
              }).find("d_model = 16 but the model has 8"),
              std::string::npos);
    EXPECT_NE(test::error_of([&] {
                  checkpoint_layer_weights(model, 0, c, tk.vocab, {3, 7, 1, 99});
              }).find("token 'd' has id 99"),
              std::string::npos);
}

}  // namespace
}  // namespace attnviz

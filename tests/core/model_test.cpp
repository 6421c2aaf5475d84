// core/model: the small functions against their definitions, and run_model's invariants (causality,
// thread count, GQA = explicit repeat of K/V heads, stages consistent with each other).
#include "core/model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "common/matrix_expect.hpp"
#include "common/tiny_model.hpp"
#include "core/error.hpp"
#include "core/ops.hpp"

namespace attnviz {
namespace {

using test::tiny_model;

TEST(ModelOps, GeluTanhAndSiluMatchTheirFormulas) {
    Mat X(1, 4);
    X << -2.0f, -0.5f, 0.0f, 1.5f;
    const Mat G = gelu_tanh(X), S = silu(X);
    for (int j = 0; j < 4; ++j) {
        const double x = X(0, j);
        EXPECT_NEAR(G(0, j), 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))),
                    1e-6);
        EXPECT_NEAR(S(0, j), x / (1 + std::exp(-x)), 1e-6);
    }
}

TEST(ModelOps, RmsNormGivesUnitRootMeanSquare) {
    const Mat X = random_normal(3, 6, 2.0, 5);
    const Mat Y = rmsnorm_rows(X, 0.0);
    for (int i = 0; i < 3; ++i)
        EXPECT_NEAR(std::sqrt(Y.row(i).squaredNorm() / 6.0), 1.0, 1e-5) << "row " << i;
}

TEST(ModelOps, RopeRotateHalfPairsFirstAndSecondHalves) {
    // One head of width 4: coordinate 0 pairs with 2, 1 with 3; angle p·θ^(-2i/4).
    Mat X = Mat::Zero(3, 4);
    X.row(2) << 1.0f, 2.0f, 3.0f, 4.0f;
    const Mat Y = rope_rotate_half(X, 4, 100.0);
    const double a0 = 2.0, a1 = 2.0 * std::pow(100.0, -0.5);
    EXPECT_NEAR(Y(2, 0), 1 * std::cos(a0) - 3 * std::sin(a0), 1e-5);
    EXPECT_NEAR(Y(2, 2), 3 * std::cos(a0) + 1 * std::sin(a0), 1e-5);
    EXPECT_NEAR(Y(2, 1), 2 * std::cos(a1) - 4 * std::sin(a1), 1e-5);
    EXPECT_NEAR(Y(2, 3), 4 * std::cos(a1) + 2 * std::sin(a1), 1e-5);
    EXPECT_THROW(rope_rotate_half(Mat::Zero(2, 6), 3, 10.0), Error);
}

TEST(ModelOps, RopeScoresDependOnlyOnTheOffset) {
    const Mat q = random_normal(1, 8, 1.0, 7), k = random_normal(1, 8, 1.0, 8);
    const float a = rope_rotate_half(q, 4, 10000.0, 5).row(0).dot(rope_rotate_half(k, 4, 10000.0, 2).row(0));
    const float b =
        rope_rotate_half(q, 4, 10000.0, 13).row(0).dot(rope_rotate_half(k, 4, 10000.0, 10).row(0));
    EXPECT_NEAR(a, b, 1e-4);
}

TEST(ModelOps, CausalAttentionHeadMatchesMaskedSoftmax) {
    for (int n : {1, 5, 70, 130}) {
        const Mat Q = random_normal(n, 4, 1.0, 11), K = random_normal(n, 4, 1.0, 12),
                  V = random_normal(n, 3, 1.0, 13);
        const HeadAttention r = causal_attention_head(Q, K, V, true);
        const Mat S = Q * K.transpose();
        const Mat A = softmax_rows(apply_mask(S / 2.0f, causal_mask(n, n)));
        EXPECT_MATRIX_NEAR(r.scores, S, 1e-5);
        EXPECT_MATRIX_NEAR(r.weights, A, 1e-5);
        EXPECT_MATRIX_NEAR(r.output, Mat(A * V), 1e-4);
        const HeadAttention lean = causal_attention_head(Q, K, V, false);
        EXPECT_EQ(lean.weights.size(), 0);
        EXPECT_MATRIX_NEAR(lean.output, r.output, 1e-5);
    }
}

TEST(ModelOps, RolloutFollowsAbnarZuidema) {
    const int n = 4;
    const Mat A1 = softmax_rows(apply_mask(random_normal(n, n, 1.0, 3), causal_mask(n, n)));
    const Mat A2 = softmax_rows(apply_mask(random_normal(n, n, 1.0, 4), causal_mask(n, n)));
    auto hat = [&](const Mat& A) {
        Mat H = 0.5f * A + 0.5f * Mat::Identity(n, n);
        for (int i = 0; i < n; ++i) H.row(i) /= H.row(i).sum();
        return H;
    };
    const Mat r1 = rollout_step(A1, Mat());
    EXPECT_MATRIX_NEAR(r1, hat(A1), 1e-6);
    const Mat r2 = rollout_step(A2, r1);
    EXPECT_MATRIX_NEAR(r2, Mat(hat(A2) * hat(A1)), 1e-5);
    for (int i = 0; i < n; ++i) EXPECT_NEAR(r2.row(i).sum(), 1.0, 1e-5);
    // Non-causal weights take the dense path and give the same definition.
    const Mat F = softmax_rows(random_normal(n, n, 1.0, 9));
    EXPECT_MATRIX_NEAR(rollout_step(F, r1), Mat(hat(F) * hat(A1)), 1e-5);
}

TEST(ModelOps, SamplingGreedyTopKTopP) {
    RowVec logits(5);
    logits << 1.0f, 3.0f, 2.0f, 0.5f, 2.9f;
    EXPECT_EQ(sample_next_token(logits, {0.0, 0, 1.0}, 0.99), 1);
    EXPECT_EQ(sample_next_token(logits, {1.0, 1, 1.0}, 0.99), 1);   // top-k 1 is greedy
    EXPECT_EQ(sample_next_token(logits, {1.0, 0, 1e-6}, 0.99), 1);  // tiny top-p keeps one token
    // top-k 2: only tokens 1 and 4, split by their renormalised probabilities.
    const double p1 = 1.0 / (1.0 + std::exp(-0.1));
    EXPECT_EQ(sample_next_token(logits, {1.0, 2, 1.0}, p1 - 1e-3), 1);
    EXPECT_EQ(sample_next_token(logits, {1.0, 2, 1.0}, p1 + 1e-3), 4);
    // With everything kept, u near 1 reaches the least likely token.
    EXPECT_EQ(sample_next_token(logits, {1.0, 0, 1.0}, 0.999999), 3);
    const Vec p = next_token_probs(logits, 2.0);
    EXPECT_NEAR(p.sum(), 1.0, 1e-6);
    EXPECT_NEAR(p(1) / p(0), std::exp(1.0), 1e-4);
    EXPECT_THROW(sample_next_token(logits, {1.0, 0, 0.0}, 0.5), Error);
    EXPECT_THROW(sample_next_token(logits, {-1.0, 0, 1.0}, 0.5), Error);
}

TEST(Model, ValidateNamesTheWrongShape) {
    ModelWeights m = tiny_model(ModelFamily::Llama, 2, 1);
    m.blocks[1].k.weight.rows = 8;
    try {
        validate_model(m);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("layer 1 k.weight"), std::string::npos) << e.what();
    }
}

TEST(Model, RejectsBadIds) {
    const ModelWeights m = tiny_model(ModelFamily::Gpt2, 2, 2);
    EXPECT_THROW(run_model(m, {}), Error);
    EXPECT_THROW(run_model(m, {1, 11}), Error);
    EXPECT_THROW(run_model(m, {-1}), Error);
    EXPECT_THROW(run_model(m, std::vector<int>(17, 1)), Error);
}

// The stages agree with each other: resid_mid = input + attn_out, head outputs = weights·V, etc.
void expect_consistent(const ModelWeights& m, const ModelForward& f) {
    const ModelSpec& s = m.spec;
    for (int l = 0; l < s.n_layer; ++l) {
        const LayerStages& st = f.layers[std::size_t(l)];
        ASSERT_EQ(int(st.heads.size()), s.n_head);
        Mat concat(st.ln_1.rows(), s.n_head * s.d_head);
        for (int h = 0; h < s.n_head; ++h) {
            const HeadStages& hs = st.heads[std::size_t(h)];
            EXPECT_MATRIX_NEAR(hs.scores, Mat(hs.Q * hs.K.transpose()), 1e-5);
            EXPECT_MATRIX_NEAR(hs.head_output, Mat(hs.weights * hs.V), 1e-4);
            concat.middleCols(h * s.d_head, s.d_head) = hs.head_output;
        }
        EXPECT_MATRIX_NEAR(st.attn_out, apply_linear(concat, m.blocks[std::size_t(l)].o), 1e-4);
        EXPECT_MATRIX_NEAR(st.resid_post, Mat(st.resid_mid + st.mlp_out), 1e-5);
        if (l > 0) {
            EXPECT_MATRIX_NEAR(st.resid_mid, Mat(f.layers[std::size_t(l - 1)].resid_post + st.attn_out),
                               1e-5);
        }
    }
}

TEST(Model, Gpt2StagesAreConsistentAndCausal) {
    const ModelWeights m = tiny_model(ModelFamily::Gpt2, 2, 2);
    const ModelForward full = run_model(m, {1, 4, 2, 9, 0, 3});
    expect_consistent(m, full);
    EXPECT_EQ(full.logits.rows(), 6);
    EXPECT_EQ(full.logits.cols(), 11);
    // Causal: a prefix gives the same logits for its positions.
    const ModelForward prefix = run_model(m, {1, 4, 2});
    EXPECT_MATRIX_NEAR(prefix.logits, Mat(full.logits.topRows(3)), 1e-4);
    EXPECT_MATRIX_NEAR(prefix.rollout, Mat(full.rollout.topLeftCorner(3, 3)), 1e-5);
}

TEST(Model, LlamaGqaEqualsRepeatedKvHeads) {
    // 4 query heads sharing 2 KV heads = the same model with each KV head's weights repeated.
    const ModelWeights gqa = tiny_model(ModelFamily::Llama, 4, 2, {true});
    ModelWeights mha = gqa;
    std::vector<std::shared_ptr<Mat>> keep;
    for (BlockWeights& b : mha.blocks) {
        for (Linear* L : {&b.k, &b.v}) {
            auto W = std::make_shared<Mat>(16, 8);  // [4·dh, d]
            auto bias = std::make_shared<Mat>(1, 16);
            for (int h = 0; h < 4; ++h) {
                W->middleRows(h * 4, 4) = L->weight.map().middleRows((h / 2) * 4, 4);
                bias->middleCols(h * 4, 4) = Eigen::Map<const RowVec>(L->bias + (h / 2) * 4, 4);
            }
            L->weight = WeightRef{W->data(), 16, 8, 8};
            L->bias = bias->data();
            mha.storage.push_back(W);
            mha.storage.push_back(bias);
        }
    }
    mha.spec.n_kv_head = 4;
    validate_model(mha);
    const std::vector<int> ids = {3, 1, 4, 1, 5, 9, 2};
    const ModelForward a = run_model(gqa, ids), b = run_model(mha, ids);
    expect_consistent(gqa, a);
    EXPECT_MATRIX_NEAR(a.logits, b.logits, 1e-5);
    for (int h = 0; h < 4; ++h)
        EXPECT_MATRIX_NEAR(a.layers[1].heads[std::size_t(h)].K, b.layers[1].heads[std::size_t(h)].K, 1e-6);
}

TEST(Model, ThreadsAndKeptLayersDoNotChangeTheResult) {
    const ModelWeights m = tiny_model(ModelFamily::Llama, 4, 1);
    const std::vector<int> ids = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    const ModelForward one = run_model(m, ids);
    ModelRunOptions o;
    o.threads = 3;
    o.keep_heads = {false, true};
    o.all_logits = false;
    const ModelForward three = run_model(m, ids, o);
    EXPECT_TRUE(three.layers[0].heads.empty());
    EXPECT_EQ(three.layers[1].heads.size(), 4u);
    EXPECT_MATRIX_NEAR(three.logits, Mat(one.logits.bottomRows(1)), 1e-5);
    EXPECT_MATRIX_NEAR(three.rollout, one.rollout, 1e-5);
    EXPECT_MATRIX_NEAR(three.layers[1].heads[2].weights, one.layers[1].heads[2].weights, 1e-6);
}

TEST(Model, ForwardBytesGrowWithKeptLayers) {
    ModelSpec s;
    s.n_layer = 12;
    s.n_head = 12;
    s.n_kv_head = 12;
    s.d_model = 768;
    s.d_head = 64;
    s.d_ff = 3072;
    s.vocab_size = 50257;
    ModelRunOptions one;
    one.keep_heads.assign(12, false);
    one.keep_heads[5] = true;
    const ModelRunOptions all;
    EXPECT_LT(model_forward_bytes(s, 1024, one), model_forward_bytes(s, 1024, all));
    EXPECT_LT(model_forward_bytes(s, 1024, one), 2ull << 30);  // GPT-2 small at n = 1024, one layer viewed
}

}  // namespace
}  // namespace attnviz

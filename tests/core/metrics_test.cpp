// GCC 12 with -march=native (AVX-512) reports false "may be used uninitialized" warnings inside
// Eigen's vectorised kernels (in the compiler's own intrinsics headers); they are not our code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "core/metrics.hpp"

#include <gtest/gtest.h>

namespace attnviz {
namespace {

TEST(Params, FourDModelSquaredInTheUsualCase) {
    LayerSize s;
    s.d_model = 512;
    s.heads = 8;
    s.d_k = 64;
    s.d_v = 64;
    const ParamCount p = attention_params(s);
    EXPECT_EQ(p.total, 4 * 512 * 512);  // 1,048,576
    EXPECT_EQ(p.total, 1048576);
    EXPECT_EQ(p.w_q, 512 * 512);
    EXPECT_EQ(p.w_k, 512 * 512);
    EXPECT_EQ(p.w_v, 512 * 512);
    EXPECT_EQ(p.w_o, 512 * 512);
    EXPECT_EQ(p.scoring, 0);
    EXPECT_NE(p.formula.find("4·d_model²"), std::string::npos) << p.formula;
    // Same total for any head count that divides d_model.
    for (int h : {1, 2, 4, 16, 64}) {
        s.heads = h;
        s.d_k = s.d_v = 512 / h;
        EXPECT_EQ(attention_params(s).total, 4 * 512 * 512) << h;
    }
}

TEST(Params, GeneralCaseByHand) {
    // d_model 10, 3 heads, d_k 4, d_v 5:
    //   W_Q = W_K = 3·10·4 = 120, W_V = 3·10·5 = 150, W_O = (3·5)·10 = 150  -> 540.
    LayerSize s;
    s.d_model = 10;
    s.heads = 3;
    s.d_k = 4;
    s.d_v = 5;
    ParamCount p = attention_params(s);
    EXPECT_EQ(p.w_q, 120);
    EXPECT_EQ(p.w_k, 120);
    EXPECT_EQ(p.w_v, 150);
    EXPECT_EQ(p.w_o, 150);
    EXPECT_EQ(p.total, 540);
    EXPECT_EQ(p.formula.find("4·d_model²"), std::string::npos) << p.formula;
    // Biases: 3·4 + 3·4 + 3·5 + 10 = 49.
    s.bias = true;
    p = attention_params(s);
    EXPECT_EQ(p.w_q, 132);
    EXPECT_EQ(p.w_v, 165);
    EXPECT_EQ(p.w_o, 160);
    EXPECT_EQ(p.total, 589);
    EXPECT_NE(p.formula.find("d_model"), std::string::npos);
    s.bias = false;
    // Additive scoring, hidden 6: per head 2·4·6 + 6 = 54, 3 heads = 162.
    p = attention_params(s, Scoring::Additive, 6);
    EXPECT_EQ(p.scoring, 162);
    EXPECT_EQ(p.total, 540 + 162);
    // Additive with hidden 0 means hidden = d_k: 2·4·4 + 4 = 36 per head.
    EXPECT_EQ(attention_params(s, Scoring::Additive, 0).scoring, 108);
    // Bilinear: per head d_k² = 16.
    EXPECT_EQ(attention_params(s, Scoring::Bilinear).scoring, 48);
    // Kernels have no parameters of their own.
    EXPECT_EQ(attention_params(s, Scoring::Gaussian).scoring, 0);
}

TEST(Params, FromConfig) {
    Config c;  // d_model 64, 4 heads
    EXPECT_EQ(attention_params(c).total, 4 * 64 * 64);
    c.scoring = Scoring::Bilinear;
    EXPECT_EQ(attention_params(c).total, 4 * 64 * 64 + 4 * 16 * 16);
    c.scoring = Scoring::Additive;
    c.additive_hidden = 8;
    EXPECT_EQ(attention_params(c).scoring, 4 * (2 * 16 * 8 + 8));
}

TEST(Params, Gpt3Embedding) {
    const ModelPreset g = gpt3_preset();
    EXPECT_EQ(g.d_model, 12288);
    EXPECT_EQ(g.heads, 96);
    EXPECT_EQ(g.d_k, 128);
    EXPECT_EQ(g.vocab, 50257);
    EXPECT_EQ(g.layers, 96);
    EXPECT_EQ(g.context, 2048);
    EXPECT_EQ(g.heads * g.d_k, g.d_model);
    EXPECT_EQ(embedding_params(g.vocab, g.d_model), 617558016);
    // One GPT-3 attention layer: 4·12288² = 603,979,776 (fits only in 64 bits once multiplied by 96).
    LayerSize s{g.d_model, g.heads, g.d_k, g.d_k, false};
    EXPECT_EQ(attention_params(s).total, 603979776LL);
    EXPECT_EQ(attention_params(s).total * g.layers, 57982058496LL);
}

TEST(PatternBytes, QuadraticInContext) {
    EXPECT_DOUBLE_EQ(attention_pattern_bytes(2048, 2048, 96), 96.0 * 2048 * 2048 * 4);
    EXPECT_DOUBLE_EQ(attention_pattern_bytes(4096, 4096, 96), 4 * attention_pattern_bytes(2048, 2048, 96));
    EXPECT_DOUBLE_EQ(attention_pattern_bytes(3, 5, 2, 2), 60.0);
}

TEST(Flops, CountsByHandForATinyLayer) {
    Config c;
    c.d_model = 4;
    c.heads = 2;  // d_k = d_v = 2
    c.residual = false;
    const int n = 3, m = 3;
    // Projections: 2 heads · (2·3·4·2 ·3 [Q, K, V]) = 2 · 144 = 288
    // Scores QKᵀ 2·3·3·2 = 36, scale 9 -> 45 per head; softmax 5·9 = 45 per head; A·V 2·3·3·2 = 36 per head
    //   -> 2 · (45 + 45 + 36) = 252
    // W_O: 2·3·(2·2)·4 = 96.  Total 636.
    EXPECT_DOUBLE_EQ(forward_flops(c, n, m), 636.0);
    c.residual = true;
    EXPECT_DOUBLE_EQ(forward_flops(c, n, m), 636.0 + 12.0);
    // Softmax attention grows quadratically, linear attention linearly.
    Config s;
    Config l;
    l.attention = AttentionKind::Linear;
    const double s1 = forward_flops(s, 1000, 1000), s2 = forward_flops(s, 4000, 4000);
    const double l1 = forward_flops(l, 1000, 1000), l2 = forward_flops(l, 4000, 4000);
    EXPECT_GT(s2 / s1, 10.0);
    EXPECT_NEAR(l2 / l1, 4.0, 0.01);
    EXPECT_LT(l2, s2);
}

}  // namespace
}  // namespace attnviz

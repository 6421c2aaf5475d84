// The trainable model: every backward against central finite differences in double precision,
// determinism over thread counts, AdamW against its formula, the schedule, config checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>

#include "core/error.hpp"
#include "core/train.hpp"

namespace attnviz {
namespace {

Batch random_batch(const TrainConfig& c, int B, int n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> tok(0, c.vocab_size - 1);
    Batch b;
    b.B = B;
    b.n = n;
    for (int i = 0; i < B * n; ++i) {
        b.inputs.push_back(tok(rng));
        b.targets.push_back(i % 5 == 3 ? -1 : tok(rng));  // some positions not scored
    }
    return b;
}

Params<double> random_params_double(const TrainConfig& c, std::uint64_t seed) {
    Params<double> p = make_params<double>(c);
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, 0.3);
    for (double& x : p.data) x = normal(rng);
    // gains near 1 so the norms stay well conditioned (1-D weights are the norms' gains)
    for (const ParamView& v : p.layout)
        if (v.shape.size() == 1 && v.name.size() > 7 && v.name.compare(v.name.size() - 7, 7, ".weight") == 0)
            for (std::size_t i = 0; i < v.size; ++i) p.data[v.offset + i] += 1.0;
    return p;
}

void check_finite_differences(const TrainConfig& c) {
    const Params<double> p = random_params_double(c, 7);
    const Batch batch = random_batch(c, 2, 7, 11);
    Params<double> grad;
    loss_and_grad(p, batch, &grad, 1);
    const double h = 1e-5;
    Params<double> q = p;
    for (const ParamView& v : p.layout) {
        // every element of small tensors, a spread of elements of large ones
        const std::size_t stride = v.size > 64 ? 7 : 1;
        for (std::size_t i = 0; i < v.size; i += stride) {
            const std::size_t k = v.offset + i;
            q.data[k] = p.data[k] + h;
            const double up = loss_and_grad<double>(q, batch, nullptr, 1);
            q.data[k] = p.data[k] - h;
            const double down = loss_and_grad<double>(q, batch, nullptr, 1);
            q.data[k] = p.data[k];
            const double fd = (up - down) / (2 * h);
            const double an = grad.data[k];
            EXPECT_NEAR(an, fd, 1e-7 + 1e-5 * std::max(std::abs(an), std::abs(fd)))
                << v.name << "[" << i << "] (layer_norm " << c.layer_norm << ", norm " << int(c.norm)
                << ", mlp " << int(c.mlp) << ", positions " << int(c.positions) << ", tied " << c.tied << ")";
        }
    }
}

TrainConfig tiny(bool layer_norm, bool tied = true) {
    TrainConfig c;
    c.n_layer = 2;
    c.n_head = 2;
    c.d_model = 16;
    c.context = 8;
    c.vocab_size = 11;
    c.layer_norm = layer_norm;
    c.tied = tied;
    return c;
}

TEST(Train, AttentionOnlyNoNormMatchesFiniteDifferences) {
    check_finite_differences(tiny(false));
}
TEST(Train, AttentionOnlyLayerNormMatchesFiniteDifferences) {
    check_finite_differences(tiny(true));
}

TEST(Train, UntiedNoNormMatchesFiniteDifferences) {
    check_finite_differences(tiny(false, false));
}
TEST(Train, UntiedLayerNormMatchesFiniteDifferences) {
    check_finite_differences(tiny(true, false));
}

TrainConfig with(TrainConfig c, NormKind norm, MlpKind mlp, PositionKind positions) {
    c.layer_norm = norm != NormKind::None;
    if (norm != NormKind::None) c.norm = norm;
    c.mlp = mlp;
    c.positions = positions;
    c.d_ff = 12;
    return c;
}

// Every option of the model family, each forward+backward against finite differences in double:
// norm none | layernorm | rmsnorm × mlp none | gelu | swiglu × positions learned | sinusoidal | rope.
struct FamilyCase {
    NormKind norm;
    MlpKind mlp;
    PositionKind positions;
    bool tied;
};

class TrainFamily : public ::testing::TestWithParam<FamilyCase> {};

TEST_P(TrainFamily, MatchesFiniteDifferences) {
    const FamilyCase k = GetParam();
    check_finite_differences(with(tiny(true, k.tied), k.norm, k.mlp, k.positions));
}

INSTANTIATE_TEST_SUITE_P(
    Options, TrainFamily,
    ::testing::Values(FamilyCase{NormKind::RMSNorm, MlpKind::None, PositionKind::Learned, true},
                      FamilyCase{NormKind::LayerNorm, MlpKind::Gelu, PositionKind::Learned, false},
                      FamilyCase{NormKind::None, MlpKind::Gelu, PositionKind::Sinusoidal, true},
                      FamilyCase{NormKind::RMSNorm, MlpKind::SwiGLU, PositionKind::Rope, false},
                      FamilyCase{NormKind::LayerNorm, MlpKind::SwiGLU, PositionKind::Sinusoidal, true},
                      FamilyCase{NormKind::None, MlpKind::None, PositionKind::Rope, false},
                      FamilyCase{NormKind::RMSNorm, MlpKind::Gelu, PositionKind::Rope, true},
                      FamilyCase{NormKind::LayerNorm, MlpKind::None, PositionKind::Rope, false}));

TEST(Train, LayoutUsesLlamaNamesForLlamaChoices) {
    const TrainConfig c = with(tiny(true, false), NormKind::RMSNorm, MlpKind::SwiGLU, PositionKind::Rope);
    const auto layout = param_layout(c);
    std::vector<std::string> names;
    for (const ParamView& v : layout) names.push_back(v.name);
    EXPECT_EQ(names.front(), "model.embed_tokens.weight");
    EXPECT_EQ(names[1], "model.layers.0.input_layernorm.weight");
    EXPECT_EQ(names[2], "model.layers.0.self_attn.q_proj.weight");
    EXPECT_EQ(names[6], "model.layers.0.post_attention_layernorm.weight");
    EXPECT_EQ(names[7], "model.layers.0.mlp.gate_proj.weight");
    EXPECT_EQ(layout[7].shape, (std::vector<int>{12, 16}));
    EXPECT_EQ(names[9], "model.layers.0.mlp.down_proj.weight");
    EXPECT_EQ(layout[9].shape, (std::vector<int>{16, 12}));
    EXPECT_EQ(names[names.size() - 2], "model.norm.weight");
    EXPECT_EQ(names.back(), "lm_head.weight");
    // GPT-2 names for GPT-2 choices, with the MLP
    const auto g = param_layout(with(tiny(true), NormKind::LayerNorm, MlpKind::Gelu, PositionKind::Learned));
    EXPECT_EQ(g[8].name, "h.0.ln_2.weight");
    EXPECT_EQ(g[10].name, "h.0.mlp.c_fc.weight");
    EXPECT_EQ(g[10].shape, (std::vector<int>{16, 12}));
}

TEST(Train, LayoutUsesGpt2NamesAndShapes) {
    const TrainConfig c = tiny(true);
    const auto layout = param_layout(c);
    EXPECT_EQ(layout.front().name, "wte.weight");
    EXPECT_EQ(layout[2].name, "h.0.ln_1.weight");
    EXPECT_EQ(layout[4].name, "h.0.attn.c_attn.weight");
    EXPECT_EQ(layout[4].shape, (std::vector<int>{16, 48}));
    EXPECT_EQ(layout.back().name, "ln_f.bias");
    EXPECT_EQ(param_count(c),
              std::size_t(11 * 16 + 8 * 16 + 2 * (2 * 16 + 16 * 48 + 48 + 16 * 16 + 16) + 2 * 16));
}

TEST(Train, GradientIsDeterministicForAThreadCount) {
    TrainConfig c = tiny(true);
    const Params<float> p = init_params(c, 3);
    const Batch batch = random_batch(c, 6, 8, 5);
    for (int threads : {1, 2}) {
        Params<float> g1, g2;
        const double l1 = loss_and_grad(p, batch, &g1, threads);
        const double l2 = loss_and_grad(p, batch, &g2, threads);
        EXPECT_EQ(l1, l2);
        ASSERT_EQ(g1.data.size(), g2.data.size());
        for (std::size_t i = 0; i < g1.data.size(); ++i)
            ASSERT_EQ(g1.data[i], g2.data[i]) << "gradient element " << i << ", " << threads << " threads";
    }
    // Across thread counts the sequences are the same work, but a weight's gradient is summed over
    // rows in one product (1 thread) or as two partial products added (2 threads): float rounding, on
    // the scale of the largest gradient (an element that is a small difference of large terms may
    // differ by more than 1e-4 of itself), far below a missing or doubled sequence.
    Params<float> g1, g2;
    loss_and_grad(p, batch, &g1, 1);
    loss_and_grad(p, batch, &g2, 2);
    float largest = 0;
    for (float v : g1.data) largest = std::max(largest, std::abs(v));
    ASSERT_GT(largest, 1e-3f);
    for (std::size_t i = 0; i < g1.data.size(); ++i)
        ASSERT_NEAR(g1.data[i], g2.data[i], 1e-4 * std::abs(g1.data[i]) + 1e-5 * largest)
            << "gradient element " << i << " (largest |gradient| " << largest << ")";
}

TEST(Train, InitialLossIsNearLogVocab) {
    TrainConfig c = tiny(false);
    const Params<float> p = init_params(c, 1);
    const double loss = loss_and_grad<float>(p, random_batch(c, 4, 8, 2), nullptr, 1);
    EXPECT_NEAR(loss, std::log(11.0), 0.1);
}

TEST(Train, AdamWStepMatchesFormula) {
    std::vector<float> p{1.0f, -2.0f, 0.5f};
    const std::vector<float> g{0.1f, -0.3f, 0.0f};
    AdamWState s;
    AdamWConfig cfg;
    cfg.weight_decay = 0.1;
    adamw_step(p, g, s, cfg, 0.01);
    // step 1: m̂ = g, v̂ = g², update = lr·g/(|g| + eps) = lr·sign(g); decay first.
    EXPECT_NEAR(p[0], 1.0 * (1 - 0.001) - 0.01 * 0.1 / (0.1 + 1e-8), 1e-6);
    EXPECT_NEAR(p[1], -2.0 * (1 - 0.001) + 0.01 * 0.3 / (0.3 + 1e-8), 1e-6);
    EXPECT_NEAR(p[2], 0.5 * (1 - 0.001), 1e-7);
    // step 2 uses the moments
    adamw_step(p, g, s, cfg, 0.01);
    EXPECT_EQ(s.step, 2);
    EXPECT_NEAR(s.m[0], 0.1 * 0.1 + 0.9 * 0.1 * 0.1, 1e-7);
}

TEST(Train, ClipAndSchedule) {
    std::vector<float> g{3.0f, 4.0f};
    EXPECT_NEAR(clip_grad_norm(g, 1.0), 5.0, 1e-9);
    EXPECT_NEAR(std::hypot(g[0], g[1]), 1.0, 1e-5);
    EXPECT_NEAR(lr_schedule(0, 10, 100, 1.0), 0.1, 1e-12);
    EXPECT_NEAR(lr_schedule(10, 10, 100, 1.0), 1.0, 1e-12);
    EXPECT_NEAR(lr_schedule(100, 10, 100, 1.0), 0.1, 1e-12);
    EXPECT_NEAR(lr_schedule(55, 10, 100, 1.0), 0.55, 1e-12);
}

TEST(Train, RejectsOptionsOutOfRange) {
    TrainConfig c = tiny(false);
    c.n_layer = 7;
    EXPECT_THROW(make_params<float>(c), ConfigError);
    c = tiny(false);
    c.n_head = 3;
    EXPECT_THROW(make_params<float>(c), ConfigError);
    c = tiny(false);
    const Params<float> p = init_params(c, 1);
    Batch b = random_batch(c, 1, 9, 1);  // longer than the context of 8
    EXPECT_THROW(loss_and_grad<float>(p, b, nullptr, 1), Error);
    b = random_batch(c, 1, 4, 1);
    b.inputs[0] = 11;
    EXPECT_THROW(loss_and_grad<float>(p, b, nullptr, 1), Error);
    c = tiny(false);
    c.d_model = 18;  // head width 9: RoPE needs it even
    c.positions = PositionKind::Rope;
    EXPECT_THROW(make_params<float>(c), ConfigError);
    c = tiny(false);
    c.mlp = MlpKind::Gelu;
    c.d_ff = 2000;
    EXPECT_THROW(make_params<float>(c), ConfigError);
}

}  // namespace
}  // namespace attnviz

// compute_trace(): stage order and names per mode, shapes, probabilities, masks, permutation
// equivariance, bad configs, cancellation, determinism and a long text.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positive in Eigen's AVX-512 code
#endif
#include "core/trace.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>

#include "common/matrix_expect.hpp"
#include "core/error.hpp"
#include "core/ops.hpp"

namespace attnviz {
namespace {

std::vector<std::string> head_names(const Trace& t, int head) {
    std::vector<std::string> out;
    for (const Stage& s : t.stages)
        if (s.head == head) out.push_back(s.name);
    return out;
}
std::vector<std::string> global_names(const Trace& t) {
    return head_names(t, -1);
}

bool has_nan(const Mat& M) {
    return M.array().isNaN().any();
}

TEST(Trace, DefaultStageOrderAndNames) {
    Config c;
    const Trace t = compute_trace(c);
    EXPECT_EQ(t.n, 8);
    EXPECT_EQ(t.heads, 4);
    EXPECT_EQ(t.d_k, 16);
    EXPECT_EQ(global_names(t), (std::vector<std::string>{"one_hot", "embedding", "positional", "input",
                                                         "concat", "W_O", "output", "residual"}));
    for (int h = 0; h < 4; ++h) {
        EXPECT_EQ(head_names(t, h), (std::vector<std::string>{"W_Q", "W_K", "W_V", "Q", "K", "V", "scores",
                                                              "scaled", "masked", "weights", "head_output"}))
            << "head " << h;
    }
    // Heads are grouped: all of head 0, then head 1, ...
    EXPECT_LT(t.find("head_output", 0), t.find("W_Q", 1));
    EXPECT_EQ(t.stage_names().size(), 19u);
    for (const Stage& s : t.stages) {
        EXPECT_FALSE(s.title.empty()) << s.name;
        EXPECT_FALSE(s.formula.empty()) << s.name;
        EXPECT_GT(s.explanation.size(), 60u) << s.name;
        EXPECT_EQ(s.bytes, double(s.n_rows()) * s.n_cols() * 4) << s.name;
        const Mat M = s.matrix();
        EXPECT_EQ(M.rows(), s.n_rows()) << s.name;
        EXPECT_EQ(M.cols(), s.n_cols()) << s.name;
        EXPECT_FALSE(has_nan(M)) << s.name;
    }
}

TEST(Trace, OptionalStages) {
    Config c;
    c.source_text = "le chat bleu dort";
    c.positional = Positional::Rope;
    c.layernorm = LayerNormMode::Pre;
    Trace t = compute_trace(c);
    EXPECT_EQ(global_names(t),
              (std::vector<std::string>{"one_hot", "embedding", "positional", "input", "source", "layernorm",
                                        "concat", "W_O", "output", "residual"}));
    EXPECT_EQ(head_names(t, 1),
              (std::vector<std::string>{"W_Q", "W_K", "W_V", "Q", "K", "V", "Q_rot", "K_rot", "scores",
                                        "scaled", "masked", "weights", "head_output"}));
    EXPECT_EQ(t.m, 4);
    EXPECT_EQ(t.get("scores", 0)->shape_text(), "n×m = 8×4");
    EXPECT_EQ(t.get("K", 0)->rows.label(1), "chat");
    EXPECT_EQ(t.get("Q", 0)->rows.label(3), "creature");
    EXPECT_EQ(t.get("Q", 0)->shape_text(), "n×d_k = 8×16");
    EXPECT_EQ(t.vocab->size(), 12u);  // 8 query words, then le chat bleu dort

    c = Config();
    c.positional = Positional::Alibi;
    c.layernorm = LayerNormMode::Post;
    c.residual = false;
    t = compute_trace(c);
    EXPECT_EQ(global_names(t), (std::vector<std::string>{"one_hot", "embedding", "positional", "input",
                                                         "concat", "W_O", "output", "layernorm_post"}));
    EXPECT_EQ(head_names(t, 0),
              (std::vector<std::string>{"W_Q", "W_K", "W_V", "Q", "K", "V", "alibi", "scores", "scaled",
                                        "masked", "weights", "head_output"}));
    // ALiBi: scaled = S/√d_k + B.
    const Mat S = t.get("scores", 2)->matrix(), B = t.get("alibi", 2)->matrix();
    EXPECT_MATRIX_NEAR(t.get("scaled", 2)->matrix(), Mat(S / 4.0f + B), 1e-6);
    EXPECT_FLOAT_EQ(B(0, 3), float(-3 * std::pow(2.0, -8.0 * 3 / 4)));
    EXPECT_TRUE(t.get("positional")->matrix().isZero());
}

TEST(Trace, LinearStages) {
    Config c;
    c.attention = AttentionKind::Linear;
    const Trace t = compute_trace(c);
    EXPECT_EQ(head_names(t, 0),
              (std::vector<std::string>{"W_Q", "W_K", "W_V", "Q", "K", "V", "phi_Q", "phi_K", "KV",
                                        "normalizer", "weights", "head_output"}));
    EXPECT_EQ(t.get("KV", 0)->shape_text(), "d_k×d_v = 16×16");
    EXPECT_EQ(t.get("normalizer", 0)->shape_text(), "n×1 = 8×1");
    // The implied weights reproduce the O(n) output.
    const Mat A = t.get("weights", 3)->matrix(), Vv = t.get("V", 3)->matrix();
    EXPECT_MATRIX_NEAR(t.get("head_output", 3)->matrix(), Mat(A * Vv), 1e-4);
}

TEST(Trace, WeightsAreProbabilitiesAndMaskedCellsAreExactlyZero) {
    for (MaskKind mk : {MaskKind::None, MaskKind::Causal, MaskKind::Window, MaskKind::Padding}) {
        Config c;
        c.mask = mk;
        c.window = 2;
        c.valid_length = 5;
        const Trace t = compute_trace(c);
        const BoolMat allowed = make_mask(c, t.n, t.m);
        for (int h = 0; h < t.heads; ++h) {
            const Mat A = t.get("weights", h)->matrix();
            const Mat M = t.get("masked", h)->matrix();
            for (int i = 0; i < t.n; ++i) {
                EXPECT_NEAR(A.row(i).sum(), 1.0, 1e-5)
                    << "mask " << to_string(mk) << " head " << h << " row " << i;
                for (int j = 0; j < t.m; ++j) {
                    if (!allowed(i, j)) {
                        EXPECT_EQ(A(i, j), 0.0f) << "(" << i << ", " << j << ")";
                        EXPECT_TRUE(std::isinf(M(i, j)) && M(i, j) < 0) << "(" << i << ", " << j << ")";
                    } else {
                        EXPECT_GT(A(i, j), 0.0f);
                    }
                }
            }
            EXPECT_EQ(t.row_entropy[std::size_t(h)].size(), t.n);
        }
    }
}

TEST(Trace, ScaledIsScoresOverSqrtDkAndDotIsUnscaled) {
    Config c;
    Trace t = compute_trace(c);
    EXPECT_MATRIX_NEAR(t.get("scaled", 1)->matrix(), Mat(t.get("scores", 1)->matrix() / 4.0f), 1e-6);
    EXPECT_FALSE(t.get("scaled", 1)->stored());
    EXPECT_TRUE(t.get("scores", 1)->stored());
    c.scoring = Scoring::Dot;
    c.temperature = 0.5;
    t = compute_trace(c);
    EXPECT_MATRIX_NEAR(t.get("scaled", 1)->matrix(), t.get("scores", 1)->matrix(), 1e-6);
    EXPECT_NE(t.get("scaled", 1)->formula.find("no √d_k"), std::string::npos);
    EXPECT_MATRIX_NEAR(t.get("weights", 1)->matrix(), softmax_rows(t.get("masked", 1)->matrix(), 0.5), 1e-6);
}

TEST(Trace, FusedSoftmaxMatchesOpsAndEntropy) {
    for (Positional p : {Positional::Sinusoidal, Positional::Alibi}) {
        Config c;
        c.positional = p;
        c.mask = MaskKind::Causal;
        c.temperature = 0.8;
        c.custom_mask.set_blocked(0, 0, true);
        const Trace t = compute_trace(c);
        for (int h = 0; h < t.heads; ++h) {
            const Mat A = t.get("weights", h)->matrix();
            EXPECT_MATRIX_NEAR(A, softmax_rows(t.get("masked", h)->matrix(), 0.8), 1e-5);
            EXPECT_MATRIX_NEAR(t.row_entropy[std::size_t(h)], row_entropy(A), 1e-4);
        }
    }
}

TEST(Trace, DefaultSoftmaxIsNotSaturated) {
    const Trace t = compute_trace(Config());
    double mean_max = 0;
    for (int h = 0; h < t.heads; ++h) mean_max += t.get("weights", h)->matrix().rowwise().maxCoeff().mean();
    mean_max /= t.heads;
    EXPECT_LT(mean_max, 0.75) << "typical largest weight per row";
    EXPECT_GT(mean_max, 1.5 / t.m) << "not uniform either";
}

TEST(Trace, PermutingTokensPermutesOutputsWithoutPositions) {
    Config a;
    a.positional = Positional::None;
    a.text = "the cat sat on a mat";
    Config b = a;
    b.text = "mat on the a cat sat";  // permutation: b[i] = a[perm[i]]
    const std::vector<int> perm = {5, 3, 0, 4, 1, 2};
    const Trace ta = compute_trace(a), tb = compute_trace(b);
    const Mat oa = ta.get("residual")->matrix(), ob = tb.get("residual")->matrix();
    Mat oa_perm(oa.rows(), oa.cols());
    for (int i = 0; i < 6; ++i) oa_perm.row(i) = oa.row(perm[std::size_t(i)]);
    EXPECT_MATRIX_NEAR(ob, oa_perm, 1e-4);
    // With sinusoidal positions the same permutation changes the outputs.
    a.positional = b.positional = Positional::Sinusoidal;
    const Mat pa = compute_trace(a).get("residual")->matrix(),
              pb = compute_trace(b).get("residual")->matrix();
    Mat pa_perm(pa.rows(), pa.cols());
    for (int i = 0; i < 6; ++i) pa_perm.row(i) = pa.row(perm[std::size_t(i)]);
    EXPECT_GT((pb - pa_perm).cwiseAbs().maxCoeff(), 1e-2);
}

TEST(Trace, FullyMaskedRowGivesZeroWeightsAndZeroOutputNeverNaN) {
    for (AttentionKind kind : {AttentionKind::Softmax, AttentionKind::Linear}) {
        for (Scoring sc : {Scoring::ScaledDot, Scoring::Gaussian}) {
            Config c;
            c.attention = kind;
            c.scoring = sc;
            c.mask = MaskKind::Custom;
            for (int j = 0; j < 8; ++j) c.custom_mask.set_blocked(2, j, true);
            c.custom_mask.set_blocked(4, 0, true);
            const Trace t = compute_trace(c);
            for (const Stage& s : t.stages) EXPECT_FALSE(has_nan(s.matrix())) << s.name << " head " << s.head;
            for (int h = 0; h < t.heads; ++h) {
                EXPECT_TRUE(t.get("weights", h)->matrix().row(2).isZero()) << "head " << h;
                EXPECT_TRUE(t.get("head_output", h)->matrix().row(2).isZero()) << "head " << h;
                EXPECT_EQ(t.get("weights", h)->matrix()(4, 0), 0.0f);
                EXPECT_NEAR(t.get("weights", h)->matrix().row(4).sum(), 1.0, 1e-5);
            }
            EXPECT_TRUE(t.get("concat")->matrix().row(2).isZero());
        }
    }
}

TEST(Trace, InvalidConfigsThrowClearErrors) {
    Config c;
    c.heads = 3;
    try {
        compute_trace(c);
        FAIL() << "heads = 3 with d_model = 64 must be rejected";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("heads"), std::string::npos) << e.what();
    }
    c = Config();
    c.temperature = 0;
    EXPECT_THROW(compute_trace(c), ConfigError);
    c = Config();
    c.text = "   ";
    EXPECT_THROW(compute_trace(c), Error);
    c = Config();
    c.text = "ok \xC3\x28 bad";
    EXPECT_THROW(compute_trace(c), Error);
    c = Config();
    c.preset = HeadPreset::PreviousToken;
    c.positional = Positional::Rope;
    try {
        compute_trace(c);
        FAIL() << "previous-token head without sinusoidal PE must be rejected";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("sinusoidal"), std::string::npos) << e.what();
    }
}

TEST(Trace, CancelThrowsCancelled) {
    std::atomic<bool> cancel{true};
    ComputeOptions o;
    o.cancel = &cancel;
    EXPECT_THROW(compute_trace(Config(), o), Cancelled);
}

// Computes `c` on 1 and on 2 threads and expects every stage bit for bit equal; returns the 2-thread one.
Trace expect_same_on_one_and_two_threads(const Config& c) {
    ComputeOptions one, two;
    one.threads = 1;
    two.threads = 2;
    const Trace a = compute_trace(c, one);
    Trace b = compute_trace(c, two);
    EXPECT_EQ(a.stages.size(), b.stages.size());
    for (std::size_t s = 0; s < std::min(a.stages.size(), b.stages.size()); ++s)
        EXPECT_TRUE(a.stages[s].matrix() == b.stages[s].matrix())
            << a.stages[s].name << " head " << a.stages[s].head;
    return b;
}

TEST(Trace, DeterministicForASeedAndThreadCount) {
    Config c;
    c.length = 40;
    const Trace a = expect_same_on_one_and_two_threads(c);
    c.seed = 43;
    const Trace d = compute_trace(c);
    EXPECT_FALSE(d.get("W_Q", 0)->matrix() == a.get("W_Q", 0)->matrix());
    EXPECT_GT(a.compute_seconds, 0.0);
}

TEST(Trace, LengthTilesTokensCyclically) {
    Config c;
    c.text = "a b c";
    c.length = 7;
    const Tokenized tk = tokenize_config(c);
    EXPECT_EQ(tk.query_tokens, (std::vector<std::string>{"a", "b", "c", "a", "b", "c", "a"}));
    EXPECT_EQ(tk.query_ids, (std::vector<int>{0, 1, 2, 0, 1, 2, 0}));
    EXPECT_EQ(tk.vocab.size(), 3u);
    // One-hot times the table is the embedding: repeated tokens get identical rows.
    const Trace t = compute_trace(c);
    const Mat E = t.get("embedding")->matrix();
    EXPECT_TRUE(E.row(0) == E.row(3));
    EXPECT_TRUE(t.get("one_hot")->matrix().row(6) == t.get("one_hot")->matrix().row(0));
}

TEST(Trace, LongSoftmaxTrace4096) {
#if defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "left out under ThreadSanitizer (too slow there); the same trace runs under ASan + "
                    "UBSan, and the threaded trace tests cover the pool under TSan";
#endif
    Config c;
    c.length = 4096;
    c.heads = 2;
    c.d_model = 32;
    c.mask = MaskKind::Causal;
    const Trace t = compute_trace(c);
    EXPECT_EQ(t.n, 4096);
    const Mat A = t.get("weights", 1)->matrix();
    EXPECT_NEAR(A.row(4095).sum(), 1.0, 1e-4);
    EXPECT_NEAR(A.row(0).sum(), 1.0, 1e-6);
    EXPECT_EQ(A(0, 1), 0.0f);
    EXPECT_FALSE(has_nan(t.get("residual")->matrix()));
    // scaled and masked are derived, not stored: the trace holds about 2 n×m matrices per head.
    EXPECT_LT(t.stored_bytes(), 2.2 * 2 * 4096.0 * 4096.0 * 4);
}

// Linear attention computed on the pool, long enough for every thread to take several chunks:
// the same numbers on 1 and 2 threads (also the ThreadSanitizer run's linear-attention trace).
// Causal linear attention over n tokens, 2 heads of width 8 (cheap per token: long n stays fast).
Config linear_causal(int n) {
    Config c;
    c.attention = AttentionKind::Linear;
    c.length = n;
    c.d_model = 16;
    c.heads = 2;
    c.mask = MaskKind::Causal;
    return c;
}

TEST(Trace, LinearAttentionOnThePoolMatchesOneThread) {
    const Trace b = expect_same_on_one_and_two_threads(linear_causal(1024));
    EXPECT_FALSE(has_nan(b.get("output")->matrix()));
}

TEST(Trace, LinearAttentionOmitsHugeImpliedWeights) {
#if defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "left out under ThreadSanitizer (11 s there, a memory check): the same trace runs under "
                    "ASan + UBSan, and LinearAttentionOnThePoolMatchesOneThread covers the pool under TSan";
#endif
    const Trace t = compute_trace(linear_causal(16384));
    EXPECT_EQ(t.get("weights", 0), nullptr);
    EXPECT_NE(t.get("head_output", 0)->explanation.find("not shown"), std::string::npos);
    EXPECT_FALSE(has_nan(t.get("output")->matrix()));
}

TEST(Trace, FlopsAndBytesAreAccounted) {
    const Trace t = compute_trace(Config());
    EXPECT_DOUBLE_EQ(t.get("scores", 0)->flops, 2.0 * 8 * 8 * 16);
    EXPECT_DOUBLE_EQ(t.get("Q", 0)->flops, 2.0 * 8 * 64 * 16);
    EXPECT_GT(t.total_flops(), 0);
    double all = 0;
    for (const Stage& s : t.stages) all += s.bytes;
    EXPECT_LT(t.stored_bytes(), all);  // scaled, masked are derived lazily
    EXPECT_EQ(t.get("scores", 0)->rows.label(0), "a");
    EXPECT_EQ(t.get("W_Q", 0)->rows.label(5), "5");
}

}  // namespace
}  // namespace attnviz

namespace attnviz {
namespace {

TEST(Trace, PositionalRowsAreLabelledByPositionNotWord) {
    Config c;
    const Trace t = compute_trace(c);
    const Stage* P = t.get("positional");
    ASSERT_NE(P, nullptr);
    EXPECT_EQ(P->rows.label(0), "pos 0");
    EXPECT_EQ(P->rows.label(P->n_rows() - 1), "pos " + std::to_string(P->n_rows() - 1));
    EXPECT_EQ(P->rows.name, "query tokens");  // the dump manifest's axis name is unchanged
    const Stage* E = t.get("embedding");
    ASSERT_NE(E, nullptr);
    EXPECT_NE(E->rows.label(0), "pos 0");  // the embedding still shows words
}

}  // namespace
}  // namespace attnviz

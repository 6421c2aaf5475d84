// The translate task: its language pair (determinism, gold alignments, the rules), the alignment
// score on hand-made attention, T5's relative position buckets, the encoder–decoder's backward
// against finite differences in double, and a short run that reaches alignment >= 0.8.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>

#include "core/error.hpp"
#include "core/task_registry.hpp"
#include "core/train_seq2seq.hpp"
#include "core/translate.hpp"

namespace attnviz {
namespace {

TEST(Translate, HandMadeSentenceAndItsAlignment) {
    const SentencePair p = translate_sentence({"the", "big", "red", "dog", "sees", "a", "cat", "."});
    const std::vector<std::string> target = {"lo", "hundo", "grando", "roso", "una", "kato", "vidas", "."};
    EXPECT_EQ(p.target, target);
    // lo<-the(0) hundo<-dog(3) grando<-big(1) roso<-red(2) una<-a(5) kato<-cat(6) vidas<-sees(4) .<-.(7)
    const std::vector<int> gold = {0, 3, 1, 2, 5, 6, 4, 7};
    EXPECT_EQ(p.alignment, gold);
}

TEST(Translate, RejectsSentencesOutsideTheGrammar) {
    EXPECT_THROW(translate_sentence({"the", "dog", "sees", "."}), ConfigError);         // no object
    EXPECT_THROW(translate_sentence({"dog", "sees", "a", "cat", "."}), ConfigError);    // no determiner
    EXPECT_THROW(translate_sentence({"the", "dog", "sees", "a", "cat"}), ConfigError);  // no end mark
    EXPECT_EQ(translate_sentence({"a", "fox", "hears", "my", "old", "king", "?"}).target,
              (std::vector<std::string>{"una", "vulpo", "mio", "rego", "malno", "audas", "?"}));
    EXPECT_THROW(translate_sentence({"the", "big", "old", "red", "dog", "sees", "a", "cat", "."}),
                 ConfigError);  // three adjectives on one noun
    EXPECT_THROW(translate_sentence({"the", "dog", "sees", "a", "zebra", "."}), ConfigError);
}

TEST(Translate, GeneratorIsDeterministicAndItsAlignmentsAreTheTranslations) {
    const TranslateLexicon& x = translate_lexicon();
    auto index_in = [](const std::vector<std::string>& list, const std::string& w) {
        return int(std::find(list.begin(), list.end(), w) - list.begin());
    };
    int non_diagonal = 0;
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
        const int adjectives = int(seed % 5);
        const SentencePair a = generate_sentence_pair(seed, adjectives),
                           b = generate_sentence_pair(seed, adjectives);
        ASSERT_EQ(a.source, b.source);
        ASSERT_EQ(a.target, b.target);
        ASSERT_EQ(a.source.size(), std::size_t(6 + adjectives));
        ASSERT_EQ(a.target.size(), a.source.size());
        // Every source word once in its sentence, and the alignment a permutation of its positions.
        EXPECT_EQ(std::set<std::string>(a.source.begin(), a.source.end()).size(), a.source.size());
        EXPECT_EQ(std::set<int>(a.alignment.begin(), a.alignment.end()).size(), a.source.size());
        for (std::size_t t = 0; t < a.target.size(); ++t) {
            const std::string& src = a.source[std::size_t(a.alignment[t])];
            const std::string& tgt = a.target[t];
            const std::pair<const std::vector<std::string>*, const std::vector<std::string>*> classes[] = {
                {&x.src_det, &x.tgt_det},
                {&x.src_adj, &x.tgt_adj},
                {&x.src_noun, &x.tgt_noun},
                {&x.src_verb, &x.tgt_verb}};
            bool found = index_in(x.stops, src) < int(x.stops.size()) && tgt == src;
            for (const auto& [s, g] : classes)
                if (index_in(*s, src) < int(s->size())) found = index_in(*g, tgt) == index_in(*s, src);
            EXPECT_TRUE(found) << "seed " << seed << ": target word " << t << " '" << tgt << "' aligned to '"
                               << src << "'";
            non_diagonal += a.alignment[t] != int(t);
        }
        // The verb is the target's last word before the end mark.
        EXPECT_EQ(index_in(x.tgt_verb, a.target[a.target.size() - 2]) < int(x.tgt_verb.size()), true);
    }
    EXPECT_GT(non_diagonal, 200);  // the alignment is no diagonal
    EXPECT_NE(generate_sentence_pair(1, 2).source, generate_sentence_pair(2, 2).source);
}

TEST(Translate, BatchShapesStartTokenEndAndPadding) {
    const TranslateBatch b = translate_batch(20, 2, 9, 10);
    EXPECT_EQ(b.batch.m, 8);  // every source: 6 words and 2 adjectives
    EXPECT_EQ(b.batch.n, 10);
    ASSERT_EQ(b.batch.source.size(), 160u);
    ASSERT_EQ(b.alignment.size(), 20u);
    for (int r = 0; r < 20; ++r) {
        const int* src = b.batch.source.data() + r * 8;
        const int* in = b.batch.inputs.data() + r * 10;
        const int* tg = b.batch.targets.data() + r * 10;
        EXPECT_EQ(in[0], kTranslatePad);
        for (int t = 1; t <= 8; ++t) EXPECT_EQ(in[t], tg[t - 1]);  // teacher forcing
        EXPECT_EQ(in[9], kTranslatePad);                           // padding after the target
        EXPECT_EQ(tg[8], kTranslateEos);
        EXPECT_EQ(tg[9], -1);  // padding is not scored
        // The gold alignment is the sentence's (the source read back as words).
        const auto& gold = b.alignment[std::size_t(r)];
        std::vector<std::string> w;
        for (int j = 0; j < 8; ++j) {
            const std::string& t = translate_tokens()[std::size_t(src[j])];
            w.push_back(t[0] == ' ' ? t.substr(1) : t);
        }
        const SentencePair pair = translate_sentence(w);
        for (int t = 0; t < 8; ++t) {
            EXPECT_EQ(gold[std::size_t(t)], pair.alignment[std::size_t(t)]);
            EXPECT_EQ(tg[t], translate_id(pair.target[std::size_t(t)]));
        }
        EXPECT_EQ(gold[8], -1);  // </s> and the padding have no source word
        EXPECT_EQ(gold[9], -1);
    }
    const TranslateBatch again = translate_batch(20, 2, 9, 10);
    EXPECT_EQ(again.batch.source, b.batch.source);
    EXPECT_EQ(again.batch.targets, b.batch.targets);
    EXPECT_EQ(translate_id("dog"), translate_id(" dog"));
    EXPECT_EQ(translate_id("zebra"), kTranslateUnk);
}

// The task's batches: every decoder row count is the task's context; the training batches' sources
// vary in length from batch to batch (0-3 adjectives), the held-out ones have 3 adjectives.
TEST(Translate, TaskBatchesFillTheContext) {
    const Task t = translate_task();
    std::set<int> lengths;
    for (std::uint64_t seed = 0; seed < 40; ++seed) {
        const TaskBatch b = t.train_batch(2, seed);
        EXPECT_EQ(b.batch.n, t.context);
        lengths.insert(b.batch.m);
        EXPECT_EQ(t.heldout_batch(2, seed).batch.m, 9);
    }
    EXPECT_EQ(lengths, (std::set<int>{6, 7, 8, 9}));
}

MatT<float> mat(int n, int m, std::initializer_list<float> v) {
    MatT<float> P(n, m);
    auto it = v.begin();
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j) P(i, j) = *it++;
    return P;
}

TEST(Translate, AlignmentScoreOnHandMadeAttention) {
    // 3 target rows, 3 source columns; gold: row 0 -> 2, row 1 -> 0, row 2 -> none.
    const std::vector<int> gold = {2, 0, -1};
    const MatT<float> a = mat(3, 3, {0.1f, 0.2f, 0.7f, 0.6f, 0.3f, 0.1f, 1, 0, 0});
    int rows = 0;
    EXPECT_DOUBLE_EQ(alignment_score({a}, gold, &rows), 1.0);
    EXPECT_EQ(rows, 2);  // the row without a source word is not counted
    // Head b alone gets row 0 wrong (its largest is column 0) ...
    const MatT<float> b = mat(3, 3, {0.5f, 0.2f, 0.3f, 0.5f, 0.4f, 0.1f, 1, 0, 0});
    EXPECT_DOUBLE_EQ(head_alignment_score(b, gold), 0.5);
    // ... but the mean of a and b puts row 0 on column 2 (0.5 vs 0.3): both right.
    EXPECT_DOUBLE_EQ(alignment_score({a, b}, gold), 1.0);
    // A head that outweighs: row 1 of c looks at column 1 strongly enough to move the mean there.
    const MatT<float> c = mat(3, 3, {0, 0, 1, 0, 1, 0, 1, 0, 0});
    EXPECT_DOUBLE_EQ(alignment_score({a, b, c}, gold), 0.5);
    // Ties go to the first largest: a uniform row counts as column 0.
    const MatT<float> u = mat(3, 3, {1.f / 3, 1.f / 3, 1.f / 3, 1.f / 3, 1.f / 3, 1.f / 3, 1, 0, 0});
    EXPECT_DOUBLE_EQ(alignment_score({u}, gold), 0.5);
    EXPECT_DOUBLE_EQ(alignment_score({}, gold), 0.0);
}

TEST(Translate, T5RelativeBucketsMatchTransformers) {
    // From transformers' T5Attention._relative_position_bucket (32 buckets, max distance 128).
    const int rel[] = {-300, -128, -40, -20, -12, -9, -8, -7, -1, 0, 1, 7, 8, 9, 12, 20, 40, 128, 300};
    const int bi[] = {15, 15, 12, 10, 9, 8, 8, 7, 1, 0, 17, 23, 24, 24, 25, 26, 28, 31, 31};
    const int uni[] = {31, 31, 23, 17, 12, 9, 8, 7, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (std::size_t k = 0; k < std::size(rel); ++k) {
        EXPECT_EQ(s2s_detail::t5_bucket(rel[k], true), bi[k]) << "relative " << rel[k];
        EXPECT_EQ(s2s_detail::t5_bucket(rel[k], false), uni[k]) << "relative " << rel[k];
    }
}

TrainConfig tiny_seq2seq() {
    TrainConfig c;
    c.encoder_layers = 2;
    c.n_layer = 2;
    c.n_head = 2;
    c.d_model = 16;
    c.d_ff = 6;
    c.context = 8;
    c.vocab_size = 9;
    return c;
}

TEST(Translate, EncoderDecoderLayoutHasT5Names) {
    const TrainConfig c = tiny_seq2seq();
    const std::vector<ParamView> layout = param_layout(c);
    auto has = [&](const std::string& name, std::vector<int> shape) {
        for (const ParamView& v : layout)
            if (v.name == name) return v.shape == shape;
        return false;
    };
    EXPECT_TRUE(has("shared.weight", {9, 16}));
    EXPECT_TRUE(has("encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", {32, 2}));
    EXPECT_TRUE(has("encoder.block.1.layer.1.DenseReluDense.wi_0.weight", {6, 16}));
    EXPECT_TRUE(has("decoder.block.1.layer.1.EncDecAttention.k.weight", {16, 16}));
    EXPECT_TRUE(has("decoder.block.0.layer.2.DenseReluDense.wo.weight", {16, 6}));
    EXPECT_TRUE(has("decoder.final_layer_norm.weight", {16}));
    EXPECT_TRUE(has("lm_head.weight", {9, 16}));
    EXPECT_FALSE(has("decoder.block.1.layer.0.SelfAttention.relative_attention_bias.weight", {32, 2}));
}

TEST(Translate, EncoderDecoderBackwardMatchesFiniteDifferences) {
    const TrainConfig c = tiny_seq2seq();
    Params<double> p = make_params<double>(c);
    std::mt19937_64 rng(3);
    std::normal_distribution<double> normal(0.0, 0.4);
    for (double& x : p.data) x = normal(rng);
    for (const ParamView& v : p.layout)
        if (v.shape.size() == 1)
            for (std::size_t i = 0; i < v.size; ++i) p.data[v.offset + i] += 1.0;  // gains near 1
    Batch b;
    b.B = 2;
    b.m = 5;
    b.n = 4;
    std::uniform_int_distribution<int> tok(0, c.vocab_size - 1);
    for (int i = 0; i < b.B * b.m; ++i) b.source.push_back(tok(rng));
    for (int i = 0; i < b.B * b.n; ++i) {
        b.inputs.push_back(tok(rng));
        b.targets.push_back(i % 3 == 2 ? -1 : tok(rng));
    }
    Params<double> grad;
    loss_and_grad(p, b, &grad, 1);
    const double h = 1e-5;
    Params<double> q = p;
    int checked = 0;
    for (const ParamView& v : p.layout) {
        const std::size_t stride = v.size > 40 ? 7 : 1;
        for (std::size_t i = 0; i < v.size; i += stride) {
            const std::size_t k = v.offset + i;
            q.data[k] = p.data[k] + h;
            const double up = loss_and_grad<double>(q, b, nullptr, 1);
            q.data[k] = p.data[k] - h;
            const double down = loss_and_grad<double>(q, b, nullptr, 1);
            q.data[k] = p.data[k];
            const double fd = (up - down) / (2 * h), an = grad.data[k];
            EXPECT_NEAR(an, fd, 1e-7 + 1e-5 * std::max(std::abs(an), std::abs(fd)))
                << v.name << "[" << i << "]";
            ++checked;
        }
    }
    EXPECT_GT(checked, 300);
    // Two threads give the same gradient to rounding.
    Params<double> g2;
    loss_and_grad(p, b, &g2, 2);
    for (std::size_t k = 0; k < g2.data.size(); ++k) ASSERT_NEAR(g2.data[k], grad.data[k], 1e-12);
}

TEST(Translate, RegistryEntryAndItsPreset) {
    const TaskInfo* info = find_task("translate");
    ASSERT_NE(info, nullptr);
    EXPECT_TRUE(info->encoder_decoder);
    ASSERT_EQ(info->scores.size(), 1u);
    EXPECT_STREQ(head_score_name(info->scores[0]), "alignment");
    const Task t = make_task(*info, TaskRequest{});
    EXPECT_EQ(t.figure_names, std::vector<std::string>{"alignment"});
    EXPECT_EQ(t.vocab_size, int(translate_tokens().size()));
    const TaskBatch b = t.train_batch(4, 7);
    EXPECT_EQ(b.notes.size(), 4u);
    EXPECT_EQ(b.batch.B, 4);
    EXPECT_GT(b.batch.m, 0);
}

}  // namespace
}  // namespace attnviz

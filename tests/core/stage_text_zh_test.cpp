// The single layer's stage texts in Chinese: every stage of the default configuration and the tour's
// variants (softmax, scaled dot-product, causal or no mask, sinusoidal positions, residual; LayerNorm
// and cross-attention's source too) has a Chinese title and paragraph beside the English one, quoting
// the same numbers; variants without a Chinese text show English; the English texts do not depend on
// the Chinese ones.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "core/stage_catalogue.hpp"

namespace attnviz {
namespace {

// The numbers a text quotes ("64", "0.5", "2.82843"), as a set.
std::set<std::string> numbers_in(const std::string& text) {
    static const std::regex number("[0-9]+(\\.[0-9]+)?");
    std::set<std::string> out;
    for (std::sregex_iterator it(text.begin(), text.end(), number), end; it != end; ++it)
        out.insert(it->str());
    return out;
}

bool has_cjk(const std::string& text) {
    // Han ideographs are three UTF-8 bytes starting with 0xE4..0xE9.
    for (unsigned char c : text)
        if (c >= 0xE4 && c <= 0xE9) return true;
    return false;
}

const std::set<std::string>& translated() {
    static const std::set<std::string> names = {
        "one_hot",     "embedding", "positional", "input",  "W_Q",     "W_K",    "W_V",
        "Q",           "K",         "V",          "scores", "scaled",  "masked", "weights",
        "head_output", "concat",    "W_O",        "output", "residual"};
    return names;
}

std::vector<Config> tour_configs() {
    std::vector<Config> out;
    Config base;  // the default: softmax, scaled dot, no mask, sinusoidal positions, residual
    out.push_back(base);
    Config causal = base;
    causal.mask = MaskKind::Causal;
    causal.text = "the cat sat on the mat and the cat slept";
    causal.d_model = 48, causal.heads = 3, causal.temperature = 0.5;
    out.push_back(causal);
    Config small = base;
    small.d_model = 32, small.heads = 2, small.d_k = 8, small.d_v = 4, small.temperature = 2.5;
    small.mask = MaskKind::Window, small.window = 3;
    out.push_back(small);
    Config plain = base;
    plain.scoring = Scoring::Dot, plain.positional = Positional::Learned, plain.heads = 8;
    plain.mask = MaskKind::Padding, plain.valid_length = 5;
    out.push_back(plain);
    Config none = base;
    none.positional = Positional::None, none.heads = 1;
    out.push_back(none);
    Config pre = base;
    pre.layernorm = LayerNormMode::Pre, pre.source_text = "le chat est assis sur le tapis";
    out.push_back(pre);
    Config post = base;
    post.layernorm = LayerNormMode::Post, post.mask = MaskKind::Causal;
    out.push_back(post);
    return out;
}

// Stages the controls switch on (pre- or post-LayerNorm, a second text for cross-attention).
const std::set<std::string>& translated_optional() {
    static const std::set<std::string> names = {"layernorm", "layernorm_post", "source"};
    return names;
}

TEST(StageTextZh, NumbersInFindsEveryNumber) {
    EXPECT_EQ(numbers_in("d_k = 16 and √d_k = 4, T = 2.5; head 0"),
              (std::set<std::string>{"16", "4", "2.5", "0"}));
    EXPECT_EQ(numbers_in("词元的独热编码"), std::set<std::string>{});
}

TEST(StageTextZh, EveryTranslatedStageHasChineseWithTheSameNumbers) {
    std::set<std::string> optional_seen;
    for (const Config& c : tour_configs()) {
        const Trace t = compute_trace(c);
        std::set<std::string> seen;
        for (const Stage& st : t.stages) {
            if (!translated().count(st.name) && !translated_optional().count(st.name)) continue;
            (translated().count(st.name) ? seen : optional_seen).insert(st.name);
            const std::string where = st.name + " head " + std::to_string(st.head) + " (d_model " +
                                      std::to_string(c.d_model) + ", h " + std::to_string(c.heads) + ")";
            ASSERT_FALSE(st.title_zh.empty()) << where;
            ASSERT_FALSE(st.explanation_zh.empty()) << where;
            EXPECT_NE(st.title_zh, st.title) << where;
            EXPECT_NE(st.explanation_zh, st.explanation) << where;
            EXPECT_TRUE(has_cjk(st.title_zh)) << where << ": " << st.title_zh;
            EXPECT_TRUE(has_cjk(st.explanation_zh)) << where << ": " << st.explanation_zh;
            EXPECT_EQ(numbers_in(st.explanation_zh), numbers_in(st.explanation))
                << where << "\nEN: " << st.explanation << "\nZH: " << st.explanation_zh;
            EXPECT_EQ(numbers_in(st.title_zh), numbers_in(st.title)) << where;
            EXPECT_EQ(st.title_for(TextLanguage::Chinese), st.title_zh);
            EXPECT_EQ(st.explanation_for(TextLanguage::English), st.explanation);
        }
        EXPECT_EQ(seen, translated()) << "a translated stage is missing from the trace";
    }
    EXPECT_EQ(optional_seen, translated_optional());
}

TEST(StageTextZh, LayerStageTextTakesTheLanguageAndKeepsTheFormula) {
    Config c;
    c.mask = MaskKind::Causal;
    const Trace t = compute_trace(c);
    LayerTextContext x;
    x.n = t.n, x.m = t.m, x.V = int(t.vocab->size());
    for (const Stage& st : t.stages) {
        const StageText en = layer_stage_text(c, x, st.name, st.head);
        const StageText zh = layer_stage_text(c, x, st.name, st.head, TextLanguage::Chinese);
        EXPECT_EQ(en.title, st.title) << st.name;  // English is the default and what the trace carries
        EXPECT_EQ(en.explanation, st.explanation) << st.name;
        EXPECT_EQ(zh.formula, en.formula) << st.name;  // math stays math
        if (translated().count(st.name)) {
            EXPECT_EQ(zh.title, st.title_zh) << st.name;
            EXPECT_EQ(zh.explanation, st.explanation_zh) << st.name;
        }
    }
}

TEST(StageTextZh, UntranslatedVariantsFallBackToEnglishNeverEmpty) {
    std::vector<Config> configs;
    Config additive;
    additive.scoring = Scoring::Additive;
    configs.push_back(additive);
    Config kernel;
    kernel.scoring = Scoring::Gaussian;
    configs.push_back(kernel);
    Config linear;
    linear.attention = AttentionKind::Linear;
    configs.push_back(linear);
    Config rope;
    rope.positional = Positional::Rope;
    configs.push_back(rope);
    Config alibi;
    alibi.positional = Positional::Alibi;
    alibi.mask = MaskKind::Causal;
    configs.push_back(alibi);
    Config pre;
    pre.layernorm = LayerNormMode::Pre;
    pre.source_text = "le chat est assis";
    configs.push_back(pre);
    for (const Config& c : configs) {
        const Trace t = compute_trace(c);
        for (const Stage& st : t.stages) {
            EXPECT_FALSE(st.title_for(TextLanguage::Chinese).empty()) << st.name;
            EXPECT_FALSE(st.explanation_for(TextLanguage::Chinese).empty()) << st.name;
            // Chinese only where the stage has it: an English paragraph is never replaced by itself.
            if (!st.explanation_zh.empty()) {
                EXPECT_TRUE(has_cjk(st.explanation_zh)) << st.name;
            }
        }
        // The stages the brief leaves in English for these variants have no Chinese text.
        for (const char* name : {"alibi", "Q_rot", "K_rot", "phi_Q", "phi_K", "KV", "normalizer"}) {
            const Stage* st = t.get(name, 0) ? t.get(name, 0) : t.get(name);
            if (st) {
                EXPECT_TRUE(st->explanation_zh.empty()) << name;
            }
        }
    }
}

}  // namespace
}  // namespace attnviz

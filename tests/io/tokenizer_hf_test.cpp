// Agreement with Hugging Face's own `tokenizers` library: tokenizer.json files of every supported kind
// (WordPiece, Unigram, SentencePiece-style and byte-level BPE), trained by HF and completed as real
// checkpoints are, with the ids HF gives for texts in English, code, white-space runs, emoji, CJK,
// accents, mixed scripts and U+180E -- with and without the special tokens of the post-processor, a
// sentence pair, and decode(). The data in tests/data/hf_tokenizers is made by
// tests/reference/hf_tokenizers/make_reference.js (see tests/reference/hf_tokenizers/README.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/test_files.hpp"
#include "io/files.hpp"
#include "io/tokenizer.hpp"

namespace attnviz {
namespace {

using json = nlohmann::json;

std::string data_dir() {
    return std::string(ATTNVIZ_TEST_DATA) + "/hf_tokenizers/";
}

json read_json(const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return json::parse(ss.str());
}

std::string show(const Tokenizer& tok, const std::vector<int>& ids) {
    std::string s;
    for (int id : ids) s += (s.empty() ? "" : " ") + std::to_string(id) + ":'" + tok.token_label(id) + "'";
    return "[" + s + "]";
}

class HfTokenizer : public ::testing::TestWithParam<std::string> {};

TEST_P(HfTokenizer, IdsSpecialTokensPairAndDecodeEqualHuggingFace) {
    const std::string name = GetParam();
    const auto tok = Tokenizer::load_tokenizer_json(data_dir() + name + ".tokenizer.json");
    const json want = read_json(data_dir() + name + ".expected.json");
    const json& texts = want.at("texts");
    ASSERT_GT(texts.size(), 30u);
    for (std::size_t i = 0; i < texts.size(); ++i) {
        const std::string text = texts[i].get<std::string>();
        const std::vector<int> ids = want["ids"][i].get<std::vector<int>>();
        const std::vector<int> got = tok->encode(text);
        EXPECT_EQ(got, ids) << name << " text " << i << " " << json(text).dump() << "\n  got  "
                            << show(*tok, got) << "\n  want " << show(*tok, ids);
        const Tokenizer::ModelInput in = tok->encode_for_model(text);
        EXPECT_EQ(in.ids, want["ids_special"][i].get<std::vector<int>>())
            << name << " text " << i << " with special tokens";
        EXPECT_EQ(tok->decode(ids), want["decoded"][i].get<std::string>()) << name << " decode of text " << i;
    }
    const json& pair = want.at("pair");
    const Tokenizer::ModelInput in =
        tok->encode_pair_for_model(pair["a"].get<std::string>(), pair["b"].get<std::string>());
    EXPECT_EQ(in.ids, pair["ids"].get<std::vector<int>>()) << name << " pair";
    EXPECT_EQ(in.type_ids, pair["type_ids"].get<std::vector<int>>()) << name << " pair type ids";
}

INSTANTIATE_TEST_SUITE_P(Trained, HfTokenizer,
                         ::testing::Values("bert_uncased", "bert_cased", "t5_unigram",
                                           "unigram_byte_fallback", "t5_precompiled",
                                           "unigram_precompiled_rules", "llama2_bpe", "mistral_bpe",
                                           "gpt2_bytelevel", "qwen2_bytelevel", "llama3_bytelevel",
                                           "wordpiece_steps", "bpe_steps", "bert_normalized_mask",
                                           "llama2_normalized_specials"));

// U+180E (MONGOLIAN VOWEL SEPARATOR) has not been white space since Unicode 6.3: the \\s of GPT-2's,
// Qwen2's and Llama 3's patterns must not match it (PCRE2's \\s does). Words from Python's `regex`.
TEST(HfTokenizerU180E, IsNotWhiteSpaceInTheGpt2Qwen2AndLlama3Patterns) {
    using Words = std::vector<std::string>;
    const std::string mvs = "\xE1\xA0\x8E";  // U+180E
    for (const char* name : {"gpt2_bytelevel", "qwen2_bytelevel", "llama3_bytelevel"}) {
        const auto tok = Tokenizer::load_tokenizer_json(data_dir() + name + ".tokenizer.json");
        EXPECT_EQ(tok->pretokenize("x  " + mvs), (Words{"x", " ", " " + mvs})) << name;
        EXPECT_EQ(tok->pretokenize("a " + mvs + mvs + " b"), (Words{"a", " " + mvs + mvs, " b"})) << name;
        EXPECT_EQ(tok->pretokenize(mvs + mvs + "  " + mvs + "abc"), (Words{mvs + mvs, " ", " " + mvs, "abc"}))
            << name;
        const Words there =
            std::string(name) == "gpt2_bytelevel" ? Words{"hi", mvs, "there"} : Words{"hi", mvs + "there"};
        EXPECT_EQ(tok->pretokenize("hi" + mvs + "there"), there) << name;
        // Real white space still is: U+3000, U+00A0, U+2003.
        const std::string ideographic = "\xE3\x80\x80";  // U+3000
        const Words spaced = std::string(name) == "gpt2_bytelevel"
                                 ? Words{"a", ideographic, ideographic, "b"}
                                 : Words{"a", ideographic, ideographic + "b"};
        EXPECT_EQ(tok->pretokenize("a" + ideographic + ideographic + "b"), spaced) << name;
    }
}

// BERT's vocab.txt alone gives what the tokenizer.json with BERT's steps gives: lower-cased by default,
// cased when tokenizer_config.json says do_lower_case false.
TEST(HfTokenizer, BertVocabTxtAloneEqualsTheTokenizerJson) {
    for (const char* name : {"bert_uncased", "bert_cased"}) {
        const json file = read_json(data_dir() + name + ".tokenizer.json");
        std::vector<std::string> lines(file["model"]["vocab"].size());
        for (const auto& [token, id] : file["model"]["vocab"].items())
            lines.at(id.get<std::size_t>()) = token;
        std::string vocab;
        for (const std::string& t : lines) vocab += t + "\n";
        test::TempDir dir;
        write_file_atomic(dir.path + "/vocab.txt", vocab);
        if (std::string(name) == "bert_cased")
            write_file_atomic(dir.path + "/tokenizer_config.json", R"({"do_lower_case": false})");
        const auto tok = Tokenizer::load_dir(dir.path);
        EXPECT_NE(tok->description().find("WordPiece (BERT vocab.txt"), std::string::npos)
            << tok->description();
        const json want = read_json(data_dir() + name + ".expected.json");
        for (std::size_t i = 0; i < want["texts"].size(); ++i) {
            const std::string text = want["texts"][i].get<std::string>();
            EXPECT_EQ(tok->encode(text), want["ids"][i].get<std::vector<int>>()) << name << " text " << i;
            EXPECT_EQ(tok->encode_for_model(text).ids, want["ids_special"][i].get<std::vector<int>>())
                << name << " text " << i;
            EXPECT_EQ(tok->decode(tok->encode(text)), want["decoded"][i].get<std::string>())
                << name << " text " << i;
        }
        const json& pair = want["pair"];
        const auto in =
            tok->encode_pair_for_model(pair["a"].get<std::string>(), pair["b"].get<std::string>());
        EXPECT_EQ(in.ids, pair["ids"].get<std::vector<int>>());
        EXPECT_EQ(in.type_ids, pair["type_ids"].get<std::vector<int>>());
    }
}

// Tokens as a learner reads them: "##ing" keeps its marks, "▁the" is " the", <0xNN> is its byte.
TEST(HfTokenizer, TokensAreShownReadably) {
    const auto bert = Tokenizer::load_tokenizer_json(data_dir() + "bert_uncased.tokenizer.json");
    std::vector<std::string> shown;
    for (const TokenPiece& p : bert->encode_pieces("transformers learning")) shown.push_back(p.text);
    for (const std::string& t : shown) EXPECT_EQ(t, bert->token_text(*bert->token_id(t)));
    ASSERT_GE(shown.size(), 3u);
    EXPECT_EQ(shown[1].substr(0, 2), "##") << shown[1];
    EXPECT_EQ(bert->token_label(*bert->token_id("[CLS]")), "[CLS]");
    EXPECT_TRUE(bert->is_special(*bert->token_id("[SEP]")));
    EXPECT_TRUE(bert->adds_special_tokens());

    const auto llama = Tokenizer::load_tokenizer_json(data_dir() + "llama2_bpe.tokenizer.json");
    const std::vector<int> ids = llama->encode("the cat\n👨‍👩‍👧");
    std::string joined;
    for (int id : ids) joined += llama->token_text(id);
    EXPECT_EQ(joined.substr(0, 21), " the cat\n\\xf0\\x9f\\x91");  // one byte of a character alone: escaped
    EXPECT_EQ(llama->token_text(*llama->token_id("<0x0A>")), "\n");
    EXPECT_EQ(llama->token_text(*llama->token_id("<0xF0>")), "\\xf0");  // part of a character: escaped
    EXPECT_EQ(llama->token_text(*llama->token_id("\xE2\x96\x81the")), " the");
    EXPECT_EQ(llama->decode(ids), "the cat\n👨‍👩‍👧");  // the decoder strips the prepended space
    EXPECT_EQ(llama->decode_labelled(ids), " the cat\n👨‍👩‍👧");  // as a continuation it keeps it
    EXPECT_NE(llama->description().find("SentencePiece-style BPE (byte fallback)"), std::string::npos)
        << llama->description();

    const auto t5 = Tokenizer::load_tokenizer_json(data_dir() + "t5_precompiled.tokenizer.json");
    EXPECT_EQ(t5->token_text(*t5->token_id("\xE2\x96\x81")), " ");
    EXPECT_EQ(t5->encode_for_model("the").ids.back(), *t5->token_id("</s>"));
    EXPECT_NE(t5->description().find("Unigram (Precompiled + Replace + WhitespaceSplit + Metaspace)"),
              std::string::npos)
        << t5->description();
}

}  // namespace
}  // namespace attnviz

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
        EXPECT_EQ(got, ids) << name << " text " << i << " " << json(text).dump() << "\n  got  " << show(*tok, got)
                            << "\n  want " << show(*tok, ids);
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
                         ::testing::Values("bert_uncased", "bert_cased", "t5_unigram", "unigram_byte_fallback", "t5_precompiled",
                                           "unigram_precompiled_rules",
                                           "llama2_bpe", "mistral_bpe", "gpt2_bytelevel", "qwen2_bytelevel",
                                           "llama3_bytelevel"));

}  // namespace
}  // namespace attnviz

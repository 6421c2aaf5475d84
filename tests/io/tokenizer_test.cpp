// Tokenizers: BPE merge order, the two merge formats, added tokens, NFC, ignore_merges, the readable
// token text rule, decode, vocab gaps, refusal of hostile files with one clear line, and speed.
// (Agreement with an independent Python reference on real trained merges: tests/reference.)
#include "io/tokenizer.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/cpu_time.hpp"
#include "common/gpt2_bytes.hpp"
#include "common/test_files.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/tokenize_command.hpp"
#include "io/tokenizer_text.hpp"

namespace attnviz {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

using test::TempDir;

using test::byte_char;

std::string chars(std::string_view bytes) {
    return test::byte_chars(bytes);
}

/// A vocabulary with the 256 byte tokens (id = byte value) plus the results of `merges` (byte
/// strings "a b"), in order, ids from 256.
struct Spec {
    json vocab = json::object();
    json merges = json::array();
    int next_id = 256;
    Spec() {
        for (int b = 0; b < 256; ++b) vocab[byte_char(static_cast<unsigned char>(b))] = b;
    }
    Spec& merge(std::string_view a, std::string_view b) {
        merges.push_back(chars(a) + " " + chars(b));
        const std::string m = chars(a) + chars(b);
        if (!vocab.contains(m)) vocab[m] = next_id++;
        return *this;
    }
    int id(std::string_view bytes) const { return vocab.at(chars(bytes)).get<int>(); }

    json tokenizer_json(json pre_tokenizer = json(), json normalizer = json(),
                        json added = json::array()) const {
        if (pre_tokenizer.is_null())
            pre_tokenizer = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
        return {{"version", "1.0"},
                {"added_tokens", added},
                {"normalizer", normalizer},
                {"pre_tokenizer", pre_tokenizer},
                {"decoder", {{"type", "ByteLevel"}}},
                {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}, {"ignore_merges", false}}}};
    }
    std::shared_ptr<const Tokenizer> load(const json& j) const {
        return Tokenizer::from_tokenizer_json(j.dump());
    }
    std::shared_ptr<const Tokenizer> load() const { return load(tokenizer_json()); }
};

Spec hello_spec() {
    Spec s;
    s.merge("l", "l").merge("h", "e").merge("he", "ll").merge("hell", "o").merge(" ", "w").merge("o", "r");
    s.merge(" w", "or").merge(" wor", "l").merge(" worl", "d");
    return s;
}

using test::error_of;

json added(const std::string& content, int id, bool special = true, bool lstrip = false,
           bool rstrip = false) {
    return {{"id", id},         {"content", content},  {"single_word", false}, {"lstrip", lstrip},
            {"rstrip", rstrip}, {"normalized", false}, {"special", special}};
}

json qwen_pre_tokenizer(const std::string& pattern) {
    return {
        {"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}, {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
}

const char* kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// ------------------------------------------------------------------------------------------------

TEST(Tokenizer, MergesByRankIntoWholeWords) {
    const Spec s = hello_spec();
    const auto tok = s.load();
    EXPECT_EQ(tok->encode("hello world"), (std::vector<int>{s.id("hello"), s.id(" world")}));
    // "hellx": merges stop at "hell"; unmerged bytes stay single-byte tokens.
    EXPECT_EQ(tok->encode("hellx"), (std::vector<int>{s.id("hell"), 'x'}));
    // Rank order, not left-to-right: "ll" (rank 0) is merged before "he" (rank 1) in "hell".
    EXPECT_EQ(tok->encode("ell"), (std::vector<int>{'e', s.id("ll")}));
    EXPECT_EQ(tok->encode("lll"), (std::vector<int>{s.id("ll"), 'l'}));
    EXPECT_EQ(tok->encode("llll"), (std::vector<int>{s.id("ll"), s.id("ll")}));
    EXPECT_EQ(tok->encode(""), std::vector<int>{});
}

TEST(Tokenizer, GptRegexSplitsBeforeMerging) {
    Spec s;
    s.merge("a", "b").merge("b", " ").merge(" ", "c");
    const auto tok = s.load();
    // "ab cd": the GPT-2 regex gives "ab", " cd": "b " can never merge across the split.
    EXPECT_EQ(tok->encode("ab cd"), (std::vector<int>{s.id("ab"), s.id(" c"), 'd'}));
    // Whitespace runs: "\s+(?!\S)" leaves the last space to the next word.
    EXPECT_EQ(tok->encode("x   c"), (std::vector<int>{'x', ' ', ' ', s.id(" c")}));
    // Contractions are their own words.
    EXPECT_EQ(tok->encode("it's"), (std::vector<int>{'i', 't', '\'', 's'}));
}

TEST(Tokenizer, MergesAsStringsOrPairsGiveTheSameIds) {
    const Spec s = hello_spec();
    json j = s.tokenizer_json();
    json pairs = json::array();
    for (const auto& m : s.merges) {
        const std::string t = m.get<std::string>();
        const auto sp = t.find(' ');
        pairs.push_back({t.substr(0, sp), t.substr(sp + 1)});
    }
    j["model"]["merges"] = pairs;
    EXPECT_EQ(s.load(j)->encode("hello world hello"), s.load()->encode("hello world hello"));
}

TEST(Tokenizer, Gpt2FilesMatchTokenizerJson) {
    const Spec s = hello_spec();
    json vocab = s.vocab;
    vocab["<|endoftext|>"] = s.next_id;
    std::string merges = "#version: 0.2\n";
    for (const auto& m : s.merges) merges += m.get<std::string>() + "\n";
    const auto tok = Tokenizer::from_gpt2(vocab.dump(), merges);
    EXPECT_EQ(tok->encode("hello world<|endoftext|>hello"),
              (std::vector<int>{s.id("hello"), s.id(" world"), s.next_id, s.id("hello")}));
    EXPECT_TRUE(tok->is_special(s.next_id));
    EXPECT_EQ(tok->token_id("<|endoftext|>"), s.next_id);
    EXPECT_EQ(tok->vocab_size(), s.next_id + 1);
    EXPECT_NE(tok->description().find("GPT-2 byte-level BPE, " + std::to_string(s.next_id + 1) + " tokens"),
              std::string::npos)
        << tok->description();

    TempDir dir;
    write_file_atomic(dir.path + "/vocab.json", vocab.dump());
    write_file_atomic(dir.path + "/merges.txt", merges);
    EXPECT_EQ(Tokenizer::load_dir(dir.path)->encode("hello world"), tok->encode("hello world"));
    // tokenizer.json is preferred when both are there.
    write_file_atomic(dir.path + "/tokenizer.json", s.tokenizer_json().dump());
    EXPECT_EQ(Tokenizer::load_dir(dir.path + "/tokenizer.json")->vocab_size(), 265);
    EXPECT_NE(Tokenizer::load_dir(dir.path)->description().find("byte-level BPE, 265 tokens"),
              std::string::npos)
        << Tokenizer::load_dir(dir.path)->description();
}

TEST(Tokenizer, ReadableTextOfTokens) {
    Spec s;
    const std::string ni = "\xe4\xbd\xa0";  // 你
    s.merge("\xe4", "\xbd").merge("\xe4\xbd", "\xa0").merge(" ", "c").merge(" c", "a").merge(" ca", "t");
    const auto tok = s.load();
    EXPECT_EQ(tok->token_text(s.id(" cat")), " cat");            // "Ġcat" shown as " cat"
    EXPECT_EQ(tok->token_text(s.id(ni)), ni);                    // a whole CJK character
    EXPECT_EQ(tok->token_text(s.id("\xe4\xbd")), "\\xe4\\xbd");  // half of one: escapes
    EXPECT_EQ(tok->token_text(0xa0), "\\xa0");
    EXPECT_EQ(tok->token_text('\n'), "\n");
    EXPECT_EQ(tok->token_id(chars(" cat")), s.id(" cat"));  // token_id takes the file's spelling
    EXPECT_EQ(tok->token_id("no such token"), std::nullopt);

    const auto pieces = tok->encode_pieces(" cat" + ni);
    ASSERT_EQ(pieces.size(), 2u);
    EXPECT_EQ(pieces[0].id, s.id(" cat"));
    EXPECT_EQ(pieces[0].text, " cat");
    EXPECT_EQ(pieces[1].text, ni);
}

TEST(Tokenizer, DecodeJoinsBytesAndReplacesInvalidUtf8) {
    Spec s;
    s.merge("\xe4", "\xbd");
    const auto tok = s.load();
    const std::string text = "cats \xe4\xbd\xa0\xe5\xa5\xbd! \xf0\x9f\x98\x80";  // 你好 😀
    EXPECT_EQ(tok->decode(tok->encode(text)), text);
    EXPECT_EQ(tok->decode({s.id("\xe4\xbd"), 0xa0}), "\xe4\xbd\xa0");
    EXPECT_EQ(tok->decode({s.id("\xe4\xbd")}), "\xef\xbf\xbd");  // one U+FFFD for the cut sequence
    EXPECT_EQ(tok->decode({'a', 0xff, 'b'}),
              "a\xef\xbf\xbd"
              "b");
    EXPECT_EQ(error_of([&] { tok->decode({-1}); }), "token id -1 is not in the vocabulary");
    EXPECT_EQ(error_of([&] { tok->decode({100000}); }), "token id 100000 is not in the vocabulary");
}

TEST(Tokenizer, InvalidUtf8TextIsATextError) {
    const auto tok = hello_spec().load();
    EXPECT_THROW(tok->encode("abc\xff"), TextError);
    EXPECT_THROW(tok->encode("\xe4\xbd"), TextError);      // truncated
    EXPECT_THROW(tok->encode("\xc0\xaf"), TextError);      // overlong
    EXPECT_THROW(tok->encode("\xed\xa0\x80"), TextError);  // surrogate
    EXPECT_EQ(error_of([&] { tok->encode("ab\xff"); }), "the text is not valid UTF-8 (byte 2)");
}

TEST(Tokenizer, AddedTokensAreSplitFirstLongestMatchAndNeverMerged) {
    const Spec s = hello_spec();
    const int eot = 300, im = 301, im_start = 302, tool = 303;
    const json add = json::array({added("<|endoftext|>", eot), added("<|im|>", im),
                                  added("<|im|>start", im_start), added("<tool>", tool, false, true, true)});
    const auto tok = s.load(s.tokenizer_json(json(), json(), add));
    EXPECT_EQ(tok->encode("hello<|endoftext|>hello"), (std::vector<int>{s.id("hello"), eot, s.id("hello")}));
    EXPECT_EQ(tok->encode("<|im|>start<|im|>"), (std::vector<int>{im_start, im}));
    // lstrip/rstrip: the spaces around <tool> are part of it.
    EXPECT_EQ(tok->encode("hello <tool> hello"), (std::vector<int>{s.id("hello"), tool, s.id("hello")}));
    EXPECT_TRUE(tok->is_special(eot));
    EXPECT_FALSE(tok->is_special(tool));
    EXPECT_FALSE(tok->is_special(s.id("hello")));
    EXPECT_EQ(tok->token_text(eot), "<|endoftext|>");
    EXPECT_EQ(tok->decode({s.id("hello"), eot}), "hello<|endoftext|>");
    EXPECT_EQ(tok->vocab_size(), 304);
}

TEST(Tokenizer, VocabWithGapsHasSizeLargestIdPlusOne) {
    Spec s = hello_spec();
    s.vocab[chars("zzz")] = 5000;
    const auto tok = s.load();
    EXPECT_EQ(tok->vocab_size(), 5001);
    EXPECT_EQ(tok->token_text(5000), "zzz");
    EXPECT_EQ(error_of([&] { tok->token_text(4000); }), "token id 4000 is not in the vocabulary");
    // What a model may produce beyond its tokenizer is shown by number (the app aborted on the shipped
    // model's id 63 in the next-token list, and `attnviz generate` refused it).
    EXPECT_FALSE(tok->has_id(4000));
    EXPECT_TRUE(tok->has_id(5000));
    EXPECT_EQ(tok->token_label(4000), "<id 4000>");
    EXPECT_EQ(tok->token_label(5000), "zzz");
    EXPECT_EQ(tok->decode_labelled({5000, 4000, 5000, -1}), "zzz<id 4000>zzz<id -1>");
}

TEST(Tokenizer, IgnoreMergesTakesAWordInTheVocabWhole) {
    Spec s = hello_spec();
    s.vocab[chars(" zzyzx")] = 400;  // no merge builds it
    json j = s.tokenizer_json(qwen_pre_tokenizer(kQwen2Pattern));
    EXPECT_EQ(s.load(j)->encode(" zzyzx").size(), 6u);
    j["model"]["ignore_merges"] = true;
    EXPECT_EQ(s.load(j)->encode(" zzyzx"), std::vector<int>{400});
    EXPECT_EQ(s.load(j)->encode("hello world"), (std::vector<int>{s.id("hello"), s.id(" world")}));
}

TEST(Tokenizer, NfcNormalizerAndSplitRegex) {
    Spec s;
    s.merge("\xc3", "\xa9");  // é as one token
    const json pre = qwen_pre_tokenizer(kQwen2Pattern);
    const auto nfc = s.load(s.tokenizer_json(pre, {{"type", "NFC"}}));
    const auto raw = s.load(s.tokenizer_json(pre));
    const std::string decomposed = "e\xcc\x81";  // e + combining acute
    EXPECT_EQ(nfc->encode(decomposed), std::vector<int>{s.id("\xc3\xa9")});
    EXPECT_EQ(raw->encode(decomposed), (std::vector<int>{'e', 0xcc, 0x81}));
    // Qwen2's pattern: digits one by one; "I'M" matched case-insensitively.
    EXPECT_EQ(raw->encode("123"), (std::vector<int>{'1', '2', '3'}));
    EXPECT_NE(nfc->description().find("NFC + Split regex"), std::string::npos) << nfc->description();
}

TEST(Tokenizer, ThreadsShareOneTokenizer) {
    const auto tok = hello_spec().load();
    std::string text;
    for (int i = 0; i < 2000; ++i) text += "hello world, hello\n";
    const auto want = tok->encode(text);
    std::vector<std::vector<int>> got(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) threads.emplace_back([&, t] { got[t] = tok->encode(text); });
    for (auto& th : threads) th.join();
    for (const auto& g : got) EXPECT_EQ(g, want);
}

TEST(Tokenizer, HundredKilobytesTokenizeWellUnderASecond) {
    // A merge-rich vocabulary: every pair of lower-case letters, then doubling merges of 'a'.
    Spec s;
    for (char a = 'a'; a <= 'z'; ++a)
        for (char b = 'a'; b <= 'z'; ++b) s.merge(std::string(1, a), std::string(1, b));
    std::string run = "aa";         // "a a" is among the letter pairs
    for (int k = 0; k < 11; ++k) {  // up to a^4096
        s.merge(run, run);
        run += run;
    }
    const auto tok = s.load(s.tokenizer_json(qwen_pre_tokenizer(kQwen2Pattern), {{"type", "NFC"}}));
    std::string text;
    const std::string mix =
        "The quick brown fox jumps over the lazy dog; for (int i = 0; i < n; ++i) x += 3.14159;\n"
        "\xe6\xaf\x9b\xe8\x8c\xb8\xe8\x8c\xb8\xe7\x9a\x84 \xf0\x9f\x98\x80  \t 12345 ";
    while (text.size() < 100 * 1024) text += mix;
    const std::string one_word(100 * 1024, 'a');  // one 100 KB word: the merge loop must not be O(n^2)
    for (const std::string* t : std::vector<const std::string*>{&text, &one_word}) {
        const double start = test::thread_cpu_seconds();
        const auto ids = tok->encode(*t);
        const double seconds = test::thread_cpu_seconds() - start;  // CPU time: load does not inflate it
        std::printf("tokenized %zu bytes into %zu tokens in %.1f ms\n", t->size(), ids.size(), seconds * 1e3);
        EXPECT_LT(seconds, 1.0);
        EXPECT_EQ(tok->decode(ids), *t);
    }
    EXPECT_EQ(tok->encode(std::string(4096, 'a')), std::vector<int>{s.id(std::string(4096, 'a'))});
}

// ------------------------------------------------------------------------------------------------
// Hostile and unsupported files: one clear line naming the file and the field.

TEST(TokenizerFiles, UnsupportedModelsAndStepsAreRefusedNamingTheField) {
    const Spec s = hello_spec();
    json j = s.tokenizer_json();
    j["model"]["type"] = "WordLevel";
    EXPECT_EQ(error_of([&] { s.load(j); }),
              "tokenizer.json: model.type 'WordLevel' is not supported (BPE, WordPiece or Unigram)");
    j = s.tokenizer_json();
    j["model"]["dropout"] = 0.1;
    EXPECT_EQ(error_of([&] { s.load(j); }),
              "tokenizer.json: model.dropout is set; BPE dropout is not supported");
    j = s.tokenizer_json();
    j["model"]["end_of_word_suffix"] = "</w>";
    EXPECT_EQ(error_of([&] { s.load(j); }),
              "tokenizer.json: model.end_of_word_suffix is set; BPE with it is not supported");
    j = s.tokenizer_json({{"type", "UnicodeScripts"}});
    EXPECT_EQ(
        error_of([&] { s.load(j); }),
        "tokenizer.json: pre_tokenizer.type 'UnicodeScripts' is not supported (only ByteLevel, Split, "
        "Metaspace, BertPreTokenizer, Whitespace, WhitespaceSplit, Punctuation, Digits, CharDelimiterSplit, "
        "Sequence)");
    j = s.tokenizer_json(json(),
                         {{"type", "Sequence"}, {"normalizers", {{{"type", "NFC"}}, {{"type", "Nmt"}}}}});
    EXPECT_EQ(
        error_of([&] { s.load(j); }),
        "tokenizer.json: normalizer.normalizers[1].type 'Nmt' is not supported (only BertNormalizer, NFC, "
        "NFD, NFKC, NFKD, Lowercase, StripAccents, Strip, Replace, Prepend, Precompiled, Sequence)");
    j = s.tokenizer_json();
    j["decoder"] = {{"type", "CTC"}};
    EXPECT_EQ(error_of([&] { s.load(j); }),
              "tokenizer.json: decoder.type 'CTC' is not supported (only ByteLevel, WordPiece, Metaspace, "
              "ByteFallback, Fuse, Strip, Replace, Sequence)");
    j = s.tokenizer_json();
    j["decoder"] = {{"type", "Replace"}, {"pattern", {{"Regex", " +"}}}, {"content", " "}};
    EXPECT_EQ(
        error_of([&] { s.load(j); }),
        "tokenizer.json: decoder: a Replace decoder with a Regex pattern is not supported (only a String)");
    j = s.tokenizer_json();
    j["post_processor"] = {{"type", "Sequence"},
                           {"processors",
                            {{{"type", "BertProcessing"}, {"sep", {"h", 104}}, {"cls", {"e", 101}}},
                             {{"type", "RobertaProcessing"}, {"sep", {"h", 104}}, {"cls", {"e", 101}}}}}};
    EXPECT_EQ(error_of([&] { s.load(j); }),
              "tokenizer.json: post_processor.processors[1]: a second post-processor adding tokens is not "
              "supported");
    j = s.tokenizer_json();
    j["post_processor"] = {{"type", "TemplateProcessing"},
                           {"single", {{{"SpecialToken", {{"id", "[CLS]"}, {"type_id", 0}}}}}},
                           {"pair", json::array()},
                           {"special_tokens", json::object()}};
    EXPECT_EQ(error_of([&] { s.load(j); }),
              "tokenizer.json: post_processor.single[0]: special token '[CLS]' is not in special_tokens");
    j = s.tokenizer_json(
        {{"type", "Sequence"}, {"pretokenizers", {{{"type", "ByteLevel"}}, {{"type", "Digits"}}}}});
    EXPECT_EQ(error_of([&] { s.load(j); }),
              "tokenizer.json: pre_tokenizer.pretokenizers[1].type 'Digits' after ByteLevel is not supported "
              "(ByteLevel must come last)");
    j = s.tokenizer_json({{"type", "Metaspace"}, {"replacement", "ab"}});
    EXPECT_EQ(error_of([&] { s.load(j); }),
              "tokenizer.json: pre_tokenizer.replacement 'ab' is not one character");
    j = s.tokenizer_json({{"type", "Split"}, {"pattern", {{"Regex", "[\\S]"}}}, {"behavior", "Isolated"}});
    EXPECT_EQ(error_of([&] { s.load(j); }),
              "tokenizer.json: pre_tokenizer.pattern: \\S inside a [...] class is not supported");
    j = s.tokenizer_json({{"type", "Split"}, {"pattern", {{"Regex", "x"}}}, {"behavior", "Sideways"}});
    EXPECT_NE(error_of([&] { s.load(j); }).find("pre_tokenizer.behavior 'Sideways' is not a split behavior"),
              std::string::npos);
    json u = {{"type", "Unigram"},
              {"unk_id", 5},
              {"vocab", json::array({json::array({"a", -1.0}), json::array({"b", -2.0})})}};
    EXPECT_EQ(error_of([&] {
                  Tokenizer::from_tokenizer_json(json{{"model", u}}.dump());
              }),
              "tokenizer.json: model.unk_id is 5, not an integer from 0 to 1");
    u = {{"type", "Unigram"}, {"vocab", json::array({json::array({"a", "x"})})}};
    EXPECT_EQ(error_of([&] {
                  Tokenizer::from_tokenizer_json(json{{"model", u}}.dump());
              }),
              "tokenizer.json: model.vocab[0] is not [\"piece\", score]");
    const json charsmap = {{"type", "Precompiled"}, {"precompiled_charsmap", "not base64!"}};
    EXPECT_EQ(error_of([&] { s.load(s.tokenizer_json(json(), charsmap)); }),
              "tokenizer.json: normalizer.precompiled_charsmap is not base64");
}

TEST(TokenizerFiles, InvalidSplitRegexNamesThePattern) {
    const Spec s = hello_spec();
    const std::string e = error_of([&] { s.load(s.tokenizer_json(qwen_pre_tokenizer("(\\p{L}+"))); });
    EXPECT_NE(
        e.find("tokenizer.json: pre_tokenizer.pretokenizers[0].pattern: pattern '(\\p{L}+' is not a valid "
               "regex: missing closing parenthesis"),
        std::string::npos)
        << e;
}

TEST(TokenizerFiles, BadVocabAndMerges) {
    Spec s = hello_spec();
    json j = s.tokenizer_json();
    j["model"]["merges"].push_back(chars("q") + " " + chars("zz"));
    EXPECT_EQ(error_of([&] { s.load(j); }),
              "tokenizer.json: model.merges[9]: merge 'q zz' names 'zz', which is not in the vocabulary");
    j = s.tokenizer_json();
    j["model"]["merges"].push_back(chars("q") + " " + chars("z"));
    EXPECT_NE(error_of([&] { s.load(j); }).find("makes 'qz', which is not in the vocabulary"),
              std::string::npos);
    j = s.tokenizer_json();
    j["model"]["merges"].push_back("abc");
    EXPECT_NE(error_of([&] { s.load(j); }).find("'abc' is not a merge of two tokens"), std::string::npos);
    j = s.tokenizer_json();
    j["model"]["vocab"]["dup"] = 5;
    EXPECT_NE(error_of([&] { s.load(j); }).find("tokenizer.json: model.vocab: id 5 is given to both"),
              std::string::npos);
    j = s.tokenizer_json();
    j["model"]["vocab"]["big"] = 2147483648LL;
    EXPECT_EQ(error_of([&] { s.load(j); }),
              "tokenizer.json: model.vocab: id 2147483648 of token 'big' is out of range (0 to 16777215)");
    j["model"]["vocab"]["big"] = 18446744073709551615ULL;
    EXPECT_NE(error_of([&] { s.load(j); }).find("id 18446744073709551615 of token 'big' is out of range"),
              std::string::npos);
    j["model"]["vocab"]["big"] = -1;
    EXPECT_NE(error_of([&] { s.load(j); }).find("id -1 of token 'big' is out of range"), std::string::npos);
    j["model"]["vocab"]["big"] = 1.5;
    EXPECT_NE(error_of([&] { s.load(j); }).find("the id of token 'big' is number, not an integer"),
              std::string::npos);
    j = s.tokenizer_json(json(), json(), json::array({added("<x>", 5)}));
    EXPECT_NE(error_of([&] { s.load(j); }).find("added_tokens[0]: id 5 is given to both"), std::string::npos);
    // Invalid UTF-8 inside a JSON string is refused by the JSON parser.
    const std::string bad = "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"\xff\": 0}, \"merges\": []}}";
    EXPECT_NE(error_of([&] {
                  Tokenizer::from_tokenizer_json(bad);
              }).find("tokenizer.json: the file is not valid JSON at byte"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  Tokenizer::from_gpt2("{\"a\": 0}", "a \xff\n");
              }).find("merges.txt: not valid UTF-8 (line 1)"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  Tokenizer::from_gpt2("{\"a\": 0, \"b\": 1}", "#version: 0.2\na b\n");
              }).find("merges.txt line 2: merge 'a b' makes 'ab', which is not in the vocabulary"),
              std::string::npos);
}

TEST(TokenizerFiles, DeepOrBrokenJsonIsRefusedBeforeParsing) {
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    EXPECT_EQ(error_of([&] { Tokenizer::from_tokenizer_json(deep); }),
              "tokenizer.json: JSON nested more than 64 levels deep (not a tokenizer file)");
    EXPECT_NE(error_of([&] {
                  Tokenizer::from_tokenizer_json("{\"model\": ");
              }).find("tokenizer.json: the file is not valid JSON at byte"),
              std::string::npos);
    EXPECT_EQ(error_of([&] { Tokenizer::from_tokenizer_json("[1, 2]"); }),
              "tokenizer.json: the file is array, not a JSON object");
    EXPECT_EQ(error_of([&] { Tokenizer::from_tokenizer_json("{}"); }), "tokenizer.json: 'model' is missing");
}

TEST(TokenizerFiles, HugeFileIsRefusedWithoutReadingIt) {
    TempDir dir;
    const std::string path = dir.path + "/vocab.json";
    { std::ofstream(path) << "{}"; }
    ASSERT_EQ(::truncate(path.c_str(), 2LL << 30), 0);  // a sparse 2 GiB file
    write_file_atomic(dir.path + "/merges.txt", "");
    EXPECT_EQ(error_of([&] { Tokenizer::load_dir(dir.path); }),
              path + ": file is 2048 MiB, larger than the 64 MiB accepted for tokenizer files");
}

TEST(TokenizerFiles, FolderWithoutTokenizerFiles) {
    TempDir dir;
    EXPECT_EQ(error_of([&] { Tokenizer::load_dir(dir.path); }),
              dir.path + ": no tokenizer.json, no vocab.json + merges.txt, and no vocab.txt");
    EXPECT_NE(error_of([&] { Tokenizer::load_dir(dir.path + "/missing"); }).find("not a directory"),
              std::string::npos);
}

int run_tokenize(std::vector<std::string> args, std::string* out, std::string* err) {
    args.insert(args.begin(), "tokenize");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    const int rc = run_tokenize_command(int(argv.size()), argv.data());
    *out = ::testing::internal::GetCapturedStdout();
    *err = ::testing::internal::GetCapturedStderr();
    return rc;
}

TEST(TokenizeCommand, PrintsIdsOrPiecesAsJson) {
    const Spec s = hello_spec();
    TempDir dir;
    write_file_atomic(dir.path + "/tokenizer.json", s.tokenizer_json().dump());
    std::string out, err;
    EXPECT_EQ(run_tokenize({"--model", dir.path, "--text", "hello world"}, &out, &err), 0) << err;
    EXPECT_EQ(out, "[" + std::to_string(s.id("hello")) + "," + std::to_string(s.id(" world")) + "]\n");
    EXPECT_EQ(run_tokenize({"--model", dir.path, "--text", " world", "--pieces"}, &out, &err), 0) << err;
    EXPECT_EQ(out, "[{\"id\":" + std::to_string(s.id(" world")) + ",\"text\":\" world\"}]\n");
    write_file_atomic(dir.path + "/text.txt", "hello");
    EXPECT_EQ(run_tokenize({"--model", dir.path, "--text-file", dir.path + "/text.txt"}, &out, &err), 0)
        << err;
    EXPECT_EQ(out, "[" + std::to_string(s.id("hello")) + "]\n");

    EXPECT_EQ(run_tokenize({"--model", dir.path}, &out, &err), 2);
    EXPECT_EQ(err,
              "attnviz tokenize: give the text with exactly one of --text TEXT, --text-file FILE or "
              "--texts-json FILE\n");
    EXPECT_EQ(run_tokenize({"--model", dir.path, "--text", "a", "--texts-json", "b.json"}, &out, &err), 2);
    EXPECT_EQ(run_tokenize({"--model", dir.path + "/none", "--text", "x"}, &out, &err), 1);
    EXPECT_EQ(err, "attnviz tokenize: " + dir.path +
                       "/none: not a directory (expected a model folder with tokenizer.json)\n");
    EXPECT_EQ(run_tokenize({"--model", dir.path, "--text", "bad \xff"}, &out, &err), 1);
    EXPECT_EQ(err, "attnviz tokenize: the text is not valid UTF-8 (byte 4)\n");
    EXPECT_EQ(out, "");
}

TEST(TokenizeCommand, ManyTextsInOneRunFromAJsonArray) {
    const Spec s = hello_spec();
    TempDir dir;
    write_file_atomic(dir.path + "/tokenizer.json", s.tokenizer_json().dump());
    const std::string texts = dir.path + "/texts.json";
    write_file_atomic(texts, R"(["hello world", "", " world"])");
    std::string out, err;
    EXPECT_EQ(run_tokenize({"--model", dir.path, "--texts-json", texts}, &out, &err), 0) << err;
    const std::string hello = std::to_string(s.id("hello")), world = std::to_string(s.id(" world"));
    EXPECT_EQ(out, "[[" + hello + "," + world + "],[],[" + world + "]]\n");
    EXPECT_EQ(run_tokenize({"--model", dir.path, "--texts-json", texts, "--pieces"}, &out, &err), 0) << err;
    EXPECT_EQ(out, "[[{\"id\":" + hello + ",\"text\":\"hello\"},{\"id\":" + world +
                       ",\"text\":\" world\"}],[],[{\"id\":" + world + ",\"text\":\" world\"}]]\n");

    // Each kind of bad file is one line naming the file (or the text), and nothing is printed.
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"[\"a\", ", texts + ": not valid JSON (expected an array of strings)"},
        {R"({"a": 1})", texts + ": expected a JSON array of strings, found object"},
        {R"(["a", 3])", texts + ": element 1 is number, not a string"},
        // JSON strings are UTF-8 (nlohmann checks), so a bad byte is a bad file.
        {"[\"ok\", \"bad \xff\"]", texts + ": not valid JSON (expected an array of strings)"},
    };
    for (const auto& [body, message] : bad) {
        write_file_atomic(texts, body);
        EXPECT_EQ(run_tokenize({"--model", dir.path, "--texts-json", texts}, &out, &err), 1) << body;
        EXPECT_EQ(err, "attnviz tokenize: " + message + "\n") << body;
        EXPECT_EQ(out, "") << body;
    }
    EXPECT_EQ(run_tokenize({"--model", dir.path, "--texts-json", dir.path + "/none.json"}, &out, &err), 1);
    EXPECT_NE(err.find("none.json"), std::string::npos) << err;
}

TEST(TokenizeCommand, SpecialTokensForAModelAsHuggingFaceEncodeUnlessAsked) {
    TempDir dir;
    const std::string data = std::string(ATTNVIZ_TEST_DATA) + "/hf_tokenizers/";
    write_file_atomic(dir.path + "/tokenizer.json", read_file(data + "bert_uncased.tokenizer.json"));
    const json want = json::parse(read_file(data + "bert_uncased.expected.json"));
    std::string out, err;
    EXPECT_EQ(run_tokenize({"--model", dir.path, "--text", "hello world"}, &out, &err), 0) << err;
    EXPECT_EQ(json::parse(out), want["ids_special"][1]);  // [CLS] hello world [SEP]
    EXPECT_EQ(run_tokenize({"--model", dir.path, "--text", "hello world", "--no-special-tokens"}, &out, &err),
              0);
    EXPECT_EQ(json::parse(out), want["ids"][1]);
    const std::string a = want["pair"]["a"], b = want["pair"]["b"];
    EXPECT_EQ(run_tokenize({"--model", dir.path, "--text", a, "--text-b", b}, &out, &err), 0) << err;
    EXPECT_EQ(json::parse(out), want["pair"]["ids"]);
    EXPECT_EQ(run_tokenize({"--model", dir.path, "--text", "hello", "--pieces"}, &out, &err), 0) << err;
    EXPECT_EQ(json::parse(out)[0]["text"], "[CLS]");
}

TEST(TokenizerFiles, RealGpt2FilesGiveThePublishedIds) {
    const char* dir = std::getenv("ATTNVIZ_GPT2_DIR");
    if (!dir || !*dir)
        GTEST_SKIP() << "set ATTNVIZ_GPT2_DIR to a folder with GPT-2's vocab.json + merges.txt";
    const auto tok = Tokenizer::load_dir(dir);
    EXPECT_EQ(tok->encode("hello world"), (std::vector<int>{31373, 995}));
    EXPECT_EQ(tok->vocab_size(), 50257);
    EXPECT_EQ(tok->token_text(995), " world");
    EXPECT_EQ(tok->token_id("<|endoftext|>"), 50256);
    // U+180E next to spaces: Hugging Face tokenizers' ids with these files (not white space).
    const std::string mvs = "\xE1\xA0\x8E";
    EXPECT_EQ(tok->encode("x" + mvs + "y"), (std::vector<int>{87, 157, 254, 236, 88}));
    EXPECT_EQ(tok->encode("hello " + mvs + " world"), (std::vector<int>{31373, 28053, 254, 236, 995}));
    EXPECT_EQ(tok->encode("a " + mvs + mvs + " b"),
              (std::vector<int>{64, 28053, 254, 236, 157, 254, 236, 275}));
    EXPECT_EQ(tok->encode("x  " + mvs), (std::vector<int>{87, 220, 28053, 254, 236}));
}

}  // namespace
}  // namespace attnviz

// ------------------------------------------------------------------------------------------------
// io/tokenizer_text: the rewrite of \s and the character steps

namespace attnviz {
namespace {

TEST(TokenizerText, WhiteSpaceInPatternsIsUnicodeWhiteSpace) {
    using tokenizer_text::white_space_pattern;
    const std::string ws =
        R"(\t-\r\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";
    EXPECT_EQ(white_space_pattern(R"(\s+(?!\S))", "p"), "[" + ws + "]+(?![^" + ws + "])");
    EXPECT_EQ(white_space_pattern(R"([^\s\p{L}])", "p"), "[^" + ws + R"(\p{L}])");
    EXPECT_EQ(white_space_pattern(R"(\\s)", "p"), R"(\\s)");           // an escaped backslash, then 's'
    EXPECT_EQ(white_space_pattern(R"([]\s])", "p"), "[]" + ws + "]");  // ']' first in a class is literal
    EXPECT_EQ(white_space_pattern(R"(\Q\s\E\s)", "p"), R"(\Q\s\E[)" + ws + "]");
    EXPECT_EQ(white_space_pattern(R"([[:alpha:]\s]x)", "p"), "[[:alpha:]" + ws + "]x");
    EXPECT_EQ(test::error_of([] { white_space_pattern(R"([\S])", "file: pattern"); }),
              "file: pattern: \\S inside a [...] class is not supported");
    EXPECT_TRUE(tokenizer_text::is_white_space(0x3000));
    EXPECT_FALSE(tokenizer_text::is_white_space(0x180E));
    EXPECT_FALSE(tokenizer_text::is_white_space(0x200B));  // zero width space is not white space either
}

TEST(TokenizerText, BertNormalizerSteps) {
    tokenizer_text::BertNormalizerOptions o;
    // Controls dropped, white space to ' ', CJK spaced, accents stripped, lower case (İ: i + dot, then
    // the dot is a mark and goes).
    EXPECT_EQ(tokenizer_text::bert_normalize("A\x01\tB\xE4\xBD\xA0\xC3\x89\xC4\xB0", o),
              "a b \xE4\xBD\xA0 ei");
    o.strip_accents = o.lowercase = false;
    EXPECT_EQ(tokenizer_text::bert_normalize("\xC3\x89", o), "\xC3\x89");
    EXPECT_EQ(tokenizer_text::lowercase("\xC4\xB0\xCE\xA3"),
              "i\xCC\x87\xCF\x83");  // İ, Σ (no final-sigma rule)
    EXPECT_EQ(tokenizer_text::strip_white_space("\xE3\x80\x80 a \xE1\xA0\x8E", true, true), "a \xE1\xA0\x8E");
}

TEST(TokenizerText, PrecompiledCharsmapRefusesBrokenData) {
    using tokenizer_text::PrecompiledCharsmap;
    EXPECT_EQ(test::error_of([] { PrecompiledCharsmap("AAA=", "map"); }),
              "map is too short for a precompiled charsmap");
    // A trie size of 64 bytes in an 8-byte map.
    EXPECT_EQ(test::error_of([] { PrecompiledCharsmap("QAAAAAAAAAA=", "map"); }),
              "map: the trie size 64 does not fit the 8 bytes of the charsmap");
}

}  // namespace
}  // namespace attnviz

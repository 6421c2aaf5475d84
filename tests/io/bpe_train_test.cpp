// learn_bpe (io/bpe_train.hpp): the merges of a worked example, round trips of English and Chinese,
// the files it writes load as the tokenizer it returns, and bad requests are one clear message.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>

#include "common/test_files.hpp"
#include "core/error.hpp"
#include "io/bpe_train.hpp"

namespace attnviz {
namespace {

// "aaabdaaabac" is one word. Pair counts: aa 4, ab 2, ... -> "aa" (256). Then "aa a b d aa a b a c":
// (aa, a) 2 and (a, b) 2 tie; the smaller ids win: (97, 98) = "ab" (257). Then (aa, ab) 2 -> "aaab"
// (258). Nothing occurs twice any more, so the vocabulary stops at 259 of the 300 asked for.
TEST(LearnBpe, TheWorkedExample) {
    const LearnedBpe b = learn_bpe("aaabdaaabac", 300);
    EXPECT_EQ(b.merges_txt, "#version: 0.2\na a\na b\naa ab\n");
    ASSERT_EQ(b.tokens.size(), 259u);
    EXPECT_EQ(b.tokens[256], "aa");
    EXPECT_EQ(b.tokens[257], "ab");
    EXPECT_EQ(b.tokens[258], "aaab");
    EXPECT_EQ(b.merges, 3);
    EXPECT_EQ(b.tokenizer->encode("aaabdaaabac"), (std::vector<int>{258, 'd', 258, 'a', 'c'}));
}

TEST(LearnBpe, RoundTripsAndShortensEnglishAndChinese) {
    std::string text;
    for (int i = 0; i < 200; ++i)
        text += "the cat sat on the mat, 注意力机制让每个词看向其他词 " + std::to_string(i % 17) + "\n";
    const LearnedBpe b = learn_bpe(text, 400);
    // (A text this repetitive runs out of pairs that occur twice before 400 tokens.)
    EXPECT_GT(b.tokens.size(), 300u);
    EXPECT_LE(b.tokens.size(), 400u);
    EXPECT_EQ(int(b.tokens.size()) - 256, b.merges);
    const std::vector<int> ids = b.tokenizer->encode(text);
    EXPECT_EQ(b.tokenizer->decode(ids), text);
    EXPECT_LT(ids.size() * 4, text.size());  // at least 4 bytes a token on a text this repetitive
    std::set<std::string> distinct(b.tokens.begin(), b.tokens.end());
    EXPECT_EQ(distinct.size(), b.tokens.size());
    EXPECT_TRUE(distinct.count(" cat"));
    EXPECT_TRUE(
        distinct.count(" 注意力机制让每个词看向其他词"));  // a repeated CJK word (and its space): one token
    // The files it wrote are the tokenizer it returned.
    const auto again = Tokenizer::from_gpt2(b.vocab_json, b.merges_txt);
    EXPECT_EQ(again->encode(text), ids);
    EXPECT_EQ(again->vocab_size(), int(b.tokens.size()));
    // Deterministic.
    EXPECT_EQ(learn_bpe(text, 400).merges_txt, b.merges_txt);
}

TEST(LearnBpe, BadRequestsAreOneMessage) {
    EXPECT_THROW(learn_bpe("abc", 256), Error);
    EXPECT_THROW(learn_bpe("abc", kMaxBpeVocab + 1), Error);
    EXPECT_THROW(learn_bpe(std::string("ok \xff\xfe bad"), 300), TextError);
    try {
        learn_bpe("abc", 10);
        ADD_FAILURE() << "a vocabulary of 10 was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("257 to 8192"), std::string::npos) << e.what();
    }
}

// A text file the task cannot learn from: too long (the bound keeps learning's memory and time in
// check), binary, or missing; each is one line naming the file.
TEST(BpeTextTask, BadFilesAreOneLineNamingTheFile) {
    test::TempDir dir("bpe");
    const std::string long_file = dir.path + "/long.txt", binary = dir.path + "/bin.txt";
    std::ofstream(long_file) << std::string(kMaxTokenizeTextBytes + 1, 'a');
    std::ofstream(binary) << std::string("ab\0cd", 5);
    for (const std::string& path : {long_file, binary, dir.path + "/missing.txt"}) {
        try {
            (void)bpe_text_task(path, 16, 300);
            ADD_FAILURE() << path << " was accepted";
        } catch (const Error& e) {
            const std::string m = e.what();
            EXPECT_EQ(m.find('\n'), std::string::npos) << m;
            EXPECT_NE(m.find(path), std::string::npos) << m;
        }
    }
    try {
        (void)bpe_text_task(long_file, 16, 300);
        ADD_FAILURE() << "the long file was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("at most 4 MiB"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace attnviz

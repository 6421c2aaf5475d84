// app/text_wrap: lines break at spaces and between CJK characters (a Chinese paragraph has no spaces),
// never before closing or after opening punctuation, and a piece wider than the line is cut.
#include "app/text_wrap.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace attnviz::app {
namespace {

/// 1 px per byte of a character: ASCII 1, Han 3 (UTF-8 length), so widths are easy to count.
float bytes(const char* b, const char* e) {
    return float(e - b);
}

std::vector<std::string> lines(const std::string& text, float width) {
    std::vector<std::string> out;
    for (const auto& [b, e] : wrap_lines(text, width, bytes)) out.push_back(text.substr(b, e - b));
    return out;
}

TEST(TextWrap, EnglishBreaksAtSpacesAndDropsThem) {
    EXPECT_EQ(lines("the quick brown fox", 10), (std::vector<std::string>{"the quick", "brown fox"}));
    EXPECT_EQ(lines("the quick brown fox", 100), (std::vector<std::string>{"the quick brown fox"}));
    EXPECT_EQ(lines("a  b", 1), (std::vector<std::string>{"a", "b"}));  // every space of a run dropped
    EXPECT_EQ(lines("", 10), (std::vector<std::string>{""}));
    EXPECT_EQ(lines("one\n\ntwo", 10), (std::vector<std::string>{"one", "", "two"}));
}

TEST(TextWrap, AWordWiderThanTheLineIsCut) {
    EXPECT_EQ(lines("abcdefghij", 4), (std::vector<std::string>{"abcd", "efgh", "ij"}));
    EXPECT_EQ(lines("ab abcdefgh", 4), (std::vector<std::string>{"ab", "abcd", "efgh"}));
}

TEST(TextWrap, ChineseBreaksBetweenCharactersWithoutSpaces) {
    // 3 px per character: 4 characters per 12-px line
    EXPECT_EQ(lines("注意力放在有用的地方", 12), (std::vector<std::string>{"注意力放", "在有用的", "地方"}));
    // mixed: an English word stays whole, and breaks are allowed next to Han characters
    EXPECT_EQ(lines("小型Transformer模型", 12), (std::vector<std::string>{"小型", "Transformer", "模型"}));
}

TEST(TextWrap, NoLineStartsWithClosingOrEndsWithOpeningPunctuation) {
    // "的，" may not be split: the comma goes with the character before it
    for (const std::string& line : lines("模型学会了，注意力放在（有用的）地方。", 12)) {
        EXPECT_NE(line.rfind("，", 0), 0u) << line;
        EXPECT_NE(line.rfind("）", 0), 0u) << line;
        EXPECT_NE(line.rfind("。", 0), 0u) << line;
        ASSERT_GE(line.size(), 3u);
        EXPECT_NE(line.substr(line.size() - 3), "（") << line;
    }
    // every character is kept, in order
    std::string all;
    for (const std::string& line : lines("模型学会了，注意力放在（有用的）地方。", 12)) all += line;
    EXPECT_EQ(all, "模型学会了，注意力放在（有用的）地方。");
}

TEST(TextWrap, MalformedUtf8IsKeptByteByByte) {
    const std::string bad =
        "ab\xff\xfe"
        "cd";
    std::string all;
    for (const std::string& line : lines(bad, 2)) all += line;
    EXPECT_EQ(all, bad);
}

}  // namespace
}  // namespace attnviz::app

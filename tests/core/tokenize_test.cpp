// GCC 12 with -march=native (AVX-512) reports false "may be used uninitialized" warnings inside
// Eigen's vectorised kernels (in the compiler's own intrinsics headers); they are not our code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "core/tokenize.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/error.hpp"

namespace attnviz {
namespace {

using Strings = std::vector<std::string>;

// Expects a TextError whose message names `offset` as the failing byte.
void expect_invalid_at(const std::string& text, std::size_t offset) {
    SCOPED_TRACE("input bytes: " + std::to_string(text.size()));
    try {
        decode_utf8(text);
        ADD_FAILURE() << "decode_utf8 accepted invalid UTF-8";
    } catch (const TextError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("invalid UTF-8 at byte " + std::to_string(offset) + ":"), std::string::npos)
            << msg;
    }
    // tokenize must reject it the same way rather than produce garbage tokens.
    EXPECT_THROW(tokenize(text), TextError);
}

TEST(Tokenize, DefaultSentenceHasEightWords) {
    const Strings t = tokenize_strings("a fluffy blue creature roamed the verdant forest");
    EXPECT_EQ(t, (Strings{"a", "fluffy", "blue", "creature", "roamed", "the", "verdant", "forest"}));
    EXPECT_EQ(tokenize_strings(kDefaultSentence).size(), 8u);
}

TEST(Tokenize, ChineseIsOneTokenPerCharacterAndFullWidthPunctuationIsAToken) {
    const Strings t = tokenize_strings("毛茸茸的蓝色生物在翠绿的森林里漫步。");
    EXPECT_EQ(t, (Strings{"毛", "茸", "茸", "的", "蓝", "色", "生", "物", "在", "翠", "绿", "的", "森", "林",
                          "里", "漫", "步", "。"}));
}

TEST(Tokenize, ByteOffsetsPointBackIntoTheInput) {
    const std::string text = "  Hi, 猫!";
    const std::vector<Token> t = tokenize(text);
    ASSERT_EQ(t.size(), 4u);
    const Strings expect{"Hi", ",", "猫", "!"};
    for (std::size_t k = 0; k < t.size(); ++k) {
        EXPECT_EQ(t[k].text, expect[k]);
        EXPECT_EQ(text.substr(t[k].byte_begin, t[k].byte_end - t[k].byte_begin), t[k].text);
    }
    EXPECT_EQ(t[0].byte_begin, 2u);
    EXPECT_EQ(t[2].byte_begin, 6u);
    EXPECT_EQ(t[2].byte_end, 9u);  // 猫 is 3 bytes
}

TEST(Tokenize, PunctuationIsSplitOffWords) {
    EXPECT_EQ(tokenize_strings("Hello, world! (yes)"),
              (Strings{"Hello", ",", "world", "!", "(", "yes", ")"}));
    EXPECT_EQ(tokenize_strings("wait..."), (Strings{"wait", ".", ".", "."}));
    EXPECT_EQ(tokenize_strings("x=1+2"), (Strings{"x", "=", "1", "+", "2"}));
}

TEST(Tokenize, ApostrophesAndHyphensInsideWordsStay) {
    EXPECT_EQ(tokenize_strings("don't stop well-known"), (Strings{"don't", "stop", "well-known"}));
    EXPECT_EQ(tokenize_strings("it’s"), (Strings{"it’s"}));  // typographic apostrophe U+2019
    // At word edges they are punctuation.
    EXPECT_EQ(tokenize_strings("'quoted' -x y-"), (Strings{"'", "quoted", "'", "-", "x", "y", "-"}));
}

TEST(Tokenize, NonAsciiLettersAreWordCharacters) {
    EXPECT_EQ(tokenize_strings("café über naïve"), (Strings{"café", "über", "naïve"}));
    EXPECT_EQ(tokenize_strings("Привет, мир!"), (Strings{"Привет", ",", "мир", "!"}));
    EXPECT_EQ(tokenize_strings("Ελληνικά"), (Strings{"Ελληνικά"}));
    EXPECT_EQ(tokenize_strings("한국어 문장"), (Strings{"한국어", "문장"}));
}

TEST(Tokenize, CombiningMarksStayWithTheirLetter) {
    // "e" + COMBINING ACUTE ACCENT is one letter as far as the reader can see.
    EXPECT_EQ(tokenize_strings("cafe\xCC\x81 ok"), (Strings{"cafe\xCC\x81", "ok"}));
    // Kana + combining voiced sound mark stays one token.
    EXPECT_EQ(tokenize_strings("か\xE3\x82\x99き"), (Strings{"か\xE3\x82\x99", "き"}));
}

TEST(Tokenize, FullWidthAndCjkPunctuationAreTokens) {
    EXPECT_EQ(tokenize_strings("你好，世界！「对」？"),
              (Strings{"你", "好", "，", "世", "界", "！", "「", "对", "」", "？"}));
    EXPECT_EQ(tokenize_strings("《书》、【注】"), (Strings{"《", "书", "》", "、", "【", "注", "】"}));
    EXPECT_EQ(tokenize_strings("“quote” — dash…"), (Strings{"“", "quote", "”", "—", "dash", "…"}));
}

TEST(Tokenize, MixedScriptsSplitAtTheBoundary) {
    EXPECT_EQ(tokenize_strings("GPT模型很大"), (Strings{"GPT", "模", "型", "很", "大"}));
    EXPECT_EQ(tokenize_strings("ひらがなカタカナ"),
              (Strings{"ひ", "ら", "が", "な", "カ", "タ", "カ", "ナ"}));
}

TEST(Tokenize, WhitespaceOfAllKindsSeparatesAndIsDropped) {
    EXPECT_TRUE(tokenize_strings("").empty());
    EXPECT_TRUE(tokenize_strings(" \t\r\n").empty());
    // No-break space, ideographic space, em space.
    EXPECT_EQ(tokenize_strings("a\xC2\xA0"
                               "b\xE3\x80\x80"
                               "c\xE2\x80\x83"
                               "d"),
              (Strings{"a", "b", "c", "d"}));
}

TEST(Tokenize, EmojiAreSingleTokensWithTheirModifiers) {
    EXPECT_EQ(tokenize_strings("hi😀there"), (Strings{"hi", "😀", "there"}));
    // Thumbs up + skin tone modifier; family joined with zero-width joiners.
    EXPECT_EQ(tokenize_strings("👍🏽 👨‍👩‍👧"), (Strings{"👍🏽", "👨‍👩‍👧"}));
}

TEST(Tokenize, IsCjkIdeograph) {
    EXPECT_TRUE(is_cjk_ideograph(U'猫'));
    EXPECT_TRUE(is_cjk_ideograph(U'の'));
    EXPECT_TRUE(is_cjk_ideograph(U'カ'));
    EXPECT_TRUE(is_cjk_ideograph(U'\U00020000'));  // extension B
    EXPECT_FALSE(is_cjk_ideograph(U'a'));
    EXPECT_FALSE(is_cjk_ideograph(U'。'));
    EXPECT_FALSE(is_cjk_ideograph(U'한'));
}

TEST(Utf8, DecodeAndEncodeRoundTrip) {
    const std::u32string cps = {U'a',      U'é',      U'猫',     U'😀',      U'\U0010FFFF',
                                U'\u0080', U'\u07FF', U'\u0800', U'\uFFFF', U'\U00010000'};
    std::string bytes;
    for (char32_t c : cps) bytes += encode_utf8(c);
    EXPECT_EQ(decode_utf8(bytes), cps);
    EXPECT_EQ(encode_utf8(U'é'), "\xC3\xA9");
    EXPECT_EQ(encode_utf8(U'猫'), "\xE7\x8C\xAB");
    EXPECT_EQ(encode_utf8(U'😀'), "\xF0\x9F\x98\x80");
    EXPECT_THROW(encode_utf8(0xD800), TextError);
    EXPECT_THROW(encode_utf8(0x110000), TextError);
}

TEST(Utf8, OverlongFormsAreRejected) {
    expect_invalid_at("ab\xC0\xAF", 2);           // '/' in two bytes
    expect_invalid_at("\xC1\xBF", 0);             // U+007F in two bytes
    expect_invalid_at("x\xE0\x80\xAF", 1);        // '/' in three bytes
    expect_invalid_at("\xE0\x9F\xBF", 0);         // U+07FF in three bytes
    expect_invalid_at("abc\xF0\x8F\xBF\xBF", 3);  // U+FFFF in four bytes
}

TEST(Utf8, SurrogatesAreRejected) {
    expect_invalid_at("ok \xED\xA0\x80", 3);       // U+D800
    expect_invalid_at("\xED\xBF\xBF", 0);          // U+DFFF
    EXPECT_NO_THROW(decode_utf8("\xED\x9F\xBF"));  // U+D7FF is fine
    EXPECT_NO_THROW(decode_utf8("\xEE\x80\x80"));  // U+E000 is fine
}

TEST(Utf8, TruncatedSequencesAreRejected) {
    expect_invalid_at("abc\xE7\x8C", 3);  // 猫 missing its last byte, at the end
    expect_invalid_at(
        "\xE7\x8C"
        "abc",
        0);  // ... followed by ASCII
    expect_invalid_at("\xF0\x9F\x98", 0);
    expect_invalid_at("hello \xC3", 6);
}

TEST(Utf8, StrayContinuationBytesAreRejected) {
    expect_invalid_at("\x80", 0);
    expect_invalid_at(
        "abc\xBF"
        "def",
        3);
    expect_invalid_at("\xC3\xA9\xA9", 2);  // é followed by an extra continuation byte
}

TEST(Utf8, CodePointsAboveU10FFFFAndImpossibleBytesAreRejected) {
    expect_invalid_at("\xF4\x90\x80\x80", 0);        // U+110000
    expect_invalid_at("a\xF7\xBF\xBF\xBF", 1);       // U+1FFFFF
    expect_invalid_at("ab\xF8\x88\x80\x80\x80", 2);  // old 5-byte form
    expect_invalid_at("\xFF", 0);
    expect_invalid_at("\xFE", 0);
    EXPECT_NO_THROW(decode_utf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF is the last valid one
}

TEST(Utf8, ErrorMessageIsOneReadableSentence) {
    try {
        tokenize("the cat\xE7\x8C");
        FAIL() << "no exception";
    } catch (const TextError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("invalid UTF-8 at byte 7: ", 0), 0u) << e.what();
    }
}

// A tiny deterministic generator for the fuzz tests (the core's Rng lives in ops; keep this file
// independent of it).
struct Lcg {
    std::uint64_t s;
    std::uint32_t next() {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        return std::uint32_t(s >> 33);
    }
};

TEST(Utf8, RandomBytesNeverCrashAndTokensPointIntoTheInput) {
    Lcg rng{1};
    int rejected = 0, accepted = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        std::string text;
        const int len = int(rng.next() % 24);
        for (int k = 0; k < len; ++k) {
            // Mostly ASCII and UTF-8 lead/continuation bytes, so both outcomes happen often.
            const std::uint32_t r = rng.next() % 4;
            text += char(r == 0 ? 0x20 + rng.next() % 0x5F : 0x80 + rng.next() % 0x80);
        }
        std::vector<Token> tokens;
        try {
            tokens = tokenize(text);
            ++accepted;
        } catch (const TextError& e) {
            EXPECT_EQ(std::string(e.what()).rfind("invalid UTF-8 at byte ", 0), 0u);
            ++rejected;
            continue;
        }
        std::size_t prev_end = 0;
        for (const Token& t : tokens) {
            ASSERT_LE(prev_end, t.byte_begin);
            ASSERT_LT(t.byte_begin, t.byte_end);
            ASSERT_LE(t.byte_end, text.size());
            EXPECT_EQ(text.substr(t.byte_begin, t.byte_end - t.byte_begin), t.text);
            EXPECT_NO_THROW(decode_utf8(t.text));  // every token is itself valid UTF-8
            prev_end = t.byte_end;
        }
    }
    EXPECT_GT(rejected, 100);
    EXPECT_GT(accepted, 100);
}

TEST(Utf8, RandomCodePointsRoundTrip) {
    Lcg rng{2};
    for (int trial = 0; trial < 2000; ++trial) {
        std::u32string cps;
        std::string bytes;
        for (int k = 0; k < 8; ++k) {
            char32_t cp = char32_t(rng.next() % 0x110000);
            if (cp >= 0xD800 && cp <= 0xDFFF) cp = U'x';
            cps.push_back(cp);
            bytes += encode_utf8(cp);
        }
        ASSERT_EQ(decode_utf8(bytes), cps);
    }
}

TEST(Tokenize, TokensConcatenateToTheTextWithoutWhitespace) {
    const std::string text = "Héllo,  世界! don't\tstop—now… 「好」 x-y 1.5";
    std::string joined;
    for (const Token& t : tokenize(text)) joined += t.text;
    std::string squeezed;
    for (char c : text)
        if (c != ' ' && c != '\t') squeezed += c;
    EXPECT_EQ(joined, squeezed);
}

}  // namespace
}  // namespace attnviz

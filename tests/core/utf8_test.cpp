// The one UTF-8 decoder (core/utf8.hpp): every boundary of RFC 3629 / Unicode's Table 3-7, the
// maximal subparts a lossy decoder replaces, and the messages the learner reads.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "core/utf8.hpp"

namespace attnviz {
namespace {

// The code point of the whole string, or -1 when it is not exactly one valid sequence.
long one(const std::string& s) {
    const Utf8Step step = decode_utf8_step(s, 0);
    return step.length == int(s.size()) ? long(step.cp) : -1;
}

std::string error_of(const std::string& s) {
    try {
        decode_utf8(s);
    } catch (const TextError& e) {
        return e.what();
    }
    return "(accepted)";
}

TEST(Utf8Decoder, FirstAndLastCodePointOfEachLength) {
    EXPECT_EQ(one(std::string(1, '\0')), 0x0);
    EXPECT_EQ(one("\x7F"), 0x7F);
    EXPECT_EQ(one("\xC2\x80"), 0x80);
    EXPECT_EQ(one("\xDF\xBF"), 0x7FF);
    EXPECT_EQ(one("\xE0\xA0\x80"), 0x800);
    EXPECT_EQ(one("\xEF\xBF\xBF"), 0xFFFF);
    EXPECT_EQ(one("\xF0\x90\x80\x80"), 0x10000);
    EXPECT_EQ(one("\xF4\x8F\xBF\xBF"), 0x10FFFF);
}

TEST(Utf8Decoder, AroundTheSurrogatesAndNoncharactersAreFine) {
    EXPECT_EQ(one("\xED\x9F\xBF"), 0xD7FF);
    EXPECT_EQ(one("\xED\xA0\x80"), -1);  // U+D800
    EXPECT_EQ(one("\xED\xBF\xBF"), -1);  // U+DFFF
    EXPECT_EQ(one("\xEE\x80\x80"), 0xE000);
    EXPECT_EQ(one("\xEF\xB7\x90"), 0xFDD0);  // noncharacters are UTF-8 (libdbus accepts them too)
    EXPECT_EQ(one("\xEF\xBF\xBE"), 0xFFFE);
}

TEST(Utf8Decoder, OverlongFormsAreRefused) {
    EXPECT_EQ(one("\xC0\x80"), -1);          // U+0000
    EXPECT_EQ(one("\xC1\xBF"), -1);          // U+007F
    EXPECT_EQ(one("\xE0\x80\x80"), -1);      // U+0000
    EXPECT_EQ(one("\xE0\x9F\xBF"), -1);      // U+07FF
    EXPECT_EQ(one("\xF0\x80\x80\x80"), -1);  // U+0000
    EXPECT_EQ(one("\xF0\x8F\xBF\xBF"), -1);  // U+FFFF
}

TEST(Utf8Decoder, BeyondU10FFFFAndBytesThatNeverAppearAreRefused) {
    EXPECT_EQ(one("\xF4\x90\x80\x80"), -1);  // U+110000
    EXPECT_EQ(one("\xF5\x80\x80\x80"), -1);
    EXPECT_EQ(one("\xF7\xBF\xBF\xBF"), -1);  // U+1FFFFF
    for (int b = 0xF8; b <= 0xFF; ++b) EXPECT_EQ(one(std::string(1, char(b)) + "\x80\x80\x80"), -1) << b;
    EXPECT_EQ(one("\x80"), -1);  // continuation bytes start nothing
    EXPECT_EQ(one("\xBF"), -1);
}

TEST(Utf8Decoder, TruncatedSequencesAreRefused) {
    EXPECT_EQ(one("\xC3"), -1);
    EXPECT_EQ(one("\xE7\x8C"), -1);
    EXPECT_EQ(one("\xF0\x9F\x98"), -1);
    EXPECT_EQ(decode_utf8_step("\xE7\x8C"
                               "A",
                               0)
                  .length,
              0);
    EXPECT_EQ(decode_utf8_step("\xC3\xA9\xA9", 2).length, 0);  // an extra continuation byte
}

TEST(Utf8Decoder, EveryValidSequenceIsExactlyAnEncodedCodePoint) {
    // Every code point round-trips; and over every 1-, 2- and 3-byte string, the accepted ones are
    // encodings of what they decode to and as many as there are code points of that length: so
    // acceptance is exactly encode_utf8's image.
    for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
        if (cp >= 0xD800 && cp <= 0xDFFF) continue;
        ASSERT_EQ(one(encode_utf8(cp)), long(cp)) << std::hex << cp;
    }
    long accepted[4] = {0, 0, 0, 0}, wrong = 0;
    std::string s;
    for (int a = 0; a < 256; ++a)
        for (int b = -1; b < 256; ++b)
            for (int c = -1; c < (b < 0 ? 0 : 256); ++c) {
                s.assign(1, char(a));
                if (b >= 0) s += char(b);
                if (c >= 0) s += char(c);
                const long cp = one(s);
                if (cp < 0) continue;
                ++accepted[s.size()];
                if (encode_utf8(char32_t(cp)) != s) ++wrong;
            }
    EXPECT_EQ(wrong, 0);
    EXPECT_EQ(accepted[1], 0x80);
    EXPECT_EQ(accepted[2], 0x800 - 0x80);
    EXPECT_EQ(accepted[3], 0x10000 - 0x800 - 0x800);  // without the 2048 surrogates
    for (int a = 0xF0; a <= 0xF7; ++a)
        for (int b = 0x80; b <= 0xBF; ++b)
            for (int c : {0x80, 0xBF})
                for (int d : {0x80, 0xBF}) {
                    const long cp = long((a & 7) << 18 | (b & 0x3F) << 12 | (c & 0x3F) << 6 | (d & 0x3F));
                    const bool valid = cp >= 0x10000 && cp <= 0x10FFFF;
                    s.assign({char(a), char(b), char(c), char(d)});
                    ASSERT_EQ(one(s), valid ? cp : -1L) << std::hex << cp;
                }
}

TEST(Utf8Decoder, MaximalSubpartsAsUnicodeTable3_8) {
    // Unicode 15 §3.9, Table 3-8: 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 decodes to
    // a U+FFFD U+FFFD U+FFFD b U+FFFD c U+FFFD U+FFFD d.
    const std::string in = "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64";
    std::string out;
    walk_utf8(
        in, [&](std::string_view seq) { out.append(seq); },
        [&](std::string_view bad) {
            out += "|";
            return bad.size();
        });
    EXPECT_EQ(out, "a|||b|c||d");
    EXPECT_EQ(decode_utf8_step("\xF1\x80\x80", 0).invalid_length, 3);
    EXPECT_EQ(decode_utf8_step("\xE1\x80", 0).invalid_length, 2);
    EXPECT_EQ(decode_utf8_step("\xED\xA0\x80", 0).invalid_length, 1);  // a surrogate's lead alone
    EXPECT_EQ(decode_utf8_step("\xF0\x80\x80\x80", 0).invalid_length, 1);
    EXPECT_EQ(decode_utf8_step("\xC0\x80", 0).invalid_length, 1);
}

TEST(Utf8Decoder, MessagesNameTheByteAndWhatIsWrong) {
    EXPECT_EQ(error_of("ab\x80"),
              "invalid UTF-8 at byte 2: stray continuation byte 0x80 does not follow a lead byte");
    EXPECT_EQ(error_of("\xFF"), "invalid UTF-8 at byte 0: byte 0xFF never appears in UTF-8");
    EXPECT_EQ(error_of("abc\xE7\x8C"),
              "invalid UTF-8 at byte 3: truncated sequence (3-byte character cut off at the end)");
    EXPECT_EQ(error_of("\xF0\x9F\x98!"),
              "invalid UTF-8 at byte 0: truncated sequence (4-byte character has only 3 bytes)");
    EXPECT_EQ(error_of("\xC3!"),
              "invalid UTF-8 at byte 0: truncated sequence (2-byte character has only 1 byte)");
    EXPECT_EQ(error_of("x\xE0\x80\xAF"), "invalid UTF-8 at byte 1: overlong encoding of U+002F");
    EXPECT_EQ(error_of("\xF0\x8F\xBF\xBF"), "invalid UTF-8 at byte 0: overlong encoding of U+FFFF");
    EXPECT_EQ(error_of("ok \xED\xA0\x80"),
              "invalid UTF-8 at byte 3: UTF-16 surrogate code point encoded in UTF-8");
    EXPECT_EQ(error_of("\xF4\x90\x80\x80"), "invalid UTF-8 at byte 0: code point above U+10FFFF");
    EXPECT_EQ(error_of("\xF7\xBF\xBF\xBF"), "invalid UTF-8 at byte 0: code point above U+10FFFF");
    EXPECT_EQ(error_of("caf\xC3\xA9"), "(accepted)");
}

TEST(Utf8Decoder, EveryRefusedSequenceHasAReason) {
    // The fast check (Table 3-7's byte ranges) and the message's reading (the value the bytes spell)
    // must refuse the same bytes, or a message would say "not UTF-8" without a reason.
    for (int a = 0x80; a < 256; ++a)
        for (int b = 0; b < 256; ++b)
            for (int c : {0x00, 0x41, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0})
                for (int d : {0x00, 0x80, 0xBF, 0xC0}) {
                    const std::string s{char(a), char(b), char(c), char(d)};
                    if (decode_utf8_step(s, 0).length > 0) continue;
                    ASSERT_EQ(utf8_error(s, 0).find("not UTF-8"), std::string::npos)
                        << a << " " << b << " " << c;
                }
}

TEST(Utf8Decoder, FirstInvalidAndValid) {
    EXPECT_EQ(first_invalid_utf8(""), std::string_view::npos);
    EXPECT_EQ(first_invalid_utf8("猫 cat"), std::string_view::npos);
    EXPECT_EQ(first_invalid_utf8("猫\xE7\x8C"), 3u);
    EXPECT_TRUE(is_valid_utf8("😀"));
    EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));
}

}  // namespace
}  // namespace attnviz

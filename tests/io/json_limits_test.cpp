// io/json_limits: every JSON reader's limits (nesting, memory) and its errors in the app's words, in one
// linear pass (issue 22: a duplicate-key callback made nlohmann rescan the object at every close, and
// a 100 MiB file of empty strings took 3.2 GiB before it was refused).
#include "io/json_limits.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "common/test_files.hpp"
#include "core/error.hpp"

namespace attnviz {
namespace {

using test::error_of;

TEST(JsonLimits, ErrorsSayWhereInTheAppsWords) {
    const std::string msg = error_of([] { parse_json_limited(R"({"a": })", "f.json", "the file"); });
    EXPECT_EQ(msg.rfind("f.json: the file is not valid JSON at byte 7 (", 0), 0u) << msg;
    EXPECT_EQ(msg.find("json.exception"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("parse error at line"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_EQ(
        json_error_reason("[json.exception.parse_error.101] parse error at line 1, column 7: syntax error "
                          "while parsing value - unexpected '}'"),
        "syntax error while parsing value - unexpected '}'");
    EXPECT_EQ(json_error_reason("[json.exception.type_error.302] type must be string, but is null"),
              "type must be string, but is null");
}

TEST(JsonLimits, DocumentsTooLargeForMemoryAreRefusedBeforeTheyAreBuilt) {
    // 10M empty strings: 30 MB of text, over 1 GiB as a document.
    std::string text = "{\"x\":[";
    text.reserve(31u << 20);
    for (int i = 0; i < 10'000'000; ++i) text += "\"\",";
    text += "\"\"]}";
    const std::string msg = error_of([&] { parse_json_limited(text, "h", "the header"); });
    EXPECT_NE(msg.find("h: the header holds over"), std::string::npos) << msg;
    EXPECT_NE(msg.find("more than the app can hold in memory"), std::string::npos) << msg;
    // The same count of values in a smaller document parses.
    EXPECT_EQ(parse_json_limited("[1,2,3]", "h", "x").size(), 3u);
}

TEST(JsonLimits, DocumentsTooLargeForMemoryAreRefusedByTheFirstCheapPass) {
    // Fuzzing (issue 22): a 90 MB header of 30M empty strings and a 70 MB header of a million tensors
    // took 18 s and 14 s under the fuzz build, most of it in nlohmann's lexer before the memory limit
    // was reached. The linear pre-pass (the one that checks nesting) now counts values too and names
    // the byte where the document passes 1 GiB (112 bytes a value): token 9,586,981, here the
    // 9,586,978th empty string, at byte 6 + 3 * 9,586,977, long before the text ends.
    std::string text = "{\"x\":[";
    text.reserve(31u << 20);
    for (int i = 0; i < 10'000'000; ++i) text += "\"\",";
    text += "\"\"]}";
    const std::string msg = error_of([&] { check_json_limited(text, "h", "the header"); });
    EXPECT_EQ(msg,
              "h: the header holds over 9586981 values by byte 28760937, more than the app can hold in "
              "memory (1024 MiB)");
    // The first limit the text reaches is the one reported, and the scan ends there: nesting too deep
    // before the values run out, or the values before a deep nest.
    const std::string deep = "{\"y\":" + std::string(100, '[') + std::string(100, ']') + "," + text.substr(1);
    EXPECT_NE(
        error_of([&] { check_json_limited(deep, "h", "the header"); }).find("nests deeper than 64 levels"),
        std::string::npos);
    const std::string deep_late =
        text.substr(0, text.size() - 2) + "," + std::string(100, '[') + std::string(100, ']') + "]}";
    EXPECT_NE(
        error_of([&] { check_json_limited(deep_late, "h", "the header"); }).find("holds over 9586981 values"),
        std::string::npos);
    // Every kind of value still parses.
    EXPECT_EQ(parse_json_limited("[1,-2.5e3,true,null,\"s\",{\"k\":[]}]", "h", "x").size(), 6u);
}

// A kind of file that never holds many values gets a lower cap, checked in the same cheap pass: the
// fuzzers' 300k-tensor headers and 1M-added-token tokenizer files took seconds each before being used.
TEST(JsonLimits, AValueCapForAKindOfFileIsCheckedBeforeParsing) {
    std::string text = "[";
    for (int i = 0; i < 1000; ++i) text += "1,";
    text += "1]";
    EXPECT_EQ(parse_json_limited(text, "f", "the file", nullptr, 2000).size(), 1001u);
    const std::string msg = error_of([&] { parse_json_limited(text, "f", "the file", nullptr, 500); });
    EXPECT_EQ(msg.rfind("f: the file holds over 500 values (by byte ", 0), 0u) << msg;
    EXPECT_NE(msg.find("more than any real one"), std::string::npos) << msg;
}

TEST(JsonLimits, DuplicateKeysAreFoundInLinearTime) {
    const DuplicateKeyMessage dup = [](const std::vector<std::string>& outer, const std::string& key) {
        std::string where;
        for (const auto& o : outer) where += "/" + o;
        return "dup " + key + " in '" + where + "'";
    };
    EXPECT_EQ(error_of([&] { parse_json_limited(R"({"a":1,"a":2})", "f", "x", dup); }), "dup a in ''");
    EXPECT_EQ(error_of([&] { parse_json_limited(R"({"t":{"k":1,"k":2}})", "f", "x", dup); }),
              "dup k in '/t'");
    EXPECT_EQ(error_of([&] { parse_json_limited(R"({"t":[{"k":1},{"k":1,"k":2}]})", "f", "x", dup); }),
              "dup k in '/t/'");
    EXPECT_NO_THROW(parse_json_limited(R"({"t":{"k":1},"u":{"k":1},"k":{"t":2}})", "f", "x", dup));
    // 100,000 objects in one object: quadratic before (nlohmann rescanned the object at every close).
    std::string text = "{";
    for (int i = 0; i < 100000; ++i)
        text += (i ? ",\"z" : "\"z") + std::to_string(i) + "\":{\"dtype\":\"U8\",\"shape\":[0]}";
    text += "}";
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(parse_json_limited(text, "f", "x", dup).size(), 100000u);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(secs, 20.0);  // ~0.3 s in the sanitized build; the quadratic parse took minutes
}

}  // namespace
}  // namespace attnviz

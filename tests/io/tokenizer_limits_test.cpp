// Tokenizing is linear in the text whatever the tokenizer file: added tokens found by automaton
// (with the old per-position scan's leftmost-longest and single_word results), Split regexes run in
// windows under a work budget for the whole text (the same pieces as one unwindowed search, or one
// clear TextError when the pattern backtracks or rescans on long runs).
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "common/cpu_time.hpp"
#include "common/gpt2_bytes.hpp"
#include "common/test_files.hpp"
#include "core/error.hpp"
#include "io/tokenizer.hpp"

namespace attnviz {
namespace {

using json = nlohmann::json;

/// A tokenizer.json with the 256 byte tokens (id = byte value), no merges, and `pre`.
std::shared_ptr<const Tokenizer> byte_tokenizer(const json& pre, const json& added = json::array()) {
    json vocab = json::object();
    for (int b = 0; b < 256; ++b) vocab[test::byte_char(static_cast<unsigned char>(b))] = b;
    const json j = {{"version", "1.0"},
                    {"added_tokens", added},
                    {"normalizer", nullptr},
                    {"pre_tokenizer", pre},
                    {"decoder", {{"type", "ByteLevel"}}},
                    {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array()}}}};
    return Tokenizer::from_tokenizer_json(j.dump());
}

json byte_level(bool use_regex) {
    return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", use_regex}};
}

struct Added {
    std::string content;
    int id;
    bool single_word = false, lstrip = false, rstrip = false;
};

json added_json(const std::vector<Added>& tokens) {
    json a = json::array();
    for (const Added& t : tokens)
        a.push_back({{"id", t.id},
                     {"content", t.content},
                     {"single_word", t.single_word},
                     {"lstrip", t.lstrip},
                     {"rstrip", t.rstrip},
                     {"normalized", false},
                     {"special", true}});
    return a;
}

/// Index of the first difference, for failure messages.
template <typename T>
std::size_t first_difference(const std::vector<T>& a, const std::vector<T>& b) {
    std::size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    return i;
}

#define EXPECT_SAME_SEQUENCE(got, want, what)                                                      \
    do {                                                                                           \
        const std::size_t at_ = first_difference(got, want);                                       \
        EXPECT_TRUE((got) == (want)) << what << ": first difference at index " << at_ << " of "    \
                                     << (got).size() << " (got) / " << (want).size() << " (want)"; \
    } while (0)

// ------------------------------------------------------------------------------------------------
// Added tokens

/// The straightforward leftmost-longest split: at each position every token, longest first (the
/// file's order among equals); single_word tokens only between non-word bytes. Ids of a tokenizer
/// whose other tokens are the bytes themselves.
std::vector<int> reference_added_encode(const std::string& s, const std::vector<Added>& tokens) {
    std::vector<int> order(tokens.size());
    for (std::size_t k = 0; k < tokens.size(); ++k) order[k] = int(k);
    std::stable_sort(order.begin(), order.end(),
                     [&](int x, int y) { return tokens[x].content.size() > tokens[y].content.size(); });
    const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    const auto is_word = [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return std::isalnum(u) || c == '_' || u >= 0x80;
    };
    std::vector<int> ids;
    std::size_t last = 0;
    const auto gap = [&](std::size_t a, std::size_t b) {
        for (std::size_t k = a; k < b; ++k) ids.push_back(static_cast<unsigned char>(s[k]));
    };
    for (std::size_t i = 0; i < s.size();) {
        const Added* hit = nullptr;
        for (int k : order) {
            const Added& t = tokens[k];
            if (s.compare(i, t.content.size(), t.content) != 0) continue;
            const std::size_t end = i + t.content.size();
            if (t.single_word && ((i > 0 && is_word(s[i - 1])) || (end < s.size() && is_word(s[end]))))
                continue;
            hit = &t;
            break;
        }
        if (!hit) {
            ++i;
            continue;
        }
        std::size_t a = i, b = i + hit->content.size();
        if (hit->lstrip)
            while (a > last && is_space(s[a - 1])) --a;
        if (hit->rstrip)
            while (b < s.size() && is_space(s[b])) ++b;
        gap(last, a);
        ids.push_back(hit->id);
        last = i = b;
    }
    gap(last, s.size());
    return ids;
}

TEST(TokAddedTokens, RandomTokenSetsMatchTheLeftmostLongestReference) {
    std::mt19937 rng(20240522);
    const std::vector<std::string> alphabet = {"a", "b", " ", "<", ">", "_", "\n", "\xc3\xa9", "|"};
    const auto pick = [&](int n) { return int(rng() % unsigned(n)); };
    const auto random_string = [&](int max_len) {
        std::string r;
        for (int k = 1 + pick(max_len); k > 0; --k) r += alphabet[std::size_t(pick(int(alphabet.size())))];
        return r;
    };
    for (int round = 0; round < 400; ++round) {
        std::vector<Added> tokens;
        const int count = 1 + pick(12);
        for (int k = 0; k < count; ++k) {
            Added t;
            // Sometimes a repeat of an earlier content with other flags (the first one wins).
            t.content = k > 0 && pick(5) == 0 ? tokens[std::size_t(pick(k))].content : random_string(5);
            t.id = 1000 + k;
            t.single_word = pick(3) == 0;
            t.lstrip = pick(4) == 0;
            t.rstrip = pick(4) == 0;
            tokens.push_back(t);
        }
        const auto tok = byte_tokenizer(byte_level(false), added_json(tokens));
        for (int t = 0; t < 10; ++t) {
            std::string text;
            while (text.size() < 120)
                text += pick(4) == 0 ? tokens[std::size_t(pick(count))].content : random_string(3);
            const std::vector<int> got = tok->encode(text), want = reference_added_encode(text, tokens);
            std::string names;
            for (const Added& a : tokens)
                names += "'" + a.content + "'" + (a.single_word ? "w" : "") + (a.lstrip ? "l" : "") +
                         (a.rstrip ? "r" : "") + " ";
            EXPECT_SAME_SEQUENCE(got, want,
                                 "round " << round << ", tokens " << names << ", text '" << text << "'");
            if (got != want) return;
        }
    }
}

TEST(TokAddedTokens, HundredThousandTokensOnFourMebibytesOfTheirFirstByteAreFast) {
    std::vector<Added> tokens;
    for (int i = 0; i < 100000; ++i) {
        char name[16];
        std::snprintf(name, sizeof name, "<t%06d>", i);
        tokens.push_back({name, 1000 + i});
    }
    const auto tok = byte_tokenizer(byte_level(true), added_json(tokens));
    std::string text(kMaxTokenizeTextBytes, '<');
    const double start = test::thread_cpu_seconds();
    const std::vector<int> ids = tok->encode(text);
    const double seconds = test::thread_cpu_seconds() - start;
    std::printf("100k added tokens, 4 MiB of '<': %.2f s\n", seconds);
    EXPECT_EQ(ids, std::vector<int>(text.size(), '<'));
    EXPECT_LT(seconds, 10.0);  // the per-position scan: over 60 s
    text.replace(1000, 9, "<t099999>");
    text.replace(text.size() - 9, 9, "<t000000>");
    const std::vector<int> with = tok->encode(text);
    ASSERT_EQ(with.size(), text.size() - 16);
    EXPECT_EQ(with[1000], 1000 + 99999);
    EXPECT_EQ(with.back(), 1000);
}

TEST(TokAddedTokens, ThousandRealisticTokensOnFourMebibytesAreFast) {
    std::vector<Added> tokens;
    for (int i = 0; i < 1000; ++i)
        tokens.push_back({"<|reserved_special_token_" + std::to_string(i) + "|>", 1000 + i});
    const auto tok = byte_tokenizer(byte_level(true), added_json(tokens));
    std::string text;
    while (text.size() < kMaxTokenizeTextBytes - 64) text += "<|reserved_special_token_<|";
    text += "<|reserved_special_token_7|>";
    const double start = test::thread_cpu_seconds();
    const std::vector<int> ids = tok->encode(text);
    const double seconds = test::thread_cpu_seconds() - start;
    std::printf("1k added tokens, 4 MiB: %.2f s\n", seconds);
    EXPECT_LT(seconds, 10.0);  // the per-position scan: 12-20 s
    ASSERT_EQ(ids.size(), text.size() - 28 + 1);
    EXPECT_EQ(ids.back(), 1007);
}

TEST(TokAddedTokens, ManyLengthsOfOneLetterWithSingleWordAreFast) {
    // Tokens "a", "aa", ... of 1500 lengths, every other one single_word, on 4 MiB of words of a's:
    // every position matches hundreds of tokens, nearly all refused by the word check.
    std::vector<Added> tokens;
    for (int k = 1; k <= 1500; ++k)
        tokens.push_back({std::string(std::size_t(k), 'a'), 1000 + k, k % 2 == 0});
    const auto tok = byte_tokenizer(byte_level(false), added_json(tokens));
    std::string text;
    for (std::size_t w = 1; text.size() < kMaxTokenizeTextBytes - 4000; w = w % 2900 + 7)
        text += std::string(w, 'a') + " ";
    const double start = test::thread_cpu_seconds();
    const std::vector<int> ids = tok->encode(text);
    const double seconds = test::thread_cpu_seconds() - start;
    std::printf("1500 tokens of a's, 4 MiB of words: %.2f s\n", seconds);
    EXPECT_LT(seconds, 10.0);
    const std::string sample = text.substr(0, 20000);
    EXPECT_SAME_SEQUENCE(tok->encode(sample), reference_added_encode(sample, tokens), "first 20000 bytes");
}

TEST(TokAddedTokens, TooMuchAddedTokenTextIsRefused) {
    const std::vector<Added> tokens = {{std::string(10 << 20, 'x'), 1000}, {std::string(7 << 20, 'y'), 1001}};
    EXPECT_EQ(test::error_of([&] { byte_tokenizer(byte_level(false), added_json(tokens)); }),
              "tokenizer.json: added_tokens[1]: the added tokens hold more than 16 MiB of text (not a "
              "tokenizer file)");
}

}  // namespace
}  // namespace attnviz

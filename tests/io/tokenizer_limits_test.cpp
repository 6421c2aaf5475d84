// Tokenizing is linear in the text whatever the tokenizer file: added tokens found by automaton
// (with the old per-position scan's leftmost-longest and single_word results), Split regexes run in
// windows under a work budget for the whole text (the same pieces as one unwindowed search, or one
// clear TextError when the pattern backtracks or rescans on long runs), WordPiece and Unigram
// vocabulary lookups under a budget linear in the text.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <gtest/gtest.h>
#include <pcre2.h>

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

const char* kLlama3Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* kQwen2Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* kGpt2Split = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

/// A tokenizer.json with the 256 byte tokens (id = byte value), no merges, `pre`, and the JSON text
/// of an added_tokens array (written directly: 100k tokens as json objects are slow under ASan).
std::shared_ptr<const Tokenizer> byte_tokenizer(const json& pre, const std::string& added_tokens = "[]") {
    json vocab = json::object();
    for (int b = 0; b < 256; ++b) vocab[test::byte_char(static_cast<unsigned char>(b))] = b;
    const json j = {{"version", "1.0"},
                    {"added_tokens", nullptr},
                    {"normalizer", nullptr},
                    {"pre_tokenizer", pre},
                    {"decoder", {{"type", "ByteLevel"}}},
                    {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array()}}}};
    std::string text = j.dump();
    const std::string slot = "\"added_tokens\":null";
    text.replace(text.find(slot), slot.size(), "\"added_tokens\":" + added_tokens);
    return Tokenizer::from_tokenizer_json(text);
}

json byte_level(bool use_regex) {
    return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", use_regex}};
}

/// Sequence[Split{Regex}, ByteLevel without its own regex]: pretokenize() gives the Split pieces.
json split_then_byte_level(const std::string& pattern) {
    return {
        {"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}, {"invert", false}},
          byte_level(false)}}};
}

struct Added {
    std::string content;
    int id;
    bool single_word = false, lstrip = false, rstrip = false;
};

std::string added_json(const std::vector<Added>& tokens) {
    std::string a = "[";
    const auto flag = [](bool b) { return b ? "true" : "false"; };
    for (const Added& t : tokens) {
        if (a.size() > 1) a += ",";
        a += "{\"id\":" + std::to_string(t.id) + ",\"content\":" + json(t.content).dump() +
             ",\"single_word\":" + flag(t.single_word) + ",\"lstrip\":" + flag(t.lstrip) +
             ",\"rstrip\":" + flag(t.rstrip) + ",\"normalized\":false,\"special\":true}";
    }
    return a + "]";
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
    std::string text(kMaxTokenizeTextBytes - 28, '<');
    text += "<|reserved_special_token_7|>";
    const double start = test::thread_cpu_seconds();
    const std::vector<int> ids = tok->encode(text);
    const double seconds = test::thread_cpu_seconds() - start;
    std::printf("1k added tokens, 4 MiB: %.2f s\n", seconds);
    EXPECT_LT(seconds, 4.0);  // Release: 0.05 s; the per-position scan: 8.6-20 s
    ASSERT_EQ(ids.size(), text.size() - 28 + 1);
    EXPECT_EQ(ids.back(), 1007);
}

TEST(TokAddedTokens, ManyLengthsOfOneLetterWithSingleWordAreFast) {
    // Tokens "a", "aa", ... of 1500 lengths, single_word, on 4 MiB of words of a's up to 2900 long:
    // in a long word every position matches hundreds of tokens, all refused by the word check.
    std::vector<Added> tokens;
    for (int k = 1; k <= 1500; ++k) tokens.push_back({std::string(std::size_t(k), 'a'), 1000 + k, true});
    const auto tok = byte_tokenizer(byte_level(false), added_json(tokens));
    std::string text;
    std::vector<int> want;  // a word of up to 1500 a's is a token, a longer one its bytes
    for (std::size_t w = 1; text.size() < kMaxTokenizeTextBytes - 4000; w = w % 2900 + 7) {
        text += std::string(w, 'a') + " ";
        if (w <= 1500)
            want.push_back(1000 + int(w));
        else
            want.insert(want.end(), w, 'a');
        want.push_back(' ');
    }
    const double start = test::thread_cpu_seconds();
    const std::vector<int> ids = tok->encode(text);
    const double seconds = test::thread_cpu_seconds() - start;
    std::printf("1500 tokens of a's, 4 MiB of words: %.2f s\n", seconds);
    EXPECT_LT(seconds, 10.0);  // the per-position scan: hours
    EXPECT_SAME_SEQUENCE(ids, want, "words of a's");
    const std::string sample = text.substr(0, 1500);
    EXPECT_SAME_SEQUENCE(tok->encode(sample), reference_added_encode(sample, tokens), "first 1500 bytes");
}

TEST(TokAddedTokens, TooMuchAddedTokenTextIsRefused) {
    const std::vector<Added> tokens = {{std::string(10 << 20, 'x'), 1000}, {std::string(7 << 20, 'y'), 1001}};
    EXPECT_EQ(test::error_of([&] { byte_tokenizer(byte_level(false), added_json(tokens)); }),
              "tokenizer.json: added_tokens[1]: the added tokens hold more than 16 MiB of text (not a "
              "tokenizer file)");
}

// ------------------------------------------------------------------------------------------------
// Split regexes

/// The Split pieces from one unwindowed pcre2_match per match, as the tokenizer did before windows.
std::vector<std::string> reference_split(const std::string& pattern, const std::string& s) {
    int err = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     PCRE2_UTF | PCRE2_UCP, &err, &offset, nullptr);
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    pcre2_match_data* data = pcre2_match_data_create_from_pattern(code, nullptr);
    std::vector<std::string> out;
    std::size_t pos = 0, last = 0;
    while (pos <= s.size()) {
        const int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), pos,
                                   PCRE2_NO_UTF_CHECK, data, nullptr);
        if (rc < 0) break;
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data);
        const std::size_t a = ov[0], b = ov[1];
        if (a == b) {
            pos = a + 1;
            while (pos < s.size() && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) ++pos;
            continue;
        }
        if (a > last) out.push_back(s.substr(last, a - last));
        out.push_back(s.substr(a, b - a));
        last = pos = b;
    }
    if (last < s.size()) out.push_back(s.substr(last));
    pcre2_match_data_free(data);
    pcre2_code_free(code);
    return out;
}

TEST(TokSplitRegex, WindowedSplitEqualsOneSearchOnRandomTexts) {
    // Runs from a few bytes to a few hundred cross the search windows (16 bytes, doubling).
    const std::vector<std::string> units = {
        "a",  "Z",   "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80", "7", " ",           "\n", "\r\n", "\t",
        "'s", "'LL", ".",        "!?",           "e\xcc\x81",        "_", "\xe2\x80\x83" /* em space */};
    std::mt19937 rng(7);
    const std::vector<std::string> patterns = {kLlama3Split,
                                               kQwen2Split,
                                               kGpt2Split,
                                               R"(\s+(?!\S)|\S+)",
                                               R"((?<=a)b+|\p{L}{2,}$|x*)",
                                               R"(\p{N}{3}(?=\s)|'LL|\z)"};
    for (const std::string& pattern : patterns) {
        const auto tok = byte_tokenizer(split_then_byte_level(pattern));
        for (int round = 0; round < 150; ++round) {
            std::string text;
            const std::size_t target = 1 + rng() % 3000;
            while (text.size() < target) {
                const std::string& u = units[rng() % units.size()];
                const unsigned run = rng() % 4 == 0 ? 1 + rng() % 300 : 1 + rng() % 4;
                for (unsigned k = 0; k < run; ++k) text += u;
            }
            const std::vector<std::string> got = tok->pretokenize(text),
                                           want = reference_split(pattern, text);
            EXPECT_SAME_SEQUENCE(got, want, "pattern " << pattern << ", round " << round);
            if (got != want) return;
        }
    }
}

TEST(TokSplitRegex, LlamaThreePatternOnFourMebibytesOfSpacesThenALetter) {
    const auto tok = byte_tokenizer(split_then_byte_level(kLlama3Split));
    const std::string text = std::string(kMaxTokenizeTextBytes - 1, ' ') + "x";
    const double start = test::thread_cpu_seconds();
    const std::vector<std::string> words = tok->pretokenize(text);  // was "match limit exceeded"
    const double seconds = test::thread_cpu_seconds() - start;
    std::printf("Llama 3 pattern, 4 MiB of spaces + x: %.2f s\n", seconds);
    // \s+(?!\S) takes all spaces but the last; [^\r\n\p{L}\p{N}]?\p{L}+ takes " x".
    ASSERT_EQ(words.size(), 2u);
    EXPECT_EQ(words[0], std::string(kMaxTokenizeTextBytes - 2, ' '));
    EXPECT_EQ(words[1], " x");
    EXPECT_LT(seconds, 10.0);
    EXPECT_EQ(tok->encode(text).size(), text.size());
}

/// encode(text) for a pattern that needs ever more work: the budget's one line, soon.
void expect_budget_error(const std::string& pattern, const std::string& text, const std::string& kib) {
    const auto tok = byte_tokenizer(split_then_byte_level(pattern));
    const double start = test::thread_cpu_seconds();
    const std::string error = test::error_of([&] { tok->encode(text); });
    const double seconds = test::thread_cpu_seconds() - start;
    std::printf("%s on %s KiB: %.2f s\n", pattern.c_str(), kib.c_str(), seconds);
    EXPECT_EQ(error.rfind("the tokenizer's split regex needs too much work on this text (over ", 0), 0u)
        << error;
    EXPECT_NE(
        error.find(" million steps for " + kib + " KiB); its pattern backtracks or rescans on long runs"),
        std::string::npos)
        << error;
    EXPECT_LT(seconds, 15.0);  // Release: under 0.1 s and 1.1 s; unbounded before (past 60 s)
}

TEST(TokSplitRegex, RescanningPatternOnAMebibyteOfOneLetterRunsOutOfBudget) {
    expect_budget_error("a*b|.", std::string(1 << 20, 'a'), "1024");
}

TEST(TokSplitRegex, BacktrackingPatternOnAMebibyteOfRunsRunsOutOfBudget) {
    std::string text;
    while (text.size() < (1u << 20)) text += std::string(25, 'a') + "b";
    text.resize(1 << 20);
    expect_budget_error("(a|aa)+c|.", text, "1024");
}

TEST(TokSplitRegex, RescanningPatternOnShortRunsIsStillSplit) {
    // The same pattern on short runs: quadratic in the run, linear in the text, within budget.
    const auto tok = byte_tokenizer(split_then_byte_level("a*b|."));
    std::string text;
    while (text.size() < 200000)
        text += std::string(12, 'a') + "c" + std::string(9, 'a') + (text.size() % 3 ? "c" : "b");
    EXPECT_SAME_SEQUENCE(tok->pretokenize(text), reference_split("a*b|.", text), "short runs");
}

// ------------------------------------------------------------------------------------------------
// WordPiece and Unigram

std::shared_ptr<const Tokenizer> unigram_tokenizer(
    const std::vector<std::pair<std::string, double>>& pieces) {
    json vocab = json::array({json::array({"<unk>", 0.0})});
    for (const auto& [p, s] : pieces) vocab.push_back(json::array({p, s}));
    const json j = {{"model", {{"type", "Unigram"}, {"unk_id", 0}, {"vocab", vocab}}}};
    return Tokenizer::from_tokenizer_json(j.dump());
}

TEST(TokUnigram, FourMebibytesOfOneWordAreLinear) {
    std::vector<std::pair<std::string, double>> pieces;
    for (char c = 'a'; c <= 'z'; ++c) pieces.emplace_back(std::string(1, c), -5.0);
    pieces.emplace_back("ab", -6.0);
    pieces.emplace_back("abc", -6.5);
    pieces.emplace_back("bca", -6.5);
    const auto tok = unigram_tokenizer(pieces);
    std::string text;
    while (text.size() < kMaxTokenizeTextBytes - 3) text += "abc";
    const double start = test::thread_cpu_seconds();
    const std::vector<int> ids = tok->encode(text);  // one word: no pre-tokenizer
    const double seconds = test::thread_cpu_seconds() - start;
    std::printf("Unigram, one word of 4 MiB: %zu pieces in %.2f s\n", ids.size(), seconds);
    EXPECT_EQ(ids.size(), text.size() / 3);  // "abc" (-6.5) beats "ab" + "c" (-11) and a + b + c (-15)
    EXPECT_LT(seconds, 10.0);
}

TEST(TokUnigram, LongPiecesMatchingALongRunRunOutOfBudget) {
    std::vector<std::pair<std::string, double>> pieces;
    for (int k = 1; k <= 2000; ++k) pieces.emplace_back(std::string(std::size_t(k), 'a'), -double(k));
    const auto tok = unigram_tokenizer(pieces);
    const double start = test::thread_cpu_seconds();
    const std::string error = test::error_of([&] { tok->encode(std::string(1 << 20, 'a')); });
    const double seconds = test::thread_cpu_seconds() - start;
    std::printf("Unigram, 2000 nested pieces on 1 MiB of 'a': %.2f s\n", seconds);
    EXPECT_EQ(error.rfind("the tokenizer's vocabulary lookups need too much work on this text", 0), 0u)
        << error;
    EXPECT_LT(seconds, 15.0);
    EXPECT_EQ(tok->encode(std::string(500, 'a')).size(), 1u);  // short runs still tokenize
}

TEST(TokWordPiece, FourMebibytesOfHundredLetterWordsAreLinear) {
    json vocab = {{"[UNK]", 0}};
    for (int k = 1; k < 100; ++k) {
        vocab[std::string(std::size_t(k), 'a')] = 2 * k - 1;
        vocab["##" + std::string(std::size_t(k), 'a')] = 2 * k;
    }
    const json j = {{"normalizer", {{"type", "BertNormalizer"}}},
                    {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
                    {"model",
                     {{"type", "WordPiece"},
                      {"unk_token", "[UNK]"},
                      {"max_input_chars_per_word", 100},
                      {"vocab", vocab}}}};
    const auto tok = Tokenizer::from_tokenizer_json(j.dump());
    std::string text;
    const std::string word = std::string(100, 'a') + " ";
    while (text.size() + word.size() <= kMaxTokenizeTextBytes) text += word;
    const double start = test::thread_cpu_seconds();
    const std::vector<int> ids = tok->encode(text);
    const double seconds = test::thread_cpu_seconds() - start;
    std::printf("WordPiece, 4 MiB of 100-letter words: %zu tokens in %.2f s\n", ids.size(), seconds);
    ASSERT_EQ(ids.size(), 2 * (text.size() / word.size()));  // a^99 ##a
    EXPECT_EQ(ids[0], 2 * 99 - 1);
    EXPECT_EQ(ids[1], 2);
    EXPECT_EQ(tok->encode(std::string(101, 'a')), std::vector<int>{0});  // over max_input_chars_per_word
    EXPECT_LT(seconds, 10.0);
}

}  // namespace
}  // namespace attnviz

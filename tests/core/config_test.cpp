// GCC 12 with -march=native (AVX-512) reports false "may be used uninitialized" warnings inside
// Eigen's vectorised kernels (in the compiler's own intrinsics headers); they are not our code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "core/config.hpp"

#include <gtest/gtest.h>

#include <chrono>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "common/cpu_time.hpp"
#include "core/error.hpp"

namespace attnviz {
namespace {

// The issue for `key`, or "" when validate() reports none for it.
std::string issue_for(const Config& c, const std::string& key) {
    for (const ConfigIssue& i : validate(c))
        if (i.key == key) return i.message;
    return "";
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

TEST(Config, DefaultIsValid) {
    const Config c;
    EXPECT_TRUE(validate(c).empty());
    EXPECT_NO_THROW(require_valid(c));
    EXPECT_EQ(c.resolved_d_k(), 16);
    EXPECT_EQ(c.resolved_d_v(), 16);
    EXPECT_EQ(c.text, kDefaultSentence);
}

TEST(Config, EqualityComparesEveryField) {
    const Config base;
    EXPECT_EQ(base, Config());
    // Changing any key (through its textual form) makes the configs differ.
    const std::map<std::string, std::string> other = {{"text", "x"},
                                                      {"source_text", "y"},
                                                      {"length", "5"},
                                                      {"max_tokens", "7"},
                                                      {"d_model", "32"},
                                                      {"heads", "2"},
                                                      {"d_k", "3"},
                                                      {"d_v", "5"},
                                                      {"attention", "linear"},
                                                      {"phi", "relu"},
                                                      {"scoring", "dot"},
                                                      {"additive_hidden", "9"},
                                                      {"bandwidth", "0.5"},
                                                      {"temperature", "2"},
                                                      {"mask", "causal"},
                                                      {"valid_length", "3"},
                                                      {"window", "2"},
                                                      {"custom_mask", "01"},
                                                      {"positional", "rope"},
                                                      {"pe_base", "100"},
                                                      {"layernorm", "pre"},
                                                      {"residual", "false"},
                                                      {"preset", "first_token"},
                                                      {"seed", "7"}};
    ASSERT_EQ(other.size(), config_keys().size());
    for (const std::string& key : config_keys()) {
        Config c;
        set_config_key(c, key, other.at(key));
        EXPECT_NE(c, base) << key;
        EXPECT_FALSE(c == base) << key;
    }
}

TEST(MaskGrid, SetBlockedGrowsAndKeepsCells) {
    MaskGrid g;
    EXPECT_FALSE(g.is_blocked(0, 0));
    g.set_blocked(1, 2, true);
    EXPECT_EQ(g.rows, 2);
    EXPECT_EQ(g.cols, 3);
    EXPECT_EQ(g.blocked.size(), 6u);
    EXPECT_TRUE(g.is_blocked(1, 2));
    g.set_blocked(3, 0, true);  // grow rows; old cell stays
    EXPECT_EQ(g.rows, 4);
    EXPECT_EQ(g.cols, 3);
    EXPECT_TRUE(g.is_blocked(1, 2));
    EXPECT_TRUE(g.is_blocked(3, 0));
    g.set_blocked(0, 5, true);  // grow columns; old cells move to their new place
    EXPECT_EQ(g.cols, 6);
    EXPECT_TRUE(g.is_blocked(1, 2));
    EXPECT_TRUE(g.is_blocked(3, 0));
    EXPECT_TRUE(g.is_blocked(0, 5));
    int count = 0;
    for (auto b : g.blocked) count += b;
    EXPECT_EQ(count, 3);
    g.set_blocked(1, 2, false);
    EXPECT_FALSE(g.is_blocked(1, 2));
    // Un-blocking outside the grid does not grow it; negative indices are ignored.
    g.set_blocked(10, 10, false);
    g.set_blocked(-1, 0, true);
    EXPECT_EQ(g.rows, 4);
    EXPECT_EQ(g.cols, 6);
    EXPECT_FALSE(g.is_blocked(-1, 0));
}

TEST(ConfigKeys, StableOrder) {
    const std::vector<std::string> expect = {
        "text",       "source_text", "length",    "max_tokens",   "d_model", "heads",
        "d_k",        "d_v",         "attention", "phi",          "scoring", "additive_hidden",
        "bandwidth",  "temperature", "mask",      "valid_length", "window",  "custom_mask",
        "positional", "pe_base",     "layernorm", "residual",     "preset",  "seed"};
    EXPECT_EQ(config_keys(), expect);
}

TEST(ConfigKeys, EveryKeyRoundTripsExactly) {
    // Non-default values for every key, including awkward ones (doubles that need 17 digits,
    // Unicode text, a custom mask).
    Config c;
    c.text = "毛茸茸的 creature; a=b, \"quoted\"";
    c.source_text = "другой текст";
    c.length = 123;
    c.max_tokens = 999;
    c.d_model = 96;
    c.heads = 6;
    c.d_k = 7;
    c.d_v = 9;
    c.attention = AttentionKind::Linear;
    c.phi = PhiKind::Softmax;
    c.scoring = Scoring::Epanechnikov;
    c.additive_hidden = 11;
    c.bandwidth = 0.1 + 0.2;  // 0.30000000000000004
    c.temperature = 1.0 / 3.0;
    c.mask = MaskKind::Custom;
    c.valid_length = 4;
    c.window = 5;
    c.custom_mask.set_blocked(0, 2, true);
    c.custom_mask.set_blocked(2, 1, true);
    c.positional = Positional::Alibi;
    c.pe_base = 12345.678901234567;
    c.layernorm = LayerNormMode::Post;
    c.residual = false;
    c.preset = HeadPreset::AdjectiveNoun;
    c.seed = 18446744073709551615ULL;
    Config d;  // default, gets every key from text
    for (const std::string& key : config_keys()) {
        const std::string text = get_config_key(c, key);
        set_config_key(d, key, text);
        EXPECT_EQ(get_config_key(d, key), text) << key;
        // And the identity on the same config.
        Config e = c;
        set_config_key(e, key, get_config_key(c, key));
        EXPECT_EQ(e, c) << key;
    }
    EXPECT_EQ(d, c);
    EXPECT_EQ(d.bandwidth, 0.1 + 0.2);  // bit-exact
    EXPECT_EQ(get_config_key(c, "custom_mask"), "001;000;010");
}

TEST(ConfigKeys, EveryEnumValueRoundTrips) {
    struct Case {
        const char* key;
        std::vector<std::string> values;
    };
    const std::vector<Case> cases = {
        {"attention", {"softmax", "linear"}},
        {"phi", {"elu1", "relu", "softmax"}},
        {"scoring", {"scaled_dot", "dot", "additive", "bilinear", "gaussian", "boxcar", "epanechnikov"}},
        {"mask", {"none", "causal", "padding", "window", "custom"}},
        {"positional", {"none", "sinusoidal", "learned", "rope", "alibi"}},
        {"layernorm", {"none", "pre", "post"}},
        {"preset", {"none", "previous_token", "first_token", "same_token", "adjective_noun"}}};
    for (const Case& k : cases) {
        std::set<std::string> seen;
        for (const std::string& v : k.values) {
            Config c;
            set_config_key(c, k.key, v);
            EXPECT_EQ(get_config_key(c, k.key), v);
            seen.insert(v);
        }
        EXPECT_EQ(seen.size(), k.values.size());
    }
    EXPECT_EQ(to_string(Scoring::ScaledDot), "scaled_dot");
    EXPECT_EQ(to_string(HeadPreset::PreviousToken), "previous_token");
    EXPECT_EQ(to_string(MaskKind::Window), "window");
}

TEST(ConfigKeys, DoublesRoundTripBitExactly) {
    const double values[] = {0.1,  1.0 / 3.0, 1e-300, 5e-324, 1.7976931348623157e308,  123456789.123456789,
                             -0.0, 2.5,       1e-3,   1e22,   std::nextafter(1.0, 2.0)};
    for (double v : values) {
        Config c;
        c.temperature = v;
        Config d;
        set_config_key(d, "temperature", get_config_key(c, "temperature"));
        EXPECT_EQ(std::memcmp(&d.temperature, &v, sizeof v), 0) << get_config_key(c, "temperature");
    }
    Config c;
    set_config_key(c, "temperature", "0.5");
    EXPECT_EQ(c.temperature, 0.5);
    EXPECT_EQ(get_config_key(c, "temperature"), "0.5");
    set_config_key(c, "bandwidth", "1e-3");
    EXPECT_EQ(c.bandwidth, 1e-3);
    set_config_key(c, "pe_base", "+10000");
    EXPECT_EQ(c.pe_base, 10000.0);
}

TEST(ConfigKeys, BooleansAcceptSeveralSpellings) {
    Config c;
    for (const char* t : {"true", "1", "on"}) {
        c.residual = false;
        set_config_key(c, "residual", t);
        EXPECT_TRUE(c.residual) << t;
    }
    for (const char* f : {"false", "0", "off"}) {
        c.residual = true;
        set_config_key(c, "residual", f);
        EXPECT_FALSE(c.residual) << f;
    }
}

TEST(ConfigKeys, CustomMaskParses) {
    Config c;
    set_config_key(c, "custom_mask", "100/110/111");
    EXPECT_EQ(c.custom_mask.rows, 3);
    EXPECT_EQ(c.custom_mask.cols, 3);
    EXPECT_TRUE(c.custom_mask.is_blocked(0, 0));
    EXPECT_FALSE(c.custom_mask.is_blocked(0, 1));
    EXPECT_TRUE(c.custom_mask.is_blocked(2, 2));
    EXPECT_EQ(get_config_key(c, "custom_mask"), "100;110;111");
    set_config_key(c, "custom_mask", "");
    EXPECT_EQ(c.custom_mask, MaskGrid());
}

// Expects set_config_key to throw a ConfigError whose message contains every part.
void expect_set_error(const std::string& key, const std::string& value, std::vector<std::string> parts) {
    Config c;
    const Config before = c;
    try {
        set_config_key(c, key, value);
        ADD_FAILURE() << key << "=" << value << " was accepted";
    } catch (const ConfigError& e) {
        for (const std::string& p : parts) EXPECT_TRUE(contains(e.what(), p)) << e.what() << " lacks " << p;
    }
    EXPECT_EQ(c, before) << "a rejected value must not change the config";
}

TEST(ConfigKeys, ErrorsNameTheKeyAndTheAcceptedValues) {
    expect_set_error("hedas", "4", {"hedas", "heads", "temperature"});
    expect_set_error("heads", "four", {"heads", "four", "whole number"});
    expect_set_error("heads", "4.5", {"heads"});
    expect_set_error("heads", "", {"heads"});
    expect_set_error("heads", "99999999999", {"heads"});
    expect_set_error("seed", "-1", {"seed"});
    expect_set_error("temperature", "hot", {"temperature", "hot", "number"});
    expect_set_error("temperature", "0.5x", {"temperature"});
    expect_set_error("mask", "triangle", {"mask", "triangle", "none, causal, padding, window, custom"});
    expect_set_error("scoring", "cosine",
                     {"scoring", "scaled_dot, dot, additive, bilinear, gaussian, boxcar, epanechnikov"});
    expect_set_error("phi", "tanh", {"phi", "elu1, relu, softmax"});
    expect_set_error("residual", "yes", {"residual", "true, false"});
    expect_set_error("custom_mask", "10;1", {"custom_mask", "equal length"});
    expect_set_error("custom_mask", "12", {"custom_mask", "0 and 1"});
    EXPECT_THROW(get_config_key(Config(), "nope"), ConfigError);
}

TEST(Validate, HeadsThatDoNotDivideNameTheDivisors) {
    Config c;
    c.heads = 3;
    const std::string msg = issue_for(c, "heads");
    EXPECT_TRUE(contains(msg, "heads = 3 does not divide d_model = 64")) << msg;
    EXPECT_TRUE(contains(msg, "1, 2, 4, 8, 16, 32 or 64")) << msg;
    EXPECT_TRUE(contains(msg, "d_k and d_v")) << msg;
    // Setting d_k and d_v by hand makes it valid.
    c.d_k = 20;
    c.d_v = 21;
    EXPECT_TRUE(validate(c).empty());
    // A d_model with few divisors.
    c = Config();
    c.d_model = 7;
    c.heads = 2;
    EXPECT_TRUE(contains(issue_for(c, "heads"), "choose 1 or 7")) << issue_for(c, "heads");
}

TEST(Validate, TemperatureMustBePositive) {
    for (double t : {0.0, -1.0, std::nan("")}) {
        Config c;
        c.temperature = t;
        const std::string msg = issue_for(c, "temperature");
        EXPECT_TRUE(contains(msg,
                             "temperature must be > 0; the T→0 limit is argmax (one-hot), the app cannot "
                             "divide by 0"))
            << msg;
    }
    Config c;
    c.temperature = std::numeric_limits<double>::infinity();
    EXPECT_TRUE(contains(issue_for(c, "temperature"), "finite"));
    c.temperature = 1e-3;
    EXPECT_TRUE(validate(c).empty());
}

TEST(Validate, RangeChecks) {
    struct Case {
        const char* key;
        const char* value;
        const char* part;  // expected in the message
    };
    const Case cases[] = {{"heads", "0", "at least 1"},
                          {"d_model", "0", "at least 1"},
                          {"d_k", "-1", "d_k"},
                          {"d_v", "-2", "d_v"},
                          {"bandwidth", "0", "bandwidth"},
                          {"bandwidth", "inf", "bandwidth"},
                          {"pe_base", "1", "pe_base"},
                          {"window", "0", "window"},
                          {"valid_length", "-2", "-1"},
                          {"length", "-1", "length"},
                          {"max_tokens", "0", "max_tokens"},
                          {"additive_hidden", "-1", "additive_hidden"},
                          {"text", "   ", "no tokens"}};
    for (const Case& k : cases) {
        Config c;
        set_config_key(c, k.key, k.value);
        const std::string msg = issue_for(c, k.key);
        EXPECT_TRUE(contains(msg, k.part)) << k.key << "=" << k.value << ": '" << msg << "'";
        EXPECT_THROW(require_valid(c), ConfigError) << k.key;
    }
    // Cross-attention with an empty-looking source text.
    Config c;
    c.source_text = " \n ";
    EXPECT_TRUE(contains(issue_for(c, "source_text"), "no tokens"));
}

TEST(Validate, RopeNeedsEvenDk) {
    Config c;
    c.positional = Positional::Rope;
    EXPECT_TRUE(validate(c).empty());
    c.d_k = 5;
    c.d_v = 5;
    const std::string msg = issue_for(c, "positional");
    EXPECT_TRUE(contains(msg, "even")) << msg;
    EXPECT_TRUE(contains(msg, "5")) << msg;
}

TEST(Validate, InvalidUtf8IsReportedWithItsOffset) {
    Config c;
    c.text = "ok \xC3";
    const std::string msg = issue_for(c, "text");
    EXPECT_TRUE(contains(msg, "invalid UTF-8 at byte 3")) << msg;
    c = Config();
    c.source_text = "\xFF";
    EXPECT_TRUE(contains(issue_for(c, "source_text"), "byte 0"));
}

TEST(Validate, DamagedCustomMaskIsReported) {
    Config c;
    c.custom_mask.rows = 2;
    c.custom_mask.cols = 2;
    c.custom_mask.blocked = {1};
    EXPECT_FALSE(issue_for(c, "custom_mask").empty());
}

TEST(Validate, MaxTokensAppliesAfterTiling) {
    Config c;  // 8 tokens
    c.max_tokens = 8;
    EXPECT_TRUE(validate(c).empty());
    c.max_tokens = 7;
    EXPECT_TRUE(contains(issue_for(c, "text"), "8 tokens")) << issue_for(c, "text");
    c.max_tokens = 100;
    c.length = 100;
    EXPECT_TRUE(validate(c).empty());
    c.length = 101;
    const std::string msg = issue_for(c, "length");
    EXPECT_TRUE(contains(msg, "101")) << msg;
    EXPECT_TRUE(contains(msg, "max_tokens = 100")) << msg;
    // The default limit is 16384 tokens (linear attention: softmax's n×m matrices would not fit).
    c = Config();
    c.attention = AttentionKind::Linear;
    c.length = 16384;
    c.heads = 1;
    EXPECT_EQ(issue_for(c, "length"), "");
    c.length = 16385;
    EXPECT_TRUE(contains(issue_for(c, "length"), "16384"));
}

TEST(Validate, MemoryEstimateRejectsHugeTraces) {
    Config c;
    c.heads = 4;
    c.length = 16384;  // 4 heads · 16384² · 4 bytes · 2 = 8 GiB of score/weight matrices
    const std::string msg = issue_for(c, "length");
    EXPECT_TRUE(contains(msg, "GiB")) << msg;
    EXPECT_TRUE(contains(msg, "8.0 GiB")) << msg;  // the n×m part, stated
    EXPECT_TRUE(contains(msg, "linear attention")) << msg;
    EXPECT_THROW(require_valid(c), ConfigError);
    // Linear attention omits the implied n×m weights when they would pass 1 GiB, so 4 heads at 16384
    // tokens are O(n) and fit; with one head they are stored (1 GiB) plus one display copy: fits too.
    c.attention = AttentionKind::Linear;
    EXPECT_TRUE(validate(c).empty()) << issue_for(c, "length");
    c.heads = 1;
    EXPECT_TRUE(validate(c).empty()) << issue_for(c, "length");
    // Softmax with one head at 16384 tokens: 2 GiB of scores and weights, plus the n×m workspace of a
    // figure or dump (2 GiB while `masked` is derived) and the masks: over the limit (the causal
    // weights figure measured 3.56 GiB peak, dump 4.31 GiB, before these were counted).
    c.attention = AttentionKind::Softmax;
    c.mask = MaskKind::Causal;
    EXPECT_TRUE(contains(issue_for(c, "length"), "3.0 GiB limit")) << issue_for(c, "length");
    // 4096 tokens, 8 heads: 8 · 4096² · 8 bytes = 1 GiB, accepted.
    c = Config();
    c.length = 4096;
    c.heads = 8;
    EXPECT_TRUE(validate(c).empty());
    EXPECT_GT(estimate_trace_bytes(c, 4096, 4096, 8), 1024.0 * 1024 * 1024);
    EXPECT_LT(estimate_trace_bytes(c, 4096, 4096, 8), 1.2 * 1024 * 1024 * 1024);
    // Huge widths are caught by the estimate too, without integer overflow.
    c = Config();
    c.d_model = 1 << 20;
    c.heads = 1;
    EXPECT_FALSE(validate(c).empty());
}

TEST(Validate, MemoryMessageSuggestsALengthThatFits) {
    Config c;
    c.length = 16000;  // 4 heads
    const std::string msg = issue_for(c, "length");
    const std::string key = "at most about ";
    const std::size_t at = msg.find(key);
    ASSERT_NE(at, std::string::npos) << msg;
    const int suggested = std::stoi(msg.substr(at + key.size()));
    EXPECT_LE(estimate_trace_bytes(c, suggested, suggested, 8), kMaxTraceBytes);
    EXPECT_GT(estimate_trace_bytes(c, suggested + 1, suggested + 1, 8), kMaxTraceBytes);
    // ≈ √(3 GiB / (4 heads · 4 bytes · 2 + 2 · 4 bytes of workspace)) ≈ 8974 tokens.
    EXPECT_NEAR(suggested, 8950, 150);
    c.length = suggested;
    EXPECT_TRUE(validate(c).empty()) << issue_for(c, "length");
}

TEST(Validate, LengthTilesTheQueryTextOnly) {
    // As tokenize_config() does: the source text of cross-attention is not tiled.
    Config c;
    c.source_text = "one two three";
    c.length = 50;
    c.max_tokens = 50;
    EXPECT_TRUE(validate(c).empty());
    c.max_tokens = 49;
    EXPECT_FALSE(issue_for(c, "length").empty());
    EXPECT_EQ(issue_for(c, "source_text"), "");
    c.max_tokens = 2;
    c.length = 0;
    c.text = "a b";
    EXPECT_TRUE(contains(issue_for(c, "source_text"), "3 tokens")) << issue_for(c, "source_text");
}

TEST(Validate, RequireValidJoinsAllIssues) {
    Config c;
    c.heads = 0;
    c.temperature = 0;
    try {
        require_valid(c);
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_TRUE(contains(e.what(), "heads")) << e.what();
        EXPECT_TRUE(contains(e.what(), "temperature")) << e.what();
    }
}

// `--set d_model=2147483647` used to overflow the divisor loop (SIGFPE after 20-30 s, on the UI thread).
TEST(Validate, HugeDModelIsFastAndListsDivisors) {
    Config c;
    c.d_model = 2147483647;  // prime
    c.heads = 3;
    const double t0 = test::thread_cpu_seconds();
    const std::string msg = issue_for(c, "heads");
    const double seconds = test::thread_cpu_seconds() - t0;
    EXPECT_LT(seconds, 0.5);
    EXPECT_TRUE(contains(msg, "choose 1 or 2147483647")) << msg;
    c.d_model = 2147483646;  // 2 · 3² · 7 · 11 · 31 · 151 · 331: 192 divisors, the first 64 listed
    c.heads = 4;
    const std::string msg2 = issue_for(c, "heads");
    EXPECT_TRUE(contains(msg2, "choose 1, 2, 3, 6, 7, 9, ")) << msg2;
    c.d_model = 64;
    c.heads = 3;
    EXPECT_TRUE(contains(issue_for(c, "heads"), "choose 1, 2, 4, 8, 16, 32 or 64")) << issue_for(c, "heads");
}

// The estimate ignored additive_hidden: a large hidden size allocated without bound (killed at 8 GiB).
TEST(Validate, MemoryEstimateCoversAdditiveHidden) {
    Config c;
    c.scoring = Scoring::Additive;
    c.additive_hidden = 1 << 30;
    EXPECT_TRUE(contains(issue_for(c, "heads"), "reduce additive_hidden (now 1073741824)"))
        << issue_for(c, "heads");
    const double small = estimate_trace_bytes(c, 8, 8, 8);
    c.additive_hidden = 1 << 20;  // 4 heads · 4 bytes · (2·16 + 1 + 24) · 2^20 ≈ 0.9 GiB: fits
    EXPECT_TRUE(validate(c).empty()) << issue_for(c, "heads");
    EXPECT_GT(estimate_trace_bytes(c, 8, 8, 8), 0.8 * 1024 * 1024 * 1024);
    EXPECT_GT(small, estimate_trace_bytes(c, 8, 8, 8));
    c.additive_hidden = 4 << 20;  // ≈ 3.6 GiB: refused
    EXPECT_FALSE(validate(c).empty());
}

// Borderline: the largest softmax length the message suggests fits, one more token does not.
TEST(Validate, MemoryEstimateBorderlineAtOneHead) {
    Config c;
    c.heads = 1;
    c.mask = MaskKind::Causal;
    c.length = 16384;
    const std::string msg = issue_for(c, "length");
    const std::string key = "at most about ";
    const std::size_t at = msg.find(key);
    ASSERT_NE(at, std::string::npos) << msg;
    const int suggested = std::stoi(msg.substr(at + key.size()));
    EXPECT_GT(suggested, 13000);
    c.length = suggested;
    EXPECT_TRUE(validate(c).empty()) << issue_for(c, "length");
    c.length = suggested + 1;
    EXPECT_FALSE(validate(c).empty());
}

// A loaded custom mask grid counts too (a 16384² grid is 256 MiB).
TEST(Validate, MemoryEstimateCountsTheCustomMaskGrid) {
    Config c;
    const double without = estimate_trace_bytes(c, 8, 8, 8);
    c.custom_mask.set_blocked(4095, 4095, true);
    EXPECT_NEAR(estimate_trace_bytes(c, 8, 8, 8) - without, 4096.0 * 4096.0, 1.0);
}

// Thousands of narrow heads: validate stays instant and the estimate grows with the head count.
TEST(Validate, ManyHeadsAreBoundedAndFast) {
    Config c;
    c.d_model = 20000;
    c.heads = 20000;
    const double t0 = test::thread_cpu_seconds();
    (void)validate(c);
    EXPECT_LT(test::thread_cpu_seconds() - t0, 0.5);
    c.heads = 2000000000;
    c.d_k = c.d_v = 1;
    EXPECT_FALSE(validate(c).empty());
}

}  // namespace
}  // namespace attnviz

// The shared argument parser of the headless commands: forms it accepts, the one-line errors it
// gives, and the exit codes run_cli_command maps them to.
#include "io/cli.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace attnviz {
namespace {

const std::vector<CliOption> kOptions = {
    {"--scene", "FILE", "scene", false},
    {"--set", "KEY=VALUE", "config key", true},
    {"--out", "DIR", "output", false},
    {"--verbose", "", "switch", false},
};

/// argv as the commands receive it; argv[0] is the command name.
struct Argv {
    explicit Argv(std::vector<std::string> a) : args(std::move(a)) {
        for (auto& s : args) ptrs.push_back(s.data());
        ptrs.push_back(nullptr);
    }
    int argc() const { return int(args.size()); }
    char** argv() { return ptrs.data(); }
    std::vector<std::string> args;
    std::vector<char*> ptrs;
};

CliArgs parse(std::vector<std::string> a, bool positional = false) {
    Argv v(std::move(a));
    return parse_cli(v.argc(), v.argv(), kOptions, positional);
}

std::string usage_error(std::vector<std::string> a) {
    try {
        parse(std::move(a));
    } catch (const UsageError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(Cli, ParsesSpaceAndEqualsFormsAndRepeats) {
    const CliArgs args = parse(
        {"dump", "--out", "dir", "--set", "heads=2", "--set=mask=causal", "--verbose", "--scene=a b.json"});
    EXPECT_EQ(args.get_or("--out", ""), "dir");
    EXPECT_EQ(args.get_or("--scene", ""), "a b.json");
    EXPECT_EQ(args.all("--set"), (std::vector<std::string>{"heads=2", "mask=causal"}));
    EXPECT_TRUE(args.has("--verbose"));
    EXPECT_FALSE(args.has("--help"));
    EXPECT_FALSE(args.get("--nothing").has_value());
    EXPECT_EQ(args.get_or("--nothing", "fallback"), "fallback");
    EXPECT_TRUE(args.all("--nothing").empty());
}

TEST(Cli, HelpIsAlwaysAccepted) {
    EXPECT_TRUE(parse({"dump", "--help"}).has("--help"));
    EXPECT_TRUE(parse({"dump", "-h"}).has("--help"));
}

TEST(Cli, ValuesMayLookLikeNegativeNumbersOrContainEquals) {
    const CliArgs args = parse({"dump", "--set", "valid_length=-1", "--out", "-x"});
    EXPECT_EQ(args.all("--set").at(0), "valid_length=-1");
    EXPECT_EQ(args.get_or("--out", ""), "-x");
}

// An empty value is the value: it never swallows the next argument (issue 22: `--text "" --pieces`
// tokenized the string "--pieces"; `--out "" --threads 1` wrote a folder named "--threads=1").
TEST(Cli, EmptyValueIsTakenAsWrittenAndNeverSwallowsTheNextFlag) {
    const CliArgs a = parse({"dump", "--scene", "", "--verbose"});
    EXPECT_EQ(a.all("--scene"), (std::vector<std::string>{""}));
    EXPECT_TRUE(a.has("--verbose"));
    const CliArgs b = parse({"dump", "--out", "", "--set", "heads=2"});
    EXPECT_EQ(b.all("--out"), (std::vector<std::string>{""}));
    EXPECT_EQ(b.all("--set"), (std::vector<std::string>{"heads=2"}));
    const CliArgs c = parse({"dump", "--out=", "--scene=s.json"});
    EXPECT_EQ(c.all("--out"), (std::vector<std::string>{""}));
    EXPECT_EQ(c.get_or("--scene", ""), "s.json");
    const CliArgs d = parse({"dump", "--set", "", "--set", "", "--verbose"});
    EXPECT_EQ(d.all("--set"), (std::vector<std::string>{"", ""}));
    EXPECT_EQ(usage_error({"dump", "--out", "", "--out", "x"}), "--out was given more than once");
    // A value that merely starts with dashes but is no flag of the command is a value.
    EXPECT_EQ(parse({"dump", "--out", "--x"}).get_or("--out", ""), "--x");
}

TEST(Cli, ErrorsAreOneSentenceAndNameTheFlag) {
    const std::string unknown = usage_error({"dump", "--hedas", "4"});
    EXPECT_NE(unknown.find("unknown option --hedas"), std::string::npos) << unknown;
    EXPECT_NE(unknown.find("--scene, --set, --out, --verbose, --help"), std::string::npos) << unknown;

    EXPECT_EQ(usage_error({"dump", "--out"}), "--out needs a value (--out DIR)");
    // The next word is another flag: the value was forgotten.
    EXPECT_EQ(usage_error({"dump", "--out", "--set", "heads=2"}), "--out needs a value (--out DIR)");
    EXPECT_EQ(usage_error({"dump", "--out", "a", "--out", "b"}), "--out was given more than once");
    EXPECT_EQ(usage_error({"dump", "--verbose=yes"}), "--verbose takes no value");
    EXPECT_NE(usage_error({"dump", "stray"}).find("unexpected argument 'stray'"), std::string::npos);
    EXPECT_NE(usage_error({"dump", "-v"}).find("unexpected argument '-v'"), std::string::npos);
    for (const auto& msg : {unknown, usage_error({"dump", "stray"})}) {
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
}

TEST(Cli, PositionalArgumentsWhenAllowed) {
    const CliArgs args = parse({"render", "a.json", "--out", "x", "b"}, true);
    EXPECT_EQ(args.positional, (std::vector<std::string>{"a.json", "b"}));
}

TEST(Cli, RequireFlag) {
    const CliArgs args = parse({"dump"});
    try {
        require_flag(args, kOptions, "--out");
        FAIL() << "expected UsageError";
    } catch (const UsageError& e) {
        // the flag, its value's name and what it is for (its help line)
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("missing --out DIR: ", 0), 0u) << what;
        EXPECT_GT(what.size(), std::string("missing --out DIR: ").size()) << what;
    }
    EXPECT_NO_THROW(require_flag(parse({"dump", "--out", "d"}), kOptions, "--out"));
}

TEST(Cli, Numbers) {
    EXPECT_EQ(cli_int("--threads", "4", 0, 256), 4);
    EXPECT_EQ(cli_int("--threads", "-3", -5, 5), -3);
    for (const char* bad : {"", "x", "4x", "1e3", "300", "-1", "99999999999999999999"}) {
        try {
            cli_int("--threads", bad, 0, 256);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const UsageError& e) {
            EXPECT_EQ(std::string(e.what()),
                      std::string("--threads: expected an integer from 0 to 256, got '") + bad + "'");
        }
    }
    EXPECT_DOUBLE_EQ(cli_double("--scale", "2.5", 0, 10), 2.5);
    EXPECT_THROW(cli_double("--scale", "nan", 0, 10), UsageError);
    EXPECT_THROW(cli_double("--scale", "inf", 0, 1e300), UsageError);
    EXPECT_THROW(cli_double("--scale", "11", 0, 10), UsageError);
    EXPECT_THROW(cli_double("--scale", "", 0, 10), UsageError);
}

TEST(Cli, KeyValue) {
    EXPECT_EQ(split_key_value("text=a=b c"), (std::pair<std::string, std::string>{"text", "a=b c"}));
    EXPECT_EQ(split_key_value("source_text="), (std::pair<std::string, std::string>{"source_text", ""}));
    try {
        split_key_value("heads");
        FAIL();
    } catch (const UsageError& e) {
        EXPECT_STREQ(e.what(), "--set expects KEY=VALUE, got 'heads'");
    }
    EXPECT_THROW(split_key_value("=4"), UsageError);
}

TEST(Cli, SceneFromCliAppliesSetsInOrder) {
    const Scene plain = scene_from_cli(parse({"dump"}));
    EXPECT_EQ(plain.config, default_scene().config);
    const Scene s =
        scene_from_cli(parse({"dump", "--set", "heads=2", "--set", "heads=8", "--set", "mask=causal"}));
    EXPECT_EQ(s.config.heads, 8);
    EXPECT_EQ(s.config.mask, MaskKind::Causal);
    EXPECT_THROW(scene_from_cli(parse({"dump", "--set", "hedas=2"})), Error);
    EXPECT_THROW(scene_from_cli(parse({"dump", "--set", "heads=two"})), Error);
    EXPECT_THROW(scene_from_cli(parse({"dump", "--scene", "/nonexistent/scene.json"})), Error);
}

TEST(Cli, OneLine) {
    EXPECT_EQ(one_line("a\nb\n"), "a; b");
    EXPECT_EQ(one_line("a\r\n\nb"), "a; b");
    EXPECT_EQ(one_line("plain"), "plain");
}

TEST(Cli, RunCommandMapsErrorsToExitCodesAndOneLine) {
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(run_cli_command("attnviz x", [] { return 0; }), 0);
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");

    ::testing::internal::CaptureStderr();
    EXPECT_EQ(run_cli_command("attnviz x", []() -> int { throw UsageError("missing --out DIR"); }), 2);
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "attnviz x: missing --out DIR\n");

    ::testing::internal::CaptureStderr();
    EXPECT_EQ(
        run_cli_command("attnviz x", []() -> int { throw ConfigError("heads: bad\ntemperature: bad"); }), 1);
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "attnviz x: heads: bad; temperature: bad\n");
}

TEST(Cli, UsageListsEveryFlag) {
    const std::string u = cli_usage("attnviz dump", kOptions, {"--out"});
    EXPECT_EQ(u.rfind("usage: attnviz dump [--scene FILE] [--set KEY=VALUE ...] --out DIR [--verbose]", 0),
              0u)
        << u;
    for (const auto& o : kOptions) EXPECT_NE(u.find("  " + o.name), std::string::npos) << o.name;
}

}  // namespace
}  // namespace attnviz

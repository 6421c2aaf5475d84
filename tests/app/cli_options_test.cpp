// The GUI's own flags (app/cli_options.hpp), parsed by the same parser as the subcommands:
// the forms it accepts, one-line errors, and --version naming the data directories.
#include "app/cli_options.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace attnviz::app {
namespace {

struct Parsed {
    Options options;
    bool help = false, version = false;
    std::string error;  // "" when parsed
};

Parsed parse(std::vector<std::string> args) {
    args.insert(args.begin(), "attnviz");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    Parsed p;
    try {
        p.options = parse_args(int(args.size()), argv.data(), &p.help, &p.version);
    } catch (const UsageError& e) {
        p.error = e.message;
    }
    return p;
}

TEST(CliOptions, EveryFlagInBothForms) {
    const Parsed p = parse({"--scene",
                            "a b.json",
                            "--set",
                            "heads=2",
                            "--set=mask=causal",
                            "--view",
                            "heads",
                            "--size=800x600",
                            "--fresh",
                            "--head",
                            "1",
                            "--pin",
                            "3",
                            "--frames",
                            "2",
                            "--stage",
                            "weights",
                            "--ui-scale",
                            "1.5",
                            "--screenshot",
                            "out.png",
                            "--lab",
                            "scoring",
                            "--state-log",
                            "s.jsonl",
                            "--frame-log",
                            "f.log",
                            "--script",
                            "x.script"});
    ASSERT_EQ(p.error, "");
    const Options& o = p.options;
    EXPECT_EQ(o.scene, "a b.json");
    EXPECT_EQ(o.sets, (std::vector<std::string>{"heads=2", "mask=causal"}));
    EXPECT_EQ(o.view, MainView::HeadsGrid);
    EXPECT_EQ(o.width, 800);
    EXPECT_EQ(o.height, 600);
    EXPECT_FALSE(o.restore_workspace);
    EXPECT_EQ(o.head, 1);
    EXPECT_EQ(o.pin, 3);
    EXPECT_EQ(o.frames, 2);
    EXPECT_EQ(o.stage, "weights");
    EXPECT_FLOAT_EQ(*o.ui_scale, 1.5f);
    EXPECT_EQ(o.screenshot, "out.png");
    EXPECT_EQ(o.lab, "scoring");
    EXPECT_EQ(o.state_log, "s.jsonl");
    EXPECT_EQ(o.frame_log, "f.log");
    EXPECT_EQ(o.script, "x.script");
    EXPECT_FALSE(p.help);
    EXPECT_FALSE(p.version);
}

TEST(CliOptions, ModelFlagsAndValuesThatStartWithADash) {
    const Parsed p = parse({"--model", "gpt2", "--text", "-- hello", "--layer", "2", "--view", "model"});
    ASSERT_EQ(p.error, "");
    EXPECT_EQ(p.options.model, "gpt2");
    EXPECT_EQ(p.options.text, "-- hello");
    EXPECT_EQ(p.options.layer, 2);
    EXPECT_EQ(p.options.view, MainView::Model);
}

TEST(CliOptions, EncoderDecoderTargetAndFamily) {
    const Parsed p = parse({"--model", "t5", "--text", "a b", "--target", " die", "--family", "cross"});
    ASSERT_EQ(p.error, "");
    EXPECT_EQ(p.options.target, " die");
    EXPECT_EQ(p.options.family, AttnFamily::Cross);
    EXPECT_EQ(parse({"--model", "t5", "--family", "encoder"}).options.family, AttnFamily::Encoder);
    EXPECT_EQ(parse({"--model", "t5", "--family", "decoder"}).options.family, AttnFamily::Decoder);
    EXPECT_EQ(parse({"--model", "t5", "--family", "both"}).error,
              "--family: expected encoder, decoder or cross, got 'both'");
    EXPECT_EQ(parse({"--target", "x"}).error, "--target needs --model DIR");
    EXPECT_EQ(parse({"--family", "cross"}).error, "--family needs --model DIR");
}

TEST(CliOptions, OneFileToOpenAsADesktopPassesIt) {
    EXPECT_EQ(parse({"causal.json"}).options.scene, "causal.json");
    EXPECT_EQ(parse({"/"}).options.model, "/");  // a folder is a model folder
    EXPECT_EQ(parse({"--scene", "a.json", "b.json"}).error, "a scene was given twice: --scene and 'b.json'");
    EXPECT_NE(parse({"a.json", "b.json"}).error.find("unexpected argument"), std::string::npos);
}

TEST(CliOptions, HelpAndVersion) {
    EXPECT_TRUE(parse({"--help"}).help);
    EXPECT_TRUE(parse({"-h"}).help);
    EXPECT_TRUE(parse({"--version"}).version);
}

TEST(CliOptions, ErrorsAreOneLineAndNameTheFlag) {
    EXPECT_EQ(parse({"--hedas", "2"}).error, "unknown option --hedas (see attnviz --help)");
    EXPECT_EQ(parse({"--scene"}).error, "--scene needs a value (--scene FILE) (see attnviz --help)");
    EXPECT_EQ(parse({"--scene", "a", "--scene", "b"}).error,
              "--scene was given more than once (see attnviz --help)");
    EXPECT_EQ(parse({"--fresh=yes"}).error, "--fresh takes no value (see attnviz --help)");
    EXPECT_EQ(parse({"--set", "heads"}).error, "--set expects KEY=VALUE, got 'heads'");
    EXPECT_EQ(parse({"--view", "sideways"}).error,
              "--view: expected stage, heads, compare, model, lines or interventions, got 'sideways'");
    EXPECT_EQ(parse({"--head", "x"}).error, "--head: expected an integer from 0 to 1048576, got 'x'");
    EXPECT_EQ(parse({"--size", "big"}).error, "--size: expected WxH such as 1600x1000, got 'big'");
    EXPECT_EQ(parse({"--ui-scale", "9"}).error, "--ui-scale: expected a number from 0.5 to 3, got '9'");
    EXPECT_EQ(parse({"--layer", "1"}).error, "--layer needs --model DIR");
    EXPECT_EQ(parse({"--view", "model"}).error, "--view model needs --model DIR");
    EXPECT_EQ(parse({"--view", "interventions"}).error, "--view interventions needs --model DIR");
    EXPECT_TRUE(parse({"--view", "lines"}).error.empty());  // the single layer has lines too
    EXPECT_NE(parse({"dmup"}).error.find("unexpected argument 'dmup'"), std::string::npos);
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"--hedas"}, {"--scene"}, {"-x"}, {"stray"}})
        EXPECT_EQ(parse(args).error.find('\n'), std::string::npos);
}

TEST(CliOptions, VersionNamesTheDataDirectories) {
    const std::string v = version_text();
    EXPECT_EQ(v.rfind("attnviz " ATTNVIZ_VERSION "\n", 0), 0u) << v;
    EXPECT_NE(v.find("\ncpu: "), std::string::npos) << v;
    EXPECT_NE(v.find("/share/attnviz/assets (next to the executable)\n"), std::string::npos) << v;
    EXPECT_NE(v.find("/share/attnviz/shaders (next to the executable)\n"), std::string::npos) << v;
}

// --hover ROW,COL: a screenshot hovers only the cell it names.
TEST(CliOptions, HoverRowAndColumnAreParsed) {
    const Parsed p = parse({"--screenshot", "x.png", "--hover", "3,5"});
    ASSERT_TRUE(p.error.empty()) << p.error;
    ASSERT_TRUE(p.options.hover.has_value());
    EXPECT_EQ(p.options.hover->first, 3);
    EXPECT_EQ(p.options.hover->second, 5);
    EXPECT_FALSE(parse({"--screenshot", "x.png"}).options.hover.has_value());
}

TEST(CliOptions, HoverBadValuesAreOneClearLine) {
    EXPECT_NE(parse({"--screenshot", "x.png", "--hover", "3"}).error.find("--hover: expected ROW,COL"),
              std::string::npos);
    EXPECT_NE(parse({"--screenshot", "x.png", "--hover", "a,2"}).error.find("--hover"), std::string::npos);
    EXPECT_NE(parse({"--screenshot", "x.png", "--hover", "-1,2"}).error.find("--hover"), std::string::npos);
    EXPECT_NE(parse({"--hover", "1,2"}).error.find("--hover needs --screenshot"), std::string::npos);
}

TEST(CliOptions, TourAndStep) {
    const Parsed p = parse({"--tour", "t.json", "--step", "3", "--screenshot", "x.png"});
    EXPECT_EQ(p.error, "");
    EXPECT_EQ(p.options.tour, "t.json");
    EXPECT_EQ(p.options.step, 3);
    EXPECT_EQ(parse({"--step", "2"}).error, "--step needs --tour FILE");
    EXPECT_NE(parse({"--tour", "t.json", "--step", "0"}).error.find("--step: expected an integer from 1"),
              std::string::npos);
    EXPECT_NE(parse({"--tour", "t.json", "--scene", "a.json"}).error.find("--tour decides the scene"),
              std::string::npos);
}

// The tour opens by itself on a first launch only: no workspace, nothing asked for, not a batch run.
TEST(CliOptions, FirstLaunchIsNoWorkspaceAndNothingAskedFor) {
    EXPECT_TRUE(is_first_launch(parse({}).options, false));
    EXPECT_FALSE(is_first_launch(parse({}).options, true));
    EXPECT_FALSE(is_first_launch(parse({"--fresh"}).options, false));
    EXPECT_FALSE(is_first_launch(parse({"--scene", "a.json"}).options, false));
    EXPECT_FALSE(is_first_launch(parse({"--model", "/"}).options, false));
    EXPECT_FALSE(is_first_launch(parse({"--screenshot", "x.png"}).options, false));
    EXPECT_FALSE(is_first_launch(parse({"--script", "s.txt"}).options, false));
    EXPECT_FALSE(is_first_launch(parse({"--tour", "t.json"}).options, false));
}

}  // namespace
}  // namespace attnviz::app

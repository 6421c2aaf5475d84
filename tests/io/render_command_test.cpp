// `attnviz render`: called in-process with argv arrays. A figure is a decodable PNG of a sensible
// size, --scale multiplies it, --grid draws every head, and each kind of bad input gives one clear
// line on stderr, a non-zero exit and no file (not even a partial one).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "common/run_command.hpp"
#include "common/test_files.hpp"
#include "core/error.hpp"
#include "io/commands.hpp"
#include "io/figure.hpp"
#include "io/files.hpp"
#include "io/scene.hpp"

namespace attnviz {
namespace {

namespace fs = std::filesystem;

using test::TempDir;

using Result = test::CommandResult;

Result render(std::vector<std::string> args) {
    return test::run_command("render", std::move(args), run_render_command);
}

/// A failed render prints exactly one line starting "attnviz render: " and exits non-zero.
void expect_render_error(const Result& r, const std::string& must_contain) {
    test::expect_one_line_error(r, "render", must_contain);
}

// Opaque pixels of more than a few colours: a heatmap is there, not a blank canvas.
int distinct_colours(const Image& img) {
    std::set<std::uint32_t> seen;
    for (std::size_t i = 0; i + 3 < img.rgba.size(); i += 4) {
        seen.insert(std::uint32_t(img.rgba[i]) << 16 | std::uint32_t(img.rgba[i + 1]) << 8 | img.rgba[i + 2]);
        if (seen.size() > 1000) break;
    }
    return int(seen.size());
}

TEST(RenderCommand, WritesADecodablePng) {
    TempDir dir;
    const std::string out = dir.path + "/weights.png";
    const Result r = render(
        {"--set", "heads=2", "--set", "mask=causal", "--stage", "weights", "--head", "1", "--out", out});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    EXPECT_NE(r.out.find("wrote " + out), std::string::npos) << r.out;
    const Image img = read_png(out);
    EXPECT_GT(img.width, 100);
    EXPECT_GT(img.height, 100);
    EXPECT_LT(img.width, 4000);
    EXPECT_EQ(img.rgba.size(), std::size_t(img.width) * std::size_t(img.height) * 4);
    EXPECT_GT(distinct_colours(img), 20);
    // Only the figure: no temporary file left next to it.
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"weights.png"}));
    // The size printed is the size written.
    EXPECT_NE(r.out.find(std::to_string(img.width) + "×" + std::to_string(img.height)), std::string::npos)
        << r.out;
}

TEST(RenderCommand, ScaleTwoDoublesTheFigure) {
    TempDir dir;
    const std::string a = dir.path + "/s1.png", b = dir.path + "/s2.png";
    ASSERT_EQ(render({"--stage", "Q", "--out", a}).code, 0);
    const Result r2 = render({"--stage", "Q", "--out", b, "--scale", "2"});
    ASSERT_EQ(r2.code, 0) << r2.err;
    const Image i1 = read_png(a), i2 = read_png(b);
    const double wx = double(i2.width) / i1.width, hy = double(i2.height) / i1.height;
    EXPECT_NEAR(wx, 2.0, 0.1) << i1.width << " -> " << i2.width;
    EXPECT_NEAR(hy, 2.0, 0.1) << i1.height << " -> " << i2.height;
}

TEST(RenderCommand, ScaleThreeAndOthersAreRefused) {
    TempDir dir;
    const std::string out = dir.path + "/x.png";
    expect_render_error(render({"--stage", "Q", "--out", out, "--scale", "3"}), "1, 2 or 4");
    expect_render_error(render({"--stage", "Q", "--out", out, "--scale", "0"}), "--scale");
    expect_render_error(render({"--stage", "Q", "--out", out, "--scale", "two"}), "--scale");
    EXPECT_TRUE(dir.entries().empty());
}

TEST(RenderCommand, GridDrawsEveryHead) {
    TempDir dir;
    const std::string one = dir.path + "/one.png", grid = dir.path + "/grid.png";
    ASSERT_EQ(render({"--set", "heads=4", "--stage", "weights", "--out", one}).code, 0);
    const Result r = render({"--set", "heads=4", "--stage", "weights", "--grid", "--out", grid});
    ASSERT_EQ(r.code, 0) << r.err;
    const Image a = read_png(one), g = read_png(grid);
    EXPECT_NE(a.width, g.width);  // four small maps side by side, not the single-head figure
    EXPECT_GT(distinct_colours(g), 20);
}

TEST(RenderCommand, BadStageListsTheValidNames) {
    TempDir dir;
    const Result r = render({"--stage", "wieghts", "--out", dir.path + "/x.png"});
    expect_render_error(r, "no stage named 'wieghts'");
    EXPECT_NE(r.err.find("weights"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("scores"), std::string::npos) << r.err;
    EXPECT_EQ(r.code, 2);
    EXPECT_TRUE(dir.entries().empty());
}

TEST(RenderCommand, BadHeadGivesTheRange) {
    TempDir dir;
    const std::string out = dir.path + "/x.png";
    const Result r = render({"--set", "heads=2", "--stage", "weights", "--head", "5", "--out", out});
    expect_render_error(r, "0 to 1");
    EXPECT_NE(r.err.find("got 5"), std::string::npos) << r.err;
    expect_render_error(render({"--stage", "weights", "--head", "-1", "--out", out}), "--head");
    expect_render_error(render({"--stage", "weights", "--head", "x", "--out", out}), "--head");
    EXPECT_TRUE(dir.entries().empty());
}

TEST(RenderCommand, MissingFlagsAreUsageErrors) {
    TempDir dir;
    expect_render_error(render({"--out", dir.path + "/x.png"}), "--stage");
    expect_render_error(render({"--stage", "Q"}), "--out");
    expect_render_error(render({"--stage", "Q", "--out", dir.path + "/x.png", "--bogus"}), "--bogus");
    EXPECT_TRUE(dir.entries().empty());
}

TEST(RenderCommand, UnwritablePathIsAClearErrorAndLeavesNoFile) {
    TempDir dir;
    // A folder that does not exist (the command creates none).
    const std::string missing = dir.path + "/no/such/folder/fig.png";
    Result r = render({"--stage", "Q", "--out", missing});
    expect_render_error(r, missing);
    EXPECT_EQ(r.code, 1);
    EXPECT_FALSE(fs::exists(missing));
    EXPECT_TRUE(dir.entries().empty());

    // /proc refuses new files.
    const std::string proc = "/proc/attnviz-render-test.png";
    r = render({"--stage", "Q", "--out", proc});
    expect_render_error(r, proc);
    EXPECT_FALSE(fs::exists(proc));

    // The output names a directory.
    fs::create_directory(dir.path + "/adir");
    r = render({"--stage", "Q", "--out", dir.path + "/adir"});
    expect_render_error(r, "adir");
    EXPECT_TRUE(fs::is_directory(dir.path + "/adir"));
    EXPECT_TRUE(dir.entries("adir").empty());
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"adir"}));  // no temporary file next to it

    // A read-only folder (root ignores permissions, so only checked for ordinary users).
    if (::geteuid() != 0) {
        fs::create_directory(dir.path + "/ro");
        fs::permissions(dir.path + "/ro", fs::perms::owner_read | fs::perms::owner_exec);
        r = render({"--stage", "Q", "--out", dir.path + "/ro/fig.png"});
        expect_render_error(r, "ro/fig.png");
        EXPECT_TRUE(dir.entries("ro").empty());
    }
}

TEST(RenderCommand, FailureKeepsAnExistingFigure) {
    TempDir dir;
    const std::string out = dir.path + "/fig.png";
    ASSERT_EQ(render({"--stage", "Q", "--out", out}).code, 0);
    const auto before = fs::file_size(out);
    // A bad stage fails before anything is written: the old figure is untouched.
    EXPECT_NE(render({"--stage", "nope", "--out", out}).code, 0);
    EXPECT_EQ(fs::file_size(out), before);
    EXPECT_NO_THROW(read_png(out));
}

TEST(RenderCommand, ScaleModeChangesLongWeightsAndBadModesAreOneLine) {
    TempDir dir;
    const std::string fixed = dir.path + "/fixed.png", autom = dir.path + "/auto.png";
    const std::vector<std::string> base = {"--set", "length=200",  "--set",   "heads=1",
                                           "--set", "mask=causal", "--stage", "weights"};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = base;
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    };
    ASSERT_EQ(render(with({"--scale-mode", "fixed", "--out", fixed})).code, 0);
    ASSERT_EQ(render(with({"--out", autom})).code, 0);  // auto: per row at 200 keys
    // At 200 keys a fixed 0..1 scale is nearly one colour; per row shows the structure.
    EXPECT_GT(distinct_colours(read_png(autom)), distinct_colours(read_png(fixed)));
    for (const char* mode : {"max", "row", "log"})
        EXPECT_EQ(render(with({"--scale-mode", mode, "--out", dir.path + "/" + mode + ".png"})).code, 0)
            << mode;
    expect_render_error(render(with({"--scale-mode", "rows", "--out", fixed})),
                        "auto, fixed, max, row or log");
}

TEST(RenderCommand, SvgOutByExtension) {
    TempDir dir;
    const std::string out = dir.path + "/fig.svg";
    const Result r = render({"--stage", "weights", "--values", "--out", out});
    ASSERT_EQ(r.code, 0) << r.err;
    const std::string svg = read_file(out);
    EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
    EXPECT_NE(svg.find("<text"), std::string::npos);
    EXPECT_NE(svg.find("data:image/png;base64,"), std::string::npos);
}

// A scene that opens a model (the shipped story scene) renders that model's stage, as the app lands on
// it -- the same picture as `render --model` with the scene's folder, text and layer; single-layer
// settings are refused in one line instead of being silently ignored.
TEST(RenderCommand, SceneWithAModelRendersTheModel) {
    const std::string scenes = std::string(ATTNVIZ_TEST_DATA) + "/../../assets/scenes";
    const std::string models = std::string(ATTNVIZ_TEST_DATA) + "/../../assets/models";
    TempDir dir;
    const std::string via_scene = dir.path + "/scene.png", via_model = dir.path + "/model.png";
    const Result a = render({"--scene", scenes + "/story.json", "--stage", "weights", "--out", via_scene});
    ASSERT_EQ(a.code, 0) << a.err;
    const Scene scene = load_scene(scenes + "/story.json");  // (its text, layer and head)
    const Result b =
        render({"--model", models + "/story", "--text", scene.model_text, "--layer",
                std::to_string(scene.focus.layer.value_or(0)), "--head",
                std::to_string(scene.focus.head.value_or(0)), "--stage", "weights", "--out", via_model});
    ASSERT_EQ(b.code, 0) << b.err;
    EXPECT_EQ(read_file(via_scene, 1u << 26), read_file(via_model, 1u << 26));
    expect_render_error(render({"--scene", scenes + "/story.json", "--stage", "weights", "--set", "heads=2",
                                "--out", via_scene}),
                        "--set applies to the single layer");
}

}  // namespace
}  // namespace attnviz

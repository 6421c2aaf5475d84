// The scripted-input language the GUI tests drive the app with (app/script.hpp): parsing with
// line-numbered errors, and the conditions `wait` and `expect` evaluate against the state JSON.
#include "app/script.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace attnviz::app {
namespace {

TEST(Script, ParsesStepsSkippingCommentsAndBlankLines) {
    const auto steps = parse_script(
        "# a comment\n"
        "\n"
        "wait weights_checksum != \"\" && updating == false\n"
        "key ctrl+o\n"
        "type /tmp/some path/with spaces.json\n"
        "click widget temperature 0.85 0.5\n"
        "drag 10 20 30\n"
        "quit\n",
        "s.txt");
    ASSERT_EQ(steps.size(), 6u);
    EXPECT_EQ(steps[0].op, "wait");
    EXPECT_EQ(steps[0].line, 3);
    EXPECT_EQ(steps[0].args.at(0), "weights_checksum != \"\" && updating == false");
    EXPECT_EQ(steps[1].args.at(0), "ctrl+o");
    EXPECT_EQ(steps[2].args.at(0), "/tmp/some path/with spaces.json");  // text keeps its spaces
    EXPECT_EQ(steps[3].args.size(), 4u);
    EXPECT_EQ(steps[4].line, 7);
}

TEST(Script, WindowAndUiScaleStepsTakeTheirNumbers) {
    const auto steps = parse_script("window 1600 1000\nui_scale 1.5\nlab scoring\nlab -scoring\n", "s.txt");
    ASSERT_EQ(steps.size(), 4u);
    EXPECT_EQ(steps[0].op, "window");
    EXPECT_EQ(steps[0].args, (std::vector<std::string>{"1600", "1000"}));
    EXPECT_EQ(steps[1].op, "ui_scale");
    EXPECT_EQ(steps[1].args, (std::vector<std::string>{"1.5"}));
    // One step per frame; the player hands the scale to the shell once. (Without a window the
    // resize is skipped; no ImGui context is needed for either step.)
    ScriptPlayer player(steps, "s.txt");
    const nlohmann::json state = nlohmann::json::object();
    player.before_frame(nullptr, state, false);
    EXPECT_EQ(player.take_ui_scale_request(), 0.0f);
    player.before_frame(nullptr, state, false);
    EXPECT_EQ(player.take_ui_scale_request(), 1.5f);
    EXPECT_EQ(player.take_ui_scale_request(), 0.0f);
    // Lab steps take no frame of their own: both requests arrive together, in order.
    player.before_frame(nullptr, state, false);
    EXPECT_EQ(player.take_lab_request(), "scoring,-scoring");
    EXPECT_EQ(player.take_lab_request(), "");
    EXPECT_TRUE(player.finished());
    EXPECT_FALSE(player.failed());
}

TEST(Script, BadLinesNameTheFileAndLine) {
    auto message = [](const std::string& text) {
        try {
            parse_script(text, "s.txt");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("(accepted)");
    };
    EXPECT_EQ(message("quit\nklik 1 2\n"), "s.txt:2: unknown step 'klik'");
    EXPECT_NE(message("key hyper+q\n").find("s.txt:1: unknown key 'hyper+q'"), std::string::npos);
    EXPECT_NE(message("wait\n").find("needs a condition"), std::string::npos);
    EXPECT_NE(message("let x\n").find("'let' takes 2"), std::string::npos);
    EXPECT_NE(message("frames\n").find("'frames' takes 1"), std::string::npos);
    EXPECT_NE(message("window 1280\n").find("s.txt:1: 'window' takes 2"), std::string::npos);
    EXPECT_NE(message("window 10 10\n").find("at least 320 240"), std::string::npos);
    EXPECT_NE(message("quit\nui_scale 4\n").find("s.txt:2: 'ui_scale' takes a scale from 0.5 to 3"),
              std::string::npos);
    EXPECT_NE(message("ui_scale big\n").find("from 0.5 to 3"), std::string::npos);
    EXPECT_NE(message("lab\n").find("s.txt:1: 'lab' takes 1"), std::string::npos);
}

TEST(Script, ConditionsCompareFieldsOfTheState) {
    const nlohmann::json s = {{"stage_index", 3},
                              {"temperature", 0.5},
                              {"status", "Opened /tmp/a.json"},
                              {"updating", false},
                              {"widgets", {{"temperature", {10, 20, 30, 40}}}}};
    std::map<std::string, nlohmann::json> vars = {{"t0", 1.0}, {"s0", 3}};
    EXPECT_TRUE(eval_conditions("stage_index == 3", s, vars));
    EXPECT_TRUE(eval_conditions("stage_index == $s0 && temperature < $t0", s, vars));
    EXPECT_FALSE(eval_conditions("stage_index == 3 && updating == true", s, vars));
    EXPECT_TRUE(eval_conditions("status ^= Opened && status ~ a.json", s, vars));
    EXPECT_TRUE(eval_conditions("status ~ \"/tmp/a\"", s, vars));
    EXPECT_FALSE(eval_conditions("status ^= opened", s, vars));  // case matters
    EXPECT_TRUE(eval_conditions("widgets.temperature != null", s, vars));
    EXPECT_FALSE(eval_conditions("widgets.heatmap != null", s, vars));  // absent = false, whatever the op
    EXPECT_TRUE(eval_conditions("temperature >= 0.5 && temperature <= 0.5", s, vars));
    EXPECT_FALSE(eval_conditions("temperature > 0.5", s, vars));
    EXPECT_TRUE(eval_conditions("widgets.temperature ~ 30", s, vars));
    EXPECT_THROW(eval_conditions("stage_index", s, vars), Error);
    EXPECT_THROW(eval_conditions("stage_index == $nope", s, vars), Error);
    EXPECT_THROW(eval_conditions("stage_index <> 3", s, vars), Error);
}

TEST(Script, AClickWaitsForItsWidgetToBeDrawn) {
    // The state that leads to a panel comes a frame or two before the panel draws its widgets: the
    // click waits for the widget instead of failing at once, then goes there and presses.
    ScriptPlayer p(parse_script("click widget family_encoder 0.5 0.5\nquit\n", "s.txt"), "s");
    const nlohmann::json before = {{"widgets", nlohmann::json::object()}};
    for (int frame = 0; frame < 3; ++frame) {
        p.before_frame(nullptr, before, false);
        EXPECT_FALSE(p.failed()) << p.failure();
        EXPECT_FALSE(p.finished());
    }
    const nlohmann::json drawn = {{"widgets", {{"family_encoder", {100, 40, 20, 10}}}}};
    p.before_frame(nullptr, drawn, false);  // the pointer arrives
    p.before_frame(nullptr, drawn, false);  // the button goes down
    p.before_frame(nullptr, drawn, false);  // released; quit
    EXPECT_FALSE(p.failed()) << p.failure();
    EXPECT_TRUE(p.finished());
}

}  // namespace
}  // namespace attnviz::app

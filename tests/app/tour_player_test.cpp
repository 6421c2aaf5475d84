// app/tour_player: a step puts its scene, config, stage, head, pinned row, view and lab on screen;
// Next/Back move through the steps; the lab a step opened closes at the next step; leaving the step
// (changing a knob) is seen as exploring, and the step is kept; a tour that cannot be read changes
// nothing and is one line in the status bar.
#include "app/tour_player.hpp"

#include <gtest/gtest.h>

#include <string>

#include "common/test_files.hpp"
#include "io/files.hpp"
#include "io/tour.hpp"

namespace attnviz::app {
namespace {

const std::vector<std::string> kLabs = {"training", "temperature"};

TEST(TourPlayer, StepsSetTheViewAndNextBackMoveThroughThem) {
    test::TempDir d("tourplayer");
    write_file_atomic(d.path + "/t.json", R"({"attnviz_tour": 1, "title": "T", "steps": [
        {"title": "one", "text": "x", "stage": "one_hot"},
        {"title": "two", "text": "x", "stage": "weights", "head": 2, "pin": 3, "set": {"temperature": 0.3},
         "lab": "temperature"},
        {"title": "three", "text": "x", "view": "heads"}]})");
    AppState state;
    ASSERT_TRUE(start_tour(state, d.path + "/t.json", 0, kLabs)) << state.status;
    EXPECT_TRUE(state.tour.open);
    EXPECT_EQ(state.tour.step, 0);
    EXPECT_EQ(state.requested_stage, "one_hot");
    EXPECT_EQ(state.scene_path, "");
    tour_next(state);
    EXPECT_EQ(state.tour.step, 1);
    EXPECT_FLOAT_EQ(state.config.temperature, 0.3f);
    EXPECT_EQ(state.head, 2);
    EXPECT_EQ(state.pinned_row, 3);
    EXPECT_EQ(state.requested_stage, "weights");
    EXPECT_EQ(state.requested_lab, "temperature");
    state.requested_lab.clear();  // (the labs' drawing takes the request)
    state.open_labs = {"temperature"};
    tour_next(state);
    EXPECT_EQ(state.tour.step, 2);
    EXPECT_EQ(state.view, MainView::HeadsGrid);
    EXPECT_EQ(state.requested_lab, "-temperature");  // the lab the last step opened closes
    EXPECT_FLOAT_EQ(state.config.temperature, 1.0f);
    tour_next(state);  // the last step stays the last
    EXPECT_EQ(state.tour.step, 2);
    tour_back(state);
    tour_back(state);
    tour_back(state);
    EXPECT_EQ(state.tour.step, 0);
    EXPECT_EQ(state.view, MainView::Stage);
    EXPECT_EQ(tour_state_json(state)["steps"], 3);
}

TEST(TourPlayer, ABrokenTourIsOneLineAndChangesNothing) {
    test::TempDir d("tourplayer");
    write_file_atomic(d.path + "/t.json", "{\"steps\": [");
    AppState state;
    state.config.temperature = 2.0f;
    std::vector<std::string> problems;
    EXPECT_FALSE(start_tour(state, d.path + "/t.json", 0, kLabs, &problems));
    EXPECT_TRUE(state.status_is_error);
    EXPECT_EQ(state.status.find('\n'), std::string::npos);
    EXPECT_EQ(problems.size(), 1u);
    EXPECT_FALSE(state.tour.tour);
    EXPECT_FLOAT_EQ(state.config.temperature, 2.0f);
    EXPECT_TRUE(tour_state_json(state).is_null());
}

TEST(TourPlayer, ExploringLeavesTheStepAndShowingItAgainComesBack) {
    test::TempDir d("tourplayer");
    write_file_atomic(d.path + "/t.json",
                      R"({"steps": [{"title": "T", "text": "x", "set": {"temperature": 0.5}}]})");
    AppState state;
    ASSERT_TRUE(start_tour(state, d.path + "/t.json", 0, kLabs));
    EXPECT_TRUE(tour_step_on_screen(state));
    state.config.temperature = 2.0f;  // the learner moves the slider
    EXPECT_FALSE(tour_step_on_screen(state));
    EXPECT_EQ(state.tour.step, 0);
    apply_tour_step(state, state.tour.step);
    EXPECT_TRUE(tour_step_on_screen(state));
}

// The shipped tour follows the locale: the first of LANGUAGE, LC_ALL, LC_MESSAGES, LANG that is set.
TEST(Tour, AChineseLocaleOpensTheChineseTour) {
    EXPECT_TRUE(chinese_locale(nullptr, nullptr, nullptr, "zh_CN.UTF-8"));
    EXPECT_TRUE(chinese_locale(nullptr, "zh_TW.UTF-8", nullptr, "en_US.UTF-8"));
    EXPECT_TRUE(chinese_locale("zh_CN:en", nullptr, nullptr, "C.UTF-8"));
    EXPECT_FALSE(chinese_locale("", "", nullptr, "en_GB.UTF-8"));
    EXPECT_FALSE(chinese_locale("en", nullptr, nullptr, "zh_CN.UTF-8"));
    EXPECT_FALSE(chinese_locale(nullptr, nullptr, nullptr, nullptr));
    EXPECT_NE(shipped_tour_path(true).find("first-hour.zh.json"), std::string::npos);
    EXPECT_NE(shipped_tour_path(false).find("first-hour.json"), std::string::npos);
}

// The panel's own words follow the tour's "language": Chinese for zh, zh-CN, zh_TW; else English.
TEST(Tour, ThePanelSpeaksTheToursLanguage) {
    EXPECT_EQ(tour_fill(tour_words("").heading, 3, 12), "Start here · step 3 of 12");
    EXPECT_EQ(tour_fill(tour_words("en").status, 1, 2), "Tour, step 1 of 2: ");
    EXPECT_EQ(tour_fill(tour_words("zh").heading, 3, 12), "从这里开始 · 第 3 步，共 12 步");
    EXPECT_STREQ(tour_words("zh-CN").next, "下一步 ▶");
    EXPECT_STREQ(tour_words("fr").next, "Next ▶");
    EXPECT_EQ(tour_fill("{k}{n}{x}{", 1, 2), "12{x}{");
}

}  // namespace
}  // namespace attnviz::app

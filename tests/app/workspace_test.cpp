// The learner's workspace (app/workspace.hpp): everything made round-trips; a broken file changes
// nothing and is reported in one line and set aside; saving is atomic and only when changed.
#include "app/workspace.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "app/panels/heatmap_widget.hpp"
#include "app/tour_player.hpp"
#include "common/test_files.hpp"
#include "core/error.hpp"
#include "io/files.hpp"

namespace attnviz::app {
namespace {

namespace fs = std::filesystem;

struct WorkspaceDir {
    fs::path path;
    WorkspaceDir() {
        path = fs::temp_directory_path() / ("attnviz_ws_" + std::to_string(::getpid()) + "_" +
                                            std::to_string(reinterpret_cast<std::uintptr_t>(this)));
        fs::create_directories(path);
    }
    ~WorkspaceDir() { fs::remove_all(path); }
};

AppState made_state() {
    AppState s;
    s.config.text = "猫 sat on the mat";
    s.config.heads = 2;
    s.config.temperature = 0.25;
    s.config.mask = MaskKind::Custom;
    s.config.custom_mask.set_blocked(0, 2, true);
    s.config.custom_mask.set_blocked(3, 1, true);
    s.scene_title = "Mine";
    s.scene_note = "a note";
    s.scene_path = "/tmp/mine.json";
    s.view = MainView::Compare;
    s.head = 1;
    s.pinned_row = 2;
    return s;
}

TEST(Workspace, RoundTripsWhatTheLearnerMade) {
    const AppState a = made_state();
    AppState b;
    apply_workspace_json(workspace_json(a), b);
    EXPECT_TRUE(b.config == a.config);
    EXPECT_TRUE(b.config.custom_mask.is_blocked(3, 1));
    EXPECT_EQ(b.scene_title, "Mine");
    EXPECT_EQ(b.scene_note, "a note");
    EXPECT_EQ(b.scene_path, "/tmp/mine.json");
    EXPECT_EQ(b.view, MainView::Compare);
    EXPECT_EQ(b.head, 1);
    EXPECT_EQ(b.pinned_row, 2);
    EXPECT_EQ(workspace_json(b), workspace_json(a));
}

// The colour choice is the views' (one for the whole app): each test leaves it as it found it.
struct ColoursGuard {
    ViewScale saved = view_scale();
    ~ColoursGuard() { view_scale() = saved; }
};

TEST(Workspace, KeepsTheOpenModelAndTheColourScale) {
    ColoursGuard guard;
    AppState a = made_state();
    a.model.active = true;
    a.model.dir = "/models/gpt2";
    a.model.text = "the cat sat because it";
    a.model.n_layer = 12;
    a.model.layer = 5;
    a.model.temperature = 0.5f;
    a.model.top_k = 7;
    a.model.top_p = 0.75f;
    a.view = MainView::Model;
    view_scale() = ViewScale{ScaleMode::Row, ReduceMode::Mean};
    const std::string text = workspace_json(a);

    view_scale() = ViewScale{};
    AppState b;
    apply_workspace_json(text, b);
    // The model reopens in the background; until it has loaded the single layer shows.
    EXPECT_EQ(b.model.open_request, "/models/gpt2");
    EXPECT_FALSE(b.model.active);
    EXPECT_EQ(b.view, MainView::Stage);
    EXPECT_EQ(b.model.resume.dir, "/models/gpt2");
    EXPECT_EQ(b.model.resume.layer, 5);
    EXPECT_EQ(b.model.resume.head, 1);
    EXPECT_EQ(b.model.resume.pinned_row, 2);
    EXPECT_TRUE(b.model.resume.model_view);
    EXPECT_EQ(b.model.text, "the cat sat because it");
    EXPECT_FLOAT_EQ(b.model.temperature, 0.5f);
    EXPECT_EQ(b.model.top_k, 7);
    EXPECT_FLOAT_EQ(b.model.top_p, 0.75f);
    EXPECT_EQ(view_scale().mode, ScaleMode::Row);
    EXPECT_EQ(view_scale().reduce, ReduceMode::Mean);
    // Saved again while the model is still loading, the workspace still names it.
    EXPECT_EQ(workspace_json(b), text);

    // Without a model there is no "model" entry.
    AppState c = made_state();
    EXPECT_EQ(workspace_json(c).find("\"model\""), std::string::npos);
}

TEST(Workspace, KeepsAnEncoderDecodersTargetAndAttentionFamily) {
    AppState a = made_state();
    a.model.active = true;
    a.model.seq2seq = true;
    a.model.dir = "/models/t5";
    a.model.text = "translate English to German: the cat";
    a.model.target = " die";
    a.model.family = AttnFamily::Encoder;
    const std::string text = workspace_json(a);
    AppState b;
    apply_workspace_json(text, b);
    EXPECT_EQ(b.model.open_request, "/models/t5");
    EXPECT_EQ(b.model.text, "translate English to German: the cat");
    EXPECT_EQ(b.model.target, " die");
    EXPECT_EQ(b.model.family, AttnFamily::Encoder);
    EXPECT_EQ(workspace_json(b), text);  // (saved again while it loads)
    // A decoder-only model's workspace has neither.
    AppState c = made_state();
    c.model.active = true;
    c.model.dir = "/models/gpt2";
    EXPECT_EQ(workspace_json(c).find("\"target\""), std::string::npos);
    EXPECT_EQ(workspace_json(c).find("\"family\""), std::string::npos);
}

// The tour and the scene's model survive a restart: the tour's file, step and panel (reloaded by the
// shell without changing the restored view) and the model the scene opened (its note stays shown).
TEST(Workspace, KeepsTheTourStepAndTheScenesModel) {
    test::TempDir d("ws-tour");
    write_file_atomic(
        d.path + "/t.json",
        R"({"steps": [{"title": "a", "text": "x"}, {"title": "b", "text": "y", "stage": "scores"}]})");
    AppState a;
    ASSERT_TRUE(start_tour(a, d.path + "/t.json", 1, {}));
    a.tour.open = false;  // closed to explore
    a.scene_model = "/models/m";
    AppState b;
    apply_workspace_json(workspace_json(a), b);
    EXPECT_EQ(b.scene_model, "/models/m");
    EXPECT_EQ(b.tour.resume_file, d.path + "/t.json");
    EXPECT_EQ(b.tour.resume_step, 1);
    EXPECT_FALSE(b.tour.resume_open);
    b.requested_stage = "weights";  // what the workspace restored stays
    resume_tour(b, {});
    ASSERT_TRUE(b.tour.tour);
    EXPECT_EQ(b.tour.step, 1);
    EXPECT_FALSE(b.tour.open);
    EXPECT_EQ(b.requested_stage, "weights");
}

TEST(Workspace, BadModelOrColourEntriesAreOneLineAndChangeNothing) {
    ColoursGuard guard;
    const std::string head = "{\"attnviz_workspace\": 1, \"config\": {}, \"scene_config\": {}, ";
    const std::pair<std::string, std::string> cases[] = {
        {"\"model\": {\"dir\": \"\"}", "model.dir is empty"},
        {"\"model\": {\"dir\": 3}", "wrong type"},
        {"\"model\": {\"text\": \"x\"}", "wrong type"},
        {"\"model\": {\"dir\": \"/m\", \"temperature\": 9}", "model.temperature is 9"},
        {"\"model\": {\"dir\": \"/m\", \"top_k\": -1}", "model.top_k is -1"},
        {"\"model\": {\"dir\": \"/m\", \"layer\": -2}", "model.layer is -2"},
        {"\"colours\": {\"scale\": \"rainbow\"}", "rainbow"},
        {"\"colours\": {\"zoomed_out\": \"median\"}", "colours.zoomed_out is \"median\""},
    };
    view_scale() = ViewScale{ScaleMode::Log, ReduceMode::Mean};
    for (const auto& [entry, message] : cases) {
        AppState s = made_state();
        const std::string before = workspace_json(s);
        try {
            apply_workspace_json(head + entry + "}", s);
            ADD_FAILURE() << entry << " was accepted";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << entry << ": " << e.what();
            EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
        }
        EXPECT_EQ(workspace_json(s), before) << entry;
        EXPECT_TRUE(s.model.open_request.empty()) << entry;
        EXPECT_EQ(view_scale().mode, ScaleMode::Log) << entry;
    }
}

TEST(Workspace, BrokenTextChangesNothing) {
    for (const std::string& bad :
         {std::string("{"), std::string("[]"), std::string("{\"x\": 1}"),
          std::string("{\"attnviz_workspace\": 99}"),
          std::string("{\"attnviz_workspace\": 1, \"config\": {\"heads\": \"many\"}, "
                      "\"scene_config\": {}}"),
          std::string("{\"attnviz_workspace\": 1, \"config\": {\"hedas\": 2}, "
                      "\"scene_config\": {}}")}) {
        AppState s = made_state();
        const std::string before = workspace_json(s);
        EXPECT_THROW(apply_workspace_json(bad, s), Error) << bad;
        EXPECT_EQ(workspace_json(s), before) << bad;
    }
}

TEST(Workspace, KeeperRestoresSavesOnlyChangesAndSetsBrokenFilesAside) {
    WorkspaceDir dir;
    const std::string path = (dir.path / "workspace.json").string();
    WorkspaceKeeper keeper;
    keeper.set_path(path);
    AppState s;
    EXPECT_FALSE(keeper.restore(s));  // nothing saved yet: silent
    EXPECT_EQ(s.status, "");

    AppState a = made_state();
    EXPECT_EQ(keeper.flush(a), "");
    ASSERT_TRUE(fs::exists(path));
    const auto written = fs::last_write_time(path);
    keeper.tick(a, 100.0);  // unchanged: not written again
    EXPECT_EQ(fs::last_write_time(path), written);

    WorkspaceKeeper other;
    other.set_path(path);
    AppState b;
    EXPECT_TRUE(other.restore(b));
    EXPECT_TRUE(b.config == a.config);

    std::ofstream(path) << "{\"attnviz_workspace\": 1, \"config\": ";  // truncated by a crash elsewhere
    AppState c;
    WorkspaceKeeper third;
    third.set_path(path);
    EXPECT_FALSE(third.restore(c));
    EXPECT_TRUE(c.status_is_error);
    EXPECT_NE(c.status.find("set aside"), std::string::npos) << c.status;
    EXPECT_EQ(c.status.find('\n'), std::string::npos);
    EXPECT_FALSE(fs::exists(path));
    int aside = 0;
    for (const auto& e : fs::directory_iterator(dir.path))
        aside += e.path().filename().string().rfind("workspace.json.broken-", 0) == 0;
    EXPECT_EQ(aside, 1);
}

TEST(Workspace, DisabledKeeperNeitherReadsNorWrites) {
    WorkspaceDir dir;
    const std::string path = (dir.path / "workspace.json").string();
    WorkspaceKeeper keeper;
    keeper.set_path(path);
    keeper.set_enabled(false);
    EXPECT_EQ(keeper.flush(made_state()), "");
    EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace attnviz::app

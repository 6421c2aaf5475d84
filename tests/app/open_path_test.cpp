// open_path: what a dropped file, a recent file or the chooser's answer opens. A model folder (or its
// config.json) becomes a load request, a .npy the custom mask, anything else a scene; every refusal is
// one line in the status bar and leaves the document as it was.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "app/dialogs.hpp"
#include "common/test_files.hpp"
#include "io/npy.hpp"
#include "io/scene.hpp"

namespace attnviz::app {
namespace {

// Opening a scene saves the recent list in settings.json: under the test's own config folder, and the
// variable is put back afterwards.
struct ConfigHome {
    std::string old;
    bool had = false;
    explicit ConfigHome(const std::string& dir) {
        if (const char* v = std::getenv("XDG_CONFIG_HOME")) old = v, had = true;
        setenv("XDG_CONFIG_HOME", dir.c_str(), 1);
    }
    ~ConfigHome() {
        if (had)
            setenv("XDG_CONFIG_HOME", old.c_str(), 1);
        else
            unsetenv("XDG_CONFIG_HOME");
    }
};

void touch(const std::string& path, const std::string& text = "{}") {
    std::ofstream(path) << text;
}

TEST(OpenPath, ModelFolderOrItsConfigIsALoadRequest) {
    test::TempDir dir("open");
    const std::string model = dir.path + "/gpt2";
    std::filesystem::create_directories(model);
    touch(model + "/config.json");
    touch(model + "/model.safetensors", "x");
    AppState s;
    EXPECT_TRUE(open_path(s, model));
    EXPECT_EQ(s.model.open_request, model);
    EXPECT_FALSE(s.status_is_error);
    AppState t;
    EXPECT_TRUE(open_path(t, model + "/config.json"));
    EXPECT_EQ(t.model.open_request, model);
}

TEST(OpenPath, RefusalsAreOneLineAndChangeNothing) {
    test::TempDir dir("open");
    std::filesystem::create_directories(dir.path + "/photos");
    touch(dir.path + "/broken.json", "{ not json");
    touch(dir.path + "/bad.npy", "not an npy file");
    AppState s;
    const Config before = s.config;
    for (const std::string& p : {dir.path + "/photos", dir.path + "/missing.json", dir.path + "/broken.json",
                                 dir.path + "/bad.npy", std::string()}) {
        std::string error;
        EXPECT_FALSE(open_path(s, p, &error)) << p;
        EXPECT_TRUE(s.status_is_error) << p;
        EXPECT_EQ(s.status, error) << p;
        EXPECT_FALSE(error.empty()) << p;
        EXPECT_EQ(error.find('\n'), std::string::npos) << error;
        EXPECT_TRUE(s.config == before) << p;
        EXPECT_TRUE(s.model.open_request.empty()) << p;
    }
    std::string error;
    open_path(s, dir.path + "/photos", &error);
    EXPECT_NE(error.find("not a model folder"), std::string::npos) << error;
}

TEST(OpenPath, NpyBecomesTheCustomMaskButNotOnAModel) {
    test::TempDir dir("open");
    Mat m = Mat::Zero(3, 3);
    m(0, 1) = m(0, 2) = m(1, 2) = 1;
    write_npy(dir.path + "/mask.NPY", m);
    AppState s;
    ASSERT_TRUE(open_path(s, dir.path + "/mask.NPY")) << s.status;
    EXPECT_EQ(s.config.mask, MaskKind::Custom);
    EXPECT_EQ(s.config.custom_mask.rows, 3);
    EXPECT_TRUE(s.config.custom_mask.is_blocked(0, 2));
    EXPECT_FALSE(s.config.custom_mask.is_blocked(2, 0));
    AppState on_model;
    on_model.model.active = true;
    EXPECT_FALSE(open_path(on_model, dir.path + "/mask.NPY"));
    EXPECT_NE(on_model.config.mask, MaskKind::Custom);
}

TEST(OpenPath, ASceneOpensIsRememberedAndLeavesAModel) {
    test::TempDir dir("open");
    ConfigHome home(dir.path + "/config");
    Scene scene;
    scene.title = "Mine";
    scene.config.text = "a b c";
    save_scene(dir.path + "/mine.json", scene);
    AppState s;
    s.model.active = true;
    ASSERT_TRUE(open_path(s, dir.path + "/mine.json")) << s.status;
    EXPECT_EQ(s.scene_title, "Mine");
    EXPECT_EQ(s.config.text, "a b c");
    EXPECT_EQ(s.recent_files.front(), dir.path + "/mine.json");
    EXPECT_TRUE(s.model.close_request);  // a single-layer scene is shown on the single layer
    EXPECT_FALSE(s.model.cancel_load);   // nothing was loading
}

TEST(OpenPath, ASceneOpenedWhileAModelLoadsCancelsTheLoad) {
    test::TempDir dir("open");
    ConfigHome home(dir.path + "/config");
    Scene scene;
    scene.config.text = "a b c";
    save_scene(dir.path + "/mine.json", scene);
    AppState loading;  // File ▸ Open model… a moment ago: the load runs
    loading.model.loading = true;
    ASSERT_TRUE(open_path(loading, dir.path + "/mine.json")) << loading.status;
    EXPECT_TRUE(loading.model.cancel_load);
    AppState asked;  // asked for in this very frame: the request goes
    asked.model.open_request = dir.path + "/some-model";
    ASSERT_TRUE(open_path(asked, dir.path + "/mine.json")) << asked.status;
    EXPECT_TRUE(asked.model.open_request.empty());
    EXPECT_TRUE(asked.model.cancel_load);
}

TEST(OpenPath, DroppedFilesOpenTheFirstAndSaySo) {
    test::TempDir dir("open");
    ConfigHome home(dir.path + "/config");
    Scene scene;
    save_scene(dir.path + "/a.json", scene);
    AppState s;
    open_dropped(s, {dir.path + "/a.json", dir.path + "/b.json", dir.path + "/c.json"});
    EXPECT_EQ(s.scene_path, dir.path + "/a.json");
    EXPECT_NE(s.status.find("3 files were dropped"), std::string::npos) << s.status;
    on_files_dropped(nullptr, 0, nullptr);
    const char* paths[] = {"/x/one", "/x/two"};
    on_files_dropped(nullptr, 2, paths);
    EXPECT_EQ(take_dropped_files(), (std::vector<std::string>{"/x/one", "/x/two"}));
    EXPECT_TRUE(take_dropped_files().empty());
}

}  // namespace
}  // namespace attnviz::app

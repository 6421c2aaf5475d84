// Scenes that open a model: "model" (a folder, relative to the scene file) and "model_text" parse,
// round-trip through scene_json, resolve against the scene's folder, and a wrong type is one line.
#include <gtest/gtest.h>

#include "common/test_files.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/scene.hpp"

namespace attnviz {
namespace {

TEST(SceneModel, ParsesRoundTripsAndResolvesAgainstTheSceneFolder) {
    const std::string json =
        R"({"attnviz_scene": 1, "title": "t", "model": "../models/m", "model_text": "a b a b", "config": {}})";
    const Scene s = parse_scene(json, "s.json");
    EXPECT_EQ(s.model, "../models/m");
    EXPECT_EQ(s.model_text, "a b a b");
    const Scene again = parse_scene(scene_json(s), "again.json");
    EXPECT_EQ(again.model, s.model);
    EXPECT_EQ(again.model_text, s.model_text);
    EXPECT_EQ(parse_scene(R"({"attnviz_scene": 1})", "plain.json").model, "");

    test::TempDir dir;
    make_dirs(dir.path + "/scenes");
    write_file_atomic(dir.path + "/scenes/x.json", json);
    EXPECT_EQ(load_scene(dir.path + "/scenes/x.json").model, dir.path + "/models/m");
}

TEST(SceneModel, AModelThatIsNotAStringIsOneLine) {
    try {
        parse_scene(R"({"attnviz_scene": 1, "model": 3})", "bad.json");
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "bad.json: model: expected a string, got 3");
    }
}

}  // namespace
}  // namespace attnviz

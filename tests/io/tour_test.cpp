// io/tour: a tour resolves every step to a scene and a landing (the step's fields over the scene's
// named head over the scene's own); a step with an unknown stage, lab, named head or key, a layer or head
// out of range, or a scene that cannot be opened is one line naming the step and the field, and only
// that step is left out; a file that is not a tour is one line. The shipped tour passes every check.
#include "io/tour.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "common/test_files.hpp"
#include "core/error.hpp"
#include "io/files.hpp"

namespace attnviz {
namespace {

const std::vector<std::string> kLabs = {"training", "temperature"};

// A folder with a 2-layer × 4-head model config, a scene opening it (landing on layer 1 head 3, with
// a named head) and a single-layer scene of 2 heads.
struct Fixture {
    test::TempDir dir{"tour"};
    TourPaths paths;
    Fixture() {
        std::filesystem::create_directories(dir.path + "/assets/models/m");
        std::filesystem::create_directories(dir.path + "/assets/scenes");
        write_file_atomic(dir.path + "/assets/models/m/config.json",
                          R"({"model_type": "gpt2", "n_layer": 2, "n_head": 4, "n_embd": 8, "n_positions": 16,
                              "vocab_size": 10})");
        write_file_atomic(dir.path + "/assets/scenes/story.json",
                          R"({"attnviz_scene": 1, "version": 3, "title": "Story", "note": "n",
                              "model": "../models/m", "model_text": "a b c", "layer": 1, "head": 3,
                              "stage": "weights", "pin": 2,
                              "named_heads": {"pronoun_antecedent": {"layer": 0, "head": 1, "text": "x it",
                                                                     "title": "Pronoun", "note": "the pronoun head"}}})");
        write_file_atomic(dir.path + "/assets/scenes/two.json",
                          R"({"attnviz_scene": 1, "config": {"heads": 2, "text": "a b c"}})");
        paths.tour_dir = dir.path + "/tours";
        paths.assets_dir = dir.path + "/assets";
    }
    Tour parse(const std::string& steps) const {
        return parse_tour(R"({"attnviz_tour": 1, "title": "T", "steps": [)" + steps + "]}", "t.json", paths,
                          kLabs);
    }
};

TEST(Tour, StepsResolveToASceneAndALanding) {
    Fixture f;
    const Tour t = f.parse(R"(
        {"title": "one-hot", "text": "x", "stage": "one_hot"},
        {"title": "T", "text": "x", "stage": "weights", "set": {"temperature": 0.3, "mask": "causal"}, "pin": 3},
        {"title": "heads", "text": "x", "view": "heads"},
        {"title": "adjective", "text": "x", "scene": "assets/scenes/story.json"},
        {"title": "pronoun", "text": "x", "scene": "assets/scenes/story.json", "named_head": "pronoun_antecedent"},
        {"title": "override", "text": "x", "scene": "assets/scenes/story.json", "head": 0, "layer": "scene"},
        {"title": "lab", "text": "x", "lab": "training"})");
    ASSERT_EQ(t.problems.size(), 0u) << t.problems.front();
    ASSERT_EQ(t.steps.size(), 7u);
    EXPECT_EQ(t.title, "T");
    EXPECT_EQ(t.steps[0].scene_path, "");  // the built-in example
    EXPECT_EQ(t.steps[0].focus.stage, "one_hot");
    EXPECT_FLOAT_EQ(t.steps[1].scene.config.temperature, 0.3f);
    EXPECT_EQ(t.steps[1].scene.config.mask, MaskKind::Causal);
    EXPECT_EQ(t.steps[1].focus.pin, 3);
    EXPECT_EQ(t.steps[2].view, "heads");
    // The scene's own landing: "assets/..." is found in the asset folder, the model beside the scene.
    const TourStep& adj = t.steps[3];
    EXPECT_EQ(adj.scene_path, f.dir.path + "/assets/scenes/story.json");
    EXPECT_TRUE(adj.model());
    EXPECT_EQ(adj.focus.layer, 1);
    EXPECT_EQ(adj.focus.head, 3);
    EXPECT_EQ(adj.focus.pin, 2);
    EXPECT_EQ(adj.focus.stage, "weights");
    // A named head of the scene, with its own text; the rest from the scene.
    const TourStep& pro = t.steps[4];
    EXPECT_EQ(pro.focus.layer, 0);
    EXPECT_EQ(pro.focus.head, 1);
    EXPECT_EQ(pro.focus.text, "x it");
    EXPECT_EQ(pro.focus.stage, "weights");
    EXPECT_EQ(pro.scene.note, "the pronoun head");  // its own title and note, not the scene's
    EXPECT_EQ(pro.scene.title, "Pronoun");
    EXPECT_EQ(adj.scene.title, "Story");
    EXPECT_EQ(adj.scene.note, "n");
    // The step's own fields win; "scene" means the scene's own.
    EXPECT_EQ(t.steps[5].focus.head, 0);
    EXPECT_EQ(t.steps[5].focus.layer, 1);
    EXPECT_EQ(t.steps[6].lab, "training");
}

TEST(Tour, ABadStepIsOneLineNamingTheStepAndTheFieldAndOnlyThatStepIsSkipped) {
    Fixture f;
    const Tour t = f.parse(R"(
        {"title": "good", "text": "x"},
        {"title": "bad stage", "text": "x", "stage": "wieghts"},
        {"title": "bad layer", "text": "x", "scene": "assets/scenes/story.json", "layer": 2},
        {"title": "bad head", "text": "x", "scene": "assets/scenes/story.json", "head": 4},
        {"title": "bad head 1", "text": "x", "scene": "assets/scenes/two.json", "head": 2},
        {"title": "bad scene", "text": "x", "scene": "assets/scenes/nope.json"},
        {"title": "bad lab", "text": "x", "lab": "nope"},
        {"title": "bad named head", "text": "x", "scene": "assets/scenes/story.json", "named_head": "adjective"},
        {"title": "bad key", "text": "x", "haed": 1},
        {"title": "layer of a single layer", "text": "x", "layer": 1},
        {"title": "model stage", "text": "x", "stage": "ln_1"},
        {"text": "no title"},
        {"title": "good too", "text": "x", "stage": "scores"})");
    ASSERT_EQ(t.steps.size(), 2u);
    EXPECT_EQ(t.steps[0].number, 1);
    EXPECT_EQ(t.steps[1].number, 13);
    EXPECT_EQ(t.steps_in_file, 13);
    const std::vector<std::string> want = {
        "t.json: step 2 (\"bad stage\"): stage: no stage 'wieghts'; the tour skips this step",
        "t.json: step 3 (\"bad layer\"): layer: 2 is out of range; the model has layers 0 to 1; the tour "
        "skips this step",
        "t.json: step 4 (\"bad head\"): head: 4 is out of range; the model has heads 0 to 3; the tour skips "
        "this step",
        "t.json: step 5 (\"bad head 1\"): head: 2 is out of range; the single layer has heads 0 to 1; the "
        "tour skips "
        "this step",
        "",  // scene: checked by prefix below (the message includes the OS's reason)
        "t.json: step 7 (\"bad lab\"): lab: no lab 'nope' (the labs are training, temperature); the tour "
        "skips this "
        "step",
        "t.json: step 8 (\"bad named head\"): named_head: the scene names no head 'adjective' (it names "
        "pronoun_antecedent); the tour skips this step",
        "",  // unknown key: prefix
        "t.json: step 10 (\"layer of a single layer\"): layer: 1 is out of range; the single layer has only "
        "layer "
        "0; the tour skips this step",
        "t.json: step 11 (\"model stage\"): stage: the single layer has no stage 'ln_1'; the tour skips this "
        "step",
        "t.json: step 12: title: missing (every step has a title and a text); the tour skips this step",
    };
    ASSERT_EQ(t.problems.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(t.problems[i].find('\n'), std::string::npos) << t.problems[i];
        if (!want[i].empty()) {
            EXPECT_EQ(t.problems[i], want[i]);
        }
    }
    EXPECT_EQ(t.problems[4].rfind(
                  "t.json: step 6 (\"bad scene\"): scene: cannot open assets/scenes/nope.json (", 0),
              0u)
        << t.problems[4];
    EXPECT_EQ(
        t.problems[7].rfind("t.json: step 9 (\"bad key\"): haed: unknown key (known keys: title, text,", 0),
        0u)
        << t.problems[7];
}

TEST(Tour, AFileThatIsNotATourIsOneLine) {
    Fixture f;
    auto err = [&](const std::string& text) {
        return test::error_of([&] { parse_tour(text, "t.json", f.paths, kLabs); });
    };
    EXPECT_EQ(err("{\"steps\": [").rfind("t.json", 0), 0u);
    EXPECT_EQ(err("{\"steps\": [").find('\n'), std::string::npos);
    EXPECT_EQ(err("[1]"),
              "t.json: not a tour (expected {\"attnviz_tour\": 1, \"title\": ..., \"steps\": [...]})");
    EXPECT_EQ(err(R"({"steps": []})"), "t.json: the tour has no steps");
    EXPECT_EQ(err(R"({"attnviz_tour": 2, "steps": [{}]})"),
              "t.json: tour format 2 is not one this attnviz reads (1)");
    EXPECT_EQ(err(R"({"stpes": [], "steps": [{}]})"),
              "t.json: unknown key 'stpes' (known keys: attnviz_tour, title, description, language, steps)");
    EXPECT_EQ(err(R"({"language": 7, "steps": [{}]})"),
              "t.json: \"language\" must be a language tag such as \"en\" or \"zh\"");
    EXPECT_EQ(test::error_of([&] { load_tour(f.dir.path + "/none.json", kLabs); }).find('\n'),
              std::string::npos);
}

// The shipped tour: at least ten steps, every one of them valid against the shipped scenes and models
// (the story scene comes from the story branch: without it its steps would be skipped, and this fails).
TEST(Tour, TheShippedTourHasTenValidSteps) {
    const std::string src = std::string(ATTNVIZ_TEST_DATA) + "/../../assets";
    TourPaths paths;
    paths.assets_dir = src;
    paths.tour_dir = src + "/tours";
    const Tour t = parse_tour(read_file(src + "/tours/first-hour.json"), "first-hour.json", paths,
                              {"training", "temperature", "designed_heads", "positional_encoding", "scoring",
                               "softmax_vs_linear", "size"});
    for (const std::string& p : t.problems) ADD_FAILURE() << p;
    EXPECT_GE(t.steps.size(), 10u);
    // The first launch lands on the story model's adjective head, then the tour starts from one-hot rows.
    EXPECT_NE(t.steps.front().scene_path.find("story.json"), std::string::npos) << t.steps.front().scene_path;
    EXPECT_EQ(t.steps[1].focus.stage, "one_hot");
    EXPECT_EQ(t.steps.back().lab, "training");
}

// The Chinese tour is the English one step by step: the same keys and landings (scene, stage, head,
// pin, view, lab, config), only the titles and texts translated — so the two cannot drift apart — and
// every step valid.
TEST(Tour, TheChineseTourMirrorsTheEnglishOne) {
    const std::string src = std::string(ATTNVIZ_TEST_DATA) + "/../../assets";
    const nlohmann::json en = nlohmann::json::parse(read_file(src + "/tours/first-hour.json"));
    const nlohmann::json zh = nlohmann::json::parse(read_file(src + "/tours/first-hour.zh.json"));
    ASSERT_EQ(en["steps"].size(), zh["steps"].size());
    for (std::size_t i = 0; i < en["steps"].size(); ++i) {
        nlohmann::json a = en["steps"][i], b = zh["steps"][i];
        EXPECT_NE(a["text"], b["text"]) << "step " << i + 1 << " is not translated";
        for (auto* step : {&a, &b}) step->erase("title"), step->erase("text");
        EXPECT_EQ(a, b) << "step " << i + 1 << " lands elsewhere in the Chinese tour";
    }
    TourPaths paths;
    paths.assets_dir = src;
    paths.tour_dir = src + "/tours";
    const Tour t = parse_tour(zh.dump(), "first-hour.zh.json", paths,
                              {"training", "temperature", "designed_heads", "positional_encoding", "scoring",
                               "softmax_vs_linear", "size"});
    for (const std::string& p : t.problems) ADD_FAILURE() << p;
    EXPECT_EQ(t.steps.size(), en["steps"].size());
    EXPECT_EQ(t.language, "zh");  // (the panel's own words in Chinese)
}

}  // namespace
}  // namespace attnviz

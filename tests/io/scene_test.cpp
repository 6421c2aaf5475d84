// Scenes: JSON in, Config out, exactly; errors that say where (line:column) and what (key names).
#include "io/scene.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "common/test_files.hpp"
#include "core/error.hpp"
#include "core/tokenize.hpp"
#include "core/trace.hpp"
#include "io/files.hpp"

namespace attnviz {
namespace {

namespace fs = std::filesystem;

using test::TempDir;

std::string scene_error(const std::string& json) {
    try {
        parse_scene(json, "s.json");
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

bool same_scene(const Scene& a, const Scene& b) {
    return a.title == b.title && a.note == b.note && a.config == b.config;
}

/// A random but valid-looking config that exercises every key and awkward values.
Config random_config(std::mt19937_64& rng) {
    auto pick = [&](std::initializer_list<const char*> v) { return *(v.begin() + rng() % v.size()); };
    auto unit = [&] { return std::uniform_real_distribution<double>(0.0, 1.0)(rng); };
    Config c;
    c.text = pick({"a fluffy blue creature", "毛茸茸的蓝色生物在翠绿的森林里漫步。",
                   "quote \" back\\slash\nnew line\ttab", "emoji 🙂 and ü", "x"});
    c.source_text = pick({"", "", "le chat noir dort", "蓝色的生物"});
    c.length = int(rng() % 3) * 17;
    c.max_tokens = 1 + int(rng() % 20000);
    c.d_model = 1 + int(rng() % 128);
    c.heads = 1 + int(rng() % 8);
    c.d_k = int(rng() % 33);
    c.d_v = int(rng() % 33);
    set_config_key(c, "attention", pick({"softmax", "linear"}));
    set_config_key(c, "phi", pick({"elu1", "relu", "softmax"}));
    set_config_key(c, "scoring",
                   pick({"scaled_dot", "dot", "additive", "bilinear", "gaussian", "boxcar", "epanechnikov"}));
    c.additive_hidden = int(rng() % 40);
    c.bandwidth = unit() * 10 + 1e-9;
    c.temperature = pick({"x", "y"})[0] == 'x' ? 1.0 / 3.0 : std::ldexp(unit(), -20);
    set_config_key(c, "mask", pick({"none", "causal", "padding", "window", "custom"}));
    c.valid_length = int(rng() % 20) - 1;
    c.window = 1 + int(rng() % 9);
    c.custom_mask = MaskGrid{};
    if (rng() % 2) {
        const int r = 1 + int(rng() % 5), k = 1 + int(rng() % 5);
        for (int i = 0; i < r; ++i)
            for (int j = 0; j < k; ++j) c.custom_mask.set_blocked(i, j, rng() % 2 != 0);
    }
    set_config_key(c, "positional", pick({"none", "sinusoidal", "learned", "rope", "alibi"}));
    c.pe_base = 1.0 + unit() * 1e6;
    set_config_key(c, "layernorm", pick({"none", "pre", "post"}));
    c.residual = rng() % 2 != 0;
    set_config_key(c, "preset",
                   pick({"none", "previous_token", "first_token", "same_token", "adjective_noun"}));
    c.seed = rng() % 3 == 0 ? std::numeric_limits<std::uint64_t>::max() : rng();
    return c;
}

TEST(Scene, DefaultSceneIsTheDefaultSentence) {
    const Scene s = default_scene();
    EXPECT_EQ(s.config.text, "a fluffy blue creature roamed the verdant forest");
    EXPECT_EQ(s.config, Config{});
    EXPECT_FALSE(s.title.empty());
    EXPECT_FALSE(s.note.empty());
    EXPECT_TRUE(validate(s.config).empty());
}

TEST(Scene, SaveWritesEveryKeyPrettyAndLoadRoundTripsExactly) {
    std::mt19937_64 rng(7);
    TempDir d;
    for (int round = 0; round < 300; ++round) {
        Scene s;
        s.title = round % 2 ? "标题 \"quoted\"" : "";
        s.note = "round " + std::to_string(round) + "\nsecond line";
        s.config = random_config(rng);
        const std::string text = scene_json(s);
        const Scene back = parse_scene(text, "round.json");
        ASSERT_TRUE(same_scene(back, s)) << text;
        if (round < 20) {  // through the file system too
            save_scene(d.path + "/s.json", s);
            ASSERT_TRUE(same_scene(load_scene(d.path + "/s.json"), s));
        }
    }
    const std::string text = scene_json(default_scene());
    const auto doc = nlohmann::json::parse(text);
    for (const std::string& key : config_keys()) EXPECT_TRUE(doc["config"].contains(key)) << key;
    EXPECT_EQ(doc["attnviz_scene"], 1);
    EXPECT_EQ(doc["version"], 2);
    EXPECT_TRUE(doc["config"]["heads"].is_number_integer());
    EXPECT_TRUE(doc["config"]["temperature"].is_number());
    EXPECT_TRUE(doc["config"]["residual"].is_boolean());
    EXPECT_TRUE(doc["config"]["mask"].is_string());
    EXPECT_TRUE(doc["config"]["custom_mask"].is_array());
    EXPECT_NE(text.find("\n  \"config\": {\n    \"text\": "), std::string::npos) << text;  // 2-space indent
    // Chinese stays readable in the file (not \u escapes).
    Scene zh = default_scene();
    zh.config.text = "毛茸茸";
    EXPECT_NE(scene_json(zh).find("毛茸茸"), std::string::npos);
}

// The table of fields drives scenes: every field, set away from its default, comes back through a
// scene (text and file) as the same text, and is stored with the JSON type its kind says.
TEST(Scene, EveryFieldOfTheTableRoundTripsThroughAScene) {
    const std::map<std::string, std::string> other = {{"text", "le chat 猫"},
                                                      {"source_text", "the cat"},
                                                      {"length", "11"},
                                                      {"max_tokens", "500"},
                                                      {"d_model", "48"},
                                                      {"heads", "3"},
                                                      {"d_k", "6"},
                                                      {"d_v", "5"},
                                                      {"attention", "linear"},
                                                      {"phi", "relu"},
                                                      {"scoring", "bilinear"},
                                                      {"additive_hidden", "7"},
                                                      {"bandwidth", "0.3"},
                                                      {"temperature", "0.125"},
                                                      {"mask", "custom"},
                                                      {"valid_length", "4"},
                                                      {"window", "2"},
                                                      {"custom_mask", "010;001"},
                                                      {"positional", "rope"},
                                                      {"pe_base", "500.5"},
                                                      {"layernorm", "post"},
                                                      {"residual", "false"},
                                                      {"preset", "first_token"},
                                                      {"seed", "18446744073709551615"}};
    TempDir d;
    for (const ConfigField& f : config_fields()) {
        ASSERT_EQ(other.count(f.name), 1u) << "give the new field " << f.name << " a value here";
        const std::string& value = other.at(f.name);
        ASSERT_NE(value, f.default_text()) << f.name;
        Scene s;
        set_config_key(s.config, f.name, value);
        const std::string text = scene_json(s);
        EXPECT_EQ(get_config_key(parse_scene(text, "f.json").config, f.name), value) << f.name << "\n"
                                                                                     << text;
        save_scene(d.path + "/f.json", s);
        EXPECT_EQ(get_config_key(load_scene(d.path + "/f.json").config, f.name), value) << f.name;
        const nlohmann::json doc = nlohmann::json::parse(text);
        const nlohmann::json& json = doc["config"][f.name];
        switch (f.kind) {
            case FieldKind::Integer:
                EXPECT_TRUE(json.is_number_integer()) << f.name;
                break;
            case FieldKind::Unsigned:
                EXPECT_TRUE(json.is_number_unsigned()) << f.name;
                break;
            case FieldKind::Number:
                EXPECT_TRUE(json.is_number()) << f.name;
                break;
            case FieldKind::Boolean:
                EXPECT_TRUE(json.is_boolean()) << f.name;
                break;
            case FieldKind::MaskRows:
                EXPECT_TRUE(json.is_array()) << f.name;
                break;
            case FieldKind::Text:
            case FieldKind::Choice:
                EXPECT_TRUE(json.is_string()) << f.name;
                break;
        }
    }
    EXPECT_EQ(config_keys().size(), config_fields().size());
}

TEST(Scene, CustomMaskIsAnArrayOfRowStrings) {
    Scene s = parse_scene(R"({"config": {"mask": "custom", "custom_mask": ["010", "001"]}})");
    EXPECT_EQ(s.config.custom_mask.rows, 2);
    EXPECT_EQ(s.config.custom_mask.cols, 3);
    EXPECT_TRUE(s.config.custom_mask.is_blocked(0, 1));
    EXPECT_TRUE(s.config.custom_mask.is_blocked(1, 2));
    EXPECT_FALSE(s.config.custom_mask.is_blocked(0, 0));
    const auto doc = nlohmann::json::parse(scene_json(s));
    EXPECT_EQ(doc["config"]["custom_mask"], nlohmann::json::array({"010", "001"}));
    EXPECT_EQ(parse_scene(R"({"config": {"custom_mask": []}})").config.custom_mask, MaskGrid{});
}

TEST(Scene, VersionlessScenesOfFormatOneStillOpen) {
    // A scene as attnviz wrote it before "version" existed, and the same scene in format 2.
    const std::string v1 =
        R"({"attnviz_scene": 1, "title": "t", "note": "n", "config": {"text": "a b c", "heads": 2, "mask": "causal"}})";
    const std::string v2 =
        R"({"attnviz_scene": 1, "version": 2, "title": "t", "note": "n", "config": {"text": "a b c", "heads": 2, "mask": "causal"}})";
    const Scene old_scene = parse_scene(v1, "old.json");
    const Scene new_scene = parse_scene(v2, "new.json");
    EXPECT_EQ(old_scene.config, new_scene.config);
    EXPECT_EQ(old_scene.config.heads, 2);
    EXPECT_EQ(old_scene.config.mask, MaskKind::Causal);
    EXPECT_EQ(old_scene.title, "t");
    EXPECT_EQ(parse_scene(R"({"version": 1, "config": {"heads": 2}})").config.heads, 2);
    // What we write now says version 2 and reads back the same.
    const std::string written = scene_json(old_scene);
    EXPECT_NE(written.find("\"version\": 2"), std::string::npos) << written;
    EXPECT_EQ(parse_scene(written).config, old_scene.config);
}

TEST(Scene, MissingKeysKeepDefaults) {
    const Scene s = parse_scene(R"({"config": {"heads": 2}})");
    Config expected;
    expected.heads = 2;
    EXPECT_EQ(s.config, expected);
    EXPECT_EQ(s.title, "");
    EXPECT_EQ(parse_scene("{}").config, Config{});
    // Integers written as 4.0 are integers; numbers may be written as integers.
    EXPECT_EQ(parse_scene(R"({"config": {"heads": 4.0, "temperature": 2}})").config.temperature, 2.0);
}

TEST(Scene, SyntaxErrorsGiveLineAndColumn) {
    // The trailing comma: the parser stops at the '}' on line 3, column 17.
    const std::string bad = "{\n  \"title\": \"x\",\n  \"config\": {}, }\n";
    const std::string e = scene_error(bad);
    EXPECT_EQ(e.rfind("s.json:3:17: JSON syntax error: ", 0), 0u) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos);
    EXPECT_EQ(e.find("[json.exception"), std::string::npos) << e;
    // Columns count characters, so a Chinese title does not push the column off: the error is
    // reported at the end of the unexpected "note" (character 22, byte 28).
    const std::string zh = "{\"title\": \"毛茸茸\" \"note\": \"\"}";
    EXPECT_EQ(scene_error(zh).rfind("s.json:1:22: JSON syntax error: ", 0), 0u) << scene_error(zh);
    EXPECT_EQ(scene_error("").rfind("s.json:1:1: JSON syntax error: ", 0), 0u) << scene_error("");
    EXPECT_EQ(scene_error("{\"config\": {\"heads\": 4").rfind("s.json:1:23: JSON syntax error", 0), 0u)
        << scene_error("{\"config\": {\"heads\": 4");
}

TEST(Scene, UnknownKeysAreNamedWithTheKnownOnes) {
    const std::string e = scene_error(R"({"config": {"hedas": 4}})");
    EXPECT_EQ(
        e.rfind("s.json: unknown config key 'hedas' (did you mean 'heads'? known keys: text, source_text,",
                0),
        0u)
        << e;
    EXPECT_NE(e.find("seed)"), std::string::npos) << e;
    EXPECT_EQ(scene_error(R"({"titel": "x"})"),
              "s.json: unknown key 'titel' (did you mean 'title'? known keys: attnviz_scene, version, title, "
              "note, config, model, model_text, layer, head, stage, pin, view, named_heads)");
    EXPECT_EQ(
        scene_error(R"({"zzzzzzzz": 1})"),
        "s.json: unknown key 'zzzzzzzz' (known keys: attnviz_scene, version, title, note, config, model, "
        "model_text, layer, head, stage, pin, view, named_heads)");
}

TEST(Scene, WrongTypesAreNamed) {
    EXPECT_EQ(scene_error(R"({"config": {"heads": "four"}})"),
              "s.json: heads: expected an integer, got \"four\"");
    EXPECT_EQ(scene_error(R"({"config": {"heads": 4.5}})"), "s.json: heads: expected an integer, got 4.5");
    EXPECT_EQ(scene_error(R"({"config": {"temperature": "hot"}})"),
              "s.json: temperature: expected a number, got \"hot\"");
    EXPECT_EQ(scene_error(R"({"config": {"residual": 1}})"),
              "s.json: residual: expected true or false, got 1");
    EXPECT_EQ(scene_error(R"({"config": {"mask": 3}})"), "s.json: mask: expected a string, got 3");
    EXPECT_EQ(scene_error(R"({"config": {"text": null}})"), "s.json: text: expected a string, got null");
    EXPECT_NE(
        scene_error(R"({"config": {"custom_mask": "101"}})").find("s.json: custom_mask: expected an array"),
        std::string::npos);
    EXPECT_EQ(scene_error(R"({"config": {"custom_mask": ["10", "2"]}})"),
              "s.json: custom_mask: row 1 must be a string of 0 and 1 (1 = hidden), got \"2\"");
    EXPECT_EQ(scene_error(R"({"title": 3})"), "s.json: title: expected a string, got 3");
    EXPECT_EQ(scene_error(R"({"config": []})"), "s.json: config: expected an object of config keys, got []");
    EXPECT_NE(scene_error("[1, 2]").find("s.json: a scene must be a JSON object"), std::string::npos);
    EXPECT_EQ(scene_error(R"({"version": 4})"),
              "s.json: scene format version 4 is not supported (this attnviz reads versions 1 to 3)");
    EXPECT_EQ(scene_error(R"({"version": 0})"),
              "s.json: scene format version 0 is not supported (this attnviz reads versions 1 to 3)");
    EXPECT_EQ(scene_error(R"({"version": "2"})"),
              "s.json: version: expected the scene format version 1, 2 or 3, got \"2\"");
    EXPECT_EQ(scene_error(R"({"attnviz_scene": 2})"),
              "s.json: scene format version 2 is not supported (this attnviz reads version 1)");
    // Values set_config_key refuses keep its message, prefixed with the file.
    const std::string e = scene_error(R"({"config": {"mask": "diagonal"}})");
    EXPECT_EQ(e.rfind("s.json: mask: ", 0), 0u) << e;
    EXPECT_NE(e.find("causal"), std::string::npos) << e;
    EXPECT_EQ(scene_error(R"({"config": {"custom_mask": ["10", "1"]}})").rfind("s.json: custom_mask: ", 0),
              0u);
}

TEST(Scene, FileErrorsNameTheFile) {
    EXPECT_THROW(load_scene("/nonexistent/x.json"), Error);
    TempDir d;
    write_file_atomic(d.path + "/bad.json", "{\n  \"config\": {\"heads\": }\n}");
    try {
        load_scene(d.path + "/bad.json");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()).rfind(d.path + "/bad.json:2:23: JSON syntax error", 0), 0u)
            << e.what();
    }
    EXPECT_THROW(save_scene(d.path + "/no/dir/s.json", default_scene()), Error);
}

TEST(Scene, EveryExampleSceneLoadsAndIsValid) {
    const std::string dir = asset_dir() + "/scenes";
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    int count = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().extension() != ".json") continue;
        ++count;
        SCOPED_TRACE(entry.path().string());
        Scene s;
        ASSERT_NO_THROW(s = load_scene(entry.path().string()));
        EXPECT_FALSE(s.title.empty());
        EXPECT_GE(s.note.size(), 40u) << "the note should tell the learner what to look at";
        const auto issues = validate(s.config);
        for (const auto& i : issues) ADD_FAILURE() << i.key << ": " << i.message;
        // It computes, too (what the app does when the scene is opened).
        EXPECT_NO_THROW(compute_trace(s.config, ComputeOptions{2, nullptr}));
        // Saving and loading again changes nothing.
        EXPECT_TRUE(same_scene(parse_scene(scene_json(s)), s));
    }
    EXPECT_GE(count, 8);

    auto load = [&](const char* name) { return load_scene(dir + "/" + name); };
    EXPECT_TRUE(same_scene(load("default.json"), default_scene()));
    EXPECT_EQ(tokenize_strings(load("chinese.json").config.text).size(), 18u);
    EXPECT_EQ(load("causal_decoder.json").config.mask, MaskKind::Causal);
    EXPECT_TRUE(load("cross_attention.json").config.cross_attention());
    EXPECT_EQ(load("linear_attention.json").config.attention, AttentionKind::Linear);
    EXPECT_EQ(load("kernel_regression.json").config.scoring, Scoring::Gaussian);
    EXPECT_EQ(load("designed_previous_token.json").config.preset, HeadPreset::PreviousToken);
    // The designed head does what its note promises: every token i ≥ 1 looks mostly at i − 1.
    const Trace prev = compute_trace(load("designed_previous_token.json").config);
    const Mat A = prev.get("weights", 0)->matrix();  // n x n
    for (Eigen::Index i = 1; i < A.rows(); ++i) {
        Eigen::Index j = 0;
        A.row(i).maxCoeff(&j);
        EXPECT_EQ(j, i - 1) << "row " << i;
    }
    EXPECT_EQ(load("long_context.json").config.length, 512);
    // The story scene lands on the story model's adjective head, on the seeds' sentence.
    const Scene story = load("story.json");
    EXPECT_EQ(story.model_text.rfind("a fluffy blue creature roamed the verdant forest.", 0), 0u);
    ASSERT_TRUE(story.focus.layer && story.focus.head);
    EXPECT_GE(*story.focus.layer, 0);
    EXPECT_GE(*story.focus.head, 0);
    ASSERT_NE(story.named_head("pronoun_antecedent"), nullptr);
    // The pronoun head has its own note (a tour step landing there shows it, not the adjective story).
    EXPECT_NE(story.named_head("pronoun_antecedent")->note.find("\"she\""), std::string::npos);
    EXPECT_EQ(story.named_head("adjective_noun")->note, "");
}

// A note or config value nested 100,000 arrays deep used to overflow the stack while the error
// message was built; now the nesting is refused while parsing, with its position.
TEST(Scene, DeepNestingIsRefusedWithItsPosition) {
    // The top-level object is level 1, so the 64th '[' (column 73) opens level 65.
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    const std::string msg = scene_error("{\"note\": " + deep + "}");
    EXPECT_EQ(msg, "s.json:1:73: JSON nested more than 64 levels deep; a scene needs 3");
    const std::string msg2 = scene_error("{\"config\": {\"text\": " + deep + "}}");
    EXPECT_NE(msg2.find("nested more than 64 levels"), std::string::npos) << msg2;
    // Unbalanced: only opening brackets.
    EXPECT_NE(scene_error(std::string(200000, '[')).find("nested more than 64"), std::string::npos);
    // 60 levels are parsed, and the wrong type is described without serialising the whole value.
    const std::string ok_deep = std::string(60, '[') + std::string(60, ']');
    EXPECT_EQ(scene_error("{\"note\": " + ok_deep + "}"),
              "s.json: note: expected a string, got an array of 1 values");
}

// 1e400 overflows a double: nlohmann's raw out_of_range escaped without file, line or column.
TEST(Scene, NumberOverflowNamesLineAndColumn) {
    EXPECT_EQ(scene_error("{\n  \"config\": {\"temperature\": 1e400}\n}"),
              "s.json:2:29: JSON number out of range: number overflow parsing '1e400'");
    EXPECT_EQ(scene_error("{\"config\": {\"heads\": -1e999}}"),
              "s.json:1:22: JSON number out of range: number overflow parsing '-1e999'");
}

TEST(Scene, LongValuesAreShortenedInMessages) {
    const std::string msg = scene_error("{\"config\": {\"heads\": \"" + std::string(100000, 'x') + "\"}}");
    EXPECT_LT(msg.size(), 200u) << msg;
    const std::string msg2 = scene_error("{\"config\": {\"" + std::string(100000, 'k') + "\": 1}}");
    EXPECT_LT(msg2.size(), 600u) << msg2;
    const std::string msg3 = scene_error("{\"config\": {\"mask\": \"" + std::string(100000, 'x') + "\"}}");
    EXPECT_LT(msg3.size(), 300u) << msg3;
}

TEST(Scene, LoadRefusesNonRegularAndHugeFiles) {
    TempDir d;
    try {
        load_scene("/dev/zero");
        ADD_FAILURE() << "/dev/zero was read";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "cannot read /dev/zero: it is a character device, not a regular file");
    }
    const std::string fifo = d.path + "/fifo.json";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
    EXPECT_THROW(load_scene(fifo), Error);  // refused at once, never blocks
    EXPECT_THROW(load_scene(d.path), Error);
    const std::string big = d.path + "/big.json";
    write_file_atomic(big, "");
    ASSERT_EQ(::truncate(big.c_str(), off_t(2) << 30), 0);  // sparse
    try {
        load_scene(big);
        ADD_FAILURE() << "a 2 GiB scene was read";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "cannot read " + big + ": too large (2048 MiB > 16 MiB)");
    }
}

}  // namespace
}  // namespace attnviz

namespace attnviz {
namespace {

// Format 3: where a scene lands, and heads named for tours; written back exactly, and as version 2
// when a scene has neither (older builds still open it).
TEST(Scene, LandingAndNamedHeadsRoundTrip) {
    const Scene s = parse_scene(R"({"version": 3, "model": "m", "layer": 1, "head": 2, "pin": 5,
        "stage": "weights", "view": "model",
        "named_heads": {"pronoun_antecedent": {"layer": 0, "head": 3, "text": "it ate", "pin": 1},
                        "adjective_noun": {"layer": 1, "head": 2}}})",
                                "s.json");
    EXPECT_EQ(s.focus.layer, 1);
    EXPECT_EQ(s.focus.head, 2);
    EXPECT_EQ(s.focus.pin, 5);
    EXPECT_EQ(s.focus.stage, "weights");
    EXPECT_EQ(s.focus.view, "model");
    ASSERT_EQ(s.named_heads.size(), 2u);
    EXPECT_EQ(s.named_heads[0].first, "pronoun_antecedent");  // file order
    const SceneFocus* p = s.named_head("pronoun_antecedent");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->head, 3);
    EXPECT_EQ(p->text, "it ate");
    EXPECT_EQ(s.named_head("nope"), nullptr);
    const std::string written = scene_json(s);
    EXPECT_NE(written.find("\"version\": 3"), std::string::npos) << written;
    const Scene back = parse_scene(written, "back");
    EXPECT_EQ(scene_json(back), written);
    EXPECT_NE(scene_json(default_scene()).find("\"version\": 2"), std::string::npos);
}

TEST(Scene, BadLandingFieldsAreOneLineNamingTheField) {
    auto err = [](const std::string& text) {
        try {
            parse_scene(text, "s.json");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(err(R"({"head": -1})"), "s.json: head: expected an integer from 0, got -1");
    EXPECT_EQ(err(R"({"layer": "one"})"), "s.json: layer: expected an integer from 0, got \"one\"");
    EXPECT_EQ(err(R"({"view": "grid"})"), "s.json: view: expected stage, heads or model, got \"grid\"");
    EXPECT_EQ(err(R"({"named_heads": {"x": {"head": 1.5}}})"),
              "s.json: named_heads.x.head: expected an integer from 0, got 1.5");
    EXPECT_EQ(err(R"({"named_heads": {"x": {"haed": 1}}})"),
              "s.json: named_heads.x: unknown key 'haed' (did you mean 'head'? known keys: layer, head, pin, "
              "stage, view, text, title, note)");
    EXPECT_EQ(err(R"({"named_heads": [1]})").rfind("s.json: named_heads: expected an object", 0), 0u);
}

}  // namespace
}  // namespace attnviz

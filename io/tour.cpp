#include "io/tour.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/error.hpp"
#include "core/stage.hpp"
#include "io/files.hpp"
#include "io/json_limits.hpp"
#include "io/model_loader.hpp"

namespace attnviz {

using ojson = nlohmann::ordered_json;

namespace {

const std::vector<std::string> kTourKeys = {"attnviz_tour", "title", "description", "language", "steps"};
const std::vector<std::string> kStepKeys = {"title",      "text",  "scene", "model", "model_text",
                                            "named_head", "layer", "head",  "pin",   "stage",
                                            "view",       "set",   "lab"};

std::string join_names(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
    return out;
}

/// A problem with one field of one step: the message the tour reports for the step it leaves out.
struct StepError {
    std::string field, what;
};

std::string string_field(const ojson& step, const char* key, bool required) {
    if (!step.contains(key)) {
        if (required) throw StepError{key, "missing (every step has a title and a text)"};
        return "";
    }
    if (!step[key].is_string()) throw StepError{key, "expected a string"};
    return step[key].get<std::string>();
}

/// "layer", "head", "pin": an integer from 0, or "scene" (= the scene's own, as when absent).
std::optional<int> index_field(const ojson& step, const char* key) {
    if (!step.contains(key)) return std::nullopt;
    const ojson& v = step[key];
    if (v.is_string() && v.get<std::string>() == "scene") return std::nullopt;
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > (1 << 24))
        throw StepError{key, "expected an integer from 0 or \"scene\", got " + v.dump()};
    return int(v.get<std::int64_t>());
}

void override_focus(SceneFocus& into, const SceneFocus& over) {
    if (over.layer) into.layer = over.layer;
    if (over.head) into.head = over.head;
    if (over.pin) into.pin = over.pin;
    if (!over.stage.empty()) into.stage = over.stage;
    if (!over.view.empty()) into.view = over.view;
    if (!over.text.empty()) into.text = over.text;
}

TourStep parse_step(const ojson& s, int number, const TourPaths& paths,
                    const std::vector<std::string>& labs) {
    if (!s.is_object()) throw StepError{"step", "expected an object with a title and a text"};
    for (auto it = s.begin(); it != s.end(); ++it)
        if (std::find(kStepKeys.begin(), kStepKeys.end(), it.key()) == kStepKeys.end())
            throw StepError{it.key(), "unknown key (known keys: " + join_names(kStepKeys) + ")"};
    TourStep step;
    step.number = number;
    step.title = string_field(s, "title", true);
    step.text = string_field(s, "text", true);
    const std::string scene = string_field(s, "scene", false);
    const std::string model = string_field(s, "model", false);
    if (!scene.empty() && !model.empty())
        throw StepError{"model", "a step opens a scene or a model, not both"};

    // The scene: a file, a model folder alone, or the built-in example.
    if (!scene.empty()) {
        step.scene_path = paths.resolve(scene);
        try {
            step.scene = load_scene(step.scene_path);
        } catch (const std::exception& e) {
            throw StepError{"scene", "cannot open " + scene + " (" + e.what() + ")"};
        }
    } else {
        step.scene = default_scene();
        if (!model.empty()) {
            step.scene.model = paths.resolve(model);
            step.scene.title = step.title;
            step.scene.note.clear();
        }
    }
    if (s.contains("set")) {
        try {
            apply_config_json(step.scene.config, s["set"], "set");
        } catch (const std::exception& e) {
            std::string what = e.what();
            if (what.rfind("set: ", 0) == 0) what = what.substr(5);
            throw StepError{"set", what};
        }
    }
    const std::string model_text = string_field(s, "model_text", false);
    if (!model_text.empty()) step.scene.model_text = model_text;

    // Where to land: the scene's own, then its named head, then the step's own fields.
    step.focus = step.scene.focus;
    step.focus.text.clear();
    if (const std::string named = string_field(s, "named_head", false); !named.empty()) {
        const SceneFocus* f = step.scene.named_head(named);
        if (!f) {
            std::vector<std::string> names;
            for (const auto& [n, _] : step.scene.named_heads) names.push_back(n);
            throw StepError{
                "named_head",
                "the scene names no head '" + named + "' (" +
                    (names.empty() ? std::string("it names none") : "it names " + join_names(names)) + ")"};
        }
        override_focus(step.focus, *f);
        if (!f->title.empty()) step.scene.title = f->title;  // the head's own words, not the scene's
        if (!f->note.empty()) step.scene.note = f->note;
    }
    SceneFocus own;
    own.layer = index_field(s, "layer");
    own.head = index_field(s, "head");
    own.pin = index_field(s, "pin");
    own.stage = string_field(s, "stage", false);
    override_focus(step.focus, own);
    if (!model_text.empty()) step.focus.text = model_text;

    step.view = string_field(s, "view", false);
    if (step.view.empty()) step.view = step.focus.view;
    if (!step.view.empty() && step.view != "stage" && step.view != "heads" && step.view != "compare" &&
        step.view != "model")
        throw StepError{"view", "expected stage, heads, compare or model, got \"" + step.view + "\""};
    if (step.view == "model" && !step.model())
        throw StepError{"view", "\"model\" needs a scene with a model"};
    if (step.view == "compare" && step.model())
        throw StepError{"view", "\"compare\" is for the single layer"};
    step.focus.view = step.view;

    step.lab = string_field(s, "lab", false);
    if (!step.lab.empty() && std::find(labs.begin(), labs.end(), step.lab) == labs.end())
        throw StepError{"lab", "no lab '" + step.lab + "' (the labs are " + join_names(labs) + ")"};

    // The stage, layer and head must exist where the step lands.
    if (!step.focus.stage.empty()) {
        const StageEntry* e = find_stage_entry(step.focus.stage);
        if (!e) throw StepError{"stage", "no stage '" + step.focus.stage + "'"};
        if (step.model() && !e->model_text)
            throw StepError{"stage", "a model's layer has no stage '" + step.focus.stage + "'"};
        if (!step.model() && !e->layer_text)
            throw StepError{"stage", "the single layer has no stage '" + step.focus.stage + "'"};
    }
    int n_layer = 1, n_head = step.scene.config.heads;
    if (step.model()) {
        try {
            const ModelSpec spec = parse_model_config(read_file(step.scene.model + "/config.json", 1u << 20),
                                                      step.scene.model + "/config.json");
            n_layer = spec.n_layer;
            n_head = spec.n_head;
        } catch (const std::exception& e) {
            throw StepError{step.scene_path.empty() ? "model" : "scene",
                            "its model cannot be opened (" + std::string(e.what()) + ")"};
        }
    }
    const std::string where = step.model() ? "the model has " : "the single layer has ";
    if (step.focus.layer && *step.focus.layer >= n_layer)
        throw StepError{"layer", std::to_string(*step.focus.layer) + " is out of range; " +
                                     (step.model() ? where + "layers 0 to " + std::to_string(n_layer - 1)
                                                   : std::string("the single layer has only layer 0"))};
    if (step.focus.head && *step.focus.head >= n_head)
        throw StepError{"head", std::to_string(*step.focus.head) + " is out of range; " + where +
                                    "heads 0 to " + std::to_string(n_head - 1)};
    return step;
}

}  // namespace

std::string TourPaths::resolve(const std::string& path) const {
    if (path.empty() || path.front() == '/') return path;
    if (path.rfind("assets/", 0) == 0 && !assets_dir.empty()) return assets_dir + path.substr(6);
    return tour_dir.empty() ? path : tour_dir + "/" + path;
}

Tour parse_tour(const std::string& json_text, const std::string& name, const TourPaths& paths,
                const std::vector<std::string>& labs) {
    ojson doc;
    try {
        check_json_limited(json_text, name, "the tour");
        doc = ojson::parse(json_text);
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {
        throw Error(name + ": not JSON (" + json_error_reason(e.what()) + ")");
    }
    if (!doc.is_object() || !doc.contains("steps") || !doc["steps"].is_array())
        throw Error(name + ": not a tour (expected {\"attnviz_tour\": 1, \"title\": ..., \"steps\": [...]})");
    for (auto it = doc.begin(); it != doc.end(); ++it)
        if (std::find(kTourKeys.begin(), kTourKeys.end(), it.key()) == kTourKeys.end())
            throw Error(name + ": unknown key '" + it.key() + "' (known keys: " + join_names(kTourKeys) +
                        ")");
    if (doc.contains("attnviz_tour") && doc["attnviz_tour"] != 1)
        throw Error(name + ": tour format " + doc["attnviz_tour"].dump() +
                    " is not one this attnviz reads (1)");
    Tour tour;
    tour.path = name;
    if (doc.contains("title") && doc["title"].is_string()) tour.title = doc["title"].get<std::string>();
    if (doc.contains("language")) {
        if (!doc["language"].is_string() || doc["language"].get<std::string>().size() > 35)
            throw Error(name + ": \"language\" must be a language tag such as \"en\" or \"zh\"");
        tour.language = doc["language"].get<std::string>();
    }
    const ojson& steps = doc["steps"];
    if (steps.empty()) throw Error(name + ": the tour has no steps");
    if (steps.size() > std::size_t(kMaxTourSteps))
        throw Error(name + ": more than " + std::to_string(kMaxTourSteps) + " steps");
    tour.steps_in_file = int(steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const int number = int(i) + 1;
        try {
            tour.steps.push_back(parse_step(steps[i], number, paths, labs));
        } catch (const StepError& e) {
            std::string title;
            if (steps[i].is_object() && steps[i].contains("title") && steps[i]["title"].is_string())
                title = " (\"" + steps[i]["title"].get<std::string>() + "\")";
            std::string what = e.what;
            std::replace(what.begin(), what.end(), '\n', ' ');
            tour.problems.push_back(name + ": step " + std::to_string(number) + title + ": " + e.field +
                                    ": " + what + "; the tour skips this step");
        }
    }
    return tour;
}

Tour load_tour(const std::string& path, const std::vector<std::string>& labs) {
    std::string text;
    try {
        text = read_file(path, kMaxTourBytes);
    } catch (const Error& e) {
        throw Error(std::string("the tour file: ") + e.what());  // (say which file the line is about)
    }
    TourPaths paths;
    const auto slash = path.rfind('/');
    paths.tour_dir = slash == std::string::npos ? "" : path.substr(0, slash);
    try {
        paths.assets_dir = asset_dir();
    } catch (const std::exception&) {
        paths.assets_dir.clear();  // no asset folder: "assets/..." is read beside the tour
    }
    return parse_tour(text, path, paths, labs);
}

}  // namespace attnviz

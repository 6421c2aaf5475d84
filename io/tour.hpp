// Tours: a guided path through the app, as data (docs/tours.md; the shipped one is
// assets/tours/first-hour.json). A tour is a list of steps; each step names what to put on screen (a
// scene or a model, the stage, layer, head, pinned row, view, an open lab) and says in a sentence or
// two what to notice there.
//
// {
//   "attnviz_tour": 1,
//   "title": "The first hour",
//   "steps": [
//     {"title": "Words become vectors", "text": "...", "stage": "embedding"},
//     {"title": "Temperature", "text": "...", "stage": "weights", "set": {"temperature": 0.3}},
//     {"title": "The adjective head", "text": "...", "scene": "assets/scenes/story.json",
//      "named_head": "adjective_noun"},
//     {"title": "Train one yourself", "text": "...", "lab": "training"}
//   ]
// }
//
// Loading resolves every step to a Scene (the scene file, else the built-in example, with "set"
// applied) and a landing (the step's own layer/head/pin/stage/view over the scene's named head over
// the scene's own landing), and checks it: an unknown key, stage, lab or named head, a layer or head out
// of range for the scene's layer or model, or a scene that cannot be opened is ONE line naming the step
// and the field, and that step is left out of the tour; the others stay. A tour file that is not a
// tour (not JSON, no steps) is one line (thrown).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "io/scene.hpp"

namespace attnviz {

/// Largest tour file accepted (1 MiB; a tour is a few KiB) and most steps.
inline constexpr std::size_t kMaxTourBytes = 1u << 20;
inline constexpr int kMaxTourSteps = 1000;

struct TourStep {
    int number = 0;  // 1-based position in the file (what messages and the panel say)
    std::string title, text;
    std::string scene_path;  // the scene file, resolved ("" = the built-in example)
    Scene scene;             // that scene with "set" applied and "model_text" / a named head's text
    SceneFocus focus;        // where to land: the step's fields over the named head over the scene's
    std::string view;        // "", "stage", "heads", "compare" or "model"
    std::string lab;         // a lab to open ("" = none; the tour closes the lab it opened before)
    bool model() const { return !scene.model.empty(); }
};

struct Tour {
    std::string title;
    std::string language;               // the file's "language" ("zh": the panel's own words in Chinese)
    std::string path;                   // the file it came from
    std::vector<TourStep> steps;        // the steps that passed the checks, in file order
    std::vector<std::string> problems;  // one line per step left out ("tour.json: step 6 ...: head: ...")
    int steps_in_file = 0;
};

/// Where files named in a tour are found: "assets/..." in the app's asset folder (so a tour works the
/// same installed and in the build tree), other relative paths beside the tour file.
struct TourPaths {
    std::string tour_dir;    // the tour file's folder ("" = the current directory)
    std::string assets_dir;  // the app's asset folder (find_asset_dir())
    std::string resolve(const std::string& path) const;
};

/// Parses and checks a tour. `labs`: the lab names a step may open (the app's table). Throws
/// attnviz::Error with one line when the text is not a tour at all.
Tour parse_tour(const std::string& json_text, const std::string& name, const TourPaths& paths,
                const std::vector<std::string>& labs);
/// Reads `path` (at most kMaxTourBytes) and parses it, resolving paths beside it and in asset_dir().
Tour load_tour(const std::string& path, const std::vector<std::string>& labs);

}  // namespace attnviz

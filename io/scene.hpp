// Scenes: a JSON file holding a Config (texts included) plus a title and a note. Load/save round-trip
// exactly. Errors name the line and column of a JSON syntax error, and unknown keys by name.
//
// {
//   "attnviz_scene": 1,
//   "title": "Fluffy blue creature",
//   "note": "The default sentence.",
//   "config": { "text": "...", "heads": 4, "mask": "causal", "custom_mask": ["100", "110"], ... }
// }
// Keys of "config" are exactly config_keys(); values are JSON numbers, strings or booleans (the same
// text set_config_key accepts), custom_mask an array of "0"/"1" strings (1 = hidden).
#pragma once

#include <string>

#include "core/config.hpp"

namespace attnviz {

struct Scene {
    std::string title;
    std::string note;
    Config config;
};

/// Parses scene JSON. Throws attnviz::Error: "scene.json:3:14: JSON syntax error: ...",
/// "scene.json: unknown config key 'hedas' (known keys: ...)", "scene.json: heads: expected an integer".
Scene parse_scene(const std::string& json_text, const std::string& name_for_errors = "scene");
Scene load_scene(const std::string& path);
/// Pretty-printed JSON with every config key.
std::string scene_json(const Scene& scene);
/// Writes atomically. Throws attnviz::Error.
void save_scene(const std::string& path, const Scene& scene);

/// The built-in example scene (the default sentence), available without any file.
Scene default_scene();

}  // namespace attnviz

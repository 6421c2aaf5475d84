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
//
// Where the scene lands (all optional; format version 3): "layer", "head", "pin" (integers >= 0),
// "stage" (a stage name), "view" ("stage", "heads" or "model"). A scene that opens a model lands there
// once the model has loaded. "named_heads" names heads a tour (io/tour.hpp) or a teacher can point at
// without knowing their numbers: {"adjective_noun": {"layer": 1, "head": 2, "pin": 3}, ...}, each entry
// a landing of its own that may also carry the "text" the model reads there.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/config.hpp"

namespace attnviz {

/// Where a view lands: layer, head, pinned row, stage, view; unset fields leave the view as it is.
struct SceneFocus {
    std::optional<int> layer, head, pin;
    std::string stage;  // "" = unchanged
    std::string view;   // "", "stage", "heads" or "model"
    std::string text;   // named heads only: the text the model reads there ("" = the scene's)
    std::string title;  // named heads only: the title and note shown there, in place of the scene's
    std::string note;   //   ("" = the scene's)
    bool empty() const {
        return !layer && !head && !pin && stage.empty() && view.empty() && text.empty() && title.empty() &&
               note.empty();
    }
};

struct Scene {
    std::string title;
    std::string note;
    Config config;
    /// Optional: a model folder the scene opens (key "model"; relative to the scene file's folder
    /// in the file, resolved by load_scene) and the text it reads (key "model_text").
    std::string model;
    std::string model_text;
    /// Where the scene lands (top-level "layer", "head", "pin", "stage", "view").
    SceneFocus focus;
    /// Heads named for tours ("named_heads"), in file order.
    std::vector<std::pair<std::string, SceneFocus>> named_heads;
    /// The named head called `name`, or nullptr.
    const SceneFocus* named_head(const std::string& name) const;
};

/// Largest scene file accepted (16 MiB; scenes are a few KiB) and deepest JSON nesting (a scene needs 3).
inline constexpr std::size_t kMaxSceneBytes = 16u << 20;
inline constexpr int kMaxSceneDepth = 64;

/// Parses scene JSON. Throws attnviz::Error: "scene.json:3:14: JSON syntax error: ...",
/// "scene.json:2:9: JSON number out of range: number overflow parsing '1e400'",
/// "scene.json:1:65: JSON nested more than 64 levels deep; ...",
/// "scene.json: unknown config key 'hedas' (known keys: ...)", "scene.json: heads: expected an integer".
Scene parse_scene(const std::string& json_text, const std::string& name_for_errors = "scene");
Scene load_scene(const std::string& path);
/// Pretty-printed JSON with every config key.
std::string scene_json(const Scene& scene);
/// Writes atomically. Throws attnviz::Error.
void save_scene(const std::string& path, const Scene& scene);

/// The built-in example scene (the default sentence), available without any file.
Scene default_scene();

/// Every config key as a typed JSON value, in config_keys() order (what scenes store under "config"
/// and `attnviz dump` writes into manifest.json): integers and floats as numbers, enums and texts as
/// strings, booleans as booleans, custom_mask as an array of "0101" row strings.
nlohmann::ordered_json config_to_json(const Config& cfg);
/// Applies a JSON "config" object to `cfg` through set_config_key. Keys that are absent keep their
/// value. Throws attnviz::Error prefixed with `name_for_errors` on unknown keys and wrong types.
void apply_config_json(Config& cfg, const nlohmann::ordered_json& config, const std::string& name_for_errors);

}  // namespace attnviz

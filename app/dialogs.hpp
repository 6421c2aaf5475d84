// Opening and saving scenes: the File menu's dialogs (a path field with the example scenes listed;
// no native file chooser yet) and the actions behind them. Errors stay in the dialog, in one line,
// and the current scene is kept.
#pragma once

#include <string>
#include <vector>

#include "app/app_state.hpp"
#include "io/scene.hpp"

namespace attnviz::app {

/// Makes `scene` the document: config, title, note, path; the views start afresh (zoom, pins,
/// per-view choices belong to the old scene).
void load_scene_into(AppState& state, const Scene& scene, const std::string& path);
/// Saves the document to `path` atomically; reports in the status line. False on failure.
bool save_scene_to(AppState& state, const std::string& path);
/// The example scenes shipped in assets/scenes, sorted.
std::vector<std::string> example_scenes();
/// One line: newlines become spaces.
std::string one_line(std::string s);

struct FileDialogs {
    /// Draws the open / save-as popups (call every frame).
    void draw(AppState& state);

    bool open_requested = false, save_as_requested = false;
    bool open_model_requested = false;  // File ▸ Open model…
    std::string model_path_buffer;
    std::string path_buffer;
    std::string error;
    bool refocus = false;  // put the keyboard back into the path field (after Enter and an error)
    std::vector<std::string> examples;
};

}  // namespace attnviz::app

// Making a scene the document and landing where it says: the config, title, note and path; a model the
// scene opens (loaded in the background by the model session) and the layer, head, stage, pinned row
// and view it names. Used by File ▸ Open, drops, the command line, the workspace and tours. No ImGui.
#pragma once

#include <string>

#include "app/app_state.hpp"
#include "io/scene.hpp"

namespace attnviz::app {

/// Makes `scene` the document: config, title, note, path; the views start afresh (zoom, pins,
/// per-view choices belong to the old scene); then lands on the scene's own focus (land_on_focus).
void load_scene_into(AppState& state, const Scene& scene, const std::string& path);
/// Lands on `focus` of `scene` (the scene's own, or one of its named heads): a model scene opens its
/// model and lands there once it has loaded (layer, head, pinned row, stage, view; `focus.text`, else
/// the scene's model_text, is what the model reads), or at once when that model is already open; a
/// single-layer scene sets the head, pinned row, stage and view now (and closes a model on screen).
void land_on_focus(AppState& state, const Scene& scene, const SceneFocus& focus);

}  // namespace attnviz::app

// The learner's workspace survives the app: text, knobs, custom mask cells (all in the Config), the
// scene it came from, the open view, stage, head, pinned row, the open labs, the colour scale and the
// open model (its folder, text, layer and sampling knobs; it reopens in the background) are kept in
// user_config_dir()/workspace.json and restored at the next start (unless a scene is given on the
// command line, or --fresh). It is written atomically whenever it changed and at least two seconds
// passed since the last write, and on exit, so a crash or a killed window loses at most the last few
// seconds. A corrupt file is reported in one line, renamed aside (workspace.json.broken-TIME) and
// never stops the app from starting.
#pragma once

#include <string>

#include "app/app_state.hpp"

namespace attnviz::app {

/// The workspace of `state` as JSON text.
std::string workspace_json(const AppState& state);
/// Applies workspace JSON to `state` (config, scene, view, stage cursor request, labs). Throws
/// attnviz::Error with a one-line reason when the text is not a valid workspace.
void apply_workspace_json(const std::string& text, AppState& state);

class WorkspaceKeeper {
  public:
    /// `path` "" = user_config_dir()/workspace.json (none when the config directory is unusable).
    void set_path(std::string path) { path_ = std::move(path); }
    /// A batch run (--screenshot) neither restores nor saves the learner's workspace.
    void set_enabled(bool on) { enabled_ = on; }
    std::string path() const;
    /// A saved workspace file is there (whatever its state).
    bool exists() const;
    /// Restores the saved workspace into `state`. Never throws: a missing file is silent, a broken
    /// one is renamed aside and reported through state.set_status. True if something was restored.
    bool restore(AppState& state);
    /// Saves if the workspace changed and `now_s` is at least `min_interval_s` after the last save.
    void tick(const AppState& state, double now_s, double min_interval_s = 2.0);
    /// Saves now if it changed (exit). Returns an error message or "".
    std::string flush(const AppState& state);

  private:
    bool enabled_ = true;
    std::string path_;
    std::string last_saved_;
    double last_save_s_ = -1e9;
};

}  // namespace attnviz::app

// Opening and saving files: File ▸ Open scene…, Open model…, Open recent, Save scene as…, files dropped
// onto the window, and the actions behind them. The desktop's own file chooser answers when there is
// one (app/file_chooser.hpp: xdg-desktop-portal, zenity, kdialog; ATTNVIZ_FILE_CHOOSER picks one or
// `builtin`); otherwise the app's own popups ask for a path, with the recent files and the example
// scenes listed. Errors are one line (in the popup and the status bar) and the current scene is kept.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "app/app_state.hpp"
#include "app/file_chooser.hpp"
#include "app/scene_landing.hpp"
#include "io/scene.hpp"

struct GLFWwindow;

namespace attnviz::app {

/// Saves the document to `path` atomically; reports in the status line. False on failure.
bool save_scene_to(AppState& state, const std::string& path);
/// The example scenes shipped in assets/scenes, sorted.
std::vector<std::string> example_scenes();
/// One line: newlines become spaces.
std::string one_line(std::string s);

/// Opens whatever `path` is, as a user who drops it onto the window means it: a model folder (or its
/// config.json) loads as a model, a `.npy` becomes the custom mask, anything else is read as a scene.
/// Remembered in the recent files when it opens; otherwise one line in the status bar and nothing
/// changes. Returns false on failure; `error` (if given) gets the line.
bool open_path(AppState& state, const std::string& path, std::string* error = nullptr);
/// Files dropped onto the window: the first is opened (open_path); the status says if more were dropped.
void open_dropped(AppState& state, const std::vector<std::string>& paths);

/// GLFW's drop callback (app/main.cpp installs it; the GUI tests' `drop` step calls it the same way).
void on_files_dropped(GLFWwindow* window, int count, const char** paths);
/// The paths dropped since the last call (the shell opens them at the next frame).
std::vector<std::string> take_dropped_files();

/// File ▸ Open recent: the recent files and model folders, newest first (inside the File menu).
void draw_open_recent_menu(AppState& state);

struct FileDialogs {
    /// Draws the open / save-as popups and takes the file chooser's answer (call every frame).
    void draw(AppState& state);

    /// File ▸ Open scene…, Save scene as…, Open model…: the desktop's chooser, else the popups.
    void open_scene(AppState& state);
    void save_scene_as(AppState& state);
    void open_model(AppState& state);
    /// File ▸ Scene title and note…: the title and the note (shown under the formula) that a save
    /// writes into the scene; the desktop's save dialog asks only for the file.
    void edit_scene_details() { details_requested = true; }
    /// The desktop's file chooser (none: the popups only). The shell sets it at start.
    std::unique_ptr<ChooserRunner> chooser;
    bool chooser_open() const { return chooser && chooser->busy(); }
    std::string chooser_backend;  // who answered last ("portal", "zenity", ...; "" = none yet)

    bool open_requested = false, save_as_requested = false;
    bool open_model_requested = false;                   // File ▸ Open model…
    bool details_requested = false;                      // File ▸ Scene title and note…
    std::pair<std::string, std::string> details_before;  // title and note when that popup opened
    std::string model_path_buffer;
    std::string path_buffer;
    std::string error;
    bool refocus = false;  // put the keyboard back into the path field (after Enter and an error)
    std::vector<std::string> examples;

  private:
    enum Purpose { kOpenScene = 1, kSaveSceneAs, kOpenModel };
    static ChooseKind kind_of(int purpose) {
        return purpose == kSaveSceneAs ? ChooseKind::SaveFile
               : purpose == kOpenModel ? ChooseKind::OpenFolder
                                       : ChooseKind::OpenFile;
    }
    bool start_chooser(AppState& state, ChooseRequest request, Purpose purpose);
    void take_chooser_answer(AppState& state);
    // Per kind of request (open a file, save a file, choose a folder): every backend said it cannot
    // (no bus, no portal, no program; an old portal cannot choose folders), so that kind goes
    // straight to the popups from then on; the other kinds still try the desktop's chooser.
    bool chooser_unavailable_[3] = {false, false, false};
};

}  // namespace attnviz::app

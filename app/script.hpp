// Scripted input: the GUI tests' way of driving the app (`attnviz --script FILE`), after the spirit
// of Dear ImGui's test engine. A script is a list of steps; the player runs them frame by frame and
// feeds keys, text and the mouse through the app's own input path (the GLFW backend's callbacks and
// ImGui's io, exactly where a real keyboard and mouse arrive), and waits on the app's own state (the
// same JSON the --state-log writes), never on wall-clock time. A wait has a time-out only to fail a
// broken run instead of hanging it; passing never depends on how fast the machine is.
//
// Steps (one per line; '#' starts a comment; ${NAME} expands an environment variable and $name a
// value saved with `let`):
//   wait COND [&& COND ...] [timeout SECONDS]   draw frames until every COND holds (default 120 s)
//   expect COND [&& COND ...]                   fail unless every COND holds now
//   let NAME FIELD                              remember a field of the state (for $NAME later)
//   mark                                        reset the frame counters (frames, frames_updating)
//   key SPEC                                    press and release a key: Right, Return, F12, ctrl+o, ...
//   type TEXT                                   type the rest of the line as text (UTF-8)
//   move TARGET                                 put the mouse on TARGET (takes a frame)
//   click TARGET                                move there (a frame), press the button (a frame), release
//   down | up                                   press / release the left button where the mouse is
//   drag TARGET FRAMES                          with the button held, move to TARGET over FRAMES frames
//   scroll DY                                   mouse wheel (positive = away from the user)
//   frames N                                    draw N frames
//   screenshot PATH                             save the next drawn frame as PNG
//   window W H                                  resize the window to W x H pixels (as a user dragging
//                                               its corner would; the state reports window_w, window_h)
//   ui_scale S                                  set View > UI scale to S (0.5-3; state: ui_scale)
//   lab NAME | lab -NAME                        open / close a lab window, as Labs > NAME does
//                                               (state: labs, the open ones)
//   drop PATH [PATH ...]                        drop files onto the window (through the window's own
//                                               drop callback, as a file manager's drag and drop does)
//   clipboard_save PATH                         write what the clipboard holds now to PATH
//   quit                                        end the run (exit code 0)
// TARGET is `X Y` in window pixels, or `widget NAME FX FY`: the fraction (FX, FY) of the rectangle of
// widget NAME as the app reports it in its state (state["widgets"][NAME]). A widget not drawn yet is
// waited for (up to 10 s), as a hand waits to see a button before pressing it.
// COND is `FIELD OP VALUE`: FIELD a dotted path into the state JSON (plus the player's counters
// `frames` and `frames_updating`, counted since the last `mark`), OP one of == != < <= > >= ~
// (contains) ^= (starts with), VALUE a JSON literal, $NAME, or a bare word taken as a string.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

struct GLFWwindow;

namespace attnviz::app {

struct ScriptStep {
    int line = 0;
    std::string op;
    std::vector<std::string> args;  // words after op (for `type`: one element, the raw text)
};

/// Parses a script; throws attnviz::Error("script.txt:3: unknown step 'klik'") on a bad line.
std::vector<ScriptStep> parse_script(const std::string& text, const std::string& name);

/// Evaluates one condition list ("a == 1 && b ~ x") against a state; `vars` holds `let` values.
/// Throws attnviz::Error on a malformed condition.
bool eval_conditions(const std::string& conditions, const nlohmann::json& state,
                     const std::map<std::string, nlohmann::json>& vars);

class ScriptPlayer {
  public:
    ScriptPlayer(std::vector<ScriptStep> steps, std::string name);

    /// Once per frame, after the platform backend's NewFrame and before ImGui::NewFrame: runs steps
    /// until one needs a frame to pass (a key release, a wait, a drag), feeding this frame's input.
    /// `state` is the app's state JSON as of the end of the previous frame.
    void before_frame(GLFWwindow* window, const nlohmann::json& state, bool updating);
    /// A `screenshot` step asks the shell for the frame being drawn (path, else "").
    std::string take_screenshot_request();
    /// A `ui_scale` step asks the shell for a UI scale (0 when none is pending).
    float take_ui_scale_request();
    /// `lab` steps ask the shell to open or close labs ("name" or "-name", comma-separated; "" if none).
    std::string take_lab_request();

    /// After the platform backend's NewFrame: the script's mouse replaces the real pointer's.
    void apply_mouse();

    bool finished() const { return done_; }
    bool failed() const { return !failure_.empty(); }
    const std::string& failure() const { return failure_; }

  private:
    void fail(const ScriptStep& step, const std::string& why, const nlohmann::json& state);
    void widget_absent(const ScriptStep& step, const nlohmann::json& state);
    bool resolve_target(const ScriptStep& step, std::size_t first_arg, const nlohmann::json& state, float* x,
                        float* y);

    std::vector<ScriptStep> steps_;
    std::string name_;
    std::size_t pc_ = 0;
    bool done_ = false;
    std::string failure_;
    std::map<std::string, nlohmann::json> vars_;

    // Frame-spanning work in progress.
    std::vector<int> keys_to_release_;  // GLFW key codes pressed last frame
    int frames_left_ = 0;               // `frames N`
    double wait_started_ = -1;          // wall time a `wait` (or a wait for a widget) began
    int drag_frames_left_ = 0, drag_frames_total_ = 0;
    float drag_from_x_ = 0, drag_from_y_ = 0, drag_to_x_ = 0, drag_to_y_ = 0;
    bool release_button_next_ = false;
    std::string screenshot_path_;
    float ui_scale_request_ = 0;
    std::string lab_request_;

    // The virtual mouse (window pixels) and left button.
    bool mouse_known_ = false;
    float mouse_x_ = 0, mouse_y_ = 0;
    bool button_down_ = false;
    float wheel_ = 0;

    std::uint64_t frames_ = 0, frames_updating_ = 0;
    GLFWwindow* window_ = nullptr;
};

}  // namespace attnviz::app

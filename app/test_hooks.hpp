// What tests and measurements use to watch and drive the app, kept out of the main loop:
//   --state-log FILE    one JSON line (app_state.hpp state_json) each time what is shown changes
//   --frame-log FILE    one line per frame with its timing (scripts/measure_frames.sh)
//   --script FILE       scripted input fed frame by frame through the app's own input path
//   --screenshot FILE   wait until the trace is on screen, draw --frames frames, save, exit
#pragma once

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "app/app_state.hpp"
#include "app/cli_options.hpp"
#include "app/script.hpp"

struct GLFWwindow;

namespace attnviz::app {

class TestHooks {
  public:
    ~TestHooks();
    /// Opens the logs and parses the script; false with `*error` set when one cannot be.
    bool open(const Options& opt, std::string* error);

    /// A script or a screenshot keeps frames coming (no sleeping until input).
    bool drives_frames() const { return script_ != nullptr || !screenshot_.empty(); }
    /// Scripted input for this frame (after the backend's NewFrame, before ImGui::NewFrame).
    void feed_input(GLFWwindow* window, const AppState& state);
    /// After the frame is rendered, before the swap. `ready`: the trace asked for is on screen.
    /// Sets *quit (and *exit_code) when the screenshot or the script is done.
    void after_render(AppState& state, int fb_w, int fb_h, bool ready, bool* quit, int* exit_code);
    /// Frame timing, written after the swap.
    void log_frame(long frame_index, double t_s, double interval_ms, double wait_ms, double cpu_ms,
                   double swap_ms, bool updating, std::uint64_t generation, double temperature);

  private:
    std::ofstream state_log_;
    std::string last_state_line_;
    std::FILE* frame_log_ = nullptr;
    std::unique_ptr<ScriptPlayer> script_;
    std::string screenshot_;
    std::optional<std::pair<int, int>> hover_;  // --hover ROW,COL for the screenshot
    int screenshot_frames_ = 5;
    int ready_frames_ = 0;
    double start_time_ = 0;
};

}  // namespace attnviz::app

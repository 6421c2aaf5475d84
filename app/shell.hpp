// The app around the panels: the document (AppState), the compute worker that turns edited configs
// into traces, the menu bar and the fixed window layout, the dialogs, the help windows, and the
// hooks that tests and measurements use (app/test_hooks.hpp). app/main.cpp owns the window and the
// GL context and calls, every frame:
//     shell.begin_frame()   results from the worker, validation, start-up requests (before NewFrame)
//     shell.draw()          shortcuts, menu bar, panels, labs, dialogs (between NewFrame and Render)
//     shell.end_frame(...)  after rendering, before the swap: F12, screenshots, logs
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "app/app_state.hpp"
#include "app/cli_options.hpp"
#include "app/compute_worker.hpp"
#include "app/dialogs.hpp"
#include "app/fonts.hpp"
#include "app/interventions_worker.hpp"
#include "app/model_session.hpp"
#include "app/test_hooks.hpp"
#include "app/workspace.hpp"

struct GLFWwindow;

namespace attnviz::app {

class Shell {
  public:
    /// Loads settings, the workspace (unless --fresh or a scene is given) and the scene.
    /// Throws UsageError (exit 2) or attnviz::Error (exit 1) with a one-line message.
    explicit Shell(Options options);
    ~Shell();

    /// Opens the logs and the script; false (after printing one line) if one cannot be opened.
    bool open_hooks();
    /// Creates what needs the GL context (fonts, shader); call once the context exists.
    void init_graphics();

    /// Before input is read: how long the loop may sleep waiting for input. 0 = poll and draw now
    /// (a trace is computing, playing, a background answer is due); 5 ms while a test drives the
    /// frames (so the GUI does not spin and starve the compute thread); 0.25 s for a few seconds after
    /// the last input (the workspace gets saved, tooltips settle); otherwise < 0: sleep until an
    /// event — an idle window draws nothing.
    double input_wait_seconds();
    /// `wait_ms`: how long the loop slept waiting for input before this frame.
    void begin_frame(double wait_ms);
    /// After the platform backend's NewFrame, before ImGui::NewFrame: scripted input.
    void feed_input(GLFWwindow* window);
    void draw();
    /// After ImGui's draw data is rendered into the back buffer (fb_w × fb_h), before the swap.
    void end_frame(int fb_w, int fb_h);
    /// After the swap (frame timing for the frame log).
    void after_swap();
    /// Saves settings and the workspace; stops the worker. Call before the GL context goes away.
    void shutdown();

    bool should_quit() const { return quit_; }
    int exit_code() const { return exit_code_; }

    // What commands act on (app/commands.cpp).
    AppState state;
    FileDialogs dialogs;
    bool show_keys = false, show_about = false;
    bool capture_window = false;  // F12: save the window after this frame is drawn
    void request_quit() { quit_ = true; }

  private:
    void apply_startup_requests();
    // A real model: session_->frame(), and what it asks of the shell (quit, recompute, status).
    void model_frame();
    void draw_layout();
    void draw_menu_bar();
    void draw_help_windows();
    void save_window_capture(int fb_w, int fb_h);

    Options opt_;
    std::unique_ptr<ComputeWorker> worker_;
    std::unique_ptr<ModelSession> session_;
    std::unique_ptr<InterventionsWorker> interventions_;
    FontManager fonts_;
    std::uint64_t fed_trace_generation_ = ~std::uint64_t(0);  // the trace whose texts the font atlas has
    TextLanguage fed_language_ = TextLanguage::English;  // ... in which language (Chinese: also the zh texts)
    float applied_scale_ = 0;
    TestHooks hooks_;
    WorkspaceKeeper workspace_;
    Config submitted_, validated_;
    bool submitted_any_ = false, validated_any_ = false;
    bool startup_applied_ = false;
    bool compute_error_shown_ =
        false;  // the status line shows the worker's error (cleared when a trace arrives)
    bool quit_ = false;
    int exit_code_ = 0;
    std::string settings_at_start_;
    double start_time_ = 0, frame_start_ = 0, previous_frame_start_ = 0, swap_start_ = 0;
    double wait_ms_ = 0, frame_ms_avg_ = 0;
    double requested_wait_s_ = 0, last_activity_ = 0;  // see input_wait_seconds()
    long frame_index_ = 0;
};

}  // namespace attnviz::app

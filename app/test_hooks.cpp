#include "app/test_hooks.hpp"

#include <chrono>

#include <imgui.h>

#include <algorithm>
#include <cfloat>

#include "app/clock.hpp"
#include "app/panels/views_internal.hpp"
#include "app/render/heatmap_texture.hpp"
#include "io/figure.hpp"
#include "io/files.hpp"

namespace attnviz::app {

namespace {

bool save_framebuffer(const std::string& path, int fb_w, int fb_h, std::string* error) {
    Image image;
    image.width = fb_w;
    image.height = fb_h;
    render::read_framebuffer(fb_w, fb_h, &image.rgba);
    try {
        write_png(path, image);
        return true;
    } catch (const std::exception& e) {
        *error = e.what();
        return false;
    }
}

}  // namespace

TestHooks::~TestHooks() {
    if (frame_log_) std::fclose(frame_log_);
}

bool TestHooks::open(const Options& opt, std::string* error) {
    start_time_ = now_seconds();
    screenshot_ = opt.screenshot;
    screenshot_frames_ = opt.frames;
    hover_ = opt.hover;
    if (!opt.state_log.empty()) {
        state_log_.open(opt.state_log, std::ios::out | std::ios::trunc);
        if (!state_log_) {
            *error = "cannot write the state log " + opt.state_log;
            return false;
        }
    }
    // One line per frame, for scripts/measure_frames.sh:
    //   frame  t_s  interval_ms  wait_ms  cpu_ms  swap_ms  updating  generation  temperature
    // interval_ms is the wall time from the previous frame's start to this one's (what the user
    // sees: it includes the swap, waiting for events and everything else); wait_ms is the part of it
    // spent waiting for input (an idle app sleeps until the mouse moves); cpu_ms is the time from
    // the start of the frame to the swap (building the UI, colouring heatmaps, ImGui's draw calls);
    // swap_ms is glfwSwapBuffers alone (Mesa finishes the frame there: no glFinish needed).
    if (!opt.frame_log.empty()) {
        frame_log_ = std::fopen(opt.frame_log.c_str(), "w");
        if (!frame_log_) {
            *error = "cannot write the frame log " + opt.frame_log;
            return false;
        }
        std::fputs("frame\tt_s\tinterval_ms\twait_ms\tcpu_ms\tswap_ms\tupdating\tgeneration\ttemperature\n",
                   frame_log_);
    }
    if (!opt.script.empty()) {
        try {
            script_ =
                std::make_unique<ScriptPlayer>(parse_script(read_file(opt.script), opt.script), opt.script);
        } catch (const std::exception& e) {
            *error = e.what();
            return false;
        }
    }
    return true;
}

void TestHooks::feed_input(GLFWwindow* window, const AppState& state) {
    if (!script_ && !screenshot_.empty()) {
        // A screenshot shows no hover wherever the pointer happens to be, unless --hover asks for a
        // cell: then the mouse sits on that cell's centre of the heatmap (its tooltip is drawn).
        ImVec2 pos(-FLT_MAX, -FLT_MAX);
        const auto rect = state.widget_rects.find("heatmap");
        const int si = state.trace ? current_stage_index(state) : -1;
        if (hover_ && rect != state.widget_rects.end() && si >= 0) {
            const Stage& st = state.trace->stages[std::size_t(si)];
            const int r = std::min(hover_->first, st.n_rows() - 1),
                      c = std::min(hover_->second, st.n_cols() - 1);
            pos = ImVec2(rect->second.x + (float(c) + 0.5f) * rect->second.w / float(st.n_cols()),
                         rect->second.y + (float(r) + 0.5f) * rect->second.h / float(st.n_rows()));
        }
        ImGui::GetIO().MousePos = pos;
        return;
    }
    if (!script_) return;
    script_->before_frame(window, state_json(state), state.updating);
    script_->apply_mouse();
}

void TestHooks::after_render(AppState& state, int fb_w, int fb_h, bool ready, bool* quit, int* exit_code) {
    if (script_) {
        if (const float scale = script_->take_ui_scale_request(); scale > 0) state.ui_scale = scale;
        if (std::string labs = script_->take_lab_request(); !labs.empty())
            state.requested_lab += (state.requested_lab.empty() ? "" : ",") + labs;
        const std::string shot = script_->take_screenshot_request();
        std::string error;
        if (!shot.empty() && !save_framebuffer(shot, fb_w, fb_h, &error)) {
            std::fprintf(stderr, "attnviz: --script: %s\n", error.c_str());
            *exit_code = 1;
            *quit = true;
        }
        if (script_->finished()) {
            if (script_->failed()) {
                std::fprintf(stderr, "attnviz: script failed: %s\n", script_->failure().c_str());
                *exit_code = 1;
            } else {
                std::printf("attnviz: script done\n");
            }
            *quit = true;
        }
    }
    if (!screenshot_.empty()) {
        if (ready) ++ready_frames_;
        if (ready_frames_ >= screenshot_frames_) {
            std::string error;
            if (save_framebuffer(screenshot_, fb_w, fb_h, &error)) {
                std::printf("attnviz: wrote %s (%dx%d)\n", screenshot_.c_str(), fb_w, fb_h);
            } else {
                std::fprintf(stderr, "attnviz: %s\n", error.c_str());
                *exit_code = 1;
            }
            *quit = true;
        } else if (now_seconds() - start_time_ > 120.0) {
            std::fprintf(stderr, "attnviz: --screenshot: the trace was not ready after 120 s\n");
            *exit_code = 1;
            *quit = true;
        }
    }
    if (state_log_.is_open()) {
        const std::string line = state_json(state).dump();
        if (line != last_state_line_) {
            state_log_ << line << '\n';
            state_log_.flush();
            last_state_line_ = line;
        }
    }
}

void TestHooks::log_frame(long frame_index, double t_s, double interval_ms, double wait_ms, double cpu_ms,
                          double swap_ms, bool updating, std::uint64_t generation, double temperature) {
    if (!frame_log_) return;
    std::fprintf(frame_log_, "%ld\t%.4f\t%.3f\t%.3f\t%.3f\t%.3f\t%d\t%llu\t%.6g\n", frame_index, t_s,
                 interval_ms, wait_ms, cpu_ms, swap_ms, updating ? 1 : 0,
                 static_cast<unsigned long long>(generation), temperature);
    std::fflush(frame_log_);  // scripts read it while the app runs
}

}  // namespace attnviz::app

// attnviz: the desktop app, and the entry point of the headless commands.
//
//   attnviz                                  the GUI on the built-in example sentence
//   attnviz --scene FILE                     the GUI on a scene
//   attnviz --scene FILE --screenshot OUT.png [--stage NAME] [--head H] [--frames N] ...
//   attnviz dump ... / attnviz render ...    headless (io/commands.hpp), no display needed
//
// The GUI is a plain Dear ImGui main loop (after examples/example_glfw_opengl3): poll events, hand
// finished traces from the compute worker to the state, validate and submit edited configs, draw
// fixed windows laid out relative to the viewport, render, swap. Shutdown in reverse order.
#define GL_GLEXT_PROTOTYPES
#include <GL/gl.h>
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "app/app_state.hpp"
#include "app/compute_worker.hpp"
#include "app/fonts.hpp"
#include "app/key_taps.hpp"
#include "app/panels/panels.hpp"
#include "app/render/heatmap_texture.hpp"
#include "app/settings.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "io/commands.hpp"
#include "io/figure.hpp"
#include "io/files.hpp"
#include "io/scene.hpp"
#include "io/tokenize_command.hpp"

#ifndef ATTNVIZ_VERSION
#define ATTNVIZ_VERSION "0.1.0"
#endif

namespace app = attnviz::app;
using attnviz::Config;
using attnviz::Scene;

namespace {

// ------------------------------------------------------------------------------------------------
// Command line
// ------------------------------------------------------------------------------------------------

struct Options {
    std::string scene;
    std::string screenshot;
    std::string stage;
    std::optional<int> head;
    std::optional<int> pin;  // query row to pin at start (a figure for slides, the README)
    int frames = 5;
    std::vector<std::string> sets;
    std::optional<app::MainView> view;
    std::string lab;
    std::string state_log;
    std::string frame_log;
    std::optional<float> ui_scale;
    int width = 1600, height = 1000;
};

constexpr const char* kUsage =
    "usage: attnviz [--scene FILE] [--screenshot OUT.png [--stage NAME] [--head H] [--frames N]]\n"
    "               [--set KEY=VALUE ...] [--view stage|heads|compare] [--lab NAME]\n"
    "               [--state-log FILE] [--frame-log FILE] [--ui-scale S] [--size WxH]\n"
    "       attnviz dump [--scene FILE] [--set KEY=VALUE ...] --out DIR\n"
    "       attnviz render [--scene FILE] [--set KEY=VALUE ...] --stage NAME [--head H] --out FIG.png\n"
    "       attnviz tokenize --model DIR --text TEXT [--pieces]   (token ids of a real tokenizer, as JSON)\n"
    "\n"
    "Opens a window that computes one attention layer live and shows every stage as a heatmap.\n"
    "\n"
    "  --scene FILE        scene (JSON) to open; default: the built-in example sentence\n"
    "  --set KEY=VALUE     change one setting (repeatable), e.g. --set heads=2 --set mask=causal\n"
    "  --screenshot FILE   wait for the trace, draw --frames frames, save the window as PNG, exit\n"
    "  --stage NAME        start on this stage (e.g. weights, scores, Q)\n"
    "  --head H            start on this head\n"
    "  --pin ROW           start with this query row pinned (its bar chart and Q/Kᵀ views)\n"
    "  --frames N          frames to draw before the screenshot (default 5)\n"
    "  --view V            main view: stage, heads (all heads' weights) or compare (softmax vs linear)\n"
    "  --lab NAME          open a teaching lab at start-up\n"
    "  --state-log FILE    append one JSON line describing the screen each time it changes (tests)\n"
    "  --frame-log FILE    one line per frame: times, whether a trace was updating, T (measurements)\n"
    "  --ui-scale S        UI scale, 0.5 to 3 (also in View > UI scale; remembered)\n"
    "  --size WxH          window size in pixels (default 1600x1000)\n"
    "  --version           print the version\n"
    "\n"
    "Keys: ←/→ stage, ↑/↓ head, Home/End, Space play, Ctrl+E export PNG, Ctrl+O open, Ctrl+S save.\n"
    "No display? Use `attnviz dump` / `attnviz render`, or run under xvfb-run.\n";

struct UsageError {
    std::string message;
};

int parse_int(const std::string& flag, const std::string& v, int lo, int hi) {
    char* end = nullptr;
    errno = 0;
    const long x = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno != 0 || x < lo || x > hi)
        throw UsageError{flag + ": expected an integer from " + std::to_string(lo) + " to " +
                         std::to_string(hi) + ", got '" + v + "'"};
    return int(x);
}

Options parse_args(int argc, char** argv, bool* help, bool* version) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        std::string value;
        bool has_inline = false;
        if (arg.rfind("--", 0) == 0) {
            const auto eq = arg.find('=');
            if (eq != std::string::npos) {
                value = arg.substr(eq + 1);
                arg = arg.substr(0, eq);
                has_inline = true;
            }
        }
        auto need = [&]() -> std::string {
            if (has_inline) return value;
            if (i + 1 >= argc) throw UsageError{arg + " needs a value"};
            return argv[++i];
        };
        if (arg == "--help" || arg == "-h")
            *help = true;
        else if (arg == "--version")
            *version = true;
        else if (arg == "--scene")
            o.scene = need();
        else if (arg == "--screenshot")
            o.screenshot = need();
        else if (arg == "--stage")
            o.stage = need();
        else if (arg == "--head")
            o.head = parse_int("--head", need(), 0, 1 << 20);
        else if (arg == "--pin")
            o.pin = parse_int("--pin", need(), 0, 1 << 24);
        else if (arg == "--frames")
            o.frames = parse_int("--frames", need(), 1, 100000);
        else if (arg == "--set") {
            const std::string kv = need();
            if (kv.find('=') == std::string::npos)
                throw UsageError{"--set expects KEY=VALUE, got '" + kv + "'"};
            o.sets.push_back(kv);
        } else if (arg == "--view") {
            const std::string v = need();
            if (v == "stage")
                o.view = app::MainView::Stage;
            else if (v == "heads")
                o.view = app::MainView::HeadsGrid;
            else if (v == "compare")
                o.view = app::MainView::Compare;
            else
                throw UsageError{"--view: expected stage, heads or compare, got '" + v + "'"};
        } else if (arg == "--lab")
            o.lab = need();
        else if (arg == "--state-log")
            o.state_log = need();
        else if (arg == "--frame-log")
            o.frame_log = need();
        else if (arg == "--ui-scale") {
            const std::string v = need();
            char* end = nullptr;
            const double s = std::strtod(v.c_str(), &end);
            if (v.empty() || *end != '\0' || !(s >= 0.5 && s <= 3.0))
                throw UsageError{"--ui-scale: expected a number from 0.5 to 3, got '" + v + "'"};
            o.ui_scale = float(s);
        } else if (arg == "--size") {
            const std::string v = need();
            const auto x = v.find('x');
            if (x == std::string::npos)
                throw UsageError{"--size: expected WxH such as 1600x1000, got '" + v + "'"};
            o.width = parse_int("--size", v.substr(0, x), 320, 16384);
            o.height = parse_int("--size", v.substr(x + 1), 240, 16384);
        } else if (arg.rfind("-", 0) == 0) {
            throw UsageError{"unknown option " + arg + " (see attnviz --help)"};
        } else {
            throw UsageError{"unexpected argument '" + arg +
                             "' (commands are dump, render and tokenize; see attnviz --help)"};
        }
    }
    if (!o.screenshot.empty() && o.screenshot.size() < 5)
        throw UsageError{"--screenshot: expected a file name ending in .png"};
    return o;
}

std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    return s;
}

// ------------------------------------------------------------------------------------------------
// Scenes: open / save through a path-entry popup (no native dialogs on this platform)
// ------------------------------------------------------------------------------------------------

void load_scene_into(app::AppState& state, const Scene& scene, const std::string& path) {
    state.config = scene.config;
    state.scene_config = scene.config;
    state.scene_title = scene.title.empty() ? (path.empty() ? "Built-in example" : path) : scene.title;
    state.scene_note = scene.note;
    state.scene_path = path;
    state.link_head_dims = scene.config.d_k == 0 && scene.config.d_v == 0;
    state.pinned_row = -1;
}

bool save_scene_to(app::AppState& state, const std::string& path) {
    try {
        Scene scene;
        scene.title = state.scene_title;
        scene.note = state.scene_note;
        scene.config = state.config;
        attnviz::save_scene(path, scene);  // atomic: the old file survives any failure
        state.scene_path = path;
        state.scene_config = state.config;
        state.set_status("Saved scene to " + path, false);
        return true;
    } catch (const std::exception& e) {
        state.set_status(one_line(e.what()), true);
        return false;
    }
}

std::vector<std::string> example_scenes() {
    std::vector<std::string> out;
    try {
        const std::filesystem::path dir = std::filesystem::path(attnviz::asset_dir()) / "scenes";
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
            if (entry.path().extension() == ".json") out.push_back(entry.path().string());
    } catch (const std::exception&) {
    }
    std::sort(out.begin(), out.end());
    return out;
}

struct FileDialogs {
    bool open_requested = false, save_as_requested = false;
    std::string path_buffer;
    std::string error;
    bool refocus = false;  // put the keyboard back into the path field (after Enter and an error)
    std::vector<std::string> examples;

    void draw(app::AppState& state) {
        if (open_requested) {
            ImGui::OpenPopup("Open scene");
            open_requested = false;
            error.clear();
            examples = example_scenes();
            if (path_buffer.empty()) path_buffer = state.scene_path;
        }
        if (save_as_requested) {
            ImGui::OpenPopup("Save scene as");
            save_as_requested = false;
            error.clear();
            path_buffer = state.scene_path.empty() ? "my-scene.json" : state.scene_path;
        }
        const ImVec2 centre = ImGui::GetMainViewport()->GetCenter();
        const float w = ImGui::GetFontSize() * 36.0f;
        ImGui::SetNextWindowPos(centre, ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
        ImGui::SetNextWindowSize(ImVec2(w, 0));
        if (ImGui::BeginPopupModal("Open scene", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
            ImGui::TextUnformatted("Path of a scene file (.json):");
            if (ImGui::IsWindowAppearing() || refocus)
                ImGui::SetKeyboardFocusHere();  // back to the path after an error
            refocus = false;
            ImGui::SetNextItemWidth(-1);
            const bool enter = ImGui::InputText("##path", &path_buffer, ImGuiInputTextFlags_EnterReturnsTrue);
            if (!examples.empty()) {
                ImGui::TextDisabled("Examples:");
                for (const std::string& e : examples)
                    if (ImGui::Selectable(std::filesystem::path(e).filename().string().c_str()))
                        path_buffer = e;
            }
            if (!error.empty()) {
                ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
                ImGui::TextWrapped("%s", error.c_str());
                ImGui::PopStyleColor();
            }
            if (ImGui::Button("Open", ImVec2(ImGui::GetFontSize() * 6, 0)) || enter) {
                try {
                    const Scene scene = attnviz::load_scene(path_buffer);
                    load_scene_into(state, scene, path_buffer);
                    state.set_status("Opened " + path_buffer, false);
                    ImGui::CloseCurrentPopup();
                } catch (const std::exception& e) {
                    error = one_line(e.what());  // the user's current scene stays as it was
                    state.set_status(error, true);
                    refocus = true;
                }
            }
            ImGui::SameLine();
            if (ImGui::Button("Cancel", ImVec2(ImGui::GetFontSize() * 6, 0)) ||
                ImGui::IsKeyPressed(GLFW_KEY_ESCAPE))
                ImGui::CloseCurrentPopup();
            ImGui::EndPopup();
        }
        ImGui::SetNextWindowPos(centre, ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
        ImGui::SetNextWindowSize(ImVec2(w, 0));
        if (ImGui::BeginPopupModal("Save scene as", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
            ImGui::TextUnformatted("Title:");
            ImGui::SetNextItemWidth(-1);
            ImGui::InputText("##title", &state.scene_title);
            ImGui::TextUnformatted("Note (shown under the formula):");
            ImGui::InputTextMultiline("##note", &state.scene_note,
                                      ImVec2(-1, ImGui::GetTextLineHeight() * 3.5f));
            ImGui::TextUnformatted("Save to path:");
            if (ImGui::IsWindowAppearing() || refocus)
                ImGui::SetKeyboardFocusHere();  // back to the path after an error
            refocus = false;
            ImGui::SetNextItemWidth(-1);
            const bool enter = ImGui::InputText("##path", &path_buffer, ImGuiInputTextFlags_EnterReturnsTrue);
            if (!error.empty()) {
                ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
                ImGui::TextWrapped("%s", error.c_str());
                ImGui::PopStyleColor();
            }
            if (ImGui::Button("Save", ImVec2(ImGui::GetFontSize() * 6, 0)) || enter) {
                if (path_buffer.empty())
                    error = "Type a file name, e.g. my-scene.json.";
                else if (save_scene_to(state, path_buffer))
                    ImGui::CloseCurrentPopup();
                else
                    error = state.status;
            }
            ImGui::SameLine();
            if (ImGui::Button("Cancel", ImVec2(ImGui::GetFontSize() * 6, 0)) ||
                ImGui::IsKeyPressed(GLFW_KEY_ESCAPE))
                ImGui::CloseCurrentPopup();
            ImGui::EndPopup();
        }
    }
};

// ------------------------------------------------------------------------------------------------
// Look
// ------------------------------------------------------------------------------------------------

void apply_style(float scale) {
    ImGuiStyle style;
    ImGui::StyleColorsDark(&style);
    style.WindowRounding = 0.0f;
    style.FrameRounding = 3.0f;
    style.GrabRounding = 3.0f;
    style.WindowBorderSize = 1.0f;
    style.FramePadding = ImVec2(6, 4);
    style.ItemSpacing = ImVec2(8, 5);
    style.WindowPadding = ImVec2(10, 8);
    style.ScrollbarSize = 12.0f;
    style.Colors[ImGuiCol_WindowBg] = ImVec4(0.11f, 0.115f, 0.13f, 1.0f);
    style.Colors[ImGuiCol_ChildBg] = ImVec4(0, 0, 0, 0);
    style.Colors[ImGuiCol_MenuBarBg] = ImVec4(0.16f, 0.165f, 0.19f, 1.0f);
    style.Colors[ImGuiCol_Border] = ImVec4(0.25f, 0.26f, 0.30f, 1.0f);
    style.Colors[ImGuiCol_TextDisabled] = ImVec4(0.62f, 0.63f, 0.67f, 1.0f);  // readable grey
    style.ScaleAllSizes(scale);
    ImGui::GetStyle() = style;
}

// Every string the app may show from the trace, so the font atlas has its glyphs.
void feed_trace_text(app::FontManager& fonts, const attnviz::Trace& t) {
    for (const auto& s : t.stages) {
        fonts.add_text(s.title);
        fonts.add_text(s.formula);
        fonts.add_text(s.explanation);
        fonts.add_text(s.rows.name);
        fonts.add_text(s.cols.name);
    }
    for (const auto* v : {t.query_tokens.get(), t.key_tokens.get(), t.vocab.get()})
        if (v)
            for (const auto& tok : *v) fonts.add_text(tok);
}

void feed_state_text(app::FontManager& fonts, const app::AppState& state) {
    fonts.add_text(state.config.text);
    fonts.add_text(state.config.source_text);
    fonts.add_text(state.scene_title);
    fonts.add_text(state.scene_note);
    fonts.add_text(state.status);
    for (const auto& i : state.issues) fonts.add_text(i.message);
}

void draw_help_windows(bool* show_keys, bool* show_about) {
    if (*show_keys) {
        ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Appearing,
                                ImVec2(0.5f, 0.5f));
        if (ImGui::Begin("Keyboard shortcuts", show_keys,
                         ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse)) {
            if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) {
                const char* rows[][2] = {
                    {"← / →", "previous / next stage"},
                    {"Home / End", "first / last stage"},
                    {"↑ / ↓", "previous / next head"},
                    {"Space", "play / pause the step-through"},
                    {"Ctrl+E", "export the current stage as a PNG figure"},
                    {"F12", "save the whole window as PNG"},
                    {"Ctrl+O", "open a scene"},
                    {"Ctrl+S", "save the scene"},
                    {"Ctrl+Q", "quit"},
                    {"mouse wheel / drag", "zoom / pan the heatmap (double-click resets)"},
                    {"click a row", "pin that query: its weights as bars"},
                };
                for (const auto& r : rows) {
                    ImGui::TableNextRow();
                    ImGui::TableSetColumnIndex(0);
                    ImGui::PushFont(app::app_font(app::FontRole::Bold));
                    ImGui::TextUnformatted(r[0]);
                    ImGui::PopFont();
                    ImGui::TableSetColumnIndex(1);
                    ImGui::TextUnformatted(r[1]);
                }
                ImGui::EndTable();
            }
            ImGui::TextDisabled("Stage and head keys work whenever no text field is being edited.");
        }
        ImGui::End();
    }
    if (*show_about) {
        ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Appearing,
                                ImVec2(0.5f, 0.5f));
        ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 30, 0));
        if (ImGui::Begin("About attnviz", show_about,
                         ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse)) {
            ImGui::PushFont(app::app_font(app::FontRole::Large));
            ImGui::TextUnformatted("attnviz " ATTNVIZ_VERSION);
            ImGui::PopFont();
            ImGui::TextWrapped(
                "Attention, computed live. Every stage of one attention layer (tokens, embeddings, "
                "positions, Q, K, V, scores, scaling, mask, softmax, per-head outputs, concat, W_O, "
                "residual) is a heatmap with its formula; change a setting and watch every matrix "
                "change.\n\nAttention(Q, K, V) = softmax(QKᵀ / √d_k) V");
            ImGui::Spacing();
            ImGui::TextDisabled("Dear ImGui %s, GLFW %s", IMGUI_VERSION, glfwGetVersionString());
        }
        ImGui::End();
    }
}

// Finds "... something.png" in a status message (when an export function did not fill
// last_export_path).
std::string png_path_in(const std::string& status) {
    const auto end = status.rfind(".png");
    if (end == std::string::npos) return "";
    auto begin = status.rfind(' ', end);
    begin = begin == std::string::npos ? 0 : begin + 1;
    return status.substr(begin, end + 4 - begin);
}

// GLFW errors before the window exists become part of our one-line message; later ones are printed.
std::string g_glfw_error;
bool g_window_ready = false;
void glfw_error_callback(int error, const char* description) {
    g_glfw_error = description ? description : "unknown error";
    if (g_window_ready) std::fprintf(stderr, "attnviz: GLFW error %d: %s\n", error, g_glfw_error.c_str());
}

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
    // Before any thread starts: let freed n×m score/weight blocks be reused by the next trace instead
    // of being unmapped and page-faulted in again (halves the trace time; see core/memory.hpp).
    attnviz::tune_allocator_for_traces();
    // Headless commands first: they must work without a display, so no GLFW call before this.
    if (argc >= 2 && std::strcmp(argv[1], "dump") == 0) return attnviz::run_dump_command(argc - 1, argv + 1);
    if (argc >= 2 && std::strcmp(argv[1], "render") == 0)
        return attnviz::run_render_command(argc - 1, argv + 1);
    if (argc >= 2 && std::strcmp(argv[1], "tokenize") == 0)
        return attnviz::run_tokenize_command(argc - 1, argv + 1);

    Options opt;
    bool help = false, version = false;
    try {
        opt = parse_args(argc, argv, &help, &version);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "attnviz: %s\n", e.message.c_str());
        return 2;
    }
    if (help) {
        std::fputs(kUsage, stdout);
        return 0;
    }
    if (version) {
        std::printf("attnviz %s\n", ATTNVIZ_VERSION);
        return 0;
    }

    app::AppState state;
    app::load_settings(state);
    if (opt.ui_scale) state.ui_scale = *opt.ui_scale;
    try {
        const Scene scene = opt.scene.empty() ? attnviz::default_scene() : attnviz::load_scene(opt.scene);
        load_scene_into(state, scene, opt.scene);
        for (const std::string& kv : opt.sets) {
            const auto eq = kv.find('=');
            attnviz::set_config_key(state.config, kv.substr(0, eq), kv.substr(eq + 1));
        }
        state.link_head_dims = state.config.d_k == 0 && state.config.d_v == 0;
    } catch (const attnviz::ConfigError& e) {
        std::fprintf(stderr, "attnviz: %s\n", one_line(e.what()).c_str());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "attnviz: %s\n", one_line(e.what()).c_str());
        return 1;
    }
    if (opt.view) state.view = *opt.view;
    state.requested_lab = opt.lab;

    std::ofstream state_log;
    if (!opt.state_log.empty()) {
        state_log.open(opt.state_log, std::ios::out | std::ios::trunc);
        if (!state_log) {
            std::fprintf(stderr, "attnviz: cannot write the state log %s\n", opt.state_log.c_str());
            return 2;
        }
    }
    // One line per frame, for scripts/measure_frames.sh and tests/gui/responsiveness_test.sh:
    //   frame  t_s  interval_ms  wait_ms  cpu_ms  swap_ms  updating  generation  temperature
    // interval_ms is the wall time from the previous frame's start to this one's (what the user
    // sees: it includes the swap, waiting for events and everything else); wait_ms is the part of it
    // spent waiting for input (an idle app sleeps until the mouse moves); cpu_ms is the time from
    // the start of the frame to the swap (building the UI, colouring heatmaps, ImGui's draw calls);
    // swap_ms is glfwSwapBuffers alone (Mesa finishes the frame there: no glFinish needed).
    std::FILE* frame_log = nullptr;
    if (!opt.frame_log.empty()) {
        frame_log = std::fopen(opt.frame_log.c_str(), "w");
        if (!frame_log) {
            std::fprintf(stderr, "attnviz: cannot write the frame log %s\n", opt.frame_log.c_str());
            return 2;
        }
        std::fputs("frame\tt_s\tinterval_ms\twait_ms\tcpu_ms\tswap_ms\tupdating\tgeneration\ttemperature\n",
                   frame_log);
    }

    // --- window and GL context ------------------------------------------------------------------
    glfwSetErrorCallback(glfw_error_callback);
    if (!glfwInit()) {
        std::fprintf(stderr,
                     "attnviz: cannot open a window (%s). For files without a display use `attnviz dump` or "
                     "`attnviz render`, or run the GUI under a virtual display: "
                     "xvfb-run -a -s '-screen 0 1600x1000x24' attnviz\n",
                     g_glfw_error.empty() ? "no display found" : g_glfw_error.c_str());
        return 1;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    GLFWwindow* window = glfwCreateWindow(opt.width, opt.height, "attnviz", nullptr, nullptr);
    if (!window) {
        std::fprintf(stderr,
                     "attnviz: cannot create an OpenGL 3.3 window (%s). For files without a display use "
                     "`attnviz dump` or `attnviz render`, or try xvfb-run -a -s '-screen 0 1600x1000x24' "
                     "attnviz\n",
                     g_glfw_error.c_str());
        glfwTerminate();
        return 1;
    }
    glfwMakeContextCurrent(window);
    g_window_ready = true;
    glfwFocusWindow(window);  // ImGui 1.86 reads the mouse only while the window has focus
    glfwSwapInterval(opt.screenshot.empty() ? 1 : 0);

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    // imgui.ini lives with the user's settings, not in whatever directory attnviz was started from.
    static std::string ini_path;
    try {
        ini_path = attnviz::user_config_dir() + "/imgui.ini";
        io.IniFilename = ini_path.c_str();
    } catch (const std::exception&) {
        io.IniFilename = nullptr;  // no config dir: simply don't persist window state
    }
    apply_style(state.ui_scale);
    // Our key callback first: ImGui's backend chains to it, so quick taps are never lost.
    glfwSetKeyCallback(window, [](GLFWwindow*, int key, int, int action, int mods) {
        app::record_key_event(key, action, mods);
    });
    ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 330 core");

    std::string shader_error;
    if (!attnviz::render::init_heatmap_shader(&shader_error))
        state.set_status("Heatmap shader failed: " + one_line(shader_error), true);

    app::FontManager fonts;
    fonts.set_scale(state.ui_scale);
    // Texts of the app's own UI that are outside the base glyph ranges would be added here; the
    // help texts use only Latin, Greek and math symbols, which the base ranges cover.
    float applied_scale = state.ui_scale;

    app::ComputeWorker worker(state.compute_threads);
    Config submitted;  // the last config sent to the worker
    bool submitted_any = false;
    Config validated;  // the config `state.issues` belongs to
    bool validated_any = false;

    FileDialogs dialogs;
    bool show_keys = false, show_about = false, show_scale = false;
    bool quit = false;
    bool window_capture_requested = false;  // F12
    int ready_frames = 0;
    bool startup_applied = false;
    const double start_time = now_seconds();
    std::string last_log_line;
    int exit_code = 0;
    double frame_ms_avg = 0;
    double previous_frame_start = 0;  // for the frame log's interval
    long frame_index = 0;
    const std::string settings_at_start = app::settings_json(state);  // saved again only if changed

    while (!glfwWindowShouldClose(window) && !quit) {
        // Idle politely: with nothing animating, wait for input (the machine is shared), but keep
        // polling while a trace is computing, playing, or a screenshot is pending.
        const bool busy = state.updating || state.playing || state.redraw_soon || !opt.screenshot.empty();
        state.redraw_soon = false;
        const double wait_start = now_seconds();
        if (busy)
            glfwPollEvents();
        else
            glfwWaitEventsTimeout(0.1);
        double frame_start = now_seconds();
        const double interval_ms =
            previous_frame_start > 0 ? (frame_start - previous_frame_start) * 1000.0 : 0.0;
        previous_frame_start = frame_start;
        const double wait_ms = (frame_start - wait_start) * 1000.0;
        bool frame_was_updating = state.updating;  // a trace was being computed during this frame

        // --- results from the worker --------------------------------------------------------------
        if (auto result = worker.poll()) {
            if (result->ok()) {
                app::accept_trace(state, result->trace, result->ms);
                feed_trace_text(fonts, *state.trace);
                if (state.status_is_error) state.set_status("", false);  // the error is resolved
            } else {
                state.set_status(one_line(result->error), true);
            }
        }

        // --- validate and submit edits (only valid configs are computed) --------------------------
        if (!validated_any || state.config != validated) {
            try {
                state.issues = attnviz::validate(state.config);
            } catch (const std::exception& e) {
                state.issues = {{"text", one_line(e.what())}};
            }
            validated = state.config;
            validated_any = true;
            if (state.issues.empty() && (!submitted_any || state.config != submitted)) {
                worker.submit(state.config);
                submitted = state.config;
                submitted_any = true;
            }
        }
        if (worker.threads() != state.compute_threads) {
            worker.set_threads(state.compute_threads);
        }
        state.updating = worker.busy();
        frame_was_updating = frame_was_updating || state.updating;

        // --- start-up requests that need the first trace (--stage, --head) -----------------------
        if (!startup_applied && state.trace) {
            startup_applied = true;
            if (!opt.stage.empty() && !app::select_stage(state, opt.stage)) {
                std::string names;
                for (const auto& n : state.trace->stage_names()) names += (names.empty() ? "" : ", ") + n;
                std::fprintf(stderr, "attnviz: --stage: this trace has no stage '%s' (stages: %s)\n",
                             opt.stage.c_str(), names.c_str());
                exit_code = 2;
                break;
            }
            if (opt.head) {
                if (*opt.head >= state.trace->heads) {
                    std::fprintf(stderr,
                                 "attnviz: --head: %d is out of range; this layer has heads 0 to %d\n",
                                 *opt.head, state.trace->heads - 1);
                    exit_code = 2;
                    break;
                }
                state.head = *opt.head;
            }
            if (opt.pin) {
                if (*opt.pin >= state.trace->n) {
                    std::fprintf(stderr,
                                 "attnviz: --pin: row %d is out of range; this text has rows 0 to %d\n",
                                 *opt.pin, state.trace->n - 1);
                    exit_code = 2;
                    break;
                }
                state.pinned_row = *opt.pin;
            }
        }

        // --- fonts and scale (between frames, never inside one) ---------------------------------
        feed_state_text(fonts, state);
        if (state.ui_scale != applied_scale) {
            apply_style(state.ui_scale);
            fonts.set_scale(state.ui_scale);
            applied_scale = state.ui_scale;
        }
        if (fonts.needs_rebuild()) {
            fonts.rebuild();
            ImGui_ImplOpenGL3_DestroyFontsTexture();
            ImGui_ImplOpenGL3_CreateFontsTexture();
            frame_start = now_seconds();  // a one-off rebuild is not the frame's cost
        }

        app::begin_frame_key_taps();
        ImGui_ImplOpenGL3_NewFrame();
        ImGui_ImplGlfw_NewFrame();
        ImGui::NewFrame();

        // --- shortcuts ---------------------------------------------------------------------------
        if (app::key_tapped(GLFW_KEY_E, GLFW_MOD_CONTROL, false)) {
            if (state.trace) app::export_current_png(state);
        }
        // F12: the whole window, captured after this frame is drawn (before the swap).
        if (app::key_tapped(GLFW_KEY_F12, 0, false)) window_capture_requested = true;
        if (app::key_tapped(GLFW_KEY_O, GLFW_MOD_CONTROL, false)) dialogs.open_requested = true;
        if (app::key_tapped(GLFW_KEY_S, GLFW_MOD_CONTROL, false)) {
            if (state.scene_path.empty())
                dialogs.save_as_requested = true;
            else
                save_scene_to(state, state.scene_path);
        }
        if (app::key_tapped(GLFW_KEY_Q, GLFW_MOD_CONTROL, false)) quit = true;

        // --- menu bar ----------------------------------------------------------------------------
        if (ImGui::BeginMainMenuBar()) {
            if (ImGui::BeginMenu("File")) {
                if (ImGui::MenuItem("Open scene…", "Ctrl+O")) dialogs.open_requested = true;
                if (ImGui::MenuItem("Save scene", "Ctrl+S")) {
                    if (state.scene_path.empty())
                        dialogs.save_as_requested = true;
                    else
                        save_scene_to(state, state.scene_path);
                }
                if (ImGui::MenuItem("Save scene as…")) dialogs.save_as_requested = true;
                ImGui::Separator();
                if (ImGui::MenuItem("Export current stage as PNG", "Ctrl+E", false, state.trace != nullptr))
                    app::export_current_png(state);
                if (ImGui::MenuItem("Reset to the scene's settings")) {
                    state.config = state.scene_config;
                    state.link_head_dims = state.config.d_k == 0 && state.config.d_v == 0;
                }
                if (ImGui::MenuItem("Built-in example")) {
                    load_scene_into(state, attnviz::default_scene(), "");
                }
                ImGui::Separator();
                if (ImGui::MenuItem("Quit", "Ctrl+Q")) quit = true;
                ImGui::EndMenu();
            }
            if (ImGui::BeginMenu("View")) {
                if (ImGui::MenuItem("Stage", nullptr, state.view == app::MainView::Stage))
                    state.view = app::MainView::Stage;
                if (ImGui::MenuItem("Heads grid", nullptr, state.view == app::MainView::HeadsGrid))
                    state.view = app::MainView::HeadsGrid;
                if (ImGui::MenuItem("Compare softmax / linear", nullptr,
                                    state.view == app::MainView::Compare))
                    state.view = app::MainView::Compare;
                ImGui::Separator();
                if (ImGui::BeginMenu("UI scale")) {
                    for (float s : {0.75f, 1.0f, 1.25f, 1.5f, 2.0f}) {
                        char label[16];
                        std::snprintf(label, sizeof label, "%.0f%%", double(s * 100));
                        if (ImGui::MenuItem(label, nullptr, std::fabs(state.ui_scale - s) < 1e-3f))
                            state.ui_scale = s;
                    }
                    ImGui::EndMenu();
                }
                ImGui::EndMenu();
            }
            if (ImGui::BeginMenu("Labs")) {
                app::draw_labs_menu(state);
                ImGui::EndMenu();
            }
            if (ImGui::BeginMenu("Help")) {
                if (ImGui::MenuItem("Keyboard shortcuts")) show_keys = true;
                if (ImGui::MenuItem("About attnviz")) show_about = true;
                ImGui::EndMenu();
            }
            // The scene's title, on the right of the menu bar.
            const std::string title =
                state.scene_title + (state.config != state.scene_config ? "  (modified)" : "");
            const float tw = ImGui::CalcTextSize(title.c_str()).x;
            ImGui::SameLine(std::max(ImGui::GetCursorPosX() + 20.0f, ImGui::GetWindowWidth() - tw - 16.0f));
            ImGui::TextDisabled("%s", title.c_str());
            ImGui::EndMainMenuBar();
        }
        (void)show_scale;

        // --- layout: fixed windows relative to the work area (below the menu bar) ------------------
        const ImGuiViewport* vp = ImGui::GetMainViewport();
        const ImVec2 wp = vp->WorkPos, ws = vp->WorkSize;
        const float s = state.ui_scale;
        const ImGuiStyle& style = ImGui::GetStyle();
        const float line = ImGui::GetTextLineHeight();
        const float status_h = ImGui::GetFrameHeight() + style.WindowPadding.y * 2.0f;
        const float left_w = std::min(380.0f * s, ws.x * 0.3f);
        const float right_w = std::min(390.0f * s, ws.x * 0.3f);
        const float strip_h = style.WindowPadding.y * 2.0f + ImGui::GetFrameHeight() + style.ItemSpacing.y +
                              (line + 2.0f) + (line + (13.0f * s + 1.0f) * 2.0f + 7.5f) +
                              style.ScrollbarSize + 6.0f;
        const float body_h = ws.y - status_h;
        const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                       ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                                       ImGuiWindowFlags_NoBringToFrontOnFocus;
        auto place = [](float x, float y, float w, float h) {
            ImGui::SetNextWindowPos(ImVec2(x, y));
            ImGui::SetNextWindowSize(ImVec2(std::max(w, 1.0f), std::max(h, 1.0f)));
        };

        // The pipeline strip spans the whole width: it is the map of the computation.
        place(wp.x, wp.y + strip_h, left_w, body_h - strip_h);
        if (ImGui::Begin("Controls", nullptr, fixed)) app::draw_controls_panel(state);
        ImGui::End();

        place(wp.x, wp.y, ws.x, strip_h);
        if (ImGui::Begin("Pipeline", nullptr,
                         fixed | ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoScrollbar))
            app::draw_pipeline_strip(state);
        ImGui::End();

        const float centre_w = ws.x - left_w - right_w;
        place(wp.x + left_w, wp.y + strip_h, centre_w, body_h - strip_h);
        if (ImGui::Begin("##main", nullptr,
                         fixed | ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoScrollbar |
                             ImGuiWindowFlags_NoScrollWithMouse))
            app::draw_main_view(state);
        ImGui::End();

        const float explain_h = (body_h - strip_h) * 0.64f;
        place(wp.x + ws.x - right_w, wp.y + strip_h, right_w, explain_h);
        if (ImGui::Begin("Explanation", nullptr, fixed)) app::draw_formula_panel(state);
        ImGui::End();
        place(wp.x + ws.x - right_w, wp.y + strip_h + explain_h, right_w, body_h - strip_h - explain_h);
        if (ImGui::Begin("Export", nullptr, fixed)) app::draw_export_panel(state);
        ImGui::End();

        place(wp.x, wp.y + body_h, ws.x, status_h);
        if (ImGui::Begin("##status", nullptr,
                         fixed | ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoScrollbar |
                             ImGuiWindowFlags_NoScrollWithMouse))
            app::draw_status_bar(state);
        ImGui::End();

        app::draw_labs(state);
        dialogs.draw(state);
        draw_help_windows(&show_keys, &show_about);

        // An export may have reported its path only in the status line.
        if (!state.status_is_error && state.last_export_path.empty()) {
            const std::string p = png_path_in(state.status);
            if (!p.empty()) state.last_export_path = p;
        }

        // --- render ------------------------------------------------------------------------------
        ImGui::Render();
        app::end_frame_key_taps();
        int fb_w = 0, fb_h = 0;
        glfwGetFramebufferSize(window, &fb_w, &fb_h);
        glViewport(0, 0, fb_w, fb_h);
        glClearColor(0.08f, 0.08f, 0.09f, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
        ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

        // The status bar's frame time: the previous frame's whole cost including its swap (the
        // interval between frame starts) but not the time spent asleep waiting for input, so an idle
        // window does not read as 10 fps.
        if (interval_ms > 0) {
            const double cost_ms = std::max(0.0, interval_ms - wait_ms);
            frame_ms_avg = frame_ms_avg == 0 ? cost_ms : 0.9 * frame_ms_avg + 0.1 * cost_ms;
        }
        state.frame_ms = frame_ms_avg;

        // --- F12: save the whole window into the export folder ----------------------------------
        if (window_capture_requested) {
            window_capture_requested = false;
            attnviz::Image image;
            image.width = fb_w;
            image.height = fb_h;
            attnviz::render::read_framebuffer(fb_w, fb_h, &image.rgba);
            const std::string path =
                state.export_dir + "/window_" + attnviz::timestamp_for_filename() + ".png";
            try {
                attnviz::make_dirs(state.export_dir);
                attnviz::write_png(path, image);
                state.last_export_path = path;
                state.set_status("Saved the window to " + path, false);
            } catch (const std::exception& e) {
                state.set_status(one_line(e.what()), true);
            }
        }

        // --- screenshot mode: the frame is complete, read it back before the swap -----------------
        if (!opt.screenshot.empty()) {
            // Ready: the trace for the final config is on screen, or there is none because the
            // config is invalid / failed (then the screenshot shows the explanation).
            const bool ready =
                !state.updating &&
                (state.trace ? startup_applied : (!state.issues.empty() || state.status_is_error));
            if (ready) ++ready_frames;
            if (ready_frames >= opt.frames) {
                attnviz::Image image;
                image.width = fb_w;
                image.height = fb_h;
                attnviz::render::read_framebuffer(fb_w, fb_h, &image.rgba);
                try {
                    attnviz::write_png(opt.screenshot, image);
                    std::printf("attnviz: wrote %s (%dx%d)\n", opt.screenshot.c_str(), fb_w, fb_h);
                } catch (const std::exception& e) {
                    std::fprintf(stderr, "attnviz: %s\n", one_line(e.what()).c_str());
                    exit_code = 1;
                }
                quit = true;
            } else if (now_seconds() - start_time > 120.0) {
                std::fprintf(stderr, "attnviz: --screenshot: the trace was not ready after 120 s\n");
                exit_code = 1;
                quit = true;
            }
        }

        // --- state log (GUI tests read it) ------------------------------------------------------
        if (state_log.is_open()) {
            const std::string line_json = app::state_json_line(state);
            if (line_json != last_log_line) {
                state_log << line_json << '\n';
                state_log.flush();
                last_log_line = line_json;
            }
        }

        const double swap_start = now_seconds();
        glfwSwapBuffers(window);
        if (frame_log) {
            const double t = now_seconds();
            std::fprintf(frame_log, "%ld\t%.4f\t%.3f\t%.3f\t%.3f\t%.3f\t%d\t%llu\t%.6g\n", frame_index,
                         t - start_time, interval_ms, wait_ms, (swap_start - frame_start) * 1000.0,
                         (t - swap_start) * 1000.0, frame_was_updating ? 1 : 0,
                         static_cast<unsigned long long>(state.trace_generation), state.config.temperature);
            std::fflush(frame_log);  // scripts read it while the app runs
        }
        ++frame_index;
    }
    if (frame_log) std::fclose(frame_log);

    if (app::settings_json(state) != settings_at_start) {
        const std::string err = app::save_settings(state);
        if (!err.empty()) std::fprintf(stderr, "attnviz: settings not saved: %s\n", err.c_str());
    }

    // Reverse order of creation: worker (may hold traces), GPU resources, ImGui, window.
    worker.shutdown();
    app::shutdown_views();
    attnviz::render::shutdown_heatmap_shader();
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(window);
    glfwTerminate();
    return exit_code;
}

// attnviz: the desktop app, and the entry point of the headless commands.
//
//   attnviz                                  the GUI (the last workspace; a first launch: the tour)
//   attnviz --tour FILE [--step K]           the GUI on a guided tour (io/tour.hpp)
//   attnviz --scene FILE                     the GUI on a scene
//   attnviz --scene FILE --screenshot OUT.png [--stage NAME] [--head H] [--frames N] ...
//   attnviz dump ... / attnviz render ...    headless (io/commands.hpp), no display needed
//
// A plain Dear ImGui main loop, after examples/example_glfw_opengl3/main.cpp: create the window and
// the GL context, then every frame poll events, start the frame, draw, render, swap; shut down in
// reverse order. What happens inside a frame is the Shell's (app/shell.hpp); the command line is
// app/cli_options.hpp; the commands, dialogs, test hooks and workspace each have their own file.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "app/cli_options.hpp"
#include "app/clock.hpp"
#include "app/key_taps.hpp"
#include "app/panels/panels.hpp"
#include "app/render/frame.hpp"
#include "app/shell.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "io/commands.hpp"
#include "io/files.hpp"
#include "io/intervention_commands.hpp"
#include "io/model_commands.hpp"
#include "io/platform.hpp"
#include "io/tokenize_command.hpp"
#include "io/train_commands.hpp"

namespace app = attnviz::app;
using app::now_seconds;

namespace {

// GLFW errors before the window exists become part of our one-line message; later ones are printed.
std::string g_glfw_error;
bool g_window_ready = false;
void glfw_error_callback(int error, const char* description) {
    g_glfw_error = description ? description : "unknown error";
    if (g_window_ready) std::fprintf(stderr, "attnviz: GLFW error %d: %s\n", error, g_glfw_error.c_str());
}

}  // namespace

int main(int argc_in, char** argv_in) {
    // UTF-8 arguments on every system (on Windows from the UTF-16 command line; io/platform.hpp).
    attnviz::platform::Utf8Args args(argc_in, argv_in);
    const int argc = args.argc();
    char** argv = args.argv();
    // Before any thread starts: let freed n×m score/weight blocks be reused by the next trace instead
    // of being unmapped and page-faulted in again (halves the trace time; see core/memory.hpp).
    attnviz::tune_allocator_for_traces();
    // Headless commands first: they must work without a display, so no GLFW call before this.
    if (argc >= 2 && std::strcmp(argv[1], "dump") == 0) return attnviz::run_dump_command(argc - 1, argv + 1);
    if (argc >= 2 && std::strcmp(argv[1], "render") == 0)
        return attnviz::run_render_command(argc - 1, argv + 1);
    if (argc >= 2 && std::strcmp(argv[1], "tokenize") == 0)
        return attnviz::run_tokenize_command(argc - 1, argv + 1);
    if (argc >= 2 && std::strcmp(argv[1], "generate") == 0)
        return attnviz::run_generate_command(argc - 1, argv + 1);
    if (argc >= 2 && std::strcmp(argv[1], "train") == 0)
        return attnviz::run_train_command(argc - 1, argv + 1);
    if (argc >= 2 && std::strcmp(argv[1], "grad") == 0) return attnviz::run_grad_command(argc - 1, argv + 1);
    if (argc >= 2 && std::strcmp(argv[1], "ablate") == 0)
        return attnviz::run_ablate_command(argc - 1, argv + 1);
    if (argc >= 2 && std::strcmp(argv[1], "patch") == 0)
        return attnviz::run_patch_command(argc - 1, argv + 1);
    if (argc >= 2 && std::strcmp(argv[1], "attribute") == 0)
        return attnviz::run_attribute_command(argc - 1, argv + 1);

    app::Options opt;
    bool help = false, version = false;
    try {
        opt = app::parse_args(argc, argv, &help, &version);
    } catch (const app::UsageError& e) {
        std::fprintf(stderr, "attnviz: %s\n", e.message.c_str());
        return 2;
    }
    if (help) {
        std::fputs(app::kUsage, stdout);
        return 0;
    }
    if (version) {
        std::fputs(app::version_text().c_str(), stdout);
        return 0;
    }
    const int width = opt.width, height = opt.height;
    const bool vsync = opt.screenshot.empty() && opt.script.empty();

    std::unique_ptr<app::Shell> shell;
    try {
        shell = std::make_unique<app::Shell>(opt);
    } catch (const app::UsageError& e) {
        std::fprintf(stderr, "attnviz: %s\n", e.message.c_str());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "attnviz: %s\n", app::one_line(e.what()).c_str());
        return 1;
    }
    if (!shell->open_hooks()) return 2;

    // --- window and GL context ----------------------------------------------------------------------
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
    GLFWwindow* window = glfwCreateWindow(width, height, "attnviz", nullptr, nullptr);
    if (!window) {
        std::fprintf(
            stderr,
            "attnviz: cannot create an OpenGL 3.3 window (%s). For files without a display use "
            "`attnviz dump` or `attnviz render`, or try xvfb-run -a -s '-screen 0 1600x1000x24' attnviz\n",
            g_glfw_error.c_str());
        glfwTerminate();
        return 1;
    }
    glfwMakeContextCurrent(window);
    if (const char* missing = nullptr; !attnviz::render::load_gl_functions(&missing)) {
        std::fprintf(stderr, "attnviz: this OpenGL driver lacks %s (OpenGL 3.3 is needed)\n", missing);
        glfwTerminate();
        return 1;
    }
    g_window_ready = true;
    attnviz::platform::release_own_console();  // the window is open: a console of our own only
    glfwFocusWindow(window);                   // ImGui 1.86 reads the mouse only while the window has focus
    glfwSwapInterval(vsync ? 1 : 0);

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
    // Our key callback first: ImGui's backend chains to it, so quick taps are never lost.
    glfwSetKeyCallback(window, [](GLFWwindow*, int key, int, int action, int mods) {
        app::record_key_event(key, action, mods);
    });
    // Files dropped onto the window (a scene, a .npy mask, a model folder) open at the next frame.
    glfwSetDropCallback(window, app::on_files_dropped);
    ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 330 core");
    shell->init_graphics();

    // --- the loop -----------------------------------------------------------------------------------
    while (!glfwWindowShouldClose(window) && !shell->should_quit()) {
        const double wait_start = now_seconds();
        const double wait = shell->input_wait_seconds();
        if (wait < 0)
            glfwWaitEvents();  // idle: no redraw until something happens
        else if (wait > 0)
            glfwWaitEventsTimeout(wait);
        else
            glfwPollEvents();
        shell->begin_frame((now_seconds() - wait_start) * 1000.0);

        ImGui_ImplOpenGL3_NewFrame();
        ImGui_ImplGlfw_NewFrame();
        shell->feed_input(window);  // scripted input (tests), through the same callbacks and io
        app::begin_frame_key_taps();
        ImGui::NewFrame();
        shell->draw();
        ImGui::Render();
        app::end_frame_key_taps();

        int fb_w = 0, fb_h = 0;
        glfwGetFramebufferSize(window, &fb_w, &fb_h);
        attnviz::render::begin_gl_frame(fb_w, fb_h);
        attnviz::render::draw_imgui(ImGui::GetDrawData());
        shell->end_frame(fb_w, fb_h);
        glfwSwapBuffers(window);
        shell->after_swap();
    }

    // Reverse order of creation: the shell (worker, GPU resources), ImGui, window.
    const int exit_code = shell->exit_code();
    attnviz::app::release_labs();
    shell->shutdown();
    shell.reset();
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(window);
    glfwTerminate();
    return exit_code;
}

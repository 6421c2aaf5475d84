#include "app/commands.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <cstring>

#include "app/clipboard.hpp"
#include "app/fonts.hpp"
#include "app/key_taps.hpp"
#include "app/panels/panels.hpp"
#include "app/shell.hpp"
#include "app/tour_player.hpp"
#include "io/scene.hpp"
#include "io/tour.hpp"

namespace attnviz::app {

namespace {

void save_scene(Shell& s) {
    if (s.state.scene_path.empty())
        s.dialogs.save_scene_as(s.state);
    else
        save_scene_to(s.state, s.state.scene_path);
}

void set_layer(Shell& s, int delta) {
    if (!s.state.model.active) return;
    s.state.model.layer = std::clamp(s.state.model.layer + delta, 0, std::max(0, s.state.model.n_layer - 1));
}

void set_head(Shell& s, int delta) {
    if (!s.state.trace) return;
    s.state.head = std::clamp(s.state.head + delta, 0, std::max(0, s.state.trace->heads - 1));
}

void toggle_play(Shell& s) {
    s.state.playing = !s.state.playing;
    s.state.play_last_advance = ImGui::GetTime();
    if (s.state.playing && stage_index(s.state) >= stage_count(s.state) - 1)
        set_stage_index(s.state, 0);  // replay
}

// Help ▸ Tour: a tour left unfinished (its panel closed to explore) reopens on the step the learner
// was on; otherwise the shipped tour starts again at step 1.
void open_tour(Shell& s) {
    AppState& st = s.state;
    const bool unfinished = st.tour.tour && !st.tour.open && st.tour.step > 0 &&
                            st.tour.step + 1 < int(st.tour.tour->steps.size());
    if (unfinished) {
        st.tour.open = true;
        return;
    }
    const std::string file = st.tour.tour ? st.tour.tour->path : default_tour_path();
    start_tour(st, file, 0, lab_names());
}

bool has_trace(const Shell& s) {
    return s.state.trace != nullptr;
}

std::vector<Command> make_commands() {
    constexpr int C = GLFW_MOD_CONTROL;
    return {
        // File
        {"open_scene", "File", "Open scene…", GLFW_KEY_O, C, false, true, "Ctrl+O", "open a scene",
         [](Shell& s) { s.dialogs.open_scene(s.state); }, nullptr},
        {"open_model", "File", "Open model…", GLFW_KEY_M, C, false, true, "Ctrl+M",
         "open a real model (a Hugging Face folder)", [](Shell& s) { s.dialogs.open_model(s.state); },
         nullptr},
        {"single_layer", "File", "Back to the single layer", 0, 0, false, true, "", "",
         [](Shell& s) { s.state.model.close_request = true; },
         [](const Shell& s) { return s.state.model.active; }},
        {"save_scene", "File", "Save scene", GLFW_KEY_S, C, false, true, "Ctrl+S", "save the scene",
         save_scene, nullptr},
        {"save_scene_as", "File", "Save scene as…", GLFW_KEY_S, C | GLFW_MOD_SHIFT, false, true,
         "Ctrl+Shift+S", "save the scene under a new name",
         [](Shell& s) { s.dialogs.save_scene_as(s.state); }, nullptr},
        {"scene_details", "File", "Scene title and note…", 0, 0, false, true, "", "",
         [](Shell& s) { s.dialogs.edit_scene_details(); }, nullptr},
        {"export_png", "File", "Export current stage as PNG", GLFW_KEY_E, C, false, true, "Ctrl+E",
         "export the current stage as a PNG figure", [](Shell& s) { export_current_png(s.state); },
         has_trace},
        {"copy_matrix", "File", "Copy matrix as TSV", GLFW_KEY_C, C | GLFW_MOD_SHIFT, false, true,
         "Ctrl+Shift+C", "copy the current matrix with token labels (pastes into a spreadsheet)",
         [](Shell& s) { copy_current_matrix(s.state); }, has_trace},
        {"save_window", "File", "Save the window as PNG", GLFW_KEY_F12, 0, false, true, "F12",
         "save the whole window as PNG", [](Shell& s) { s.capture_window = true; }, nullptr},
        {"reset_scene", "File", "Reset to the scene's settings", 0, 0, false, true, "", "",
         [](Shell& s) {
             s.state.config = s.state.scene_config;
             s.state.link_head_dims = s.state.config.d_k == 0 && s.state.config.d_v == 0;
         },
         nullptr},
        {"builtin_example", "File", "Built-in example", 0, 0, false, true, "", "",
         [](Shell& s) { load_scene_into(s.state, default_scene(), ""); }, nullptr},
        {"quit", "File", "Quit", GLFW_KEY_Q, C, false, true, "Ctrl+Q", "quit (the workspace is kept)",
         [](Shell& s) { s.request_quit(); }, nullptr},
        // View (the menu's other entries, views and UI scale, are drawn by the shell)
        {"presentation", "View", "Presentation", GLFW_KEY_F11, 0, false, true, "F11",
         "presentation mode: side panels, pipeline strip and status bar fold away, the picture fills the "
         "window",
         [](Shell& s) { s.state.presentation = !s.state.presentation; }, nullptr,
         [](const Shell& s) { return s.state.presentation; }},
        {"toggle_controls", "View", "Controls panel", GLFW_KEY_B, C, false, true, "Ctrl+B",
         "show / fold the controls panel (left)",
         [](Shell& s) {
             s.state.presentation = false;
             s.state.show_controls = !s.state.show_controls;
         },
         nullptr, [](const Shell& s) { return s.state.show_controls && !s.state.presentation; }},
        {"toggle_explanation", "View", "Explanation panel", GLFW_KEY_B, C | GLFW_MOD_ALT, false, true,
         "Ctrl+Alt+B", "show / fold the explanation and export panels (right)",
         [](Shell& s) {
             s.state.presentation = false;
             s.state.show_explanation = !s.state.show_explanation;
         },
         nullptr, [](const Shell& s) { return s.state.show_explanation && !s.state.presentation; }},
        // Stepping through the computation (keys only; the pipeline strip has the buttons)
        {"next_stage", nullptr, "Next stage", GLFW_KEY_RIGHT, 0, true, false, "→", "next stage",
         [](Shell& s) { step_stage(s.state, +1); }, nullptr},
        {"previous_stage", nullptr, "Previous stage", GLFW_KEY_LEFT, 0, true, false, "←", "previous stage",
         [](Shell& s) { step_stage(s.state, -1); }, nullptr},
        {"first_stage", nullptr, "First stage", GLFW_KEY_HOME, 0, false, false, "Home", "first stage",
         [](Shell& s) { set_stage_index(s.state, 0); }, nullptr},
        {"last_stage", nullptr, "Last stage", GLFW_KEY_END, 0, false, false, "End", "last stage",
         [](Shell& s) { set_stage_index(s.state, stage_count(s.state) - 1); }, nullptr},
        {"previous_head", nullptr, "Previous head", GLFW_KEY_UP, 0, true, false, "↑", "previous head",
         [](Shell& s) { set_head(s, -1); }, nullptr},
        {"next_head", nullptr, "Next head", GLFW_KEY_DOWN, 0, true, false, "↓", "next head",
         [](Shell& s) { set_head(s, +1); }, nullptr},
        {"previous_layer", nullptr, "Previous layer", GLFW_KEY_PAGE_UP, 0, true, false, "PgUp",
         "previous layer (a model)", [](Shell& s) { set_layer(s, -1); }, nullptr},
        {"next_layer", nullptr, "Next layer", GLFW_KEY_PAGE_DOWN, 0, true, false, "PgDn",
         "next layer (a model)", [](Shell& s) { set_layer(s, +1); }, nullptr},
        {"play", nullptr, "Play / pause", GLFW_KEY_SPACE, 0, false, false, "Space",
         "play / pause the step-through", toggle_play, nullptr},
        // Help
        {"tour", "Help", "Tour: start here", 0, 0, false, true, "", "", open_tour, nullptr},
        {"tour_en", "Help", "Tour in English", 0, 0, false, true, "", "",
         [](Shell& s) { start_tour(s.state, shipped_tour_path(false), 0, lab_names()); }, nullptr},
        {"tour_zh", "Help", kChineseTourMenuLabel, 0, 0, false, true, "", "",
         [](Shell& s) { start_tour(s.state, shipped_tour_path(true), 0, lab_names()); }, nullptr},
        {"shortcuts", "Help", "Keyboard shortcuts", 0, 0, false, true, "", "",
         [](Shell& s) { s.show_keys = true; }, nullptr},
        {"about", "Help", "About attnviz", 0, 0, false, true, "", "", [](Shell& s) { s.show_about = true; },
         nullptr},
    };
}

}  // namespace

const std::vector<Command>& commands() {
    static const std::vector<Command> table = make_commands();
    return table;
}

const Command* find_command(const std::string& id) {
    for (const Command& c : commands())
        if (id == c.id) return &c;
    return nullptr;
}

void dispatch_shortcuts(Shell& shell) {
    const bool typing = ImGui::GetIO().WantTextInput;  // a text field has the keys: they are text
    for (const Command& c : commands()) {
        if (c.key == 0 || (typing && !c.in_text)) continue;
        if (c.enabled && !c.enabled(shell)) continue;
        if (key_tapped(c.key, c.mods, c.repeat)) c.run(shell);
    }
}

void draw_command_menu(Shell& shell, const char* menu) {
    const char* previous_group = nullptr;
    for (const Command& c : commands()) {
        if (!c.menu || std::strcmp(c.menu, menu) != 0) continue;
        // A separator before Reset and before Quit, as menus group them.
        if (previous_group && (std::strcmp(c.id, "export_png") == 0 || std::strcmp(c.id, "quit") == 0))
            ImGui::Separator();
        previous_group = c.id;
        const bool enabled = !c.enabled || c.enabled(shell);
        const bool chosen =
            ImGui::MenuItem(c.label, c.keys[0] ? c.keys : nullptr, c.checked && c.checked(shell), enabled);
        remember_item_rect(shell.state, std::string("menu_") + c.id);
        if (chosen) c.run(shell);
        if (std::strcmp(c.id, "open_model") == 0) draw_open_recent_menu(shell.state);  // File ▸ Open recent
    }
}

void draw_shortcut_table() {
    if (!ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) return;
    auto row = [](const char* keys, const char* help) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::PushFont(app_font(FontRole::Bold));
        ImGui::TextUnformatted(keys);
        ImGui::PopFont();
        ImGui::TableSetColumnIndex(1);
        ImGui::TextUnformatted(help);
    };
    for (const Command& c : commands())
        if (c.key != 0) row(c.keys, c.help);
    row("mouse wheel / drag", "zoom / pan the heatmap (double-click resets)");
    row("click a row", "pin that query: its weights as bars");
    row("drop a file on the window", "open it: a scene (.json), a mask (.npy) or a model folder");
    ImGui::EndTable();
}

}  // namespace attnviz::app

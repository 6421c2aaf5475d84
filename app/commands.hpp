// The app's commands in one table: each has its menu entry, its keyboard shortcut and its help text,
// written once. The menu bar, the shortcut dispatch and Help ▸ Keyboard shortcuts all read this
// table, so a shortcut can never be in the menu but not in the help, or act differently from it.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace attnviz::app {

class Shell;

struct Command {
    const char* id;       // stable name, e.g. "open_scene" (tests, logs)
    const char* menu;     // top-level menu it appears in ("File", "View", "Help"), or nullptr
    const char* label;    // menu entry text, e.g. "Open scene…"
    int key = 0;          // GLFW key code of the shortcut (0 = none)
    int mods = 0;         // GLFW_MOD_* bits that must be held
    bool repeat = false;  // held down, the shortcut repeats (stepping through stages)
    bool in_text = true;  // also while a text field has the keyboard (Ctrl shortcuts; not arrows)
    const char* keys;     // how the shortcut is written in the menu and the help ("Ctrl+O", "← / →")
    const char* help;     // one line for Help ▸ Keyboard shortcuts
    std::function<void(Shell&)> run;
    std::function<bool(const Shell&)> enabled;  // nullptr = always
    std::function<bool(const Shell&)> checked =
        nullptr;  // a toggle's state (a tick in the menu); nullptr = none
};

/// Every command, in menu order.
const std::vector<Command>& commands();
/// The command called `id`, or nullptr.
const Command* find_command(const std::string& id);

/// Runs the commands whose shortcut was pressed this frame (call between NewFrame and the windows).
void dispatch_shortcuts(Shell& shell);
/// The entries of menu `menu` (inside BeginMenu/EndMenu).
void draw_command_menu(Shell& shell, const char* menu);
/// The keyboard-shortcut table of the help window (also lists mouse gestures).
void draw_shortcut_table();

}  // namespace attnviz::app

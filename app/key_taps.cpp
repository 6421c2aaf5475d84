#include "app/key_taps.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <utility>
#include <vector>

namespace attnviz::app {

namespace {

constexpr int kModMask = GLFW_MOD_CONTROL | GLFW_MOD_SHIFT | GLFW_MOD_ALT;
std::vector<std::pair<int, int>> g_pending;  // (key, mods) pressed since the last frame
std::vector<std::pair<int, int>> g_frame;    // this frame's presses
std::vector<int> g_held;                     // keys shown as down for this frame only
bool g_held_ctrl = false, g_held_shift = false, g_held_alt = false;
std::vector<ImWchar> g_deferred_chars;  // text typed right after a held Ctrl/Alt tap

int current_mods() {
    const ImGuiIO& io = ImGui::GetIO();
    return (io.KeyCtrl ? GLFW_MOD_CONTROL : 0) | (io.KeyShift ? GLFW_MOD_SHIFT : 0) |
           (io.KeyAlt ? GLFW_MOD_ALT : 0);
}

}  // namespace

void record_key_event(int key, int action, int mods) {
    if (action == GLFW_PRESS && g_pending.size() < 256) g_pending.emplace_back(key, mods & kModMask);
}

void begin_frame_key_taps() {
    g_frame.swap(g_pending);
    g_pending.clear();
    ImGuiIO& io = ImGui::GetIO();
    for (const auto& [key, mods] : g_frame) {
        if (key < 0 || key >= int(IM_ARRAYSIZE(io.KeysDown))) continue;
        if (!io.KeysDown[key]) {
            io.KeysDown[key] = true;
            g_held.push_back(key);
        }
        // The modifiers held at the press, even if already released (xdotool key ctrl+a).
        if ((mods & GLFW_MOD_CONTROL) && !io.KeyCtrl) io.KeyCtrl = g_held_ctrl = true;
        if ((mods & GLFW_MOD_SHIFT) && !io.KeyShift) io.KeyShift = g_held_shift = true;
        if ((mods & GLFW_MOD_ALT) && !io.KeyAlt) io.KeyAlt = g_held_alt = true;
    }
    // ImGui ignores typed characters while Ctrl is down; text typed just after the tap (already in
    // the queue) belongs to the next frame, after the shortcut.
    if (g_held_ctrl || g_held_alt) {
        g_deferred_chars.assign(io.InputQueueCharacters.begin(), io.InputQueueCharacters.end());
        io.InputQueueCharacters.resize(0);
    }
}

void end_frame_key_taps() {
    ImGuiIO& io = ImGui::GetIO();
    for (int key : g_held) io.KeysDown[key] = false;
    g_held.clear();
    if (g_held_ctrl) io.KeyCtrl = false;
    if (g_held_shift) io.KeyShift = false;
    if (g_held_alt) io.KeyAlt = false;
    g_held_ctrl = g_held_shift = g_held_alt = false;
    for (ImWchar c : g_deferred_chars) io.InputQueueCharacters.push_back(c);
    g_deferred_chars.clear();
}

bool key_tapped(int key, int mods, bool repeat) {
    for (const auto& [k, m] : g_frame)
        if (k == key && m == mods) return true;
    // Held down: ImGui's repeat (the first press was counted above, from the callback).
    if (repeat && key >= 0 && key < int(IM_ARRAYSIZE(ImGui::GetIO().KeysDown)) &&
        ImGui::IsKeyPressed(key, true) && !ImGui::IsKeyPressed(key, false))
        return current_mods() == mods;
    return false;
}

}  // namespace attnviz::app

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

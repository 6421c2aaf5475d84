// Key presses that survive quick taps. Dear ImGui 1.86 samples key state once per frame, so a key
// pressed and released between two frames (a quick tap while the app idles in glfwWaitEvents, or
// xdotool) would be lost. The shell records every press from GLFW's key callback and each frame
// asks "was this key pressed since the last frame?" here, with the modifiers held at that moment.
#pragma once

namespace attnviz::app {

/// Called from the GLFW key callback (main thread, during glfwPollEvents).
void record_key_event(int key, int action, int mods);
/// Called once per frame before ImGui::NewFrame(): presses recorded since the last call become this
/// frame's presses. A key already released again (a tap shorter than a frame) is shown to ImGui as
/// held for this one frame, so ImGui's own widgets (Enter in a text field, Ctrl+A) see it too.
void begin_frame_key_taps();
/// Called after ImGui::Render(): releases the keys begin_frame_key_taps() held for one frame.
void end_frame_key_taps();
/// True if `key` was pressed this frame with exactly `mods` among Ctrl, Shift and Alt
/// (GLFW_MOD_* bits), or (with `repeat`) is held down and auto-repeating.
bool key_tapped(int key, int mods = 0, bool repeat = true);

}  // namespace attnviz::app

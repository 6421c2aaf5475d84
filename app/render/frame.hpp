// The GL calls of one frame outside the heatmaps: clearing the back buffer, drawing ImGui's draw
// data, rebuilding the font texture after the atlas changed. Only app/render/ touches OpenGL.
#pragma once

struct ImDrawData;

namespace attnviz::render {

/// Makes the GL functions app/render calls callable (app/render/gl.hpp); call once after the context
/// is made current. Returns false, naming the first missing function in `*missing`, when the driver
/// lacks one.
bool load_gl_functions(const char** missing);

/// Viewport to the framebuffer and a clear to the app's background colour.
void begin_gl_frame(int fb_w, int fb_h);
/// ImGui's draw data into the back buffer (the OpenGL 3 backend).
void draw_imgui(ImDrawData* data);
/// Uploads the font atlas again (after FontManager::rebuild()).
void recreate_font_texture();

}  // namespace attnviz::render

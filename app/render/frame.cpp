#include "app/render/frame.hpp"

#include "app/render/gl.hpp"  // first: on Windows it brings windows.h

#include <imgui.h>
#include <imgui_impl_opengl3.h>

namespace attnviz::render {

void begin_gl_frame(int fb_w, int fb_h) {
    glViewport(0, 0, fb_w, fb_h);
    glClearColor(0.08f, 0.08f, 0.09f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
}

void draw_imgui(ImDrawData* data) {
    ImGui_ImplOpenGL3_RenderDrawData(data);
}

void recreate_font_texture() {
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
}

}  // namespace attnviz::render

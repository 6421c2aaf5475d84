// app/render/gl.hpp on Windows: the functions beyond OpenGL 1.1, from the driver through GLFW.
#include <GLFW/glfw3.h>

#include "app/render/gl.hpp"

#define ATTNVIZ_GL_DEFINE(name, type) type attnviz_##name = nullptr;
ATTNVIZ_GL_FUNCTIONS(ATTNVIZ_GL_DEFINE)
#undef ATTNVIZ_GL_DEFINE

namespace attnviz::render {

bool load_gl_functions(const char** missing) {
    if (missing) *missing = nullptr;
#define ATTNVIZ_GL_LOAD(name, type)                                     \
    attnviz_##name = reinterpret_cast<type>(glfwGetProcAddress(#name)); \
    if (!attnviz_##name) {                                              \
        if (missing) *missing = #name;                                  \
        return false;                                                   \
    }
    ATTNVIZ_GL_FUNCTIONS(ATTNVIZ_GL_LOAD)
#undef ATTNVIZ_GL_LOAD
    return true;
}

}  // namespace attnviz::render

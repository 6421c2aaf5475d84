// app/render/gl.hpp on Linux: libGL exports every function, nothing to load.
#include "app/render/gl.hpp"

namespace attnviz::render {

bool load_gl_functions(const char** missing) {
    if (missing) *missing = nullptr;
    return true;
}

}  // namespace attnviz::render

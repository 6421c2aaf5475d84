// OpenGL for app/render. Linux's libGL (Mesa) exports every entry point, so the prototypes are used
// directly; Windows' opengl32.dll exports only OpenGL 1.1, so gl_loader_windows.cpp fetches the later
// functions app/render calls from the driver once the context exists (gl_windows.hpp).
#pragma once

#include "app/render/frame.hpp"  // load_gl_functions

#if defined(_WIN32)
#include "app/render/gl_windows.hpp"
#else
#ifndef GL_GLEXT_PROTOTYPES
#define GL_GLEXT_PROTOTYPES 1
#endif
#include <GL/gl.h>
#include <GL/glext.h>
#endif

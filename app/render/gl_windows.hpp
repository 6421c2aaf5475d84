// app/render/gl.hpp on Windows: opengl32.dll's OpenGL 1.1, plus pointers to the later functions
// app/render calls, filled by gl_loader_windows.cpp (wglGetProcAddress through GLFW). Each name below
// is a macro for its pointer, so the drawing code reads the same as on Linux.
#pragma once

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
// (after windows.h: gl.h needs APIENTRY and WINGDIAPI)
#include <GL/gl.h>
#include <GL/glext.h>

// X(name, pointer type): every function app/render calls beyond OpenGL 1.1.
#define ATTNVIZ_GL_FUNCTIONS(X)                                  \
    X(glActiveTexture, PFNGLACTIVETEXTUREPROC)                   \
    X(glAttachShader, PFNGLATTACHSHADERPROC)                     \
    X(glBindFramebuffer, PFNGLBINDFRAMEBUFFERPROC)               \
    X(glBindVertexArray, PFNGLBINDVERTEXARRAYPROC)               \
    X(glCheckFramebufferStatus, PFNGLCHECKFRAMEBUFFERSTATUSPROC) \
    X(glCompileShader, PFNGLCOMPILESHADERPROC)                   \
    X(glCreateProgram, PFNGLCREATEPROGRAMPROC)                   \
    X(glCreateShader, PFNGLCREATESHADERPROC)                     \
    X(glDeleteFramebuffers, PFNGLDELETEFRAMEBUFFERSPROC)         \
    X(glDeleteProgram, PFNGLDELETEPROGRAMPROC)                   \
    X(glDeleteShader, PFNGLDELETESHADERPROC)                     \
    X(glDeleteVertexArrays, PFNGLDELETEVERTEXARRAYSPROC)         \
    X(glFramebufferTexture2D, PFNGLFRAMEBUFFERTEXTURE2DPROC)     \
    X(glGenFramebuffers, PFNGLGENFRAMEBUFFERSPROC)               \
    X(glGenVertexArrays, PFNGLGENVERTEXARRAYSPROC)               \
    X(glGetProgramInfoLog, PFNGLGETPROGRAMINFOLOGPROC)           \
    X(glGetProgramiv, PFNGLGETPROGRAMIVPROC)                     \
    X(glGetShaderInfoLog, PFNGLGETSHADERINFOLOGPROC)             \
    X(glGetShaderiv, PFNGLGETSHADERIVPROC)                       \
    X(glGetUniformLocation, PFNGLGETUNIFORMLOCATIONPROC)         \
    X(glLinkProgram, PFNGLLINKPROGRAMPROC)                       \
    X(glShaderSource, PFNGLSHADERSOURCEPROC)                     \
    X(glUniform1f, PFNGLUNIFORM1FPROC)                           \
    X(glUniform1i, PFNGLUNIFORM1IPROC)                           \
    X(glUniform2f, PFNGLUNIFORM2FPROC)                           \
    X(glUniform2i, PFNGLUNIFORM2IPROC)                           \
    X(glUniform4f, PFNGLUNIFORM4FPROC)                           \
    X(glUseProgram, PFNGLUSEPROGRAMPROC)

#define ATTNVIZ_GL_DECLARE(name, type) extern type attnviz_##name;
ATTNVIZ_GL_FUNCTIONS(ATTNVIZ_GL_DECLARE)
#undef ATTNVIZ_GL_DECLARE

#define glActiveTexture attnviz_glActiveTexture
#define glAttachShader attnviz_glAttachShader
#define glBindFramebuffer attnviz_glBindFramebuffer
#define glBindVertexArray attnviz_glBindVertexArray
#define glCheckFramebufferStatus attnviz_glCheckFramebufferStatus
#define glCompileShader attnviz_glCompileShader
#define glCreateProgram attnviz_glCreateProgram
#define glCreateShader attnviz_glCreateShader
#define glDeleteFramebuffers attnviz_glDeleteFramebuffers
#define glDeleteProgram attnviz_glDeleteProgram
#define glDeleteShader attnviz_glDeleteShader
#define glDeleteVertexArrays attnviz_glDeleteVertexArrays
#define glFramebufferTexture2D attnviz_glFramebufferTexture2D
#define glGenFramebuffers attnviz_glGenFramebuffers
#define glGenVertexArrays attnviz_glGenVertexArrays
#define glGetProgramInfoLog attnviz_glGetProgramInfoLog
#define glGetProgramiv attnviz_glGetProgramiv
#define glGetShaderInfoLog attnviz_glGetShaderInfoLog
#define glGetShaderiv attnviz_glGetShaderiv
#define glGetUniformLocation attnviz_glGetUniformLocation
#define glLinkProgram attnviz_glLinkProgram
#define glShaderSource attnviz_glShaderSource
#define glUniform1f attnviz_glUniform1f
#define glUniform1i attnviz_glUniform1i
#define glUniform2f attnviz_glUniform2f
#define glUniform2i attnviz_glUniform2i
#define glUniform4f attnviz_glUniform4f
#define glUseProgram attnviz_glUseProgram

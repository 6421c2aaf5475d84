// GL side of the heatmaps: a matrix as a GL_R32F texture, coloured by shaders/heatmap.frag into an
// offscreen RGBA8 target that ImGui shows with ImGui::Image. See heatmap_texture.hpp.
#include "app/render/heatmap_texture.hpp"

#include "app/render/gl.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "io/files.hpp"

namespace attnviz::render {
namespace {

struct ShaderProgram {
    GLuint program = 0;
    GLuint vao = 0;  // empty: the vertex shader makes its triangle from gl_VertexID
    GLint u_data = -1, u_size = -1, u_view = -1, u_target = -1, u_lo = -1, u_hi = -1, u_map = -1,
          u_highlight = -1, u_dim_others = -1, u_level = -1, u_log = -1;
};
ShaderProgram g_shader;

bool compile(GLenum type, const std::string& source, const std::string& name, GLuint* out,
             std::string* error) {
    GLuint s = glCreateShader(type);
    const char* src = source.c_str();
    glShaderSource(s, 1, &src, nullptr);
    glCompileShader(s);
    GLint ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        GLint len = 0;
        glGetShaderiv(s, GL_INFO_LOG_LENGTH, &len);
        std::string log(std::size_t(std::max(len, 1)), '\0');
        glGetShaderInfoLog(s, len, nullptr, log.data());
        if (error) *error = "shader " + name + " failed to compile: " + log;
        glDeleteShader(s);
        return false;
    }
    *out = s;
    return true;
}

// Saves and restores the bits of GL state that ImGui's renderer and the main loop rely on.
struct SavedState {
    GLint fbo = 0, program = 0, vao = 0, texture = 0, active_texture = 0;
    GLint viewport[4] = {0, 0, 0, 0};
    GLboolean blend = GL_FALSE, scissor = GL_FALSE, depth = GL_FALSE, cull = GL_FALSE;
    SavedState() {
        glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &fbo);
        glGetIntegerv(GL_CURRENT_PROGRAM, &program);
        glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &vao);
        glGetIntegerv(GL_ACTIVE_TEXTURE, &active_texture);
        glActiveTexture(GL_TEXTURE0);
        glGetIntegerv(GL_TEXTURE_BINDING_2D, &texture);
        glGetIntegerv(GL_VIEWPORT, viewport);
        blend = glIsEnabled(GL_BLEND);
        scissor = glIsEnabled(GL_SCISSOR_TEST);
        depth = glIsEnabled(GL_DEPTH_TEST);
        cull = glIsEnabled(GL_CULL_FACE);
    }
    ~SavedState() {
        glBindFramebuffer(GL_FRAMEBUFFER, GLuint(fbo));
        glUseProgram(GLuint(program));
        glBindVertexArray(GLuint(vao));
        glBindTexture(GL_TEXTURE_2D, GLuint(texture));
        glActiveTexture(GLenum(active_texture));
        glViewport(viewport[0], viewport[1], viewport[2], viewport[3]);
        auto set = [](GLenum cap, GLboolean on) { on ? glEnable(cap) : glDisable(cap); };
        set(GL_BLEND, blend);
        set(GL_SCISSOR_TEST, scissor);
        set(GL_DEPTH_TEST, depth);
        set(GL_CULL_FACE, cull);
    }
};

}  // namespace

bool init_heatmap_shader(std::string* error) {
    if (g_shader.program) return true;
    std::string vs_src, fs_src;
    try {
        vs_src = read_file(shader_dir() + "/heatmap.vert");
        fs_src = read_file(shader_dir() + "/heatmap.frag");
    } catch (const std::exception& e) {
        if (error) *error = e.what();
        return false;
    }
    GLuint vs = 0, fs = 0;
    if (!compile(GL_VERTEX_SHADER, vs_src, "heatmap.vert", &vs, error)) return false;
    if (!compile(GL_FRAGMENT_SHADER, fs_src, "heatmap.frag", &fs, error)) {
        glDeleteShader(vs);
        return false;
    }
    GLuint p = glCreateProgram();
    glAttachShader(p, vs);
    glAttachShader(p, fs);
    glLinkProgram(p);
    glDeleteShader(vs);
    glDeleteShader(fs);
    GLint ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    if (!ok) {
        GLint len = 0;
        glGetProgramiv(p, GL_INFO_LOG_LENGTH, &len);
        std::string log(std::size_t(std::max(len, 1)), '\0');
        glGetProgramInfoLog(p, len, nullptr, log.data());
        if (error) *error = "heatmap shader failed to link: " + log;
        glDeleteProgram(p);
        return false;
    }
    g_shader.program = p;
    g_shader.u_data = glGetUniformLocation(p, "u_data");
    g_shader.u_size = glGetUniformLocation(p, "u_size");
    g_shader.u_view = glGetUniformLocation(p, "u_view");
    g_shader.u_target = glGetUniformLocation(p, "u_target");
    g_shader.u_lo = glGetUniformLocation(p, "u_lo");
    g_shader.u_hi = glGetUniformLocation(p, "u_hi");
    g_shader.u_map = glGetUniformLocation(p, "u_map");
    g_shader.u_highlight = glGetUniformLocation(p, "u_highlight");
    g_shader.u_dim_others = glGetUniformLocation(p, "u_dim_others");
    g_shader.u_level = glGetUniformLocation(p, "u_level");
    g_shader.u_log = glGetUniformLocation(p, "u_log");
    glGenVertexArrays(1, &g_shader.vao);
    return true;
}

void shutdown_heatmap_shader() {
    if (g_shader.vao) glDeleteVertexArrays(1, &g_shader.vao);
    if (g_shader.program) glDeleteProgram(g_shader.program);
    g_shader = ShaderProgram{};
}

HeatmapTexture::~HeatmapTexture() {
    release();
}

void HeatmapTexture::release() {
    set_levels({});
    if (data_tex_) glDeleteTextures(1, &data_tex_);
    if (color_tex_) glDeleteTextures(1, &color_tex_);
    if (fbo_) glDeleteFramebuffers(1, &fbo_);
    data_tex_ = color_tex_ = fbo_ = 0;
    rows_ = cols_ = target_w_ = target_h_ = 0;
}

namespace {

/// Uploads M into texture `tex` (created when 0) as GL_R32F with nearest sampling.
/// The bound 2D texture: one level, nearest-neighbour sampling (every texel is a cell), clamped edges.
void set_nearest_single_level() {
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, 0);
}

void upload_r32f(GLuint* tex, const Mat& M) {
    GLint prev_tex = 0, prev_align = 0;
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &prev_tex);
    glGetIntegerv(GL_UNPACK_ALIGNMENT, &prev_align);
    if (!*tex) glGenTextures(1, tex);
    glBindTexture(GL_TEXTURE_2D, *tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, GLsizei(M.cols()), GLsizei(M.rows()), 0, GL_RED, GL_FLOAT,
                 M.data());
    set_nearest_single_level();
    glPixelStorei(GL_UNPACK_ALIGNMENT, prev_align);
    glBindTexture(GL_TEXTURE_2D, GLuint(prev_tex));
}

}  // namespace

void HeatmapTexture::set_levels(const std::vector<Mat>& levels) {
    if (!level_tex_.empty()) glDeleteTextures(GLsizei(level_tex_.size()), level_tex_.data());
    level_tex_.clear();
    if (!data_tex_) return;
    for (const Mat& L : levels) {
        GLuint t = 0;
        upload_r32f(&t, L);
        level_tex_.push_back(t);
    }
}

bool HeatmapTexture::set_matrix(const Mat& M) {
    set_levels({});  // levels of the previous matrix no longer apply
    GLint max_size = 0;
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_size);
    if (M.rows() <= 0 || M.cols() <= 0 || M.rows() > max_size || M.cols() > max_size) {
        release();
        return false;
    }
    GLint prev_tex = 0, prev_align = 0;
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &prev_tex);
    glGetIntegerv(GL_UNPACK_ALIGNMENT, &prev_align);
    const bool same_size = data_tex_ && rows_ == int(M.rows()) && cols_ == int(M.cols());
    if (!data_tex_) glGenTextures(1, &data_tex_);
    glBindTexture(GL_TEXTURE_2D, data_tex_);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    // Row-major M: texel (x = col, y = row) = M(row, col); -inf is kept (float texture).
    if (same_size) {
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, GLsizei(M.cols()), GLsizei(M.rows()), GL_RED, GL_FLOAT,
                        M.data());
    } else {
        glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, GLsizei(M.cols()), GLsizei(M.rows()), 0, GL_RED, GL_FLOAT,
                     M.data());
        set_nearest_single_level();
    }
    glPixelStorei(GL_UNPACK_ALIGNMENT, prev_align);
    glBindTexture(GL_TEXTURE_2D, GLuint(prev_tex));
    rows_ = int(M.rows());
    cols_ = int(M.cols());
    return true;
}

unsigned HeatmapTexture::render(const ColorRange& range, const ViewWindow& view, int width, int height,
                                const Highlight& highlight) {
    if (!data_tex_ || !g_shader.program || width <= 0 || height <= 0) return 0;
    SavedState saved;
    if (!color_tex_ || width != target_w_ || height != target_h_) {
        if (!color_tex_) glGenTextures(1, &color_tex_);
        glBindTexture(GL_TEXTURE_2D, color_tex_);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, width, height, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
        if (!fbo_) glGenFramebuffers(1, &fbo_);
        glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
        glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, color_tex_, 0);
        if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) return 0;
        target_w_ = width;
        target_h_ = height;
    }
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
    glViewport(0, 0, width, height);
    glDisable(GL_BLEND);
    glDisable(GL_SCISSOR_TEST);
    glDisable(GL_DEPTH_TEST);
    glDisable(GL_CULL_FACE);
    glClearColor(0, 0, 0, 0);
    glClear(GL_COLOR_BUFFER_BIT);
    glUseProgram(g_shader.program);
    glActiveTexture(GL_TEXTURE0);
    // More cells than pixels: sample the reduction level whose cells are at least one pixel, so each
    // of its cells (the max, or mean, of a 2^k block) is seen by some pixel.
    const float cells_per_px =
        std::max((view.x1 - view.x0) / float(width), (view.y1 - view.y0) / float(height));
    last_level_ = level_for(cells_per_px, int(level_tex_.size()));
    glBindTexture(GL_TEXTURE_2D, last_level_ == 0 ? data_tex_ : level_tex_[std::size_t(last_level_ - 1)]);
    glUniform1i(g_shader.u_level, last_level_);
    glUniform1i(g_shader.u_log, range.mode == ScaleMode::Log ? 1 : 0);
    glUniform1i(g_shader.u_data, 0);
    glUniform2f(g_shader.u_size, float(cols_), float(rows_));
    glUniform4f(g_shader.u_view, view.x0, view.y0, view.x1, view.y1);
    glUniform2f(g_shader.u_target, float(width), float(height));
    glUniform1f(g_shader.u_lo, range.lo);
    glUniform1f(g_shader.u_hi, range.hi);
    glUniform1i(g_shader.u_map, range.map == ColorMap::Sequential ? 0 : 1);
    glUniform2i(g_shader.u_highlight, highlight.row, highlight.col);
    glUniform1i(g_shader.u_dim_others, highlight.dim_others ? 1 : 0);
    glBindVertexArray(g_shader.vao);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    return color_tex_;
}

bool HeatmapTexture::read_pixels(std::vector<unsigned char>* rgba, int* width, int* height) const {
    if (!fbo_ || target_w_ <= 0 || target_h_ <= 0) return false;
    GLint prev_fbo = 0, prev_align = 0;
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &prev_fbo);
    glGetIntegerv(GL_PACK_ALIGNMENT, &prev_align);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo_);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    rgba->resize(std::size_t(target_w_) * target_h_ * 4);
    // The target stores the picture's top row first (see heatmap.frag), so no flip here.
    glReadPixels(0, 0, target_w_, target_h_, GL_RGBA, GL_UNSIGNED_BYTE, rgba->data());
    glPixelStorei(GL_PACK_ALIGNMENT, prev_align);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, GLuint(prev_fbo));
    *width = target_w_;
    *height = target_h_;
    return true;
}

void read_framebuffer(int width, int height, std::vector<unsigned char>* rgba) {
    GLint prev_align = 0, prev_fbo = 0;
    glGetIntegerv(GL_PACK_ALIGNMENT, &prev_align);
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &prev_fbo);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    glReadBuffer(GL_BACK);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    const std::size_t stride = std::size_t(width) * 4;
    std::vector<unsigned char> bottom_up(stride * std::size_t(height));
    glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, bottom_up.data());
    glPixelStorei(GL_PACK_ALIGNMENT, prev_align);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, GLuint(prev_fbo));
    rgba->resize(bottom_up.size());
    for (int y = 0; y < height; ++y) {  // GL's first row is the bottom of the window
        std::copy_n(bottom_up.data() + std::size_t(height - 1 - y) * stride, stride,
                    rgba->data() + std::size_t(y) * stride);
    }
    for (std::size_t i = 3; i < rgba->size(); i += 4) (*rgba)[i] = 255;  // a screenshot is opaque
}

}  // namespace attnviz::render

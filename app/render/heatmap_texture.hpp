// The render layer: the only code that touches OpenGL (with app/render/*.cpp and main.cpp's context
// set-up). A matrix lives on the GPU as a single-channel float texture (GL_R32F, -inf kept for
// masked cells) and is coloured by shaders/heatmap.frag into an offscreen RGBA target, which ImGui
// then shows with ImGui::Image. Never one rectangle per cell.
#pragma once

#include <string>
#include <vector>

#include "core/shapes.hpp"
#include "io/colormap.hpp"

namespace attnviz::render {

/// The part of the matrix to show, in cell units: columns [x0, x1), rows [y0, y1). Zoom and pan
/// are just a smaller or shifted window. Cells are sampled nearest-neighbour.
struct ViewWindow {
    float x0 = 0, y0 = 0, x1 = 1, y1 = 1;
};

/// Optional emphasis drawn by the shader: a pinned row and/or column gets an outline, the rest is
/// slightly dimmed when `dim_others` is set; grid lines appear when cells are >= 12 px.
struct Highlight {
    int row = -1;
    int col = -1;
    bool dim_others = false;
};

/// Compiles and owns the heatmap shader program (loaded from shader_dir()). One per GL context.
/// init() returns false and fills `error` with the compiler's log if a shader fails.
bool init_heatmap_shader(std::string* error);
void shutdown_heatmap_shader();

/// One matrix on the GPU plus its coloured rendering.
class HeatmapTexture {
  public:
    HeatmapTexture() = default;
    ~HeatmapTexture();
    HeatmapTexture(const HeatmapTexture&) = delete;
    HeatmapTexture& operator=(const HeatmapTexture&) = delete;

    /// Uploads M (rows x cols) as GL_R32F. Re-uses the texture when the size is unchanged.
    /// Matrices larger than GL_MAX_TEXTURE_SIZE per side are not uploaded (returns false).
    bool set_matrix(const Mat& M);
    /// Uploads reduction levels 1, 2, ... of the matrix (io/colormap.hpp reduction_levels(): level k
    /// cell = max or mean of a 2^k × 2^k block). render() then samples, for a window with more cells
    /// than pixels, the level whose cells are at least a pixel wide, so no peak falls between pixels.
    /// Replaces earlier levels; an empty vector drops them (nearest sampling of level 0 only).
    void set_levels(const std::vector<Mat>& levels);
    int level_count() const { return int(level_tex_.size()); }
    /// The level the last render() sampled (0 = the matrix itself).
    int last_level() const { return last_level_; }
    int rows() const { return rows_; }
    int cols() const { return cols_; }
    bool empty() const { return rows_ == 0; }

    /// Colours the window of the matrix into an offscreen width x height RGBA target and returns
    /// its GL texture name, to pass to ImGui::Image as (ImTextureID)(intptr_t)name.
    unsigned render(const ColorRange& range, const ViewWindow& view, int width, int height,
                    const Highlight& highlight = {});

    /// Reads back the last render() as RGBA8 (top row first) — for tests comparing with the CPU
    /// colour map.
    bool read_pixels(std::vector<unsigned char>* rgba, int* width, int* height) const;

  private:
    void release();
    unsigned data_tex_ = 0;            // GL_R32F matrix
    std::vector<unsigned> level_tex_;  // GL_R32F reduction levels 1, 2, ...
    int last_level_ = 0;
    unsigned color_tex_ = 0, fbo_ = 0;
    int rows_ = 0, cols_ = 0;
    int target_w_ = 0, target_h_ = 0;
};

/// Reads the current default framebuffer (before swap) as RGBA8, top row first.
void read_framebuffer(int width, int height, std::vector<unsigned char>* rgba);

}  // namespace attnviz::render

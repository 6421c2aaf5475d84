// The Export panel's file work (see export_actions.hpp). No ImGui here.
// GCC 12 false positive inside its AVX-512 intrinsics when Eigen multiplies (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "app/panels/export_actions.hpp"

#include <cstdlib>

#include "core/error.hpp"
#include "io/figure.hpp"
#include "io/files.hpp"
#include "io/npy.hpp"
#include "io/platform.hpp"

namespace attnviz::app {

const char* export_extension(ExportKind kind) {
    switch (kind) {
        case ExportKind::Png:
        case ExportKind::HeadsGridPng:
            return ".png";
        case ExportKind::Csv:
            return ".csv";
        case ExportKind::Npy:
            return ".npy";
        case ExportKind::Svg:
            return ".svg";
    }
    return ".bin";
}

std::string export_file_name(const std::string& stage_name, int head, const std::string& timestamp,
                             ExportKind kind) {
    std::string name = slug(stage_name.empty() ? std::string("stage") : stage_name);
    if (kind == ExportKind::HeadsGridPng) {
        name += "_heads";
    } else if (head >= 0) {
        name += "_h" + std::to_string(head);
    }
    if (!timestamp.empty()) name += "_" + timestamp;
    return name + export_extension(kind);
}

std::string normalize_export_dir(const std::string& dir) {
    std::string d = dir;
    if ((d == "~" || d.rfind("~/", 0) == 0)) {
        if (const char* home = std::getenv("HOME"); home && *home) d = std::string(home) + d.substr(1);
    }
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    return d.empty() ? std::string(".") : d;
}

namespace {

bool path_exists(const std::string& path) {
    return platform::exists(path);
}

// dir/name, or dir/stem-2.ext, dir/stem-3.ext, ... when the name is taken (two exports in a second).
std::string unique_path(const std::string& dir, const std::string& name) {
    const std::string base = dir == "/" ? dir : dir + "/";
    std::string path = base + name;
    const std::size_t dot = name.rfind('.');
    const std::string stem = name.substr(0, dot), ext = dot == std::string::npos ? "" : name.substr(dot);
    for (int k = 2; path_exists(path) && k < 1000; ++k) path = base + stem + "-" + std::to_string(k) + ext;
    return path;
}

}  // namespace

std::string export_stage(const Trace& trace, int stage_index, ExportKind kind, const std::string& dir,
                         int scale, const std::string& timestamp, ScaleMode scale_mode, bool cell_values) {
    if (stage_index < 0 || stage_index >= int(trace.stages.size())) {
        throw Error("nothing to export: no stage is selected");
    }
    const Stage& stage = trace.stages[std::size_t(stage_index)];
    const std::string folder = normalize_export_dir(dir);
    make_dirs(folder);  // throws "cannot create folder ...: reason"

    // The heads grid needs a per-head stage; for shared stages (embedding, output...) use the weights.
    const std::string grid_stage = stage.head >= 0 ? stage.name : std::string("weights");
    const std::string name =
        export_file_name(kind == ExportKind::HeadsGridPng ? grid_stage : stage.name, stage.head,
                         timestamp.empty() ? timestamp_for_filename() : timestamp, kind);
    const std::string path = unique_path(folder, name);

    FigureOptions fo;
    fo.scale = (scale == 1 || scale == 2 || scale == 4) ? scale : 1;
    fo.scale_mode = scale_mode;
    fo.cell_values = cell_values;
    switch (kind) {
        case ExportKind::Png:
            write_png(path, render_stage_figure(trace, stage, fo));
            break;
        case ExportKind::HeadsGridPng:
            write_png(path, render_heads_grid_figure(trace, grid_stage, fo));
            break;
        case ExportKind::Csv:
            write_csv_labelled(path, stage.matrix(), stage.rows, stage.cols);
            break;
        case ExportKind::Npy:
            write_npy(path, stage.matrix());
            break;
        case ExportKind::Svg:
            write_file_atomic(path, render_stage_figure_svg(trace, stage, fo));
            break;
    }
    return path;
}

std::string export_lines(const LinesInput& input, const LinesOptions& lines, ExportKind kind,
                         const std::string& dir, int scale, const std::string& timestamp) {
    if (kind != ExportKind::Png && kind != ExportKind::Svg)
        throw Error("the lines view exports as PNG or SVG only");
    const std::string folder = normalize_export_dir(dir);
    make_dirs(folder);
    const std::string path =
        unique_path(folder, export_file_name("lines", lines.head,
                                             timestamp.empty() ? timestamp_for_filename() : timestamp, kind));
    FigureOptions fo;
    fo.scale = (scale == 1 || scale == 2 || scale == 4) ? scale : 1;
    if (kind == ExportKind::Png)
        write_png(path, render_lines_figure(input, lines, fo));
    else
        write_file_atomic(path, render_lines_figure_svg(input, lines, fo));
    return path;
}

}  // namespace attnviz::app

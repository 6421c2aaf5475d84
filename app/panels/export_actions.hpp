// What the Export panel's buttons do, without any GUI: pick a file name, create the folder, write
// the figure / CSV / .npy whole or not at all. Unit-tested in tests/app/export_test.cpp.
#pragma once

#include <string>

#include "core/trace.hpp"
#include "io/colormap.hpp"
#include "io/lines_figure.hpp"

namespace attnviz::app {

enum class ExportKind {
    Png,           // the current stage as a figure (render_stage_figure), like `attnviz render`
    HeadsGridPng,  // every head's matrix of this stage side by side (render_heads_grid_figure)
    Csv,           // the stage's matrix as CSV (-inf written as "-inf"), header row of column labels
                   // (key tokens) and a first column of row labels (query tokens)
    Npy,           // the stage's matrix as a float32 .npy
    Svg,           // the current stage's figure as SVG (same layout as Png, vector text) for papers
};

/// File extension of an export kind, with the dot: ".png", ".csv", ".npy", ".svg".
const char* export_extension(ExportKind kind);

/// File name of an export: <stage>[_h<head>]_<timestamp><ext>, e.g. "weights_h2_20261121-053012.png";
/// the heads grid is "<stage>_heads_<timestamp>.png". Stage names are slugged (file-name safe).
std::string export_file_name(const std::string& stage_name, int head, const std::string& timestamp,
                             ExportKind kind);

/// Expands a leading "~/" with $HOME and strips trailing slashes; "" means the current directory.
std::string normalize_export_dir(const std::string& dir);

/// Exports trace.stages[stage_index] into `dir` (created with its parents if missing) and returns the
/// path written. scale (1, 2 or 4) applies to PNG figures. An existing file of the same name is never
/// overwritten: "-2", "-3", ... is appended. `timestamp` "" = now. Throws attnviz::Error with a
/// one-sentence message (e.g. "cannot create folder /proc/x: Permission denied") on any failure; a
/// failed export leaves no file behind. Figures use `scale_mode` for weights (as on screen) and print
/// values in cells when `cell_values` and the cells are large enough.
std::string export_stage(const Trace& trace, int stage_index, ExportKind kind, const std::string& dir,
                         int scale, const std::string& timestamp = "", ScaleMode scale_mode = ScaleMode::Auto,
                         bool cell_values = false);

/// Exports the lines view (io/lines_figure.hpp) as PNG (kind Png, at `scale`) or SVG (kind Svg) into
/// `dir`: "lines[_h<head>]_<timestamp>.png|.svg", never overwriting. Returns the path written; throws
/// attnviz::Error with one sentence on failure (no file left behind).
std::string export_lines(const LinesInput& input, const LinesOptions& lines, ExportKind kind,
                         const std::string& dir, int scale, const std::string& timestamp = "");

}  // namespace attnviz::app

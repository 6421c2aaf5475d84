// Headless commands of the `attnviz` executable. They need no display and no OpenGL; app/main.cpp
// dispatches `attnviz dump ...` and `attnviz render ...` here before touching GLFW.
// Each prints a one-line error to stderr and returns non-zero on bad flags or values, 0 on success.
#pragma once

#include <functional>
#include <string>

namespace attnviz {

/// attnviz dump [--scene FILE] [--set key=value ...] --out DIR
/// Writes every stage as DIR/<name>[_h<head>].npy plus DIR/manifest.json. Without --scene, the
/// built-in example scene. Writes into a temporary sibling directory and renames it into place, so
/// a failure leaves no partial output directory.
int run_dump_command(int argc, char** argv);  // argv[0] == "dump"

/// attnviz render [--scene FILE] [--set key=value ...] --stage NAME [--head H] --out FIG.png
///                [--scale S]
/// Writes the same figure the app's "Export PNG" writes, on the CPU.
int run_render_command(int argc, char** argv);  // argv[0] == "render"

struct CliArgs;
struct FigureOptions;
/// The figure flags of `render` and `render --model`: --scale S (1, 2 or 4) and --scale-mode MODE into
/// `figure`; UsageError for any other value.
void read_figure_flags(const CliArgs& args, FigureOptions& figure);

/// Everything `attnviz dump` / `attnviz render` check before computing anything: the flags and their
/// values, the scene (--scene, then every --set), validate() and, for `render --grid`, the grid's
/// memory. Throws UsageError / attnviz::Error exactly as the commands would; touches no output file.
/// Used by the command-line fuzz harness (tests/fuzz/cli_fuzz.cpp).
void check_dump_arguments(int argc, char** argv);
void check_render_arguments(int argc, char** argv);

/// Throws attnviz::Error unless `out` is missing, an empty directory or an earlier attnviz dump
/// (a directory whose manifest.json has "attnviz_dump").
void check_dump_target(const std::string& out);
/// Writes a dump directory whole or not at all: fill(tmp) writes into a fresh temporary sibling of
/// `out` (parents created as needed), which then replaces `out` (checked again as above). On any
/// exception the temporary directory is removed and the exception rethrown.
void publish_dump_dir(const std::string& out, const std::function<void(const std::string& tmp)>& fill);

}  // namespace attnviz

// Writing files whole or not at all: write to a temporary file in the same directory, flush, fsync,
// then rename over the target. A failure leaves the old file (if any) untouched and no temp behind.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

/// Writes `bytes` to `path` atomically. Throws attnviz::Error with a clear message ("cannot write
/// /x/y.png: Permission denied") on failure. Creates no directories.
void write_file_atomic(const std::string& path, std::string_view bytes);

/// Reads a whole file. Throws attnviz::Error("cannot read FILE: reason").
std::string read_file(const std::string& path);

/// Creates a directory and its parents if missing. Throws attnviz::Error on failure.
void make_dirs(const std::string& path);

/// A file-name-safe slug: "W_Q" -> "W_Q", "head 2/3" -> "head_2_3".
std::string slug(std::string_view s);

/// Local time as "20261121-053012" for export file names.
std::string timestamp_for_filename();

/// Directory that holds assets/ (scenes, goldens): $ATTNVIZ_ASSETS, else next to the executable
/// (../assets, ./assets), else the source tree's assets/ compiled in.
std::string asset_dir();
/// Directory that holds the GLSL shaders, found the same way ($ATTNVIZ_SHADERS).
std::string shader_dir();
/// $XDG_CONFIG_HOME/attnviz (or ~/.config/attnviz), created if missing.
std::string user_config_dir();

}  // namespace attnviz

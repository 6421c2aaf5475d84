// Writing files whole or not at all: write to a temporary file in the same directory, flush, fsync,
// then rename over the target. A failure leaves the old file (if any) untouched and no temp behind.
// The system calls are in files_posix.cpp (rename) and files_windows.cpp (ReplaceFileW / MoveFileExW);
// reading a file is platform::ReadFile (io/platform.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

/// Writes `bytes` to `path` atomically. Throws attnviz::Error with a clear message ("cannot write
/// /x/y.png: Permission denied") on failure. Creates no directories. Only a regular file (or
/// nothing) at `path` is replaced: a symlink, FIFO, device or directory there is refused ("cannot
/// write /dev/null: it is a character device, not a regular file; choose another file name").
void write_file_atomic(const std::string& path, std::string_view bytes);

/// Same, with the content produced piece by piece: `next(chunk)` fills `chunk` (cleared before each
/// call) and returns false once there is nothing more. For files too large to build in memory first.
void write_file_atomic_chunks(const std::string& path, const std::function<bool(std::string& chunk)>& next);

/// Throws the error write_file_atomic gives when `path` holds something it may not replace (a
/// symlink, FIFO, device or directory). For commands that check every output before long work.
void check_replaceable(const std::string& path);

/// A file written in full beside its target (a hidden temporary in the same directory), put in place
/// by commit(). Destroyed uncommitted, the temporary is removed and the target left untouched.
class StagedFile {
  public:
    /// Writes the content (as write_file_atomic_chunks does) without replacing `path` yet.
    StagedFile(const std::string& path, const std::function<bool(std::string& chunk)>& next);
    StagedFile(StagedFile&& o) noexcept;
    StagedFile(const StagedFile&) = delete;
    StagedFile& operator=(const StagedFile&) = delete;
    StagedFile& operator=(StagedFile&&) = delete;
    ~StagedFile();
    /// Throws (as check_replaceable) unless the target may still be replaced.
    void check_target() const;
    /// Renames the temporary over the target. Throws attnviz::Error, the temporary then removed.
    void commit();
    const std::string& path() const { return path_; }

  private:
    std::string path_, tmp_;
};

/// A StagedFile holding `bytes`.
StagedFile stage_file(const std::string& path, std::string_view bytes);

/// Commits every file after checking every target: a set of files (a checkpoint folder) is replaced
/// together, or none of it is when a target may not be replaced.
void commit_all(std::vector<StagedFile>& files);

/// Default cap of read_file: 64 MiB (scenes, settings, shaders are far smaller).
inline constexpr std::uint64_t kDefaultReadCap = 64ull * 1024 * 1024;

/// Reads a whole regular file of at most `max_bytes` bytes. Throws attnviz::Error("cannot read FILE:
/// reason"): for a missing file, a directory, FIFO or device ("... is a FIFO, not a regular file"), and a
/// file larger than the cap ("cannot read FILE: too large (2048 MiB > 64 MiB)"). Never blocks on a FIFO.
std::string read_file(const std::string& path, std::uint64_t max_bytes = kDefaultReadCap);

/// "a FIFO", "a directory", "a symbolic link", "a character device", ... for an lstat/stat mode.
std::string file_kind_text(unsigned mode);

/// Creates a directory and its parents if missing. Throws attnviz::Error on failure.
void make_dirs(const std::string& path);

/// A file-name-safe slug: "W_Q" -> "W_Q", "head 2/3" -> "head_2_3".
std::string slug(std::string_view s);

/// Local time as "20261121-053012" for export file names.
std::string timestamp_for_filename();

/// A run-time resource directory and how it was found ("$ATTNVIZ_ASSETS", "next to the executable",
/// or "missing": then `path` is where the installed layout would have it, for error messages).
struct ResourceDir {
    std::string path;
    std::string how;
};

/// The assets directory (scenes): $ATTNVIZ_ASSETS, else <exe>/../share/attnviz/assets (installed:
/// <prefix>/bin/attnviz -> <prefix>/share/attnviz/assets; the build tree has the same layout, linked
/// to the source tree). `attnviz --version` prints it.
ResourceDir find_asset_dir();
/// The GLSL shaders, found the same way ($ATTNVIZ_SHADERS, <exe>/../share/attnviz/shaders).
ResourceDir find_shader_dir();
/// find_asset_dir().path / find_shader_dir().path.
std::string asset_dir();
std::string shader_dir();
/// $XDG_CONFIG_HOME/attnviz (or ~/.config/attnviz; %APPDATA%\attnviz on Windows), created if missing.
std::string user_config_dir();

}  // namespace attnviz

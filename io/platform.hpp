// What differs between operating systems, behind one small interface: io/platform_posix.cpp (Linux)
// or io/platform_windows.cpp (Windows), chosen by io/CMakeLists.txt. Paths are UTF-8 on both (the
// Windows file converts them to UTF-16 for the wide API calls). Writing files whole or not at all
// (StagedFile) has its own pair: io/files_posix.cpp and io/files_windows.cpp.
#pragma once

#include <cstdint>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz::platform {

/// The folder of the running executable ("" if it cannot be found), and how it is found for error
/// messages ("/proc/self/exe", "GetModuleFileNameW").
std::string exe_dir();
const char* exe_dir_source();

/// The base folder of per-user configuration: $XDG_CONFIG_HOME (absolute) or ~/.config on Linux,
/// %APPDATA% on Windows. Throws attnviz::Error when there is none.
std::string config_home();

/// A font file the app draws text with, by its Debian path below /usr/share/fonts/truetype
/// ("dejavu/DejaVuSans.ttf"): that path on Linux (fonts-dejavu-core, fonts-droid-fallback), the copy
/// shipped in <exe>/../share/attnviz/fonts on Windows.
std::string font_file(std::string_view debian_relative);

/// True when standard error is a terminal (progress lines redraw in place).
bool stderr_is_terminal();

/// The local time of `t` (thread-safe).
std::tm local_time(std::time_t t);

/// What is at a path (symlinks not followed, except by is_regular_file / is_directory).
bool exists(const std::string& path);
bool is_regular_file(const std::string& path);
bool is_directory(const std::string& path);

/// A regular file open for reading. open() refuses anything else ("cannot read FILE: it is a FIFO,
/// not a regular file") and never blocks on a FIFO. Throws attnviz::Error("cannot read FILE: ...").
class ReadFile {
  public:
    static ReadFile open(const std::string& path);
    ReadFile(ReadFile&& o) noexcept;
    ReadFile(const ReadFile&) = delete;
    ReadFile& operator=(const ReadFile&) = delete;
    ReadFile& operator=(ReadFile&&) = delete;
    ~ReadFile();
    std::uint64_t size() const { return size_; }
    /// Up to `n` bytes at the current position; 0 at the end. Throws on a read error.
    std::size_t read(void* buf, std::size_t n);
    /// Moves the read position to `offset` bytes from the start. Throws on failure.
    void seek(std::uint64_t offset);
    /// The whole file mapped read-only (copy-on-write, never written back); it stays valid while the
    /// returned pointer lives, after this ReadFile is gone. Throws "cannot map FILE: reason".
    std::shared_ptr<const void> map() const;

  private:
    ReadFile(std::string path, std::intptr_t handle, std::uint64_t size)
        : path_(std::move(path)), handle_(handle), size_(size) {}
    std::string path_;
    std::intptr_t handle_ = -1;  // a descriptor on Linux, a HANDLE on Windows
    std::uint64_t size_ = 0;
};

/// Renames `from` to `to` (a directory, or a file replacing a regular file). Returns "" or the
/// system's reason ("Permission denied").
std::string rename_path(const std::string& from, const std::string& to);
/// Creates a fresh directory PREFIX + 6 random characters, readable like any other output (not
/// mkdtemp's 0700). Returns its path, or throws attnviz::Error("cannot create PREFIX...: reason").
std::string make_unique_dir(const std::string& prefix);
/// Removes an empty directory (best effort).
void remove_empty_dir(const std::string& path);

/// Names this thread (`name` at most 15 characters, or nullptr; top -H, debuggers) and lowers its
/// priority to the nice value `nice` (1..19; Windows: below normal), so the GUI thread wins the cores.
void lower_this_thread_priority(const char* name, int nice);

/// The command line as UTF-8: argv as given on Linux, CommandLineToArgvW's words converted from UTF-16
/// on Windows (whatever the code page). argv() stays valid while this object lives.
class Utf8Args {
  public:
    Utf8Args(int argc, char** argv);
    int argc() const { return int(args_.size()); }
    char** argv() { return pointers_.data(); }

  private:
    std::vector<std::string> args_;
    std::vector<char*> pointers_;  // args_' strings, then nullptr
};

/// The GUI is about to open: on Windows, a console window that was opened only for this process (a
/// double-click in Explorer) is closed; one it shares with a terminal stays. Nothing on Linux.
void release_own_console();

/// Whether the system's display language is Chinese, where the system has one apart from the locale
/// variables (Windows: the user's UI language); false elsewhere (Linux: the variables say).
bool display_language_is_chinese();

}  // namespace attnviz::platform

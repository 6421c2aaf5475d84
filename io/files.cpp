#include "io/files.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"

namespace attnviz {

namespace {

std::string dir_of(const std::string& path) {
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

std::string base_of(const std::string& path) {
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool is_dir(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// The process umask, read without changing it (umask(2) can only be read by setting it, which
/// races with other threads creating files).
mode_t current_umask() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("Umask:", 0) == 0) return mode_t(std::strtoul(line.c_str() + 6, nullptr, 8));
    }
    return 022;
}

std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

std::string exe_dir() {
    char buf[4096];
    const ssize_t len = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (len <= 0) return "";
    buf[len] = '\0';
    return dir_of(buf);
}

/// "/usr/bin/../share/attnviz/assets" -> "/usr/share/attnviz/assets" (no file system access).
std::string lexically_clean(const std::string& path) {
    std::string out = std::filesystem::path(path).lexically_normal().string();
    while (out.size() > 1 && out.back() == '/') out.pop_back();
    return out;
}

#ifndef ATTNVIZ_DATA_FROM_BIN
#define ATTNVIZ_DATA_FROM_BIN "../share/attnviz"
#endif

/// Where a resource directory NAME (assets, shaders) is looked for, in order: $ENV, then the
/// installed layout relative to the executable (<prefix>/bin/attnviz -> <prefix>/share/attnviz/NAME,
/// the relative path from GNUInstallDirs' bindir to datadir), then one level further up (test and
/// fuzz binaries sit one folder deeper in the build tree, which mirrors the installed layout with
/// links into the source tree; CMakeLists.txt). No absolute path of the build machine is compiled in.
ResourceDir find_resource_dir(const char* env_name, const std::string& name) {
    const std::string env = env_or_empty(env_name);
    if (!env.empty()) return {env, std::string("$") + env_name};
    const std::string exe = exe_dir();
    if (exe.empty()) return {"", "no /proc/self/exe"};
    const std::string rel = std::string(ATTNVIZ_DATA_FROM_BIN) + "/" + name;
    const std::string installed = exe + "/" + rel;
    for (const std::string& candidate : {installed, exe + "/../" + rel}) {
        if (is_dir(candidate)) return {lexically_clean(candidate), "next to the executable"};
    }
    return {lexically_clean(installed), "missing"};
}

}  // namespace

std::string file_kind_text(unsigned mode) {
    switch (mode & S_IFMT) {
        case S_IFREG:
            return "a regular file";
        case S_IFDIR:
            return "a directory";
        case S_IFLNK:
            return "a symbolic link";
        case S_IFIFO:
            return "a FIFO";
        case S_IFSOCK:
            return "a socket";
        case S_IFCHR:
            return "a character device";
        case S_IFBLK:
            return "a block device";
        default:
            return "not a regular file";
    }
}

void check_replaceable(const std::string& path) {
    if (path.empty() || path.back() == '/')
        throw Error("cannot write " + path + ": " + std::strerror(EISDIR));
    // Renaming over a symlink, FIFO or device (/dev/null as root!) would destroy it.
    struct stat old {};
    if (::lstat(path.c_str(), &old) == 0 && !S_ISREG(old.st_mode))
        throw Error("cannot write " + path + ": it is " + file_kind_text(old.st_mode) +
                    ", not a regular file; choose another file name");
}

StagedFile::StagedFile(const std::string& path, const std::function<bool(std::string& chunk)>& next)
    : path_(path) {
    auto fail = [&](int err) -> void { throw Error("cannot write " + path + ": " + std::strerror(err)); };
    check_replaceable(path);  // before anything is created
    struct stat old {};
    const bool exists = ::lstat(path.c_str(), &old) == 0;

    // The temp file lives in the target's directory so that rename() is atomic (same filesystem).
    // The leading dot keeps half-written files out of casual directory listings.
    std::string tmp = dir_of(path) + "/." + base_of(path) + ".tmp-XXXXXX";
    const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
    if (fd < 0) fail(errno);

    auto fail_and_clean = [&](int err) -> void {
        ::close(fd);
        ::unlink(tmp.c_str());
        fail(err);
    };

    // mkstemp creates 0600; give the file the permissions a plain open() would: keep the mode of a
    // file we replace, else 0666 minus the umask.
    const mode_t mode = exists ? mode_t(old.st_mode & 07777) : mode_t(0666 & ~current_umask());
    if (::fchmod(fd, mode) != 0) fail_and_clean(errno);

    std::string chunk;
    for (;;) {
        chunk.clear();
        bool more = false;
        try {
            more = next(chunk);
        } catch (...) {
            ::close(fd);
            ::unlink(tmp.c_str());
            throw;
        }
        const char* p = chunk.data();
        std::size_t left = chunk.size();
        while (left > 0) {
            const ssize_t w = ::write(fd, p, left);
            if (w < 0) {
                if (errno == EINTR) continue;
                fail_and_clean(errno);
            }
            p += w;
            left -= std::size_t(w);
        }
        if (!more) break;
    }
    // fsync before rename: otherwise a crash could leave the new name pointing at an empty file.
    if (::fsync(fd) != 0) fail_and_clean(errno);
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        fail(err);
    }
    tmp_ = std::move(tmp);
}

StagedFile::StagedFile(StagedFile&& o) noexcept : path_(std::move(o.path_)), tmp_(std::move(o.tmp_)) {
    o.tmp_.clear();
}

StagedFile::~StagedFile() {
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

void StagedFile::check_target() const {
    // Again: something other than a regular file may have appeared since the file was staged.
    check_replaceable(path_);
}

void StagedFile::commit() {
    if (tmp_.empty()) return;
    try {
        check_target();
    } catch (...) {
        ::unlink(tmp_.c_str());
        tmp_.clear();
        throw;
    }
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp_.c_str());
        tmp_.clear();
        throw Error("cannot write " + path_ + ": " + std::strerror(err));
    }
    tmp_.clear();
    // Make the rename itself durable (best effort: not every filesystem allows fsync on a directory).
    const int dfd = ::open(dir_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)::fsync(dfd);
        ::close(dfd);
    }
}

StagedFile stage_file(const std::string& path, std::string_view bytes) {
    return StagedFile(path, [&](std::string& chunk) {
        chunk.assign(bytes.data(), bytes.size());
        return false;
    });
}

void commit_all(std::vector<StagedFile>& files) {
    // Every target is checked before the first rename: a folder of files (a checkpoint) is replaced
    // whole, or nothing in it is (the staged files are removed when `files` goes).
    for (const StagedFile& f : files) f.check_target();
    for (StagedFile& f : files) f.commit();
}

void write_file_atomic_chunks(const std::string& path, const std::function<bool(std::string& chunk)>& next) {
    StagedFile(path, next).commit();
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
    write_file_atomic_chunks(path, [&](std::string& chunk) {
        chunk.assign(bytes.data(), bytes.size());
        return false;
    });
}

int open_regular_file(const std::string& path, std::uint64_t& size) {
    auto fail = [&](int err) -> void { throw Error("cannot read " + path + ": " + std::strerror(err)); };
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused right after.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) fail(errno);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        fail(err);
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        throw Error("cannot read " + path + ": it is " + file_kind_text(st.st_mode) + ", not a regular file");
    }
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    size = std::uint64_t(std::max<off_t>(st.st_size, 0));
    return fd;
}

std::string read_file(const std::string& path, std::uint64_t max_bytes) {
    auto fail = [&](int err) -> void { throw Error("cannot read " + path + ": " + std::strerror(err)); };
    auto too_large = [&](std::uint64_t size) -> void {
        const auto text = [](std::uint64_t b) {
            return b < (1u << 20) ? std::to_string(b) + " bytes" : std::to_string(b >> 20) + " MiB";
        };
        throw Error("cannot read " + path + ": too large (" + text(size) + " > " + text(max_bytes) + ")");
    };
    std::uint64_t size = 0;
    const int fd = open_regular_file(path, size);
    if (size > max_bytes) {
        ::close(fd);
        too_large(size);
    }
    std::string out;
    out.reserve(std::size_t(size));
    char buf[1 << 16];
    for (;;) {
        const ssize_t r = ::read(fd, buf, sizeof(buf));
        if (r < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            ::close(fd);
            fail(err);
        }
        if (r == 0) break;
        if (out.size() + std::size_t(r) > max_bytes) {  // the file grew while we read it
            ::close(fd);
            too_large(out.size() + std::size_t(r));
        }
        out.append(buf, std::size_t(r));
    }
    ::close(fd);
    return out;
}

void make_dirs(const std::string& path) {
    if (path.empty()) return;
    std::string partial;
    std::size_t pos = 0;
    while (pos <= path.size()) {
        const auto next = path.find('/', pos);
        const std::size_t end = next == std::string::npos ? path.size() : next;
        partial = path.substr(0, end);
        if (!partial.empty() && partial != "." && partial != "..") {
            if (::mkdir(partial.c_str(), 0777) != 0) {
                const int err = errno;
                if (err != EEXIST || !is_dir(partial)) {
                    throw Error("cannot create directory " + path + ": " +
                                std::strerror(err == EEXIST ? ENOTDIR : err));
                }
            }
        }
        if (next == std::string::npos) break;
        pos = next + 1;
    }
}

std::string slug(std::string_view s) {
    // Keep what is safe in a file name on every system; collapse each run of anything else into
    // a single '_'. Underscores already in the name (W_Q) are kept as they are.
    std::string out;
    bool in_run = false;
    for (const char c : s) {
        const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                          c == '_' || c == '-' || c == '.';
        if (safe) {
            out += c;
            in_run = false;
        } else if (!in_run) {
            out += '_';
            in_run = true;
        }
    }
    if (in_run && out.size() > 1) out.pop_back();               // "name " -> "name", not "name_"
    if (!out.empty() && out.front() == '.') out.front() = '_';  // no hidden files
    if (out.empty() || out == "_") return "untitled";
    return out;
}

std::string timestamp_for_filename() {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char buf[32];
    std::strftime(buf, sizeof(buf), "%Y%m%d-%H%M%S", &local);
    return buf;
}

ResourceDir find_asset_dir() {
    return find_resource_dir("ATTNVIZ_ASSETS", "assets");
}

ResourceDir find_shader_dir() {
    return find_resource_dir("ATTNVIZ_SHADERS", "shaders");
}

std::string asset_dir() {
    return find_asset_dir().path;
}

std::string shader_dir() {
    return find_shader_dir().path;
}

std::string user_config_dir() {
    std::string base = env_or_empty("XDG_CONFIG_HOME");
    // The XDG spec says relative values are invalid and must be ignored.
    if (base.empty() || base.front() != '/') {
        std::string home = env_or_empty("HOME");
        if (home.empty()) {
            if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir) home = pw->pw_dir;
        }
        if (home.empty())
            throw Error("cannot find the configuration directory: neither XDG_CONFIG_HOME nor HOME is set");
        base = home + "/.config";
    }
    const std::string dir = base + "/attnviz";
    make_dirs(dir);
    return dir;
}

}  // namespace attnviz

// io/files.hpp's StagedFile on POSIX: mkostemp beside the target, fsync, rename(2), fsync of the
// directory.
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

}  // namespace attnviz

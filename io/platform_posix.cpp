// io/platform.hpp on Linux (and other POSIX systems with /proc).
#include "io/platform.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/error.hpp"
#include "io/files.hpp"

namespace attnviz::platform {

namespace {

std::string env_value(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

std::string parent_dir(const std::string& path) {
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

std::string exe_dir() {
    char buf[4096];
    const ssize_t len = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (len <= 0) return "";
    buf[len] = '\0';
    return parent_dir(buf);
}

const char* exe_dir_source() {
    return "/proc/self/exe";
}

std::string config_home() {
    std::string base = env_value("XDG_CONFIG_HOME");
    // The XDG spec says relative values are invalid and must be ignored.
    if (!base.empty() && base.front() == '/') return base;
    std::string home = env_value("HOME");
    if (home.empty()) {
        if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir) home = pw->pw_dir;
    }
    if (home.empty())
        throw Error("cannot find the configuration directory: neither XDG_CONFIG_HOME nor HOME is set");
    return home + "/.config";
}

std::string font_file(std::string_view debian_relative) {
    return "/usr/share/fonts/truetype/" + std::string(debian_relative);
}

bool stderr_is_terminal() {
    return ::isatty(2) != 0;
}

std::tm local_time(std::time_t t) {
    std::tm local{};
    localtime_r(&t, &local);
    return local;
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

bool is_regular_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_directory(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

ReadFile ReadFile::open(const std::string& path) {
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
    return ReadFile(path, fd, std::uint64_t(std::max<off_t>(st.st_size, 0)));
}

ReadFile::ReadFile(ReadFile&& o) noexcept : path_(std::move(o.path_)), handle_(o.handle_), size_(o.size_) {
    o.handle_ = -1;
}

ReadFile::~ReadFile() {
    if (handle_ >= 0) ::close(int(handle_));
}

std::size_t ReadFile::read(void* buf, std::size_t n) {
    for (;;) {
        const ssize_t r = ::read(int(handle_), buf, n);
        if (r >= 0) return std::size_t(r);
        if (errno != EINTR) throw Error("cannot read " + path_ + ": " + std::strerror(errno));
    }
}

void ReadFile::seek(std::uint64_t offset) {
    if (::lseek(int(handle_), off_t(offset), SEEK_SET) < 0)
        throw Error("cannot read " + path_ + ": " + std::strerror(errno));
}

std::shared_ptr<const void> ReadFile::map() const {
    if (size_ == 0) throw Error("cannot map " + path_ + ": the file is empty");
    void* addr = ::mmap(nullptr, std::size_t(size_), PROT_READ, MAP_PRIVATE, int(handle_), 0);
    if (addr == MAP_FAILED) throw Error("cannot map " + path_ + ": " + std::strerror(errno));
    const std::size_t len = std::size_t(size_);
    return std::shared_ptr<const void>(addr, [len](const void* p) { ::munmap(const_cast<void*>(p), len); });
}

std::string rename_path(const std::string& from, const std::string& to) {
    if (::rename(from.c_str(), to.c_str()) == 0) return "";
    return std::strerror(errno);
}

std::string make_unique_dir(const std::string& prefix) {
    std::string name = prefix + "XXXXXX";
    if (::mkdtemp(name.data()) == nullptr)
        throw Error("cannot create " + prefix + "XXXXXX: " + std::strerror(errno));
    // mkdtemp makes 0700 directories; output should be as readable as any other (0777 minus umask).
    const mode_t mask = ::umask(022);
    ::umask(mask);
    ::chmod(name.c_str(), 0777 & ~mask);
    return name;
}

void remove_empty_dir(const std::string& path) {
    (void)::rmdir(path.c_str());
}

// Linux applies nice values per thread; raising our own niceness needs no privileges.
void lower_this_thread_priority(const char* name, int nice) {
    if (name) pthread_setname_np(pthread_self(), name);  // at most 15 characters
    const auto tid = static_cast<id_t>(syscall(SYS_gettid));
    const int current = getpriority(PRIO_PROCESS, tid);
    if (current < nice) setpriority(PRIO_PROCESS, tid, nice);  // failure is harmless
}

Utf8Args::Utf8Args(int argc, char** argv) : args_(argv, argv + argc) {
    for (std::string& a : args_) pointers_.push_back(a.data());
    pointers_.push_back(nullptr);
}

void release_own_console() {}

bool display_language_is_chinese() {
    return false;
}

}  // namespace attnviz::platform

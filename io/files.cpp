#include "io/files.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "io/platform.hpp"

namespace attnviz {

namespace {

std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
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
    const std::string exe = platform::exe_dir();
    if (exe.empty()) return {"", std::string("no ") + platform::exe_dir_source()};
    const std::string rel = std::string(ATTNVIZ_DATA_FROM_BIN) + "/" + name;
    const std::string installed = exe + "/" + rel;
    for (const std::string& candidate : {installed, exe + "/../" + rel}) {
        if (platform::is_directory(candidate)) return {lexically_clean(candidate), "next to the executable"};
    }
    return {lexically_clean(installed), "missing"};
}

}  // namespace

void StagedFile::check_target() const {
    // Again: something other than a regular file may have appeared since the file was staged.
    check_replaceable(path_);
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

std::string read_file(const std::string& path, std::uint64_t max_bytes) {
    auto too_large = [&](std::uint64_t size) -> void {
        const auto text = [](std::uint64_t b) {
            return b < (1u << 20) ? std::to_string(b) + " bytes" : std::to_string(b >> 20) + " MiB";
        };
        throw Error("cannot read " + path + ": too large (" + text(size) + " > " + text(max_bytes) + ")");
    };
    platform::ReadFile f = platform::ReadFile::open(path);
    if (f.size() > max_bytes) too_large(f.size());
    std::string out;
    out.reserve(std::size_t(f.size()));
    char buf[1 << 16];
    for (;;) {
        const std::size_t r = f.read(buf, sizeof(buf));
        if (r == 0) break;
        if (out.size() + r > max_bytes) too_large(out.size() + r);  // the file grew while we read it
        out.append(buf, r);
    }
    return out;
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
    const std::tm local = platform::local_time(std::time(nullptr));
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
    const std::string dir = platform::config_home() + "/attnviz";
    make_dirs(dir);
    return dir;
}

}  // namespace attnviz

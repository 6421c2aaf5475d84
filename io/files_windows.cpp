// io/files.hpp's StagedFile on Windows: a new file beside the target, FlushFileBuffers, then
// ReplaceFileW over an existing target (keeping its attributes and permissions) or MoveFileExW.
#include "io/files.hpp"

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "core/error.hpp"
#include "io/platform_windows.hpp"

namespace attnviz {

namespace {

using platform::win::last_error_text;
using platform::win::widen;

std::size_t last_separator(const std::string& path) {
    return path.find_last_of("/\\");
}

std::string folder_of(const std::string& path) {
    const auto slash = last_separator(path);
    if (slash == std::string::npos) return ".";
    if (slash == 0) return path.substr(0, 1);
    return path.substr(0, slash);
}

std::string name_of(const std::string& path) {
    const auto slash = last_separator(path);
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

DWORD attributes_of(const std::string& path) {
    return GetFileAttributesW(widen(path).c_str());
}

/// A path for the calls that want Windows' own separators (ReplaceFileW).
std::wstring native(const std::string& path) {
    std::wstring w = widen(path);
    for (wchar_t& c : w)
        if (c == L'/') c = L'\\';
    return w;
}

/// Why ReplaceFileW could not replace `path`, in the user's terms, for its two usual causes: a read-only
/// file and a program holding the file open without sharing it. "" for any other cause.
std::string replace_failure(const std::string& path) {
    const DWORD a = attributes_of(path);
    if (a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_READONLY))
        return "the file is read-only (clear Read-only in its Properties, or choose another name)";
    HANDLE h = CreateFileW(widen(path).c_str(), GENERIC_WRITE | DELETE,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                           FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h != INVALID_HANDLE_VALUE) {
        CloseHandle(h);
    } else if (const DWORD open_err = GetLastError();
               open_err == ERROR_SHARING_VIOLATION || open_err == ERROR_LOCK_VIOLATION) {
        return "another program has it open (close it there, then try again)";
    }
    return "";
}

}  // namespace

std::string file_kind_text(unsigned mode) {
    // The POSIX file types that exist on Windows (as mingw's stat reports them).
    switch (mode & 0xF000) {
        case 0x8000:
            return "a regular file";
        case 0x4000:
            return "a directory";
        case 0x2000:
            return "a character device";
        case 0x1000:
            return "a FIFO";
        default:
            return "not a regular file";
    }
}

void check_replaceable(const std::string& path) {
    if (path.empty() || path.back() == '/' || path.back() == '\\')
        throw Error("cannot write " + path + ": " + std::strerror(EISDIR));
    const DWORD a = attributes_of(path);
    if (a == INVALID_FILE_ATTRIBUTES) return;
    if (a & FILE_ATTRIBUTE_DIRECTORY)
        throw Error("cannot write " + path +
                    ": it is a directory, not a regular file; choose another file name");
    if (a & FILE_ATTRIBUTE_REPARSE_POINT)
        throw Error("cannot write " + path +
                    ": it is a symbolic link, not a regular file; choose another file name");
}

StagedFile::StagedFile(const std::string& path, const std::function<bool(std::string& chunk)>& next)
    : path_(path) {
    auto fail = [&](const std::string& why) -> void { throw Error("cannot write " + path + ": " + why); };
    check_replaceable(path);  // before anything is created

    // Beside the target (same volume: the rename is atomic); the dot keeps it out of casual listings.
    static const char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    std::random_device rd;
    std::mt19937 gen(rd());
    std::string tmp;
    HANDLE h = INVALID_HANDLE_VALUE;
    for (int attempt = 0; attempt < 100 && h == INVALID_HANDLE_VALUE; ++attempt) {
        tmp = folder_of(path) + "/." + name_of(path) + ".tmp-";
        for (int i = 0; i < 6; ++i) tmp += kChars[gen() % 36];
        h = CreateFileW(widen(tmp).c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW, FILE_ATTRIBUTE_NORMAL,
                        nullptr);
        if (h == INVALID_HANDLE_VALUE && GetLastError() != ERROR_FILE_EXISTS) fail(last_error_text());
    }
    if (h == INVALID_HANDLE_VALUE) fail("no free temporary name");

    auto fail_and_clean = [&](const std::string& why) -> void {
        CloseHandle(h);
        DeleteFileW(widen(tmp).c_str());
        fail(why);
    };
    std::string chunk;
    for (;;) {
        chunk.clear();
        bool more = false;
        try {
            more = next(chunk);
        } catch (...) {
            CloseHandle(h);
            DeleteFileW(widen(tmp).c_str());
            throw;
        }
        const char* p = chunk.data();
        std::size_t left = chunk.size();
        while (left > 0) {
            DWORD wrote = 0;
            const DWORD want = DWORD(std::min<std::size_t>(left, 1u << 30));
            if (!WriteFile(h, p, want, &wrote, nullptr)) fail_and_clean(last_error_text());
            p += wrote;
            left -= wrote;
        }
        if (!more) break;
    }
    // On disk before the rename: otherwise a crash could leave the new name pointing at an empty file.
    if (!FlushFileBuffers(h)) fail_and_clean(last_error_text());
    CloseHandle(h);
    tmp_ = std::move(tmp);
}

StagedFile::StagedFile(StagedFile&& o) noexcept : path_(std::move(o.path_)), tmp_(std::move(o.tmp_)) {
    o.tmp_.clear();
}

StagedFile::~StagedFile() {
    if (!tmp_.empty()) DeleteFileW(widen(tmp_).c_str());
}

void StagedFile::commit() {
    if (tmp_.empty()) return;
    const std::wstring wtmp = widen(tmp_), wpath = widen(path_);
    try {
        check_target();
    } catch (...) {
        DeleteFileW(wtmp.c_str());
        tmp_.clear();
        throw;
    }
    std::string why;
    // ReplaceFileW keeps the replaced file's attributes and permissions; it fails (nothing changed) for
    // a read-only file or one another program holds open without sharing. For any other failure (some
    // file systems, Wine) the rename below still replaces the file in one step.
    if (attributes_of(path_) != INVALID_FILE_ATTRIBUTES &&
        !ReplaceFileW(native(path_).c_str(), native(tmp_).c_str(), nullptr, REPLACEFILE_IGNORE_MERGE_ERRORS,
                      nullptr, nullptr))
        why = replace_failure(path_);
    const bool ok = why.empty() && (attributes_of(tmp_) == INVALID_FILE_ATTRIBUTES ||  // replaced
                                    MoveFileExW(wtmp.c_str(), wpath.c_str(),
                                                MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH));
    if (!ok) {
        if (why.empty()) why = last_error_text();
        DeleteFileW(wtmp.c_str());
        tmp_.clear();
        throw Error("cannot write " + path_ + ": " + why);
    }
    tmp_.clear();
}

void make_dirs(const std::string& path) {
    if (path.empty()) return;
    std::size_t pos = 0;
    while (pos <= path.size()) {
        const auto next = path.find_first_of("/\\", pos);
        const std::size_t end = next == std::string::npos ? path.size() : next;
        const std::string partial = path.substr(0, end);
        // Skip "", ".", "..", a drive ("C:") and the start of a UNC path ("\\server").
        const bool skip =
            partial.empty() || partial == "." || partial == ".." ||
            (partial.size() == 2 && partial[1] == ':') || end <= 1 ||
            (partial.rfind("\\\\", 0) == 0 && partial.find_first_of("/\\", 2) == std::string::npos);
        if (!skip && !CreateDirectoryW(widen(partial).c_str(), nullptr)) {
            const DWORD err = GetLastError();
            const DWORD a = attributes_of(partial);
            if (err != ERROR_ALREADY_EXISTS || a == INVALID_FILE_ATTRIBUTES ||
                !(a & FILE_ATTRIBUTE_DIRECTORY)) {
                throw Error("cannot create directory " + path + ": " +
                            (err == ERROR_ALREADY_EXISTS ? std::string(std::strerror(ENOTDIR))
                                                         : platform::win::error_text(err)));
            }
        }
        if (next == std::string::npos) break;
        pos = next + 1;
    }
}

}  // namespace attnviz

// Shared test helpers for files and errors: a scratch directory removed with everything in it, and
// the message of the attnviz::Error a call throws.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <system_error>

#include "core/error.hpp"

namespace attnviz::test {

/// A fresh directory under the system's temp directory (attnviz-TAG-XXXXXX), removed with its
/// contents at the end of the scope -- even when a test made parts of it unwritable.
struct TempDir {
    std::string path;
    explicit TempDir(const std::string& tag = "test") {
        std::string t = (std::filesystem::temp_directory_path() / ("attnviz-" + tag + "-XXXXXX")).string();
        path = ::mkdtemp(t.data());
    }
    ~TempDir() {
        namespace fs = std::filesystem;
        std::error_code ec;
        fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
        for (const auto& e : fs::recursive_directory_iterator(path, ec))
            if (e.is_directory()) fs::permissions(e.path(), fs::perms::owner_all, fs::perm_options::add, ec);
        fs::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    /// Names of the entries of the directory (or of its subdirectory `sub`).
    std::set<std::string> entries(const std::string& sub = "") const {
        std::set<std::string> out;
        for (const auto& e : std::filesystem::directory_iterator(sub.empty() ? path : path + "/" + sub))
            out.insert(e.path().filename().string());
        return out;
    }
};

/// The message of the attnviz::Error `f` throws, or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace attnviz::test

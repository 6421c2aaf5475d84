// io/platform.hpp on Windows: the wide (UTF-16) API, paths converted from and to UTF-8.
#include "io/platform.hpp"

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
// (after windows.h)
#include <io.h>
#include <knownfolders.h>
#include <shellapi.h>
#include <shlobj.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "core/error.hpp"
#include "io/platform_windows.hpp"

#ifndef ATTNVIZ_DATA_FROM_BIN
#define ATTNVIZ_DATA_FROM_BIN "share/attnviz"
#endif

namespace attnviz::platform {

namespace win {

std::wstring widen(std::string_view s) {
    if (s.empty()) return {};
    const int n = MultiByteToWideChar(CP_UTF8, 0, s.data(), int(s.size()), nullptr, 0);
    std::wstring w(std::size_t(n > 0 ? n : 0), L'\0');
    if (n > 0) MultiByteToWideChar(CP_UTF8, 0, s.data(), int(s.size()), w.data(), n);
    return w;
}

std::string narrow(std::wstring_view w) {
    if (w.empty()) return {};
    const int n = WideCharToMultiByte(CP_UTF8, 0, w.data(), int(w.size()), nullptr, 0, nullptr, nullptr);
    std::string s(std::size_t(n > 0 ? n : 0), '\0');
    if (n > 0) WideCharToMultiByte(CP_UTF8, 0, w.data(), int(w.size()), s.data(), n, nullptr, nullptr);
    return s;
}

std::string error_text(unsigned long code) {
    wchar_t* buf = nullptr;
    const DWORD n = FormatMessageW(
        FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr,
        DWORD(code), 0, reinterpret_cast<wchar_t*>(&buf), 0, nullptr);
    std::string text = n && buf ? narrow(std::wstring_view(buf, n)) : "error " + std::to_string(code);
    if (buf) LocalFree(buf);
    while (!text.empty() &&
           (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' || text.back() == '.'))
        text.pop_back();
    for (char& c : text)
        if (c == '\r' || c == '\n') c = ' ';
    return text;
}

std::string last_error_text() {
    return error_text(GetLastError());
}

}  // namespace win

namespace {

std::string forward_slashes(std::string s) {
    for (char& c : s)
        if (c == '\\') c = '/';
    return s;
}

DWORD attributes(const std::string& path) {
    return GetFileAttributesW(win::widen(path).c_str());
}

}  // namespace

std::string exe_dir() {
    std::wstring buf(32768, L'\0');
    const DWORD n = GetModuleFileNameW(nullptr, buf.data(), DWORD(buf.size()));
    if (n == 0 || n >= buf.size()) return "";
    const std::string path = forward_slashes(win::narrow(std::wstring_view(buf.data(), n)));
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? "." : path.substr(0, slash);
}

const char* exe_dir_source() {
    return "GetModuleFileNameW";
}

std::string config_home() {
    PWSTR dir = nullptr;
    std::string out;
    if (SHGetKnownFolderPath(FOLDERID_RoamingAppData, KF_FLAG_CREATE, nullptr, &dir) == S_OK && dir)
        out = forward_slashes(win::narrow(dir));
    CoTaskMemFree(dir);
    if (out.empty()) {
        if (const wchar_t* env = _wgetenv(L"APPDATA"); env && *env) out = forward_slashes(win::narrow(env));
    }
    if (out.empty()) throw Error("cannot find the configuration directory: %APPDATA% is not set");
    return out;
}

std::string font_file(std::string_view debian_relative) {
    return exe_dir() + "/" ATTNVIZ_DATA_FROM_BIN "/fonts/" + std::string(debian_relative);
}

bool stderr_is_terminal() {
    return _isatty(_fileno(stderr)) != 0;
}

std::tm local_time(std::time_t t) {
    std::tm local{};
    localtime_s(&local, &t);
    return local;
}

bool exists(const std::string& path) {
    return attributes(path) != INVALID_FILE_ATTRIBUTES;
}

bool is_regular_file(const std::string& path) {
    const DWORD a = attributes(path);
    return a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY);
}

bool is_directory(const std::string& path) {
    const DWORD a = attributes(path);
    return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY);
}

ReadFile ReadFile::open(const std::string& path) {
    const DWORD a = attributes(path);
    if (a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY))
        throw Error("cannot read " + path + ": it is a directory, not a regular file");
    // Others may read, write or rename the file meanwhile, as on Linux.
    HANDLE h = CreateFileW(win::widen(path).c_str(), GENERIC_READ,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                           FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h == INVALID_HANDLE_VALUE) throw Error("cannot read " + path + ": " + win::last_error_text());
    if (GetFileType(h) != FILE_TYPE_DISK) {
        CloseHandle(h);
        throw Error("cannot read " + path + ": it is a device or pipe, not a regular file");
    }
    LARGE_INTEGER size{};
    if (!GetFileSizeEx(h, &size)) {
        const std::string err = win::last_error_text();
        CloseHandle(h);
        throw Error("cannot read " + path + ": " + err);
    }
    return ReadFile(path, reinterpret_cast<std::intptr_t>(h), std::uint64_t(size.QuadPart));
}

ReadFile::ReadFile(ReadFile&& o) noexcept : path_(std::move(o.path_)), handle_(o.handle_), size_(o.size_) {
    o.handle_ = -1;
}

ReadFile::~ReadFile() {
    if (handle_ != -1) CloseHandle(reinterpret_cast<HANDLE>(handle_));
}

std::size_t ReadFile::read(void* buf, std::size_t n) {
    DWORD got = 0;
    const DWORD want = DWORD(std::min<std::size_t>(n, 1u << 30));
    if (!::ReadFile(reinterpret_cast<HANDLE>(handle_), buf, want, &got, nullptr))
        throw Error("cannot read " + path_ + ": " + win::last_error_text());
    return std::size_t(got);
}

void ReadFile::seek(std::uint64_t offset) {
    LARGE_INTEGER to{};
    to.QuadPart = LONGLONG(offset);
    if (!SetFilePointerEx(reinterpret_cast<HANDLE>(handle_), to, nullptr, FILE_BEGIN))
        throw Error("cannot read " + path_ + ": " + win::last_error_text());
}

std::shared_ptr<const void> ReadFile::map() const {
    if (size_ == 0) throw Error("cannot map " + path_ + ": the file is empty");
    HANDLE mapping =
        CreateFileMappingW(reinterpret_cast<HANDLE>(handle_), nullptr, PAGE_READONLY, 0, 0, nullptr);
    if (!mapping) throw Error("cannot map " + path_ + ": " + win::last_error_text());
    const void* view = MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, 0);
    const std::string err = view ? "" : win::last_error_text();
    CloseHandle(mapping);  // the view keeps the mapping alive
    if (!view) throw Error("cannot map " + path_ + ": " + err);
    return std::shared_ptr<const void>(view, [](const void* p) { UnmapViewOfFile(p); });
}

std::string rename_path(const std::string& from, const std::string& to) {
    const std::wstring wfrom = win::widen(from), wto = win::widen(to);
    // rename(2) replaces an empty directory with a directory; MoveFileExW never replaces one.
    if (is_directory(from) && is_directory(to)) (void)RemoveDirectoryW(wto.c_str());
    if (MoveFileExW(wfrom.c_str(), wto.c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
        return "";
    return win::last_error_text();
}

std::string make_unique_dir(const std::string& prefix) {
    static const char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    std::random_device rd;
    std::mt19937 gen(rd());
    for (int attempt = 0; attempt < 100; ++attempt) {
        std::string name = prefix;
        for (int i = 0; i < 6; ++i) name += kChars[gen() % 36];
        if (CreateDirectoryW(win::widen(name).c_str(), nullptr)) return name;
        if (GetLastError() != ERROR_ALREADY_EXISTS)
            throw Error("cannot create " + prefix + "XXXXXX: " + win::last_error_text());
    }
    throw Error("cannot create " + prefix + "XXXXXX: every name tried exists");
}

void remove_empty_dir(const std::string& path) {
    (void)RemoveDirectoryW(win::widen(path).c_str());
}

void lower_this_thread_priority(const char* name, int /*nice*/) {
    // SetThreadDescription exists from Windows 10 1607 on: looked up, not linked.
    using SetDescription = HRESULT(WINAPI*)(HANDLE, PCWSTR);
    if (name) {
        if (HMODULE k = GetModuleHandleW(L"kernel32.dll")) {
            if (auto set = reinterpret_cast<SetDescription>(
                    reinterpret_cast<void*>(GetProcAddress(k, "SetThreadDescription"))))
                set(GetCurrentThread(), win::widen(name).c_str());
        }
    }
    SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_BELOW_NORMAL);
}

Utf8Args::Utf8Args(int argc, char** argv) {
    int n = 0;
    if (LPWSTR* w = CommandLineToArgvW(GetCommandLineW(), &n)) {
        for (int i = 0; i < n; ++i) args_.push_back(win::narrow(w[i]));
        LocalFree(w);
    } else {
        args_.assign(argv, argv + argc);
    }
    for (std::string& a : args_) pointers_.push_back(a.data());
    pointers_.push_back(nullptr);
}

void release_own_console() {
    // A console that only this process uses was opened for it (Explorer); hide it behind the window.
    DWORD pids[2];
    if (HWND console = GetConsoleWindow(); console && GetConsoleProcessList(pids, 2) == 1)
        ShowWindow(console, SW_HIDE);
}

bool display_language_is_chinese() {
    return PRIMARYLANGID(GetUserDefaultUILanguage()) == LANG_CHINESE;
}

}  // namespace attnviz::platform

// What every platform's file chooser shares: the runner thread and file URIs. The backends are in
// file_chooser_linux.cpp (portal, zenity, kdialog) and file_chooser_windows.cpp (the common item dialog).
#include "app/file_chooser.hpp"

namespace attnviz::app {

namespace {

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

std::string path_from_file_uri(const std::string& uri) {
    std::string rest;
    if (uri.rfind("file:///", 0) == 0)
        rest = uri.substr(7);
    else if (uri.rfind("file://localhost/", 0) == 0)
        rest = uri.substr(16);
    else
        return "";
    std::string out;
    for (std::size_t i = 0; i < rest.size(); ++i) {
        if (rest[i] == '%') {
            if (i + 2 >= rest.size()) return "";
            const int hi = hex_value(rest[i + 1]), lo = hex_value(rest[i + 2]);
            if (hi < 0 || lo < 0) return "";
            const char c = char(hi * 16 + lo);
            if (c == '\0') return "";
            out += c;
            i += 2;
        } else {
            out += rest[i];
        }
    }
    return out;
}

ChooserRunner::ChooserRunner(std::vector<std::unique_ptr<FileChooser>> backends, std::function<void()> wake)
    : backends_(std::move(backends)), wake_(std::move(wake)) {}

ChooserRunner::~ChooserRunner() {
    stop_ = true;
    join();
}

void ChooserRunner::join() {
    if (thread_.joinable()) thread_.join();
}

bool ChooserRunner::start(ChooseRequest request, int purpose) {
    if (backends_.empty() || running_.load()) return false;
    join();  // the previous dialog's thread has finished (running_ is false)
    stop_ = false;
    running_ = true;
    thread_ = std::thread([this, request = std::move(request), purpose] {
        ChooseResult r;
        r.status = ChooseResult::Status::Unavailable;
        r.message = "no file chooser";
        for (const auto& backend : backends_) {
            r = backend->choose(request, stop_);
            r.backend = backend->name();
            if (r.status != ChooseResult::Status::Unavailable) break;
        }
        // All three under the lock that poll() takes: a poll() that returns the answer finds busy()
        // false and wake already called, and a loop woken by wake finds the answer.
        std::lock_guard<std::mutex> lock(mutex_);
        answer_ = Answer{purpose, std::move(r)};
        running_ = false;
        if (wake_) wake_();
    });
    return true;
}

std::optional<ChooserRunner::Answer> ChooserRunner::poll() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::optional<Answer> a = std::move(answer_);
    answer_.reset();
    return a;
}

}  // namespace attnviz::app

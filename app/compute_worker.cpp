#include "app/compute_worker.hpp"

#include <chrono>
#include <exception>

#include "core/error.hpp"
#include "io/platform.hpp"

namespace attnviz::app {

ComputeWorker::ComputeWorker(int threads, ComputeFn compute, int progress_ms)
    : compute_(compute ? std::move(compute) : ComputeFn([](const Config& c, const ComputeOptions& o) {
          return compute_trace(c, o);
      })),
      threads_(threads < 1 ? 1 : threads),
      progress_window_(progress_ms),
      last_delivery_(std::chrono::steady_clock::now()) {
    thread_ = std::thread([this] { run(); });
}

ComputeWorker::~ComputeWorker() {
    shutdown();
}

std::uint64_t ComputeWorker::submit(const Config& cfg) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::uint64_t id = ++latest_id_;
    pending_ = cfg;  // replaces a request that has not started: only the latest matters
    pending_id_ = id;
    // The running computation is stale now. Cancel it -- unless the screen has gone without a new
    // trace for the progress window (kProgressMs): then let it finish and show it (the latest runs right
    // after), so a continuous slider drag on a slow trace shows intermediate results instead of nothing until
    // the mouse stops.
    const bool starving = std::chrono::steady_clock::now() - last_delivery_ > progress_window_;
    if (running_cancel_ && !starving) running_cancel_->store(true);
    wake_.notify_one();
    return id;
}

std::optional<ComputeWorker::Result> ComputeWorker::poll() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::optional<Result> out;
    out.swap(result_);
    return out;
}

bool ComputeWorker::busy() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return pending_.has_value() || running_;
}

bool ComputeWorker::wait_idle(double timeout_seconds) {
    std::unique_lock<std::mutex> lock(mutex_);
    return idle_.wait_for(lock, std::chrono::duration<double>(timeout_seconds),
                          [this] { return !pending_.has_value() && !running_; });
}

void ComputeWorker::set_threads(int threads) {
    std::lock_guard<std::mutex> lock(mutex_);
    threads_ = threads < 1 ? 1 : threads;
}

int ComputeWorker::threads() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return threads_;
}

void ComputeWorker::shutdown() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
        pending_.reset();
        if (running_cancel_) running_cancel_->store(true);
        wake_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
}

// The GUI thread (and the software rasteriser's threads) must win when they compete with the
// computation for the two cores: a frame that waits for the CPU is a stutter the user sees, a trace
// that arrives a few milliseconds later is not. So this thread (and the pool threads it starts,
// which inherit the setting) runs at a lower priority (io/platform_*.cpp). The name shows up in
// top -H and perf.
void lower_priority_of_this_thread(const char* name) {
    platform::lower_this_thread_priority(name, kWorkerNice);
}

void ComputeWorker::run() {
    lower_priority_of_this_thread("attnviz-compute");
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        wake_.wait(lock, [this] { return stop_ || pending_.has_value(); });
        if (stop_) break;

        const Config cfg = std::move(*pending_);
        const std::uint64_t id = pending_id_;
        pending_.reset();
        auto cancel = std::make_shared<std::atomic<bool>>(false);
        running_cancel_ = cancel;
        running_ = true;
        ComputeOptions options;
        options.threads = threads_;
        options.cancel = cancel.get();
        lock.unlock();

        // The computation runs without the lock so submit() and poll() stay instant.
        Result result;
        result.request = id;
        bool cancelled = false;
        const auto t0 = std::chrono::steady_clock::now();
        try {
            result.trace = std::make_shared<const Trace>(compute_(cfg, options));
        } catch (const Cancelled&) {
            cancelled = true;
        } catch (const std::bad_alloc&) {
            result.error =
                "not enough memory for this configuration; make the text shorter or d_model smaller";
        } catch (const std::exception& e) {
            result.error = e.what();
        }
        result.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

        lock.lock();
        running_ = false;
        running_cancel_.reset();
        // Every finished result is newer than what is on screen, so it is worth showing even when
        // a newer request is already queued (the UI keeps saying "updating…" meanwhile).
        if (!cancelled) {
            result_ = std::move(result);
            last_delivery_ = std::chrono::steady_clock::now();
        }
        if (!pending_.has_value()) idle_.notify_all();
    }
    running_ = false;
    idle_.notify_all();
}

}  // namespace attnviz::app

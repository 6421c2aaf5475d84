// The compute worker: recomputes the trace on a background thread so a frame is never blocked.
//
// The GUI submits the Config it wants after every edit. Only the latest request matters: a newer
// submit replaces a request that has not started yet (rapid slider moves coalesce into one
// computation) and cancels the one that is running (compute_trace polls the cancel flag between
// passes and throws Cancelled). The GUI polls once per frame without blocking and keeps showing the
// last good trace until a newer one arrives. No OpenGL, no ImGui.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/trace.hpp"

namespace attnviz::app {

/// Nice value of the worker thread (0 = normal, 19 = lowest): below the GUI, see compute_worker.cpp.
inline constexpr int kWorkerNice = 5;
/// A stale computation is cancelled by a newer request only while the screen got a new trace
/// within this many milliseconds; after that it is allowed to finish and is shown (progress).
inline constexpr int kProgressMs = 250;

/// Names the calling thread (`name` at most 15 characters, or nullptr) and lowers its priority to
/// kWorkerNice, so background work yields the cores to the GUI. For the worker and helper threads.
void lower_priority_of_this_thread(const char* name);

class ComputeWorker {
  public:
    /// What the worker calls to compute; compute_trace by default, replaceable in tests.
    using ComputeFn = std::function<Trace(const Config&, const ComputeOptions&)>;

    /// One finished request: either a trace or a learner-facing error message.
    struct Result {
        std::uint64_t request = 0;           // the id submit() returned
        std::shared_ptr<const Trace> trace;  // null on error
        std::string error;                   // empty on success
        double ms = 0;                       // wall time of the computation
        bool ok() const { return trace != nullptr; }
    };

    /// `threads` is passed to compute_trace (1 leaves the other core to the GUI).
    /// `progress_ms`: see kProgressMs (tests pass a very long window to get pure latest-wins).
    explicit ComputeWorker(int threads = 1, ComputeFn compute = {}, int progress_ms = kProgressMs);
    ~ComputeWorker();  // cancels the running computation and joins the thread
    ComputeWorker(const ComputeWorker&) = delete;
    ComputeWorker& operator=(const ComputeWorker&) = delete;

    /// Asks for `cfg` to be computed; returns its request id (increasing). Replaces any request not
    /// yet started and cancels the one running -- unless no result has been produced for progress_ms,
    /// in which case the running one finishes first (progress during a continuous drag). Never blocks
    /// on a computation.
    std::uint64_t submit(const Config& cfg);

    /// The newest result finished since the last poll, if any. A finished result is newer than any
    /// before it, so it is handed back even when a newer request is already queued (busy() stays
    /// true until the latest is done); cancelled computations yield nothing.
    std::optional<Result> poll();

    /// True while a request is waiting or being computed.
    bool busy() const;

    /// Blocks until not busy or the timeout passes (for tests and headless use); true when idle.
    bool wait_idle(double timeout_seconds);

    void set_threads(int threads);
    int threads() const;

    /// Cancels, stops and joins the thread. Idempotent; the destructor calls it.
    void shutdown();

  private:
    void run();

    ComputeFn compute_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;   // signals the worker: new request or stop
    std::condition_variable idle_;   // signals waiters: the worker became idle
    std::optional<Config> pending_;  // latest request not yet started
    std::uint64_t pending_id_ = 0;
    std::uint64_t latest_id_ = 0;                        // id of the newest submit
    bool running_ = false;                               // a computation is in progress
    std::shared_ptr<std::atomic<bool>> running_cancel_;  // cancel flag of the running computation
    std::optional<Result> result_;                       // newest finished result, not yet polled
    int threads_ = 1;
    bool stop_ = false;
    std::chrono::milliseconds progress_window_;            // kProgressMs unless a test asks otherwise
    std::chrono::steady_clock::time_point last_delivery_;  // newest result produced (or construction)
    std::thread thread_;
};

}  // namespace attnviz::app

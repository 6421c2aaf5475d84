// The compute worker: recomputes the trace on a background thread so a frame is never blocked.
//
// The GUI submits the Config it wants after every edit. Only the latest request matters: a newer
// submit replaces a request that has not started yet (rapid slider moves coalesce into one
// computation) and cancels the one that is running (compute_trace polls the cancel flag between
// passes and throws Cancelled). The GUI polls once per frame without blocking and keeps showing the
// last good trace until a newer one arrives. No OpenGL, no ImGui.
#pragma once

#include <atomic>
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
    explicit ComputeWorker(int threads = 1, ComputeFn compute = {});
    ~ComputeWorker();  // cancels the running computation and joins the thread
    ComputeWorker(const ComputeWorker&) = delete;
    ComputeWorker& operator=(const ComputeWorker&) = delete;

    /// Asks for `cfg` to be computed; returns its request id (increasing). Replaces any request not
    /// yet started and cancels the one running. Never blocks on a computation.
    std::uint64_t submit(const Config& cfg);

    /// The newest result finished since the last poll, if any. Results of requests superseded by a
    /// newer submit are dropped, so what poll returns is always the latest the worker knows of.
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
    std::thread thread_;
};

}  // namespace attnviz::app

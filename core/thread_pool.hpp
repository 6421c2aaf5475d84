// A tiny fork-join helper for the trace: run `count` independent tasks (one per head, or one per
// row block of a big matrix product) on a few threads. Eigen stays single-threaded inside each
// task, so when the other core is busy the work simply takes longer instead of thrashing.
//
// The helper threads are started once, on first use, and then sleep on a condition variable
// between calls (starting a std::thread costs ≈ 50 µs, which small traces used to pay per call).
#pragma once

#include <atomic>
#include <functional>

namespace attnviz {

/// Number of worker threads to use for `requested`: at most the hardware concurrency (0 = all of it;
/// at least 1).
int resolve_threads(int requested);

/// Calls fn(i) for i in [0, count) on up to `threads` threads (the calling thread is one of them;
/// the others come from a process-wide pool that grows to the largest `threads` ever asked for).
/// Tasks are handed out one at a time, so uneven tasks balance, and a thread that is slowed down
/// (its core busy with another program) simply takes fewer tasks. If `cancel` becomes true, no new
/// task starts and Cancelled is thrown after the running ones finish. The first exception thrown
/// by a task is rethrown here (the remaining tasks are skipped). Safe to call from several threads
/// at once, and from inside a task (the caller always works on its own tasks, so it never waits
/// for a pool thread that is busy elsewhere before making progress).
void parallel_for(int count, int threads, const std::function<void(int)>& fn,
                  const std::atomic<bool>* cancel = nullptr);

}  // namespace attnviz

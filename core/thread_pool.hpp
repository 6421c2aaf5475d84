// A tiny fork-join helper for the trace: run `count` independent tasks (one per head, or one per
// row block of a big matrix product) on a few std::threads. Eigen stays single-threaded inside each
// task, so when the other core is busy the work simply takes longer instead of thrashing.
#pragma once

#include <atomic>
#include <functional>

namespace attnviz {

/// Number of worker threads to use for `requested` (0 = hardware concurrency, at least 1).
int resolve_threads(int requested);

/// Calls fn(i) for i in [0, count) on up to `threads` threads (the calling thread is one of them).
/// Tasks are handed out one at a time, so uneven tasks balance. If `cancel` becomes true, no new
/// task starts and Cancelled is thrown after the running ones finish. The first exception thrown
/// by a task is rethrown here (the remaining tasks are skipped).
void parallel_for(int count, int threads, const std::function<void(int)>& fn,
                  const std::atomic<bool>* cancel = nullptr);

}  // namespace attnviz

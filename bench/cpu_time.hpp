// CPU time of every thread of this process, for the benchmarks that compare with PyTorch: on a busy
// machine wall time is mostly waiting for a core, so CPU time is the fairer figure there.
#pragma once

#include <ctime>

namespace attnviz::bench {

/// CPU time of every thread of this process, in ms (Google Benchmark's CPU column is the main thread's).
inline double process_cpu_ms() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

}  // namespace attnviz::bench

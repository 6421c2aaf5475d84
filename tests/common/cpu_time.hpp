// CPU seconds the calling thread has run (user + system). Tests that bound how long something
// takes measure this, not the wall clock: another process holding the core does not inflate it.
#pragma once

#include <ctime>

namespace attnviz::test {

inline double thread_cpu_seconds() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

}  // namespace attnviz::test

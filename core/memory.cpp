#include "core/memory.hpp"

#include <cstdlib>  // defines __GLIBC__ when the C library is glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace attnviz {

bool tune_allocator_for_traces() {
#if defined(__GLIBC__)
    // 32 MiB is the largest mmap threshold glibc accepts on 64-bit (HEAP_MAX_SIZE / 2). Setting it
    // also switches off glibc's dynamic threshold, which would otherwise start low again.
    const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024) == 1;
    // Do not give the top of a heap back to the kernel after every trace; 1 GiB bounds what may
    // stay mapped but unused.
    const bool trim_ok = mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024) == 1;
    return mmap_ok && trim_ok;
#else
    return false;
#endif
}

}  // namespace attnviz

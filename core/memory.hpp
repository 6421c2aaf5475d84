// Process-wide memory settings for programs that compute traces again and again (the app on every
// slider move, the benchmarks). Call once at startup, before any worker thread exists.
#pragma once

namespace attnviz {

/// Tells the C allocator (glibc malloc) to keep freed large blocks for reuse instead of returning
/// them to the kernel. One trace at (n, d_model, h) = (1024, 768, 12) allocates ≈ 100 MB of fresh
/// n×m matrices (scores and weights, 4 MiB per head each) and frees the previous trace's. With the
/// default settings every such block is a separate mmap: each trace then pays ≈ 25 000 page faults
/// (the kernel zeroes every page) and a munmap per block (measured: ≈ 30 000 faults and 115 ms CPU per
/// trace without this call, 0 faults and 60 ms with it, one thread), which cost more than the softmax itself.
/// After this call (mmap threshold 32 MiB, trim threshold 1 GiB), blocks up to 32 MiB (glibc's maximum) come
/// from the heap and stay mapped when freed, so the next trace reuses warm pages. Blocks larger than 32 MiB
/// (n×m at n = 4096) are still mapped and unmapped one by one, so peak memory of very large traces does not
/// change. The price: the process keeps up to about two traces' worth of small blocks mapped after they are
/// freed (its resident size does not shrink back between traces). Returns false if the allocator is not
/// glibc's or refused the settings (then nothing changes; it is only slower). Safe to call more than once.
bool tune_allocator_for_traces();

}  // namespace attnviz

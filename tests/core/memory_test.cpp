// tune_allocator_for_traces: takes effect on glibc (not under AddressSanitizer, whose malloc
// ignores mallopt) and may be called again.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/memory.hpp"
#include "core/shapes.hpp"

TEST(Memory, TuneAllocatorSucceedsOnGlibcAndIsRepeatable) {
#if defined(__SANITIZE_ADDRESS__)
    // AddressSanitizer replaces malloc; its mallopt refuses every setting. It must still not crash.
    attnviz::tune_allocator_for_traces();
#elif defined(__GLIBC__)
    EXPECT_TRUE(attnviz::tune_allocator_for_traces());
    EXPECT_TRUE(attnviz::tune_allocator_for_traces());
#else
    EXPECT_FALSE(attnviz::tune_allocator_for_traces());
#endif
    // Large blocks still allocate and free normally afterwards.
    attnviz::Mat big = attnviz::Mat::Constant(1024, 1024, 2.0f);  // 1024 x 1024
    EXPECT_EQ(big.sum(), 2.0f * 1024 * 1024);
}

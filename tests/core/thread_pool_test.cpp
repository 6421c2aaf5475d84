// parallel_for: every task runs exactly once, errors and cancellation reach the caller, and the
// persistent pool survives concurrent and nested callers.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/thread_pool.hpp"

using namespace attnviz;

TEST(ThreadPool, EveryTaskRunsOnce) {
    for (int threads : {1, 2, 3, 8}) {
        std::vector<std::atomic<int>> hits(257);
        parallel_for(257, threads, [&](int i) { hits[std::size_t(i)].fetch_add(1); });
        for (std::size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 1) << "task " << i;
    }
}

TEST(ThreadPool, ZeroTasksIsANoOp) {
    int calls = 0;
    parallel_for(0, 2, [&](int) { ++calls; });
    EXPECT_EQ(calls, 0);
}

TEST(ThreadPool, FirstExceptionIsRethrown) {
    std::atomic<int> ran{0};
    EXPECT_THROW(parallel_for(64, 2,
                              [&](int i) {
                                  ran.fetch_add(1);
                                  if (i == 3) throw std::runtime_error("task 3 failed");
                              }),
                 std::runtime_error);
    EXPECT_GE(ran.load(), 4);
    // The pool is still usable afterwards.
    std::atomic<int> sum{0};
    parallel_for(10, 2, [&](int i) { sum.fetch_add(i); });
    EXPECT_EQ(sum.load(), 45);
}

TEST(ThreadPool, CancelThrowsCancelledAndStopsHandingOutTasks) {
    std::atomic<bool> cancel{false};
    std::atomic<int> ran{0};
    EXPECT_THROW(parallel_for(
                     1000, 2,
                     [&](int) {
                         if (ran.fetch_add(1) == 5) cancel.store(true);
                     },
                     &cancel),
                 Cancelled);
    EXPECT_LT(ran.load(), 1000);
}

TEST(ThreadPool, ConcurrentAndNestedCallers) {
    std::atomic<long> total{0};
    std::vector<std::thread> callers;
    for (int c = 0; c < 4; ++c) {
        callers.emplace_back([&] {
            for (int rep = 0; rep < 20; ++rep) {
                parallel_for(6, 2, [&](int) {
                    // A task that itself runs a parallel_for must not deadlock.
                    parallel_for(5, 2, [&](int j) { total.fetch_add(j + 1); });
                });
            }
        });
    }
    for (auto& t : callers) t.join();
    EXPECT_EQ(total.load(), 4L * 20 * 6 * 15);
}

// The compute worker: latest request wins, errors come back as messages, stale computations are
// cancelled, and shutting down while computing returns promptly.
#include "app/compute_worker.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace attnviz::app {
namespace {

using Clock = std::chrono::steady_clock;

// Polls like the GUI does (once per "frame") until a result arrives or the timeout passes.
std::optional<ComputeWorker::Result> poll_until(ComputeWorker& worker, double seconds) {
    const auto end = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < end) {
        if (auto r = worker.poll()) return r;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return std::nullopt;
}

// A fake computation that records the temperatures it was asked for and, while `hold` is set,
// spins until cancelled (like compute_trace polling its cancel flag between passes).
struct FakeCompute {
    std::mutex mutex;
    std::vector<double> started;
    std::atomic<bool> hold{false};
    std::atomic<int> cancelled{0};

    Trace operator()(const Config& cfg, const ComputeOptions& options) {
        {
            std::lock_guard<std::mutex> lock(mutex);
            started.push_back(cfg.temperature);
        }
        while (hold.load()) {
            if (options.cancel && options.cancel->load()) {
                ++cancelled;
                throw Cancelled();
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        if (cfg.heads == 3) throw ConfigError("heads = 3 does not divide d_model = 64");
        Trace t;
        t.config = cfg;
        return t;
    }
};

constexpr int kNeverStarving = 3600 * 1000;  // ms

Config with_temperature(double T) {
    Config c;
    c.temperature = T;
    return c;
}

TEST(ComputeWorker, ComputesAndHandsBackTheTrace) {
    FakeCompute fake;
    ComputeWorker worker(1, [&](const Config& c, const ComputeOptions& o) { return fake(c, o); });
    const auto id = worker.submit(with_temperature(2.5));
    auto r = poll_until(worker, 10);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->request, id);
    ASSERT_TRUE(r->ok());
    EXPECT_DOUBLE_EQ(r->trace->config.temperature, 2.5);
    EXPECT_TRUE(r->error.empty());
    EXPECT_GE(r->ms, 0.0);
    EXPECT_FALSE(worker.poll().has_value()) << "a result is handed out once";
}

TEST(ComputeWorker, LatestWinsAndRapidRequestsCoalesce) {
    FakeCompute fake;
    fake.hold = true;  // the first computation blocks until cancelled
    // A window no test run reaches: every newer request cancels (pure latest-wins).
    ComputeWorker worker(
        1, [&](const Config& c, const ComputeOptions& o) { return fake(c, o); }, kNeverStarving);
    worker.submit(with_temperature(1.0));
    // Wait until the first one is running, then fire a burst like a dragged slider.
    for (int i = 0; i < 1000; ++i) {
        std::lock_guard<std::mutex> lock(fake.mutex);
        if (!fake.started.empty()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::uint64_t last = 0;
    for (int i = 1; i <= 50; ++i) last = worker.submit(with_temperature(1.0 + i));
    // The held first computation ends only through its cancel flag.
    const auto t0 = Clock::now();
    while (fake.cancelled.load() == 0 && Clock::now() - t0 < std::chrono::seconds(10))
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    fake.hold = false;
    ASSERT_TRUE(worker.wait_idle(10));
    auto r = worker.poll();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->request, last);
    ASSERT_TRUE(r->ok());
    EXPECT_DOUBLE_EQ(r->trace->config.temperature, 51.0);
    std::lock_guard<std::mutex> lock(fake.mutex);
    // The first (cancelled) one and the last; the 49 in between were replaced before starting
    // (allow a few if the worker picked some up between submits).
    EXPECT_LE(fake.started.size(), 5u);
    EXPECT_DOUBLE_EQ(fake.started.back(), 51.0);
    EXPECT_GE(fake.cancelled.load(), 1);
}

TEST(ComputeWorker, ReportsErrorsAsMessages) {
    FakeCompute fake;
    ComputeWorker worker(1, [&](const Config& c, const ComputeOptions& o) { return fake(c, o); });
    Config bad;
    bad.heads = 3;
    worker.submit(bad);
    auto r = poll_until(worker, 10);
    ASSERT_TRUE(r.has_value());
    EXPECT_FALSE(r->ok());
    EXPECT_NE(r->error.find("heads = 3"), std::string::npos) << r->error;
    // The worker keeps working after an error.
    worker.submit(with_temperature(0.5));
    r = poll_until(worker, 10);
    ASSERT_TRUE(r.has_value());
    EXPECT_TRUE(r->ok());
}

TEST(ComputeWorker, CancelsTheStaleComputation) {
    FakeCompute fake;
    fake.hold = true;
    // A window no test run reaches: every newer request cancels (pure latest-wins).
    ComputeWorker worker(
        1, [&](const Config& c, const ComputeOptions& o) { return fake(c, o); }, kNeverStarving);
    worker.submit(with_temperature(1.0));
    const auto t0 = Clock::now();
    while (fake.cancelled.load() == 0 && Clock::now() - t0 < std::chrono::seconds(10)) {
        {
            std::lock_guard<std::mutex> lock(fake.mutex);
            if (!fake.started.empty()) {
                // Running now: a newer request must cancel it (hold stays on, so only a cancel
                // can end it).
                break;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    worker.submit(with_temperature(2.0));
    while (fake.cancelled.load() == 0 && Clock::now() - t0 < std::chrono::seconds(10))
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(fake.cancelled.load(), 1);
    EXPECT_TRUE(worker.busy()) << "the newer request is now running (held)";
    EXPECT_FALSE(worker.poll().has_value()) << "a cancelled computation yields no result";
    fake.hold = false;
    auto r = poll_until(worker, 10);
    ASSERT_TRUE(r.has_value());
    EXPECT_DOUBLE_EQ(r->trace->config.temperature, 2.0);
}

TEST(ComputeWorker, ShutdownWhileComputingReturnsPromptly) {
    FakeCompute fake;
    fake.hold = true;  // would run forever without a cancel
    auto worker = std::make_unique<ComputeWorker>(
        1, [&](const Config& c, const ComputeOptions& o) { return fake(c, o); });
    worker->submit(with_temperature(1.0));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(worker->busy());
    const auto t0 = Clock::now();
    worker.reset();  // destructor: cancel + join
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    EXPECT_LT(s, 2.0);
    EXPECT_EQ(fake.cancelled.load(), 1);
}

TEST(ComputeWorker, PassesThreadsToCompute) {
    std::atomic<int> seen{-1};
    ComputeWorker worker(1, [&](const Config& c, const ComputeOptions& o) {
        seen = o.threads;
        Trace t;
        t.config = c;
        return t;
    });
    worker.set_threads(2);
    worker.submit(Config{});
    ASSERT_TRUE(poll_until(worker, 10).has_value());
    EXPECT_EQ(seen.load(), 2);
}

// With the real compute_trace: the default config gives a trace with stages, an invalid one an
// error message naming the problem.
TEST(ComputeWorker, RealComputeTrace) {
    ComputeWorker worker(1);
    worker.submit(Config{});
    auto r = poll_until(worker, 60);
    ASSERT_TRUE(r.has_value());
    ASSERT_TRUE(r->ok()) << r->error;
    EXPECT_FALSE(r->trace->stages.empty());
    EXPECT_NE(r->trace->find("weights", 0), -1);

    Config bad;
    bad.heads = 3;  // does not divide d_model = 64
    worker.submit(bad);
    r = poll_until(worker, 60);
    ASSERT_TRUE(r.has_value());
    EXPECT_FALSE(r->ok());
    EXPECT_NE(r->error.find("heads"), std::string::npos) << r->error;
}

// A slider dragged continuously over a slow trace: requests arrive every 5 ms and each computation
// takes 60 ms. Cancelling on every request would show nothing until the drag ends; the worker lets
// a computation finish once the screen has gone kProgressMs without a new trace.
TEST(ComputeWorker, ShowsProgressDuringAContinuousStream) {
    std::atomic<int> computed{0};
    ComputeWorker worker(1, [&](const Config& c, const ComputeOptions& o) {
        const auto t0 = Clock::now();
        while (Clock::now() - t0 < std::chrono::milliseconds(60)) {
            if (o.cancel && o.cancel->load()) throw Cancelled();
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        ++computed;
        Trace t;
        t.config = c;
        return t;
    });
    worker.submit(with_temperature(1.0));
    ASSERT_TRUE(poll_until(worker, 10).has_value());  // the first trace is on screen

    int shown_during_stream = 0;
    double last_shown = 1.0;
    const auto start = Clock::now();
    for (int i = 1; Clock::now() - start < std::chrono::milliseconds(1500); ++i) {
        worker.submit(with_temperature(1.0 + 0.01 * i));
        if (auto r = worker.poll()) {
            ASSERT_TRUE(r->ok());
            EXPECT_GT(r->trace->config.temperature, last_shown) << "results arrive in request order";
            last_shown = r->trace->config.temperature;
            ++shown_during_stream;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    // 1.5 s at one result per ≈ 250 + 60 ms: about 4; at least 2 even on a loaded machine.
    EXPECT_GE(shown_during_stream, 2);
    ASSERT_TRUE(worker.wait_idle(10));
    auto r = worker.poll();
    ASSERT_TRUE(r.has_value()) << "the latest request is computed after the stream ends";
    EXPECT_GT(r->trace->config.temperature, last_shown);
}

}  // namespace
}  // namespace attnviz::app

// The pieces that keep the GUI smooth while traces are computed:
//  - the compute worker runs at a lower priority than the GUI (nice kWorkerNice), under its own name;
//  - a heatmap's colour target is re-rendered only when something that changes its pixels changes.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "app/compute_worker.hpp"
#include "app/panels/heatmap_widget.hpp"

namespace attnviz::app {
namespace {

TEST(ComputeWorkerPriority, ComputesOnANamedThreadBelowTheGui) {
    const int gui_nice = getpriority(PRIO_PROCESS, id_t(syscall(SYS_gettid)));  // 0 unless run niced
    std::atomic<int> nice_seen{-100};
    std::atomic<long> tid_seen{0};
    ComputeWorker worker(1, [&](const Config& cfg, const ComputeOptions& o) {
        tid_seen = long(syscall(SYS_gettid));
        nice_seen = getpriority(PRIO_PROCESS, id_t(tid_seen.load()));
        return compute_trace(cfg, o);
    });
    Config cfg;
    cfg.text = "the cat sat";
    worker.submit(cfg);
    ASSERT_TRUE(worker.wait_idle(30.0));
    EXPECT_GE(nice_seen.load(), kWorkerNice);
    if (gui_nice < kWorkerNice) {
        EXPECT_GT(nice_seen.load(), gui_nice);
    }
    // The GUI (this thread) keeps its priority: only the worker thread was lowered.
    EXPECT_EQ(getpriority(PRIO_PROCESS, id_t(syscall(SYS_gettid))), gui_nice);

    std::ifstream comm("/proc/self/task/" + std::to_string(tid_seen.load()) + "/comm");
    std::string name;
    std::getline(comm, name);
    EXPECT_EQ(name, "attnviz-compute");
}

TEST(RenderCache, NothingRenderedYetNeedsARender) {
    CachedMatrix::Rendered r;  // texture 0
    EXPECT_FALSE(same_rendering(r, r.range, r.window, r.width, r.height, r.highlight));
}

TEST(RenderCache, EveryInputThatChangesThePixelsForcesARender) {
    CachedMatrix::Rendered r;
    r.texture = 7;
    r.range = ColorRange{ColorMap::Sequential, 0.0f, 1.0f};
    r.window = render::ViewWindow{0, 0, 512, 512};
    r.width = 600;
    r.height = 600;
    r.highlight.row = 3;
    EXPECT_TRUE(same_rendering(r, r.range, r.window, r.width, r.height, r.highlight));

    ColorRange range = r.range;
    range.hi = 0.5f;
    EXPECT_FALSE(same_rendering(r, range, r.window, r.width, r.height, r.highlight));
    range = r.range;
    range.map = ColorMap::Diverging;
    EXPECT_FALSE(same_rendering(r, range, r.window, r.width, r.height, r.highlight));

    render::ViewWindow w = r.window;
    w.x0 += 0.25f;  // a pan by a quarter cell moves the picture
    EXPECT_FALSE(same_rendering(r, r.range, w, r.width, r.height, r.highlight));

    EXPECT_FALSE(same_rendering(r, r.range, r.window, r.width + 1, r.height, r.highlight));
    EXPECT_FALSE(same_rendering(r, r.range, r.window, r.width, r.height - 1, r.highlight));

    render::Highlight h = r.highlight;
    h.col = 4;
    EXPECT_FALSE(same_rendering(r, r.range, r.window, r.width, r.height, h));
    h = r.highlight;
    h.dim_others = true;
    EXPECT_FALSE(same_rendering(r, r.range, r.window, r.width, r.height, h));
}

}  // namespace
}  // namespace attnviz::app

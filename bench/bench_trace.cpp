// Benchmarks of the trace and of the bare math it is made of. Run on an otherwise idle machine:
//   build/bench/attnviz_bench --benchmark_filter=BM_Trace
// Counters: GFLOP/s uses the trace's own FLOP count (Trace::total_flops) or the GEMM's 2·m·k·n.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "core/memory.hpp"
#include "core/ops.hpp"
#include "core/trace.hpp"

namespace {

using namespace attnviz;

Config trace_config(int n, int d_model, int heads) {
    Config c;
    c.text = kDefaultSentence;
    c.length = n;
    c.d_model = d_model;
    c.heads = heads;
    c.mask = MaskKind::Causal;
    return c;
}

// Minor page faults of the whole process so far (each is a fresh page the kernel had to zero).
double page_faults() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_minflt);
}

// BM_Trace/n/d_model/heads/threads: the whole trace, every stage kept. As in the app, the previous
// trace is freed while the next one is computed. faults/trace = minor page faults per iteration.
void BM_Trace(benchmark::State& state) {
    const Config c = trace_config(int(state.range(0)), int(state.range(1)), int(state.range(2)));
    ComputeOptions o;
    o.threads = int(state.range(3));
    double flops = 0;
    const double faults0 = page_faults();
    for (auto _ : state) {
        Trace t = compute_trace(c, o);
        flops = t.total_flops();
        benchmark::DoNotOptimize(t.stages.data());
    }
    state.counters["faults/trace"] = (page_faults() - faults0) / double(state.iterations());
    state.counters["threads"] = double(o.threads);
    state.counters["GFLOP/s"] =
        benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Trace)
    ->ArgNames({"n", "d_model", "h", "threads"})
    ->Args({16, 64, 4, 1})
    ->Args({16, 64, 4, 2})
    ->Args({128, 256, 8, 1})
    ->Args({128, 256, 8, 2})
    ->Args({512, 512, 8, 1})
    ->Args({512, 512, 8, 2})
    ->Args({1024, 768, 12, 1})
    ->Args({1024, 768, 12, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// One trace at (n=4096, d_model=512, h=8) for measuring peak memory:
//   /usr/bin/time -v build/bench/attnviz_bench --benchmark_filter=BM_TraceMemory
// "Maximum resident set size" must stay below 2 GiB (scores and weights stored per head, scaled and
// masked derived lazily). Also reports the bytes the trace itself holds.
void BM_TraceMemory(benchmark::State& state) {
    const Config c = trace_config(int(state.range(0)), int(state.range(1)), int(state.range(2)));
    ComputeOptions o;
    o.threads = 2;
    double stored = 0;
    for (auto _ : state) {
        Trace t = compute_trace(c, o);
        stored = t.stored_bytes();
        benchmark::DoNotOptimize(t.stages.data());
    }
    state.counters["stored_MiB"] = stored / 1048576.0;
}
BENCHMARK(BM_TraceMemory)
    ->ArgNames({"n", "d_model", "h"})
    ->Args({4096, 512, 8})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The same trace with a busy background thread spinning on the other core: the trace should slow
// down about 2x at worst (it has one core left), not collapse.
void BM_TraceBusyCore(benchmark::State& state) {
    const Config c = trace_config(int(state.range(0)), int(state.range(1)), int(state.range(2)));
    std::atomic<bool> stop{false};
    std::thread busy([&] {
        volatile double x = 1.0;
        while (!stop.load(std::memory_order_relaxed)) x = std::sqrt(x + 1.0);
    });
    ComputeOptions o;
    o.threads = 2;
    double flops = 0;
    for (auto _ : state) {
        Trace t = compute_trace(c, o);
        flops = t.total_flops();
        benchmark::DoNotOptimize(t.stages.data());
    }
    stop = true;
    busy.join();
    state.counters["threads"] = 2;
    state.counters["GFLOP/s"] =
        benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_TraceBusyCore)
    ->ArgNames({"n", "d_model", "h"})
    ->Args({512, 512, 8})
    ->Args({1024, 768, 12})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// BM_Gemm/rows/inner/cols: one bare float GEMM (rows x inner)·(inner x cols), single-threaded Eigen.
// The trace's products at the benchmark sizes: projections n·d_model·d_k, QKᵀ n·d_k·n, AV n·n·d_v,
// W_O n·d_model·d_model.
void BM_Gemm(benchmark::State& state) {
    const int r = int(state.range(0)), k = int(state.range(1)), c = int(state.range(2));
    const Mat A = random_normal(r, k, 1.0, 1);  // r x k
    const Mat B = random_normal(k, c, 1.0, 2);  // k x c
    Mat C(r, c);                                // r x c
    for (auto _ : state) {
        C.noalias() = A * B;
        benchmark::DoNotOptimize(C.data());
    }
    state.counters["threads"] = 1;
    state.counters["GFLOP/s"] =
        benchmark::Counter(2.0 * r * k * c * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Gemm)
    ->ArgNames({"rows", "inner", "cols"})
    ->Args({16, 64, 16})    // (16, 64, 4): projection
    ->Args({16, 16, 16})    //              QKᵀ / AV
    ->Args({128, 256, 32})  // (128, 256, 8)
    ->Args({128, 32, 128})
    ->Args({512, 512, 64})  // (512, 512, 8)
    ->Args({512, 64, 512})
    ->Args({512, 512, 512})   //              W_O
    ->Args({1024, 768, 64})   // (1024, 768, 12)
    ->Args({1024, 64, 1024})  //              QKᵀ
    ->Args({1024, 1024, 64})  //              AV
    ->Args({1024, 768, 768})  //              W_O
    ->UseRealTime();

// Linear attention alone: O(n) -- doubling n should double the time.
void BM_LinearAttention(benchmark::State& state) {
    const int n = int(state.range(0)), d_k = 64;
    const Mat Q = random_normal(n, d_k, 1.0, 3), K = random_normal(n, d_k, 1.0, 4),
              V = random_normal(n, d_k, 1.0, 5);
    for (auto _ : state) {
        LinearAttention la = linear_attention(Q, K, V, PhiKind::Elu1, false);
        benchmark::DoNotOptimize(la.out.data());
    }
    state.SetComplexityN(n);
}
BENCHMARK(BM_LinearAttention)
    ->RangeMultiplier(2)
    ->Range(1024, 65536)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

// Softmax attention alone (S = QKᵀ/√d_k, softmax, A·V): O(n²) time and memory.
void BM_SoftmaxAttention(benchmark::State& state) {
    const int n = int(state.range(0)), d_k = 64;
    const Mat Q = random_normal(n, d_k, 1.0, 3), K = random_normal(n, d_k, 1.0, 4),
              V = random_normal(n, d_k, 1.0, 5);
    for (auto _ : state) {
        const Mat S = dot_scores(Q, K) * (1.0f / 8.0f);  // n x n
        const Mat A = softmax_rows(S);                   // n x n
        Mat out = A * V;                                 // n x d_k
        benchmark::DoNotOptimize(out.data());
    }
    state.SetComplexityN(n);
}
BENCHMARK(BM_SoftmaxAttention)
    ->RangeMultiplier(2)
    ->Range(1024, 16384)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

}  // namespace

// As the app does at startup: keep freed n×m blocks mapped for the next trace (core/memory.hpp).
// ATTNVIZ_DEFAULT_MALLOC=1 skips it, to measure what it saves.
int main(int argc, char** argv) {
    const char* keep_default = std::getenv("ATTNVIZ_DEFAULT_MALLOC");
    if (!(keep_default && *keep_default == '1') && !attnviz::tune_allocator_for_traces())
        std::fprintf(stderr, "note: could not tune the allocator; large traces will page-fault\n");
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

// The core's measured FP32 peak: 24 independent chains of AVX-512 fused multiply-adds (enough to
// cover the FMA latency on both ports), so the other benchmarks' GFLOP/s can be given as a fraction of
// what the core can do. GFLOP/s from the thread's CPU time (2 flops per lane per FMA).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <ctime>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ATTNVIZ_PEAK_AVX512 1
#endif

namespace attnviz {
namespace {

double thread_cpu_s() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) / 1e9;
}

#if defined(ATTNVIZ_PEAK_AVX512)
/// `iters` rounds of 24 independent zmm FMAs; returns a sum so that nothing is optimised away.
__attribute__((target("avx512f"), noinline)) float fma_chains(long iters) {
    constexpr int C = 24;
    __m512 acc[C];
    const __m512 b = _mm512_set1_ps(1.0000001f), c = _mm512_set1_ps(1e-7f);
    for (int i = 0; i < C; ++i) acc[i] = _mm512_set1_ps(float(i));
    for (long it = 0; it < iters; ++it) {
#pragma GCC unroll 24
        for (int i = 0; i < C; ++i) acc[i] = _mm512_fmadd_ps(acc[i], b, c);
    }
    __m512 s = acc[0];
    for (int i = 1; i < C; ++i) s = _mm512_add_ps(s, acc[i]);
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, s);
    float sum = 0;
    for (float x : lanes) sum += x;
    return sum;
}
#endif

void BM_FmaPeak(benchmark::State& state) {
#if defined(ATTNVIZ_PEAK_AVX512)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f")) {
        state.SkipWithError("no AVX-512 on this CPU");
        return;
    }
    constexpr long kIters = 20'000'000;
    double best = 1e300;
    for (auto _ : state) {
        const double t0 = thread_cpu_s();
        benchmark::DoNotOptimize(fma_chains(kIters));
        best = std::min(best, thread_cpu_s() - t0);
    }
    state.counters["GFLOP/s"] = double(kIters) * 24 * 16 * 2 / best / 1e9;  // best iteration, CPU time
#else
    state.SkipWithError("x86-64 only");
#endif
}
BENCHMARK(BM_FmaPeak)->Iterations(5)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace attnviz

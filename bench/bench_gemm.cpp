// The own product (core/gemm.hpp) on the forward's shapes, one thread: BM_GemmForward/M/K/N/wt.
// wt = 1: B = Wᵀ for W [N, K] row-major (nn.Linear's layout: BERT, T5, the tied unembedding), whose
// panels are packed from W's rows; wt = 0: B = W [K, N] row-major (GPT-2's Conv1D).
#include <benchmark/benchmark.h>

#include "core/gemm.hpp"
#include "core/ops.hpp"

namespace attnviz {
namespace {

void BM_GemmForward(benchmark::State& state) {
    const int m = int(state.range(0)), k = int(state.range(1)), n = int(state.range(2));
    const bool wt = state.range(3) != 0;
    const Mat A = random_normal(m, k, 1.0, 1);  // [M, K]
    const Mat W = wt ? random_normal(n, k, 1.0, 2) : random_normal(k, n, 1.0, 2);
    Mat C(m, n);
    const GemmOperand b = wt ? GemmOperand{W.data(), 1, long(k)} : GemmOperand{W.data(), long(n), 1};
    for (auto _ : state) {
        gemm(m, n, k, GemmOperand{A.data(), long(k), 1}, b, C.data(), long(n), false);
        benchmark::DoNotOptimize(C.data());
    }
    state.counters["GFLOP/s"] =
        benchmark::Counter(2.0 * m * k * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_GemmForward)
    ->ArgNames({"M", "K", "N", "wt"})
    ->Args({128, 512, 512, 1})    // T5-small: Q, K, V, O
    ->Args({128, 512, 2048, 1})   //           feed-forward in
    ->Args({128, 2048, 512, 1})   //           feed-forward out
    ->Args({128, 512, 32128, 1})  //           logits (tied embedding)
    ->Args({16, 512, 32128, 1})   // few rows: mostly packing (W streamed from memory)
    ->Args({16, 512, 32128, 0})
    ->Args({512, 768, 768, 1})    // BERT-base n = 512: Q, K, V, O
    ->Args({512, 768, 3072, 1})   //           feed-forward in
    ->Args({512, 3072, 768, 1})   //           feed-forward out
    ->Args({512, 768, 30522, 1})  //           masked-LM logits (tied embedding)
    ->Args({512, 64, 512, 1})     //           one head's scores Q·Kᵀ
    ->Args({512, 768, 768, 0})    // the same as Conv1D (GPT-2's layout)
    ->Args({512, 768, 3072, 0})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace attnviz

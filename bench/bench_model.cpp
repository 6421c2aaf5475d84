// The decoder forward (core/model.hpp) on a randomly initialised GPT-2-small-shaped model (12 layers,
// d = 768, 12 heads, vocabulary 50257, no download) at n = 1024 with one viewed layer's per-head
// stages kept, next to the same forward in PyTorch (bench/torch_model_reference.py, run by this
// binary on the same threads, in the same run). Compare BM_ModelForward/T with BM_TorchModelForward/T;
// both also report process_cpu_ms (the least CPU time of an iteration, all threads).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>

#include "bench/cpu_time.hpp"
#include "bench/gpt2_small.hpp"
#include "bench/torch_subprocess.hpp"
#include "core/model.hpp"

namespace attnviz {
namespace {

constexpr int kN = 1024;

void BM_ModelForward(benchmark::State& state) {
    const ModelWeights& m = bench::gpt2_small();
    std::vector<int> ids(kN);
    for (int i = 0; i < kN; ++i) ids[std::size_t(i)] = (i * 7919) % m.spec.vocab_size;
    ModelRunOptions o;
    o.threads = int(state.range(0));
    o.keep_heads.assign(12, false);
    o.keep_heads[5] = true;  // the viewed layer
    o.rollout = false;       // PyTorch's forward has no rollout either
    double cpu = 1e300;
    for (auto _ : state) {
        const double c0 = bench::process_cpu_ms();
        benchmark::DoNotOptimize(run_model(m, ids, o).logits.data());
        cpu = std::min(cpu, bench::process_cpu_ms() - c0);
    }
    state.counters["process_cpu_ms"] = cpu;  // the least of the iterations, all threads
    // multiply-adds ×2: the linear maps, causal attention (keys 0..i for query i) and the unembedding
    const ModelSpec& s = m.spec;
    const double n = kN, d = s.d_model, causal = n * (n + 1) / 2;
    const double flops = 2 * n * d * (4 * d + 2 * double(s.d_ff)) * s.n_layer +
                         2 * 2 * causal * s.d_head * s.n_head * s.n_layer + 2 * n * d * s.vocab_size;
    state.counters["GFLOP_per_cpu_s"] = flops / (cpu / 1e3) / 1e9;
}
BENCHMARK(BM_ModelForward)->Arg(1)->Arg(2)->Iterations(2)->Unit(benchmark::kMillisecond);

void BM_TorchModelForward(benchmark::State& state) {
    const std::string args =
        "--n " + std::to_string(kN) + " --repeat 2 --threads " + std::to_string(state.range(0));
    bench::time_torch_reference(state, "torch_model_reference.py", args);
}
BENCHMARK(BM_TorchModelForward)
    ->Arg(1)
    ->Arg(2)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace attnviz

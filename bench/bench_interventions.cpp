// The all-heads ablation sweep (core/interventions.hpp: the clean run, then each of the 144 heads
// zero-ablated alone, the text's loss each time) on the GPT-2-small-shaped model at n = 64 and 256,
// next to a PyTorch loop doing the same ablations with forward hooks (bench/torch_ablation_reference.py,
// run by this binary on the same threads, in the same run). Compare BM_AblationSweep/n/T with
// BM_TorchAblationSweep/n/T. Both report process_cpu_ms, the CPU time of all their threads: on a
// busy machine the fairer figure (wall time there is mostly waiting for a core).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench/cpu_time.hpp"
#include "bench/gpt2_small.hpp"
#include "bench/torch_subprocess.hpp"
#include "core/interventions.hpp"

namespace attnviz {
namespace {

void BM_AblationSweep(benchmark::State& state) {
    const ModelWeights& m = bench::gpt2_small();
    const int n = int(state.range(0));
    std::vector<int> ids(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) ids[std::size_t(i)] = (i * 7919) % m.spec.vocab_size;
    InterventionOptions o;
    o.threads = int(state.range(1));
    double cpu = 0;
    for (auto _ : state) {
        const double c0 = bench::process_cpu_ms();
        const CleanRun clean = clean_run(m, ids, o);
        const Eigen::MatrixXd loss = ablation_sweep(m, clean, AblationMode::Zero, o);
        benchmark::DoNotOptimize(loss.data());
        cpu += bench::process_cpu_ms() - c0;
    }
    state.counters["process_cpu_ms"] = cpu / double(state.iterations());
}
BENCHMARK(BM_AblationSweep)
    ->Args({64, 1})
    ->Args({64, 2})
    ->Args({256, 1})
    ->Args({256, 2})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

void BM_TorchAblationSweep(benchmark::State& state) {
    const std::string args =
        "--n " + std::to_string(state.range(0)) + " --threads " + std::to_string(state.range(1));
    bench::time_torch_reference(state, "torch_ablation_reference.py", args);
}
BENCHMARK(BM_TorchAblationSweep)
    ->Args({64, 1})
    ->Args({64, 2})
    ->Args({256, 1})
    ->Args({256, 2})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace attnviz

// The all-heads ablation sweep (core/interventions.hpp: the clean run, then each of the 144 heads
// zero-ablated alone, the text's loss each time) on the GPT-2-small-shaped model at n = 64 and 256,
// next to a PyTorch loop doing the same ablations with forward hooks (bench/torch_ablation_reference.py,
// run by this binary on the same threads, in the same run). Compare BM_AblationSweep/n/T with
// BM_TorchAblationSweep/n/T. Both report process_cpu_ms, the CPU time of all their threads: on a
// busy machine the fairer figure (wall time there is mostly waiting for a core).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bench/cpu_time.hpp"
#include "bench/gpt2_small.hpp"
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
    const std::string cmd = "/usr/bin/python3 " ATTNVIZ_BENCH_DIR "/torch_ablation_reference.py --n " +
                            std::to_string(state.range(0)) + " --threads " + std::to_string(state.range(1));
    for (auto _ : state) {
        FILE* p = ::popen(cmd.c_str(), "r");
        if (!p) {
            state.SkipWithError("cannot run python3");
            return;
        }
        char line[256];
        double ms = -1, cpu = -1;
        while (std::fgets(line, sizeof line, p))
            if (std::sscanf(line, "cpu_ms %lf", &cpu) != 1) std::sscanf(line, "%lf", &ms);
        if (::pclose(p) != 0 || ms <= 0) {
            state.SkipWithError("torch_ablation_reference.py failed (python3-torch installed?)");
            return;
        }
        state.SetIterationTime(ms / 1e3);
        state.counters["process_cpu_ms"] = cpu;
    }
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

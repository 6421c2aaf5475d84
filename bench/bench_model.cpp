// The decoder forward (core/model.hpp) on a randomly initialised GPT-2-small-shaped model (12 layers,
// d = 768, 12 heads, vocabulary 50257, no download) at n = 1024 with one viewed layer's per-head
// stages kept, next to the same forward in PyTorch (bench/torch_model_reference.py, run by this
// binary on the same threads, in the same run). Compare BM_ModelForward/T with BM_TorchModelForward/T.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <string>

#include "bench/gpt2_small.hpp"
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
    for (auto _ : state) benchmark::DoNotOptimize(run_model(m, ids, o).logits.data());
}
BENCHMARK(BM_ModelForward)->Arg(1)->Arg(2)->Iterations(2)->Unit(benchmark::kMillisecond);

void BM_TorchModelForward(benchmark::State& state) {
    const std::string cmd = "/usr/bin/python3 " ATTNVIZ_BENCH_DIR "/torch_model_reference.py --n " +
                            std::to_string(kN) + " --repeat 2 --threads " + std::to_string(state.range(0));
    for (auto _ : state) {
        FILE* p = ::popen(cmd.c_str(), "r");
        if (!p) {
            state.SkipWithError("cannot run python3");
            return;
        }
        char line[256];
        double ms = -1;
        while (std::fgets(line, sizeof line, p)) std::sscanf(line, "%lf", &ms);
        if (::pclose(p) != 0 || ms <= 0) {
            state.SkipWithError("torch_model_reference.py failed (python3-torch installed?)");
            return;
        }
        state.SetIterationTime(ms / 1e3);
    }
}
BENCHMARK(BM_TorchModelForward)
    ->Arg(1)
    ->Arg(2)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace attnviz

// The encoder forward (core/model.hpp, the one forward with the encoder options) on a randomly
// initialised BERT-base-shaped model (bench/bert_base.hpp) at n = 512, a sentence pair's token types,
// one viewed layer's per-head stages kept and the masked-LM logits at every position, next to the same
// forward in PyTorch (bench/torch_encoder_reference.py, run by this binary on the same threads, in the
// same run). Compare BM_EncoderForward/T with BM_TorchEncoderForward/T.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench/bert_base.hpp"
#include "bench/torch_subprocess.hpp"
#include "core/model.hpp"

namespace attnviz {
namespace {

constexpr int kEncoderN = 512;

void BM_EncoderForward(benchmark::State& state) {
    const ModelWeights& m = bench::bert_base();
    std::vector<int> ids(kEncoderN), types(kEncoderN);
    for (int i = 0; i < kEncoderN; ++i) {
        ids[std::size_t(i)] = (i * 7919) % m.spec.vocab_size;
        types[std::size_t(i)] = i < kEncoderN / 2 ? 0 : 1;
    }
    ModelRunOptions o;
    o.threads = int(state.range(0));
    o.keep_heads.assign(12, false);
    o.keep_heads[5] = true;  // the viewed layer
    o.rollout = false;       // PyTorch's forward has no rollout either
    for (auto _ : state) benchmark::DoNotOptimize(run_model(m, ids, types, o).logits.data());
}
BENCHMARK(BM_EncoderForward)->Arg(1)->Arg(2)->Iterations(3)->Unit(benchmark::kMillisecond);

void BM_TorchEncoderForward(benchmark::State& state) {
    const std::string args =
        "--n " + std::to_string(kEncoderN) + " --repeat 3 --threads " + std::to_string(state.range(0));
    bench::time_torch_reference(state, "torch_encoder_reference.py", args);
}
BENCHMARK(BM_TorchEncoderForward)
    ->Arg(1)
    ->Arg(2)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace attnviz

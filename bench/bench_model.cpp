// The decoder forward (core/model.hpp) on a randomly initialised GPT-2-small-shaped model (12 layers,
// d = 768, 12 heads, vocabulary 50257, no download) at n = 1024 with one viewed layer's per-head
// stages kept, next to the same forward in PyTorch (bench/torch_model_reference.py, run by this
// binary on the same threads, in the same run). Compare BM_ModelForward/T with BM_TorchModelForward/T.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <string>

#include "core/model.hpp"
#include "core/ops.hpp"

namespace attnviz {
namespace {

struct Gpt2Small {
    ModelWeights m;
    std::uint64_t seed = 1;
    WeightRef mat(int rows, int cols) {
        auto buf = std::make_shared<Mat>(random_normal(rows, cols, 0.02, seed++));
        m.storage.push_back(buf);
        return WeightRef{buf->data(), rows, cols, cols};
    }
    const float* vec(int n, float value) {
        auto buf = std::make_shared<Mat>(Mat::Constant(1, n, value));
        m.storage.push_back(buf);
        return buf->data();
    }
    Linear conv(int in, int out) { return Linear{mat(in, out), false, vec(out, 0.01f)}; }
    Norm norm(int d) { return Norm{vec(d, 1.0f), vec(d, 0.0f), d}; }
    Gpt2Small() {
        ModelSpec& s = m.spec;
        s.architecture = "gpt2";
        s.family = ModelFamily::Gpt2;
        s.n_layer = 12;
        s.n_head = s.n_kv_head = 12;
        s.d_model = 768;
        s.d_head = 64;
        s.d_ff = 3072;
        s.vocab_size = 50257;
        s.max_positions = 1024;
        m.wte = mat(s.vocab_size, s.d_model);
        m.wpe = mat(s.max_positions, s.d_model);
        m.lm_head = m.wte;
        m.ln_f = norm(s.d_model);
        for (int l = 0; l < s.n_layer; ++l) {
            BlockWeights b;
            b.ln_1 = norm(768);
            b.ln_2 = norm(768);
            const Linear qkv = conv(768, 3 * 768);
            b.q = Linear{qkv.weight.cols_slice(0, 768), false, qkv.bias};
            b.k = Linear{qkv.weight.cols_slice(768, 768), false, qkv.bias + 768};
            b.v = Linear{qkv.weight.cols_slice(1536, 768), false, qkv.bias + 1536};
            b.o = conv(768, 768);
            b.fc = conv(768, 3072);
            b.proj = conv(3072, 768);
            m.blocks.push_back(b);
        }
        validate_model(m);
    }
};

const ModelWeights& gpt2_small() {
    static const Gpt2Small model;
    return model.m;
}

constexpr int kN = 1024;

void BM_ModelForward(benchmark::State& state) {
    const ModelWeights& m = gpt2_small();
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

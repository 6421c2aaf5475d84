// Training throughput (core/train.hpp): one full optimizer step — forward, cross-entropy, backward,
// gradient clipping, AdamW — on two models, next to the same step in PyTorch
// (bench/torch_train_reference.py, run by this binary on the same threads, in the same run):
//   attn2: 2 layers, d_model 64, 4 heads, attention-only, LayerNorm, learned positions, context 48,
//          vocabulary 64, batch 32 (the induction model of `attnviz train`)
//   mlp4:  4 layers, d_model 128, 4 heads, GELU MLP d_ff 512, LayerNorm, learned positions, context 64,
//          vocabulary 256, batch 16
// Compare the tokens_per_second counters of BM_Train/<model>/<threads> and BM_TorchTrain/<model>/<threads>.
// BM_TrainGemm/<shape>/<own> times one of mlp4's products with core/gemm (own = 1) and with Eigen's
// product (own = 0), side by side; GFLOP/s counter.
#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <random>
#include <string>

#include "bench/torch_subprocess.hpp"
#include "core/gemm.hpp"
#include "core/memory.hpp"
#include "core/train.hpp"

namespace attnviz {
namespace {

struct BenchModel {
    TrainConfig config;
    int batch = 0;
    const char* torch_args = "";
};

BenchModel bench_model(int which) {
    BenchModel m;
    TrainConfig& c = m.config;
    if (which == 0) {
        c.n_layer = 2;
        c.d_model = 64;
        c.n_head = 4;
        c.context = 48;
        c.vocab_size = 64;
        m.batch = 32;
        m.torch_args = "--layers 2 --d-model 64 --heads 4 --context 48 --vocab 64 --batch 32 --mlp none";
    } else {
        c.n_layer = 4;
        c.d_model = 128;
        c.n_head = 4;
        c.context = 64;
        c.vocab_size = 256;
        c.mlp = MlpKind::Gelu;
        c.d_ff = 512;
        m.batch = 16;
        m.torch_args =
            "--layers 4 --d-model 128 --heads 4 --context 64 --vocab 256 --batch 16 --mlp gelu --d-ff 512";
    }
    c.layer_norm = true;
    c.tied = false;
    return m;
}

Batch random_batch(const TrainConfig& c, int B, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> tok(0, c.vocab_size - 1);
    Batch b;
    b.B = B;
    b.n = c.context;
    for (int i = 0; i < B * c.context; ++i) {
        b.inputs.push_back(tok(rng));
        b.targets.push_back(tok(rng));
    }
    return b;
}

double process_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

/// One optimizer step per iteration, as `attnviz train` takes it. tokens_per_second from wall time
/// (the mean step), tokens_per_cpu_second from the process's CPU time (every thread),
/// tokens_per_second_best_step from the fastest step (what the PyTorch script reports).
void BM_Train(benchmark::State& state) {
    tune_allocator_for_traces();  // as attnviz's main() does before any command
    const BenchModel m = bench_model(int(state.range(0)));
    const int threads = int(state.range(1));
    Params<float> p = init_params(m.config, 1);
    const Batch batch = random_batch(m.config, m.batch, 2);
    Params<float> grad;
    AdamWState adam;
    AdamWConfig cfg;
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = process_cpu_seconds();
    double best = 1e30;
    for (auto _ : state) {
        const auto s0 = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(loss_and_grad(p, batch, &grad, threads));
        clip_grad_norm(grad.data, 1.0);
        adamw_step(p.data, grad.data, adam, cfg, 1e-3);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count());
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = process_cpu_seconds() - c0;
    const double step_tokens = double(m.batch) * m.config.context;
    const double tokens = step_tokens * double(state.iterations());
    state.counters["tokens_per_second"] = tokens / wall;
    state.counters["tokens_per_cpu_second"] = tokens / cpu;
    // the best single step, as the PyTorch script reports its best of 30 (same footing)
    state.counters["tokens_per_second_best_step"] = step_tokens / best;
}
BENCHMARK(BM_Train)
    ->ArgNames({"model", "threads"})
    ->Args({0, 1})
    ->Args({0, 2})
    ->Args({1, 1})
    ->Args({1, 2})
    ->MinTime(2.0)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

/// mlp4's products (1024 rows = 16 sequences × 64 tokens): name, M, N, K, A transposed, B transposed.
struct GemmShape {
    const char* name;
    int M, N, K;
    bool a_t, b_t;
};
constexpr GemmShape kGemmShapes[] = {
    {"c_attn x.W", 1024, 384, 128, false, false},
    {"c_fc x.W", 1024, 512, 128, false, false},
    {"c_proj x.W", 1024, 128, 512, false, false},
    {"lm_head f.U^T", 1024, 256, 128, false, true},
    {"c_attn dW=x^T.dy", 128, 384, 1024, true, false},
    {"c_attn dx=dy.W^T", 1024, 128, 384, false, true},
    {"c_proj dW=x^T.dy", 512, 128, 1024, true, false},
    {"head Q.K^T", 64, 64, 32, false, true},
    {"head P.V", 64, 32, 64, false, false},
};

void BM_TrainGemm(benchmark::State& state) {
    const GemmShape g = kGemmShapes[state.range(0)];
    const bool own = state.range(1) != 0;
    using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const RowMat A = g.a_t ? RowMat::Random(g.K, g.M) : RowMat::Random(g.M, g.K);
    const RowMat B = g.b_t ? RowMat::Random(g.N, g.K) : RowMat::Random(g.K, g.N);
    RowMat C(g.M, g.N);
    const GemmOperand a{A.data(), g.a_t ? 1 : long(A.cols()), g.a_t ? long(A.cols()) : 1};
    const GemmOperand b{B.data(), g.b_t ? 1 : long(B.cols()), g.b_t ? long(B.cols()) : 1};
    for (auto _ : state) {
        if (own)
            gemm(g.M, g.N, g.K, a, b, C.data(), g.N, false);
        else if (g.a_t)
            C.noalias() = A.transpose() * B;
        else if (g.b_t)
            C.noalias() = A * B.transpose();
        else
            C.noalias() = A * B;
        benchmark::DoNotOptimize(C.data());
        benchmark::ClobberMemory();
    }
    state.SetLabel(std::string(g.name) + (own ? " core/gemm" : " Eigen"));
    state.counters["GFLOP/s"] = benchmark::Counter(2.0 * g.M * g.N * g.K * double(state.iterations()) / 1e9,
                                                   benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TrainGemm)
    ->ArgNames({"shape", "own"})
    ->ArgsProduct({benchmark::CreateDenseRange(0, int(std::size(kGemmShapes)) - 1, 1), {0, 1}})
    ->MinTime(0.2);

/// The same step in PyTorch: the script prints the best milliseconds per step on its last line.
void BM_TorchTrain(benchmark::State& state) {
    const BenchModel m = bench_model(int(state.range(0)));
    const std::string args = std::string(m.torch_args) + " --threads " + std::to_string(state.range(1));
    double tokens = 0;
    for (auto _ : state) {
        const bench::TorchTime t = bench::run_torch_reference(state, "torch_train_reference.py", args);
        if (t.ms <= 0) return;
        state.SetIterationTime(t.ms / 1e3);
        tokens = double(m.batch) * m.config.context;
        state.counters["tokens_per_second"] = tokens / (t.ms / 1e3);
        state.counters["tokens_per_cpu_second"] = tokens / (t.cpu_ms / 1e3);
    }
}
BENCHMARK(BM_TorchTrain)
    ->ArgNames({"model", "threads"})
    ->Args({0, 1})
    ->Args({0, 2})
    ->Args({1, 1})
    ->Args({1, 2})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace attnviz

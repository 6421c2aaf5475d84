// The encoder–decoder forward (core/seq2seq.hpp) on a randomly initialised T5-small-shaped model (6 + 6
// layers, d = 512, 8 heads of 64, d_ff 2048 ReLU, vocabulary 32128, 32 relative-position buckets, tied
// embedding, no download) at m = n = 128, next to the same forward in PyTorch
// (bench/torch_seq2seq_reference.py, run by this binary on the same threads, in the same run). Compare
// BM_Seq2SeqForward/T with BM_TorchSeq2SeqForward/T; BM_Seq2SeqForwardKept also keeps every stage.
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>

#include "bench/random_weights.hpp"
#include "bench/torch_subprocess.hpp"
#include "core/seq2seq.hpp"

namespace attnviz {
namespace {

constexpr int kN = 128;

struct T5Small : bench::RandomWeights {
    Linear lin(int in, int out) { return Linear{mat(out, in), true, nullptr}; }
    Norm norm() { return Norm{vec(512, 1.0f), nullptr, 512}; }
    BlockWeights block(bool cross) {
        BlockWeights b;
        b.ln_1 = norm();
        b.q = lin(512, 512);
        b.k = lin(512, 512);
        b.v = lin(512, 512);
        b.o = lin(512, 512);
        if (cross) {
            b.ln_cross = norm();
            b.cq = lin(512, 512);
            b.ck = lin(512, 512);
            b.cv = lin(512, 512);
            b.co = lin(512, 512);
        }
        b.ln_2 = norm();
        b.fc = lin(512, 2048);
        b.proj = lin(2048, 512);
        return b;
    }
    T5Small() : RandomWeights(1) {
        ModelSpec& s = m.spec;
        s.architecture = "t5";
        s.family = ModelFamily::Llama;
        s.encoder_decoder = true;
        s.n_layer = 6;
        s.s2s.n_encoder_layer = 6;
        s.n_head = s.n_kv_head = 8;
        s.d_model = 512;
        s.d_head = 64;
        s.d_ff = 2048;
        s.vocab_size = 32128;
        s.max_positions = 4096;
        s.norm_eps = 1e-6;
        s.norm = NormKind::RMSNorm;
        s.mlp = MlpKind::Relu;
        s.positions = PositionKind::Relative;
        s.s2s.rel_buckets = 32;
        s.s2s.rel_max_distance = 128;
        s.s2s.scale_scores = false;
        s.s2s.logit_scale = 1.0 / std::sqrt(512.0);
        m.wte = mat(s.vocab_size, 512);
        m.lm_head = m.wte;
        m.ln_f = norm();
        m.encoder.ln_f = norm();
        m.rel_bias = mat(32, 8).data;
        m.encoder.rel_bias = mat(32, 8).data;
        for (int l = 0; l < 6; ++l) {
            m.blocks.push_back(block(true));
            m.encoder.blocks.push_back(block(false));
        }
        validate_model(m);
    }
};

const ModelWeights& t5_small() {
    static const T5Small model;
    return model.m;
}

void run(benchmark::State& state, bool keep) {
    const ModelWeights& m = t5_small();
    std::vector<int> src(kN), tgt(kN);
    for (int i = 0; i < kN; ++i) {
        src[std::size_t(i)] = (i * 7919) % m.spec.vocab_size;
        tgt[std::size_t(i)] = (i * 104729 + 3) % m.spec.vocab_size;
    }
    Seq2SeqRunOptions o;
    o.threads = int(state.range(0));
    o.keep = keep;
    o.rollout = false;  // PyTorch's forward has no rollout either
    for (auto _ : state) benchmark::DoNotOptimize(run_seq2seq(m, src, tgt, o).logits.data());
}
void BM_Seq2SeqForward(benchmark::State& state) {
    run(state, false);
}
void BM_Seq2SeqForwardKept(benchmark::State& state) {
    run(state, true);
}
BENCHMARK(BM_Seq2SeqForward)->Arg(1)->Arg(2)->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Seq2SeqForwardKept)->Arg(1)->Arg(2)->Iterations(3)->Unit(benchmark::kMillisecond);

void BM_TorchSeq2SeqForward(benchmark::State& state) {
    const std::string args =
        "--n " + std::to_string(kN) + " --repeat 3 --threads " + std::to_string(state.range(0));
    bench::time_torch_reference(state, "torch_seq2seq_reference.py", args);
}
BENCHMARK(BM_TorchSeq2SeqForward)
    ->Arg(1)
    ->Arg(2)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace attnviz

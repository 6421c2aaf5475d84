// Weights for the benchmarks' randomly initialised models (bench/gpt2_small.hpp, bench/bert_base.hpp,
// bench_seq2seq.cpp's T5): matrices N(0, 0.02) from consecutive seeds, vectors constant, every buffer
// kept alive by the model's own storage. No download.
#pragma once

#include <cstdint>
#include <memory>

#include "core/model.hpp"
#include "core/ops.hpp"

namespace attnviz::bench {

struct RandomWeights {
    ModelWeights m;
    std::uint64_t seed;  // the next matrix's
    explicit RandomWeights(std::uint64_t first_seed) : seed(first_seed) {}
    /// [rows, cols], N(0, 0.02).
    WeightRef mat(int rows, int cols) {
        auto buf = std::make_shared<Mat>(random_normal(rows, cols, 0.02, seed++));
        m.storage.push_back(buf);
        return WeightRef{buf->data(), rows, cols, cols};
    }
    /// [n], every entry `value`.
    const float* vec(int n, float value) {
        auto buf = std::make_shared<Mat>(Mat::Constant(1, n, value));
        m.storage.push_back(buf);
        return buf->data();
    }
    /// LayerNorm [d]: gain 1, bias 0.
    Norm layer_norm(int d) { return Norm{vec(d, 1.0f), vec(d, 0.0f), d}; }
};

}  // namespace attnviz::bench

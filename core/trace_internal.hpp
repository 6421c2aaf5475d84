// Pieces of the seeded weight source (core/layer_weights.cpp) and of compute_trace() that the tests
// need to reproduce a number exactly: how each random weight matrix is seeded and how each scoring
// function scales its scores. The hover derivations (core/stages/*.cpp) read weights from the trace,
// never from these seeds.
#pragma once

#include <cstdint>

#include "core/config.hpp"
#include "core/shapes.hpp"

namespace attnviz {

/// Which weight matrix a seed is for. The numbers are part of the file format in spirit: changing
/// them changes every matrix a saved scene shows.
enum class WeightSlot : std::uint64_t {
    W_Q = 1,
    W_K = 2,
    W_V = 3,
    AdditiveW_q = 4,
    AdditiveW_k = 5,
    AdditiveW_v = 6,
    Bilinear = 7,
    W_O = 8,
    LearnedPE = 9,
};

/// Seed of one weight matrix, mixed from (config seed, head, slot) with splitmix64 so that nearby
/// seeds give unrelated matrices.
std::uint64_t weight_seed(std::uint64_t seed, int head, WeightSlot slot);

/// Factor between `scores` and `scaled`: 1/√d_k for scaled_dot and bilinear, 1 otherwise.
double score_scale(Scoring scoring, int d_k);

}  // namespace attnviz

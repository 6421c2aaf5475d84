// A process-wide cache of matrices that depend only on a few numbers: seeded random weights and the
// sinusoidal positional table. Drawing millions of Box–Muller normals costs more than the matrix
// products that use them (≈ 50 ms at d_model = 768, h = 12), and the app recomputes the trace for
// every slider move with the same weights, so recently used matrices (up to 256 MiB) are kept and
// shared between traces; they are immutable. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>

#include "core/shapes.hpp"

namespace attnviz {

/// random_normal(rows, cols, stddev, seed), [rows, cols], shared while it stays in the cache.
std::shared_ptr<const Mat> cached_random_normal(int rows, int cols, double stddev, std::uint64_t seed);

/// sinusoidal_pe(n, d, base), [n, d], shared while it stays in the cache.
std::shared_ptr<const Mat> cached_sinusoidal_pe(int n, int d, double base);

}  // namespace attnviz

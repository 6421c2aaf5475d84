// Softmax attention's per-head kernels, written once for the single layer (compute_trace) and a
// model's blocks (core/model.cpp): the visible span of each row under a mask, one fused row of
// softmax((S·scale − slope·|i−j|, −∞ where hidden) / T) with its entropy, and A·V over the visible
// spans only. RoPE's angles are shared through rope_table() in core/ops.hpp.
#pragma once

#include <vector>

#include "core/shapes.hpp"

namespace attnviz {

/// Columns [first, last] of row i that the mask may leave visible; first > last when the whole row
/// is hidden. Outside this span every weight is exactly 0, so the softmax pass and the A·V product
/// can skip it: for a causal mask that is the upper triangle, half of each n×m matrix.
struct RowSpan {
    Eigen::Index first, last;
};
/// Spans of every row of an n×m mask (allowed null: every key visible): [n].
std::vector<RowSpan> visible_spans(const BoolMat* allowed, Eigen::Index n, Eigen::Index m);

/// Row i of the weights, written into A (its other columns set to 0): over the span
/// [lo, lo + len) of the score row s_row (the full row, m floats),
///   a_j = softmax((s_j·scale − slope·|i − j|, −∞ where allowed_row[j] is false) / T)
/// with inv_T = 1/T, the row max subtracted before exp, hidden keys exactly 0 and a row with
/// every key hidden all zeros. `x` is scratch of at least len floats. Returns the row's entropy
/// (nats) when `entropy`, else 0, without a log per cell:
///   a_j = e_j / Z, e_j = exp((x_j − max)/T)  ⇒  H = −Σ a_j ln a_j = ln Z − Σ a_j (x_j − max)/T.
float softmax_row(const float* s_row, Eigen::Index i, Eigen::Index lo, Eigen::Index len, float scale,
                  double slope, const bool* allowed_row, float inv_T, Eigen::ArrayXf& x, Mat& A,
                  Eigen::Index a_row, bool entropy);

/// weights = softmax((S·scale + B, −∞ where hidden) / T) row by row (softmax_row), in one pass over
/// S without materialising the n×m `masked` matrix. A: [n, m], H: [n] row entropies.
void fused_softmax(const Mat& S, float scale, double alibi_slope_or_0, const BoolMat* allowed,
                   const std::vector<RowSpan>& spans, double T, Mat& A, Vec& H);

/// out = A·V [n, d_v] where A is exactly 0 outside each row's visible span. Rows go in blocks of
/// 128; each block multiplies only the columns any of its rows can see, so a causal mask skips
/// about half of the product. Equals A·V up to float rounding (the skipped terms are 0·v = 0).
Mat weights_times_values(const Mat& A, const Mat& V, const std::vector<RowSpan>& spans);

}  // namespace attnviz

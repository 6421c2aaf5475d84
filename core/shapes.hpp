// attnviz shape convention -- written once, used everywhere.
//
//   Rows are tokens. Every activation matrix has one row per token.
//
//   n        number of query tokens (the typed text X)
//   m        number of key/value tokens (Y: X itself for self-attention, the second text for
//            cross-attention)
//   d_model  width of the residual stream (embedding size)
//   h        number of heads
//   d_k      width of one head's queries and keys
//   d_v      width of one head's values
//   V        vocabulary size (distinct tokens in the texts)
//
//   X        n x d_model     input of the layer (E + P)
//   Y        m x d_model     source of keys and values
//   W_Q, W_K d_model x d_k   per head
//   W_V      d_model x d_v   per head
//   W_O      (h*d_v) x d_model
//   Q        n x d_k         per head
//   K        m x d_k         per head
//   V        m x d_v         per head
//   S, A     n x m           per head (scores, weights)
//   head     n x d_v         per head
//   concat   n x (h*d_v)
//   output   n x d_model
//
// Matrices are float32 and row-major, so a row (one token) is contiguous, `.npy` files are C order
// without a copy, and textures upload straight from the buffer.
#pragma once

#include <Eigen/Core>
#include <cstdint>

namespace attnviz {

/// Dense float32 matrix, row-major. Shape is always documented at the declaration.
using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
/// Column vector of floats.
using Vec = Eigen::VectorXf;
/// Row vector of floats.
using RowVec = Eigen::Matrix<float, 1, Eigen::Dynamic>;
/// Boolean matrix, row-major. For masks: true = query i may attend to key j ("allowed").
using BoolMat = Eigen::Array<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace attnviz

// The trainer's matrix product: C = A·B (or C += A·B) in float, for the shapes a small transformer's
// training step is made of (a thousand rows against 16-1024 columns and 16-1024 inner terms).
//
// Eigen 3.4's product kernel keeps 12 of AVX-512's 32 registers busy (its nr is fixed at 4), packs both
// operands and zeroes the result before adding into it. With AVX-512 this file's kernel holds a tile of
// C in 12-24 registers (6 × 64 columns, or 12 × 32 / 12 × 16 for the narrow products of attention
// heads), broadcasts A straight from memory (row-major or transposed, no packing) and packs only B (up
// to 768 inner terms at once, used in 128-term panels of at most 32 KiB that stay in L1; each block of
// rows runs through all of them while its block of C stays in L2). Measured side by side on the
// trainer's shapes (bench BM_TrainGemm): ~1.45x Eigen's rate. The summation order depends on the
// shapes alone (no cache-size query), so a product is bit-for-bit the same on every run, thread and
// AVX-512 machine. The kernel is compiled for AVX-512 in every x86-64 build (the package's baseline
// build too) and used when the CPU has it; otherwise gemm is Eigen's product.
#pragma once

#include <functional>

#include <Eigen/Core>

namespace attnviz {

/// Eigen's product on strided row-major maps: C [rows, cols] (row stride ldc) = A·B, or += with
/// accumulate; A(i, k) at a[i·a_rs + k·a_cs], B(k, j) at b[k·b_rs + j·b_cs]. gemm's fallback, and the
/// trainer's double-precision product (its finite-difference tests).
template <typename T>
void strided_product(int rows, int cols, int inner, const T* a, long a_rs, long a_cs, const T* b, long b_rs,
                     long b_cs, T* c, long ldc, bool accumulate) {
    using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using S = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;  // (outer, inner) = (row, column) stride
    const Eigen::Map<const Mat, 0, S> A(a, rows, inner, S(a_rs, a_cs)), B(b, inner, cols, S(b_rs, b_cs));
    Eigen::Map<Mat, 0, Eigen::OuterStride<>> C(c, rows, cols, Eigen::OuterStride<>(ldc));
    if (accumulate)
        C.noalias() += A * B;
    else
        C.noalias() = A * B;
}

/// A strided float matrix: element (i, j) at p[i·rs + j·cs], strides > 0. The own kernel reads A
/// row-major (cs = 1) or transposed (rs = 1) and B with any column stride below 2^31 / 16; anything
/// else goes to Eigen's product.
struct GemmOperand {
    const float* p = nullptr;
    long rs = 0, cs = 1;
};

/// What is known about a product's zeros, so that causal attention does only the arithmetic that
/// matters (about half): the terms skipped are exact zeros, so the result is the full product's.
enum class Triangle {
    None,
    LowerA,  // A(i, k) = 0 for k > i (the causal weights P, dS): row i sums k = 0..i
    UpperA,  // A(i, k) = 0 for k < i (their transposes): row i sums k = i..K-1
    LowerC,  // only C(i, j) with j <= i is wanted; tiles wholly above the diagonal are not written
};

/// C [M, N] (row-major, row stride ldc) = A [M, K] · B [K, N]; with accumulate, C += A·B.
/// C must not overlap A or B.
void gemm(int M, int N, int K, GemmOperand A, GemmOperand B, float* C, long ldc, bool accumulate,
          Triangle tri = Triangle::None);

/// Receives a finished block of C = A·B: rows i0 .. i0 + rows, columns j0 .. j0 + cols, element (i, j)
/// at c[(i − i0)·ldc + (j − j0)]; the memory is reused for the next block.
using GemmVisitor = std::function<void(int i0, int rows, int j0, int cols, const float* c, long ldc)>;

/// C = A·B without storing C: hands each block (at most 144 rows × 256 columns, every column block's
/// rows in order) to `visit` once complete, so a caller can reduce a product too large to keep (the
/// unembedding's logits of many rows: their log-sum-exp). Each element is gemm's, bit for bit. `visit`
/// runs on the calling thread and must not call gemm itself (the packed operand is per thread).
void gemm_blocks(int M, int N, int K, GemmOperand A, GemmOperand B, const GemmVisitor& visit);

/// True when gemm runs its own AVX-512 kernel on this CPU (false: Eigen's product).
bool gemm_own_kernel();

}  // namespace attnviz

// The transformer's ops, each once with its backward beside it (llm.c's habit): norms, positions,
// activations, the matrix product, attention (causal or bidirectional) and linear layers. Used by the one
// decoder forward (core/decoder.hpp) for every model -- trained here (core/train.cpp) or opened from a folder
// (core/model.cpp) -- and by the trainer's backward. Templated on the scalar: float in the app, double
// in the finite-difference tests.
//
// Shapes: rows = S·n (S sequences of n tokens), d = d_model, dh = head width, f = MLP width, V = vocabulary.
// Sums that decide a result's bits run in a fixed order that depends on the shapes alone (never on a
// buffer's address or the thread), so a model gives the same numbers on every run and thread count.
#pragma once

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include <unsupported/Eigen/SpecialFunctions>  // Eigen's vectorised erf (GELU's exact form)

#include "core/gemm.hpp"
#include "core/ops.hpp"
#include "core/thread_pool.hpp"

namespace attnviz::nn {

template <typename T>
using M = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using CMap = Eigen::Map<const M<T>>;
template <typename T>
using WMap = Eigen::Map<M<T>>;
template <typename T>
using RowT = Eigen::Matrix<T, 1, Eigen::Dynamic>;
/// A block of a row-major matrix (a head's columns, say): what a hook sees and may change in place.
template <typename T>
using Block = Eigen::Map<M<T>, 0, Eigen::OuterStride<>>;

/// Sum of a row, left to right. Eigen's vectorised .sum() peels elements by address alignment, so
/// its result could differ with where a buffer happens to be allocated (and so with the thread).
template <typename X>
typename X::Scalar ordered_sum(const X& x) {
    typename X::Scalar s = 0;
    for (Eigen::Index j = 0; j < x.size(); ++j) s += x(j);
    return s;
}

/// Σ f(j) for j < n in 16 interleaved partial sums (lane j mod 16), added pairwise at the end: the
/// compiler vectorises it, and the order depends on n alone (not on alignment or thread).
template <typename T, typename F>
T lane_sum(int n, F f) {
    constexpr int W = 16;
    T acc[W] = {};
    int j = 0;
    for (; j + W <= n; j += W)
        for (int l = 0; l < W; ++l) acc[l] += f(j + l);
    for (int l = 0; j + l < n; ++l) acc[l] += f(j + l);
    for (int w = W / 2; w >= 1; w /= 2)
        for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
    return acc[0];
}

// ---------------------------------------------------------------------------------------------
// LayerNorm and RMSNorm
// ---------------------------------------------------------------------------------------------

/// forward: y = x̂·γ (+ β) with x̂ = (x − mean)·rstd (LayerNorm) or x·rstd (RMSNorm, rstd =
/// 1/√(mean(x²) + eps)) per row. x: [n, d] → y, xhat: [n, d], rstd: [n]. beta may be null.
template <typename T>
void norm_forward(const M<T>& x, const T* gamma, const T* beta, bool rms, double eps, M<T>& y, M<T>& xhat,
                  std::vector<T>& rstd) {
    const int n = int(x.rows()), d = int(x.cols());
    xhat.resize(n, d);
    y.resize(n, d);
    rstd.resize(std::size_t(n));
    for (int i = 0; i < n; ++i) {
        const T* __restrict xi = x.data() + std::size_t(i) * d;
        T* __restrict hi = xhat.data() + std::size_t(i) * d;
        T* __restrict yi = y.data() + std::size_t(i) * d;
        const T mean = rms ? T(0) : lane_sum<T>(d, [&](int j) { return xi[j]; }) / T(d);
        const T var = lane_sum<T>(d, [&](int j) { return (xi[j] - mean) * (xi[j] - mean); }) / T(d);
        const T r = T(1) / std::sqrt(var + T(eps));
        rstd[std::size_t(i)] = r;
        for (int j = 0; j < d; ++j) hi[j] = (xi[j] - mean) * r;
        if (beta)
            for (int j = 0; j < d; ++j) yi[j] = hi[j] * gamma[j] + beta[j];
        else
            for (int j = 0; j < d; ++j) yi[j] = hi[j] * gamma[j];
    }
}

/// backward: dy [n, d] → dx [n, d] (added), dγ [d] (added), dβ [d] (added, when non-null).
/// dx̂ = dy·γ; LayerNorm dx = rstd·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂)); RMSNorm drops the mean(dx̂) term.
template <typename T>
void norm_backward(const M<T>& dy, const M<T>& xhat, const std::vector<T>& rstd, const T* gamma, bool rms,
                   M<T>& dx, T* dgamma, T* dbeta) {
    const int n = int(dy.rows()), d = int(dy.cols());
    for (int i = 0; i < n; ++i) {
        const T* __restrict g = dy.data() + std::size_t(i) * d;
        const T* __restrict h = xhat.data() + std::size_t(i) * d;
        T* __restrict o = dx.data() + std::size_t(i) * d;
        const T mean_dxhat = rms ? T(0) : lane_sum<T>(d, [&](int j) { return g[j] * gamma[j]; }) / T(d);
        const T mean_dxhat_xhat = lane_sum<T>(d, [&](int j) { return g[j] * gamma[j] * h[j]; }) / T(d);
        const T r = rstd[std::size_t(i)];
        for (int j = 0; j < d; ++j) {
            dgamma[j] += g[j] * h[j];
            o[j] += r * (g[j] * gamma[j] - mean_dxhat - h[j] * mean_dxhat_xhat);
        }
        if (dbeta)
            for (int j = 0; j < d; ++j) dbeta[j] += g[j];
    }
}

// ---------------------------------------------------------------------------------------------
// Positions: sinusoidal table, RoPE rotate-half (Hugging Face Llama's pairing: i with i + dh/2).
// The angles come from core/ops.hpp (pe_frequency, rope_table), as the single layer's.
// ---------------------------------------------------------------------------------------------

/// Sinusoidal positions [context, d]: P[p, c] = sin(p·w) (c even) or cos(p·w) (c odd), w = base^(−2⌊c/2⌋/d).
template <typename T>
M<T> sinusoid_table(int context, int d, double base = 10000.0) {
    M<T> P(context, d);
    for (int c = 0; c < d; ++c) {
        const double w = pe_frequency(c / 2, d, base);
        for (int p = 0; p < context; ++p)
            P(p, c) = T(c % 2 == 0 ? std::sin(double(p) * w) : std::cos(double(p) * w));
    }
    return P;
}

/// RoPE angles: cos, sin [context, dh/2], angle p·θ^(−2i/dh).
template <typename T>
void rope_tables(int context, int dh, M<T>& cosines, M<T>& sines, double theta = 10000.0) {
    const RopeTable t = rope_table(context, dh, theta);
    cosines = t.cos.cast<T>().matrix();
    sines = t.sin.cast<T>().matrix();
}

/// forward, in place on `heads` heads of width dh in the first heads·dh columns of x (`rows` rows,
/// row stride ld; row r is at position r mod n): (x1, x2) = (x_i, x_{i+dh/2}) → (x1·cos − x2·sin,
/// x2·cos + x1·sin). backward (sign = −1): the transposed rotation.
template <typename T>
void rope_apply(T* x, int rows, long ld, int heads, int dh, int n, const M<T>& cosines, const M<T>& sines,
                T sign) {
    const int half = dh / 2;
    for (int r = 0; r < rows; ++r)
        for (int h = 0; h < heads; ++h) {
            const int p = r % n;
            T* xh = x + long(r) * ld + h * dh;
            for (int i = 0; i < half; ++i) {
                const T c = cosines(p, i), s = sign * sines(p, i);
                const T x1 = xh[i], x2 = xh[i + half];
                xh[i] = x1 * c - x2 * s;
                xh[i + half] = x2 * c + x1 * s;
            }
        }
}

// ---------------------------------------------------------------------------------------------
// MLP activations: GELU (tanh form and exact erf form), SwiGLU and GeGLU
// ---------------------------------------------------------------------------------------------

/// forward: GELU(x) = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), elementwise. [n, f] → [n, f].
template <typename T>
void gelu_forward(const M<T>& x, M<T>& y) {
    const T c = T(std::sqrt(2.0 / 3.14159265358979323846));
    y.resize(x.rows(), x.cols());
    y.array() = T(0.5) * x.array() * (T(1) + (c * (x.array() + T(0.044715) * x.array().cube())).tanh());
}
/// backward: dx = dy·(0.5·(1 + t) + 0.5·x·(1 − t²)·√(2/π)·(1 + 3·0.044715·x²)), t = tanh(…). Overwrites dx.
template <typename T>
void gelu_backward(const M<T>& dy, const M<T>& x, M<T>& dx) {
    const T c = T(std::sqrt(2.0 / 3.14159265358979323846));
    const auto X = x.array();
    const auto t = (c * (X + T(0.044715) * X.cube())).tanh();
    dx.resize(x.rows(), x.cols());
    dx.array() = dy.array() * (T(0.5) * (T(1) + t) +
                               T(0.5) * X * (T(1) - t * t) * c * (T(1) + T(3 * 0.044715) * X.square()));
}

/// forward: ReLU(x) = max(x, 0), elementwise (T5's DenseReluDense). [n, f] → [n, f].
template <typename T>
void relu_forward(const M<T>& x, M<T>& y) {
    y = x.cwiseMax(T(0));
}
/// backward: dx = dy where x > 0, else 0. Overwrites dx.
template <typename T>
void relu_backward(const M<T>& dy, const M<T>& x, M<T>& dx) {
    dx = (x.array() > T(0)).select(dy, M<T>::Zero(x.rows(), x.cols()));
}

/// forward: GELU's exact form, GELU(x) = 0.5·x·(1 + erf(x/√2)) (BERT's and BART's "gelu"), elementwise.
/// [n, f] → [n, f]. float: Eigen's vectorised erf (within a few ulp of std::erf).
template <typename T>
void gelu_erf_forward(const M<T>& x, M<T>& y) {
    const T r = T(1 / std::sqrt(2.0));
    y.resize(x.rows(), x.cols());
    y.array() = T(0.5) * x.array() * (T(1) + (x.array() * r).erf());
}
/// backward: dx = dy·(0.5·(1 + erf(x/√2)) + x·φ(x)), φ(x) = exp(−x²/2)/√(2π). Overwrites dx.
template <typename T>
void gelu_erf_backward(const M<T>& dy, const M<T>& x, M<T>& dx) {
    const T r = T(1 / std::sqrt(2.0)), c = T(1 / std::sqrt(2.0 * 3.14159265358979323846));
    const auto X = x.array();
    dx.resize(x.rows(), x.cols());
    dx.array() = dy.array() * (T(0.5) * (T(1) + (X * r).erf()) + X * c * (T(-0.5) * X.square()).exp());
}

/// forward: SwiGLU z = SiLU(g)·u with gu = [g | u] [n, 2f] → z [n, f].
template <typename T>
void swiglu_forward(const M<T>& gu, M<T>& z) {
    const int f = int(gu.cols()) / 2;
    const auto g = gu.leftCols(f).array();
    z.resize(gu.rows(), f);
    z.array() = g / (T(1) + (-g).exp()) * gu.rightCols(f).array();
}
/// backward: dz [n, f] → dgu [n, 2f] (overwritten): dg = dz·u·σ(g)·(1 + g·(1 − σ(g))), du = dz·SiLU(g).
template <typename T>
void swiglu_backward(const M<T>& dz, const M<T>& gu, M<T>& dgu) {
    const int f = int(gu.cols()) / 2;
    const auto g = gu.leftCols(f).array();
    const auto u = gu.rightCols(f).array();
    const auto sig = T(1) / (T(1) + (-g).exp());
    dgu.resize(gu.rows(), 2 * f);
    dgu.leftCols(f).array() = dz.array() * u * sig * (T(1) + g * (T(1) - sig));
    dgu.rightCols(f).array() = dz.array() * g * sig;
}

/// forward: GeGLU z = GELU(g)·u (GELU's tanh form; Gemma, T5 v1.1) with gu = [g | u] [n, 2f] → z [n, f].
template <typename T>
void geglu_forward(const M<T>& gu, M<T>& z) {
    const int f = int(gu.cols()) / 2;
    M<T> a;  // [n, f] GELU(g)
    gelu_forward<T>(gu.leftCols(f), a);
    z.resize(gu.rows(), f);
    z.array() = a.array() * gu.rightCols(f).array();
}
/// backward: dz [n, f] → dgu [n, 2f] (overwritten): dg = GELU'(g)·(dz·u), du = dz·GELU(g).
template <typename T>
void geglu_backward(const M<T>& dz, const M<T>& gu, M<T>& dgu) {
    const int f = int(gu.cols()) / 2;
    M<T> a, dg;  // [n, f]
    const M<T> g = gu.leftCols(f);
    gelu_forward<T>(g, a);
    const M<T> dzu = (dz.array() * gu.rightCols(f).array()).matrix();
    gelu_backward<T>(dzu, g, dg);
    dgu.resize(gu.rows(), 2 * f);
    dgu.leftCols(f) = dg;
    dgu.rightCols(f).array() = dz.array() * a.array();
}

// ---------------------------------------------------------------------------------------------
// Matrix products
// ---------------------------------------------------------------------------------------------

/// C [rows, cols] (row stride ldc) = A·B, or += with accumulate, over `inner` terms; A(i, k) at
/// a[i·a_rs + k·a_cs], B(k, j) at b[k·b_rs + j·b_cs]. float: the own product (core/gemm.hpp), whose
/// sum for each element runs over k in the same order whatever the other sizes; double (the tests):
/// Eigen's. `tri` (core/gemm.hpp) skips the causal zeros.
template <typename T>
void product(int rows, int cols, int inner, const T* a, long a_rs, long a_cs, const T* b, long b_rs,
             long b_cs, T* c, long ldc, bool accumulate, Triangle tri = Triangle::None) {
    if constexpr (std::is_same_v<T, float>) {
        gemm(rows, cols, inner, GemmOperand{a, a_rs, a_cs}, GemmOperand{b, b_rs, b_cs}, c, ldc, accumulate,
             tri);
    } else {  // the whole product (the zeros a Triangle skips are zeros in memory)
        strided_product(rows, cols, inner, a, a_rs, a_cs, b, b_rs, b_cs, c, ldc, accumulate);
    }
}

// ---------------------------------------------------------------------------------------------
// Attention of one head over one sequence (temperature 1, scale 1/√dh), causal (a decoder's) or over
// every key (an encoder's), in three steps so that a caller can look at (and change) the scores and
// the weights between them.
// ---------------------------------------------------------------------------------------------

/// Scores [n, n] (row stride n) = Q·Kᵀ, Q and K [n, dh] with row strides ldq, ldk; only on and below
/// the diagonal unless `full` (the hidden part is then computed too, for a viewer to show).
template <typename T>
void attention_scores(int n, int dh, const T* Q, long ldq, const T* K, long ldk, T* scores, bool full) {
    product<T>(n, n, dh, Q, ldq, 1, K, 1, ldk, scores, n, false, full ? Triangle::None : Triangle::LowerC);
}

/// In place on P [n, n] holding scores on and below the diagonal: row i becomes softmax(P[i, 0..i]·scale),
/// zero above the diagonal (vectorised exp; the hidden keys are never read).
template <typename T>
void causal_softmax(M<T>& P, T scale) {
    const int n = int(P.rows());
    for (int i = 0; i < n; ++i) {
        auto r = P.row(i).head(i + 1).array();
        r *= scale;
        r = (r - r.maxCoeff()).exp();
        r /= r.sum();
        P.row(i).tail(n - i - 1).setZero();
    }
}

/// In place on P [n, n] holding every score: row i becomes softmax(P[i, :]·scale) over all keys
/// (bidirectional attention: an encoder's, no mask).
template <typename T>
void full_softmax(M<T>& P, T scale) {
    for (Eigen::Index i = 0; i < P.rows(); ++i) {
        auto r = P.row(i).array();
        r *= scale;
        r = (r - r.maxCoeff()).exp();
        r /= r.sum();
    }
}

/// y [n, dv] (row stride ldy) = P·V, V [n, dv] with row stride ldv; P [n, n] lower-triangular when
/// `causal` (its zeros skipped), else full.
template <typename T>
void attention_combine(int n, int dv, const M<T>& P, const T* V, long ldv, T* y, long ldy,
                       bool causal = true) {
    product<T>(n, dv, n, P.data(), n, 1, V, ldv, 1, y, ldy, false,
               causal ? Triangle::LowerA : Triangle::None);
}

/// The causal steps above for one head when nobody looks between them: y [n, dv] (row stride ldy) =
/// softmax(causal(Q·Kᵀ)·scale)·V, run in blocks of 128 query rows so that a block's scores, weights and
/// products stay in L2. `whole` (resized to [n, n]) gets every weight, as the three steps leave them
/// (the trainer's backward needs them); null: only one block of rows at a time exists (a per-thread
/// buffer). Every value is the three steps' bit for bit: a score is one dot product, a row's softmax is
/// its own, and each P·V element sums over keys 0, 1, ... in the same panels (the keys a block's
/// product adds beyond a row's own are exact zeros).
template <typename T>
void attention_head(int n, int dh, int dv, const T* Q, long ldq, const T* K, long ldk, const T* V, long ldv,
                    M<T>* whole, T scale, T* y, long ldy) {
    constexpr int B = 128;
    static thread_local M<T> block;
    M<T>& P = whole ? *whole : block;
    P.resize(whole ? n : std::min(n, B), n);
    for (int i0 = 0; i0 < n; i0 += B) {
        const int i1 = std::min(n, i0 + B);  // rows i0 .. i1 see keys 0 .. i1
        T* p = P.data() + (whole ? long(i0) * n : 0);
        product<T>(i1 - i0, i1, dh, Q + long(i0) * ldq, ldq, 1, K, 1, ldk, p, n, false);
        for (int i = i0; i < i1; ++i) {
            auto r = Eigen::Map<RowT<T>>(p + long(i - i0) * n, i + 1).array();
            r *= scale;
            r = (r - r.maxCoeff()).exp();
            r /= r.sum();
            // zero above the diagonal: up to n in P, up to the keys the block's product reads otherwise
            Eigen::Map<RowT<T>>(p + long(i - i0) * n + i + 1, (whole ? n : i1) - i - 1).setZero();
        }
        product<T>(i1 - i0, dv, i1, p, n, 1, V, ldv, 1, y + long(i0) * ldy, ldy, false);
    }
}

/// backward of one head: dy_h [n, dv] (row stride ldd) → dQ, dK, dV (overwritten; row strides ldq...):
///   dP = dy_h·Vᵀ; dV = Pᵀ·dy_h; dS = P ⊙ (dP − rowsum(dP ⊙ P))·scale; dQ = dS·K; dK = dSᵀ·Q.
/// P causal (lower-triangular, its zeros skipped) or, with causal = false, full. dP, dS: [n, n] scratch.
template <typename T>
void attention_head_backward(int n, int dh, const T* Q, const T* K, const T* V, long ld, const M<T>& P,
                             const T* dyh, long ldd, T* dQ, T* dK, T* dV, long ldg, M<T>& dP, M<T>& dS,
                             bool causal = true) {
    const T scale = T(1) / std::sqrt(T(dh));
    const Triangle lower_c = causal ? Triangle::LowerC : Triangle::None,
                   lower_a = causal ? Triangle::LowerA : Triangle::None,
                   upper_a = causal ? Triangle::UpperA : Triangle::None;
    dP.resize(n, n);
    dS.resize(n, n);
    // dP [n, n] = dy_h·Vᵀ (on and below the diagonal when causal); dV [n, dh] = Pᵀ·dy_h
    product<T>(n, n, dh, dyh, ldd, 1, V, 1, ld, dP.data(), n, false, lower_c);
    product<T>(n, dh, n, P.data(), 1, n, dyh, ldd, 1, dV, ldg, false, upper_a);
    for (int i = 0; i < n; ++i) {
        const int keys = causal ? i + 1 : n;
        const auto p = P.row(i).head(keys).array();
        const auto dp = dP.row(i).head(keys).array();
        const T dot = (dp * p).sum();
        dS.row(i).head(keys).array() = p * (dp - dot) * scale;
        dS.row(i).tail(n - keys).setZero();
    }
    // dQ [n, dh] = dS·K; dK [n, dh] = dSᵀ·Q (dS lower-triangular when causal)
    product<T>(n, dh, n, dS.data(), n, 1, K, ld, 1, dQ, ldg, false, lower_a);
    product<T>(n, dh, n, dS.data(), 1, n, Q, ld, 1, dK, ldg, false, upper_a);
}

// ---------------------------------------------------------------------------------------------
// Attention of n queries over m keys without a mask: cross-attention (queries from the decoder, keys
// and values from the encoder; rows = target tokens, columns = source tokens), with an optional
// additive bias on the scaled scores (T5's relative positions), in the same three steps.
// ---------------------------------------------------------------------------------------------

/// Scores [n, m] (row stride m) = Q·Kᵀ, Q [n, dh] (row stride ldq), K [m, dh] (row stride ldk).
template <typename T>
void cross_attention_scores(int n, int m, int dh, const T* Q, long ldq, const T* K, long ldk, T* scores) {
    product<T>(n, m, dh, Q, ldq, 1, K, 1, ldk, scores, m, false);
}

/// In place on P [n, m] holding scores: row i becomes softmax(P[i, ·]·scale + bias[i, ·]) over every
/// key, or over keys j ≤ i when `causal` (zero above the diagonal), and only the first `keys` keys
/// when keys ≥ 0 (a padded source: the rest get weight 0). bias [n, m] (row stride m) may be null.
/// The backward needs nothing more: a weight of 0 passes no gradient.
template <typename T>
void biased_softmax(M<T>& P, T scale, const T* bias, bool causal, int keys = -1) {
    const int n = int(P.rows()), m = int(P.cols());
    const int valid = keys < 0 ? m : std::clamp(keys, 1, m);
    for (int i = 0; i < n; ++i) {
        const int w = std::min(causal ? std::min(m, i + 1) : m, valid);
        auto r = P.row(i).head(w).array();
        r *= scale;
        if (bias) r += Eigen::Map<const RowT<T>>(bias + long(i) * m, w).array();
        r = (r - r.maxCoeff()).exp();
        r /= r.sum();
        if (w < m) P.row(i).tail(m - w).setZero();
    }
}

/// y [n, dv] (row stride ldy) = P·V, P [n, m], V [m, dv] with row stride ldv.
template <typename T>
void cross_attention_combine(int n, int m, int dv, const M<T>& P, const T* V, long ldv, T* y, long ldy) {
    product<T>(n, dv, m, P.data(), m, 1, V, ldv, 1, y, ldy, false);
}

/// backward of one head of biased_softmax attention without a mask (causal = false) or with it:
/// dy_h [n, dv] (row stride ldd) → dQ [n, dh], dK, dV [m, dh] (overwritten; row stride ldg), and the
/// bias's gradient dbias [n, m] (added, when non-null):
///   dP = dy_h·Vᵀ; dV = Pᵀ·dy_h; dZ = P ⊙ (dP − rowsum(dP ⊙ P)) (the logits' gradient) → dbias;
///   dS = dZ·scale; dQ = dS·K; dK = dSᵀ·Q. Q [n, dh] row stride ldq; K, V [m, dh] row stride ldk.
/// dP, dS: [n, m] scratch.
template <typename T>
void cross_attention_head_backward(int n, int m, int dh, const T* Q, long ldq, const T* K, const T* V,
                                   long ldk, const M<T>& P, T scale, bool causal, const T* dyh, long ldd,
                                   T* dQ, T* dK, T* dV, long ldg, T* dbias, M<T>& dP, M<T>& dS) {
    dP.resize(n, m);
    dS.resize(n, m);
    product<T>(n, m, dh, dyh, ldd, 1, V, 1, ldk, dP.data(), m, false);  // dP [n, m] = dy_h·Vᵀ
    product<T>(m, dh, n, P.data(), 1, m, dyh, ldd, 1, dV, ldg, false);  // dV [m, dh] = Pᵀ·dy_h
    for (int i = 0; i < n; ++i) {
        const int w = causal ? std::min(m, i + 1) : m;
        const auto p = P.row(i).head(w).array();
        const auto dp = dP.row(i).head(w).array();
        const T dot = (dp * p).sum();
        dS.row(i).head(w).array() = p * (dp - dot);
        if (w < m) dS.row(i).tail(m - w).setZero();
        if (dbias)
            for (int j = 0; j < w; ++j) dbias[long(i) * m + j] += dS(i, j);
    }
    dS *= scale;
    product<T>(n, dh, m, dS.data(), m, 1, K, ldk, 1, dQ, ldg, false);  // dQ [n, dh] = dS·K
    product<T>(m, dh, n, dS.data(), 1, m, Q, ldq, 1, dK, ldg, false);  // dK [m, dh] = dSᵀ·Q
}

// ---------------------------------------------------------------------------------------------
// T5's relative positions: the key at j seen from the query at i falls in a bucket of j − i (exact
// for short distances, logarithmic up to max_distance, one bucket beyond); each bucket holds a
// learned bias per head, added to the scores.
// ---------------------------------------------------------------------------------------------

/// Hugging Face's T5Attention._relative_position_bucket for rel = j − i, computed as it is (float32
/// logarithm, truncated): bidirectional (encoder) gives half the buckets to keys after the query;
/// causal (decoder) counts only keys before it.
inline int relative_position_bucket(int rel, bool bidirectional, int num_buckets, int max_distance) {
    int bucket = 0;
    if (bidirectional) {
        num_buckets /= 2;
        if (rel > 0) bucket += num_buckets;
        rel = rel < 0 ? -rel : rel;
    } else {
        rel = rel < 0 ? -rel : 0;
    }
    const int max_exact = num_buckets / 2;
    if (rel < max_exact) return bucket + rel;
    const float ratio = float(rel) / float(max_exact);
    const float scaled = std::log(ratio) / float(std::log(double(max_distance) / double(max_exact))) *
                         float(num_buckets - max_exact);
    return bucket + std::clamp(max_exact + int(scaled), max_exact, num_buckets - 1);
}

/// forward: bias [h][n, m] with bias[j](q, k) = table[bucket(k − q), j], table [buckets, h] (row
/// stride h: nn.Embedding(num_buckets, n_heads)).
template <typename T>
std::vector<M<T>> relative_position_bias(int n, int m, int h, const T* table, bool bidirectional,
                                         int num_buckets, int max_distance) {
    std::vector<M<T>> bias(std::size_t(h), M<T>(n, m));
    std::vector<int> bucket(std::size_t(n + m));  // by k − q + n
    for (int r = -n; r < m; ++r)
        bucket[std::size_t(r + n)] = relative_position_bucket(r, bidirectional, num_buckets, max_distance);
    for (int j = 0; j < h; ++j)
        for (int q = 0; q < n; ++q)
            for (int k = 0; k < m; ++k)
                bias[std::size_t(j)](q, k) = table[long(bucket[std::size_t(k - q + n)]) * h + j];
    return bias;
}

/// backward: dbias [h][n, m] → dtable [buckets, h] (added): each cell's gradient to its bucket.
template <typename T>
void relative_position_bias_backward(const std::vector<M<T>>& dbias, T* dtable, bool bidirectional,
                                     int num_buckets, int max_distance) {
    const int h = int(dbias.size());
    for (int j = 0; j < h; ++j) {
        const M<T>& g = dbias[std::size_t(j)];
        for (int q = 0; q < int(g.rows()); ++q)
            for (int k = 0; k < int(g.cols()); ++k)
                dtable[long(relative_position_bucket(k - q, bidirectional, num_buckets, max_distance)) * h +
                       j] += g(q, k);
    }
}

// ---------------------------------------------------------------------------------------------
// Linear: GPT-2's Conv1D W [in, out] (y = x·W + b) or nn.Linear W [out, in] (y = x·Wᵀ + b)
// ---------------------------------------------------------------------------------------------

struct LinearShape {
    int in = 0, out = 0;
    bool out_in = false;
    long ld = 0;  // W's row stride (0: dense, out for Conv1D, in for nn.Linear): a slice of a wider matrix
    long stride() const { return ld > 0 ? ld : (out_in ? in : out); }
};

/// forward: rows of x [rows, in] (row stride ldx) → y [rows, out] (row stride ldy, overwritten); b [out]
/// may be null. With threads > 1 the output columns are split in blocks (each block reads only its
/// part of W); every element is the same sum in the same order either way.
template <typename T>
void linear_forward(int rows, const T* x, long ldx, const T* W, const T* b, LinearShape s, T* y, long ldy,
                    int threads = 1) {
    const long ld = s.stride();
    auto block = [&](int c0, int nc) {
        if (s.out_in)  // Wᵀ(k, j) = W[j·ld + k]
            product<T>(rows, nc, s.in, x, ldx, 1, W + long(c0) * ld, 1, ld, y + c0, ldy, false);
        else
            product<T>(rows, nc, s.in, x, ldx, 1, W + c0, ld, 1, y + c0, ldy, false);
        if (b)
            for (int r = 0; r < rows; ++r)
                Eigen::Map<RowT<T>>(y + long(r) * ldy + c0, nc) += Eigen::Map<const RowT<T>>(b + c0, nc);
    };
    threads = std::max(1, threads);
    if (threads == 1 || s.out < 128) {
        block(0, s.out);
        return;
    }
    // Blocks of at most 4096 columns, a multiple of 64 (the product's widest tile).
    const int tasks = std::max(threads * 2, (s.out + 4095) / 4096);
    const int width = ((s.out + tasks - 1) / tasks + 63) / 64 * 64;
    const int count = (s.out + width - 1) / width;
    parallel_for(count, threads, [&](int t) {
        const int c0 = t * width;
        block(c0, std::min(width, s.out - c0));
    });
}

/// The same on a matrix: x [n, in] → y [n, out] (resized).
template <typename T>
void linear_forward(const M<T>& x, const T* W, const T* b, LinearShape s, M<T>& y, int threads = 1) {
    y.resize(x.rows(), s.out);
    linear_forward(int(x.rows()), x.data(), long(s.in), W, b, s, y.data(), long(s.out), threads);
}

/// backward: dy [n, out] → dW (added, W's layout, dense), db [out] (added, when non-null), dx [n, in]
/// (overwritten).
///   Conv1D: dW [in, out] += xᵀ·dy, dx = dy·Wᵀ;  nn.Linear: dW [out, in] += dyᵀ·x, dx = dy·W.
template <typename T>
void linear_backward(const M<T>& dy, const M<T>& x, const T* W, LinearShape s, T* dW, T* db, M<T>& dx) {
    const int n = int(dy.rows());
    dx.resize(n, s.in);
    if (s.out_in) {
        product<T>(s.out, s.in, n, dy.data(), 1, s.out, x.data(), s.in, 1, dW, s.in, true);
        product<T>(n, s.in, s.out, dy.data(), s.out, 1, W, s.in, 1, dx.data(), s.in, false);
    } else {
        product<T>(s.in, s.out, n, x.data(), 1, s.in, dy.data(), s.out, 1, dW, s.out, true);
        product<T>(n, s.in, s.out, dy.data(), s.out, 1, W, 1, s.out, dx.data(), s.in, false);
    }
    if (db)  // rows in order (not Eigen's alignment-dependent colwise sum)
        for (Eigen::Index i = 0; i < dy.rows(); ++i)
            for (Eigen::Index j = 0; j < dy.cols(); ++j) db[j] += dy(i, j);
}

}  // namespace attnviz::nn

// The trainer's templated forward and backward (see core/train.hpp for the model and the shapes):
// instantiated for float in core/train.cpp and for double only in the core tests' finite-difference
// checks (tests/core/train_double.cpp), so neither the app nor a sanitized build compiles them twice.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "core/gemm.hpp"
#include "core/thread_pool.hpp"
#include "core/train.hpp"

namespace attnviz {

namespace train_detail {

template <typename T>
using M = MatT<T>;
template <typename T>
using CMap = Eigen::Map<const M<T>>;
template <typename T>
using WMap = Eigen::Map<M<T>>;
template <typename T>
using RowT = Eigen::Matrix<T, 1, Eigen::Dynamic>;

/// Indices (into param_layout) of a config's tensors; −1 = absent.
struct LayerIdx {
    int ln1_w = -1, ln1_b = -1;
    int qkv_w = -1, qkv_b = -1;  // [d, 3d] Conv1D (GPT-2) or q|k|v [3d, d] nn.Linear (Llama)
    int o_w = -1, o_b = -1;
    int ln2_w = -1, ln2_b = -1;
    int fc_w = -1, fc_b = -1;      // GELU: c_fc [d, f] or up_proj [f, d]; SwiGLU: gate|up [2f, d]
    int proj_w = -1, proj_b = -1;  // c_proj [f, d] or down_proj [d, f]
};
struct LayoutIdx {
    int wte = 0, wpe = -1;
    std::vector<LayerIdx> layers;
    int lnf_w = -1, lnf_b = -1;
    int unembed = 0;      // wte when tied, else lm_head
    bool out_in = false;  // Llama's nn.Linear [out, in] (else GPT-2's Conv1D [in, out])
    NormKind norm = NormKind::None;
    MlpKind mlp = MlpKind::None;
    PositionKind positions = PositionKind::Learned;
    int d_ff = 0;
};

inline LayoutIdx layout_index(const TrainConfig& c, const std::vector<ParamView>& layout) {
    auto find = [&](const std::string& name) {
        for (std::size_t i = 0; i < layout.size(); ++i)
            if (layout[i].name == name) return int(i);
        return -1;
    };
    LayoutIdx idx;
    idx.out_in = llama_layout(c);
    idx.norm = train_norm(c);
    idx.mlp = c.mlp;
    idx.positions = c.positions;
    idx.d_ff = train_d_ff(c);
    const bool L = idx.out_in;
    idx.wte = find(L ? "model.embed_tokens.weight" : "wte.weight");
    idx.wpe = find(L ? "model.embed_positions.weight" : "wpe.weight");
    for (int l = 0; l < c.n_layer; ++l) {
        const std::string p = (L ? "model.layers." : "h.") + std::to_string(l) + ".";
        LayerIdx li;
        const std::string ln1 = p + (L ? "input_layernorm" : "ln_1"),
                          ln2 = p + (L ? "post_attention_layernorm" : "ln_2");
        li.ln1_w = find(ln1 + ".weight");
        li.ln1_b = find(ln1 + ".bias");
        li.ln2_w = find(ln2 + ".weight");
        li.ln2_b = find(ln2 + ".bias");
        if (L) {
            li.qkv_w = find(p + "self_attn.q_proj.weight");
            li.o_w = find(p + "self_attn.o_proj.weight");
            li.fc_w = find(p + (c.mlp == MlpKind::SwiGLU ? "mlp.gate_proj.weight" : "mlp.up_proj.weight"));
            li.proj_w = find(p + "mlp.down_proj.weight");
        } else {
            li.qkv_w = find(p + "attn.c_attn.weight");
            li.qkv_b = find(p + "attn.c_attn.bias");
            li.o_w = find(p + "attn.c_proj.weight");
            li.o_b = find(p + "attn.c_proj.bias");
            li.fc_w = find(p + "mlp.c_fc.weight");
            li.fc_b = find(p + "mlp.c_fc.bias");
            li.proj_w = find(p + "mlp.c_proj.weight");
            li.proj_b = find(p + "mlp.c_proj.bias");
        }
        idx.layers.push_back(li);
    }
    const std::string lnf = L ? "model.norm" : "ln_f";
    idx.lnf_w = find(lnf + ".weight");
    idx.lnf_b = find(lnf + ".bias");
    idx.unembed = c.tied ? idx.wte : find("lm_head.weight");
    return idx;
}

/// Start of tensor i in a buffer laid out by `layout` (null for i = −1).
template <typename T>
T* at(std::vector<T>& buf, const std::vector<ParamView>& layout, int i) {
    return i < 0 ? nullptr : buf.data() + layout[std::size_t(i)].offset;
}
template <typename T>
const T* at(const Params<T>& p, int i) {
    return i < 0 ? nullptr : p.data.data() + p.layout[std::size_t(i)].offset;
}
template <typename T>
CMap<T> view(const Params<T>& p, int i, int rows, int cols) {
    return CMap<T>(p.data.data() + p.layout[std::size_t(i)].offset, rows, cols);
}
template <typename T>
WMap<T> gview(std::vector<T>& g, const std::vector<ParamView>& layout, int i, int rows, int cols) {
    return WMap<T>(g.data() + layout[std::size_t(i)].offset, rows, cols);
}

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
// Positions: sinusoidal table, RoPE (rotate-half, as core/model.cpp and Hugging Face Llama)
// ---------------------------------------------------------------------------------------------

/// Sinusoidal positions [context, d]: P[p, c] = sin(p·w) (c even) or cos(p·w) (c odd), w = 10000^(−2⌊c/2⌋/d).
template <typename T>
M<T> sinusoid_table(int context, int d) {
    M<T> P(context, d);
    for (int c = 0; c < d; ++c) {
        const double w = std::pow(10000.0, -2.0 * double(c / 2) / double(d));
        for (int p = 0; p < context; ++p)
            P(p, c) = T(c % 2 == 0 ? std::sin(double(p) * w) : std::cos(double(p) * w));
    }
    return P;
}

/// RoPE angles: cos, sin [context, dh/2], angle p·10000^(−2i/dh).
template <typename T>
void rope_tables(int context, int dh, M<T>& cosines, M<T>& sines) {
    const int half = dh / 2;
    cosines.resize(context, half);
    sines.resize(context, half);
    for (int i = 0; i < half; ++i) {
        const double inv_freq = std::pow(10000.0, -2.0 * i / dh);
        for (int p = 0; p < context; ++p) {
            cosines(p, i) = T(std::cos(double(p) * inv_freq));
            sines(p, i) = T(std::sin(double(p) * inv_freq));
        }
    }
}

/// forward, in place on the q and k columns of qkv [n, 3d]: within each head, (x1, x2) = (x_i,
/// x_{i+dh/2}) → (x1·cos − x2·sin, x2·cos + x1·sin).
/// backward (sign = −1): the transposed rotation, (g1, g2) → (g1·cos + g2·sin, g2·cos − g1·sin).
/// qkv holds sequences of n rows: row r is at position r mod n.
template <typename T>
void rope_apply(M<T>& qkv, int n, int n_head, const M<T>& cosines, const M<T>& sines, T sign) {
    const int rows = int(qkv.rows()), d = int(qkv.cols()) / 3, dh = d / n_head, half = dh / 2;
    for (int r = 0; r < rows; ++r)
        for (int block = 0; block < 2; ++block)  // q, then k
            for (int h = 0; h < n_head; ++h) {
                const int p = r % n;
                T* x = qkv.row(r).data() + block * d + h * dh;
                for (int i = 0; i < half; ++i) {
                    const T c = cosines(p, i), s = sign * sines(p, i);
                    const T x1 = x[i], x2 = x[i + half];
                    x[i] = x1 * c - x2 * s;
                    x[i + half] = x2 * c + x1 * s;
                }
            }
}

// ---------------------------------------------------------------------------------------------
// MLP activations: GELU (tanh form) and SiLU
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

// ---------------------------------------------------------------------------------------------
// Matrix products
// ---------------------------------------------------------------------------------------------

/// C [rows, cols] (row stride ldc) = A·B, or += with accumulate, over `inner` terms; A(i, k) at
/// a[i·a_rs + k·a_cs], B(k, j) at b[k·b_rs + j·b_cs]. float: the trainer's own product (core/gemm.hpp);
/// double (the tests): Eigen's. `tri` (core/gemm.hpp) skips the causal zeros.
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
// Causal multi-head attention (temperature 1, scale 1/√dh)
// ---------------------------------------------------------------------------------------------

/// forward: qkv [S·n, 3d] (S sequences of n rows; q | k | v, head h at columns h·dh) → att [S·h][n, n]
/// softmax weights (sequence s, head h at s·h + h; zero above the diagonal), y [S·n, d] (head outputs
/// concatenated).
template <typename T>
void attention_forward(const M<T>& qkv, int S, int n_head, std::vector<M<T>>& att, M<T>& y) {
    const int n = int(qkv.rows()) / S, d = int(qkv.cols()) / 3, dh = d / n_head;
    const long ld = 3 * long(d);  // row stride of qkv
    const T scale = T(1) / std::sqrt(T(dh));
    att.resize(std::size_t(S) * std::size_t(n_head));
    y.resize(qkv.rows(), d);
    for (int s = 0; s < S; ++s)
        for (int h = 0; h < n_head; ++h) {
            const T* Q = qkv.data() + long(s) * n * ld + h * dh;  // [n, dh], row stride ld
            const T* K = Q + d;                                   // [n, dh]
            const T* V = Q + 2 * d;                               // [n, dh]
            M<T>& P = att[std::size_t(s * n_head + h)];           // [n, n]
            P.resize(n, n);
            // scores [n, n] = Q·Kᵀ, only on and below the diagonal (Kᵀ(c, j) = K[j·ld + c])
            product<T>(n, n, dh, Q, ld, 1, K, 1, ld, P.data(), n, false, Triangle::LowerC);
            for (int i = 0; i < n; ++i) {  // causal softmax of row i over keys 0..i (vectorised exp)
                auto r = P.row(i).head(i + 1).array();
                r *= scale;
                r = (r - r.maxCoeff()).exp();
                r /= r.sum();
                P.row(i).tail(n - i - 1).setZero();
            }
            // y_h [n, dh] = P·V, P lower-triangular
            product<T>(n, dh, n, P.data(), n, 1, V, ld, 1, y.data() + long(s) * n * d + h * dh, d, false,
                       Triangle::LowerA);
        }
}

/// backward: dy [S·n, d] → dqkv [S·n, 3d] (overwritten), per sequence and head:
///   dP = dy_h·Vᵀ; dV = Pᵀ·dy_h; dS = P ⊙ (dP − rowsum(dP ⊙ P))·scale; dQ = dS·K; dK = dSᵀ·Q.
template <typename T>
void attention_backward(const M<T>& dy, const M<T>& qkv, const std::vector<M<T>>& att, int S, int n_head,
                        M<T>& dqkv) {
    const int n = int(qkv.rows()) / S, d = int(qkv.cols()) / 3, dh = d / n_head;
    const long ld = 3 * long(d);  // row stride of qkv and dqkv
    const T scale = T(1) / std::sqrt(T(dh));
    dqkv.resize(qkv.rows(), 3 * d);
    M<T> dP(n, n), dS(n, n);
    for (int s = 0; s < S; ++s)
        for (int h = 0; h < n_head; ++h) {
            const long q0 = long(s) * n * ld + h * dh;
            const T *Q = qkv.data() + q0, *K = Q + d, *V = Q + 2 * d;  // [n, dh] each, row stride ld
            T *dQ = dqkv.data() + q0, *dK = dQ + d, *dV = dQ + 2 * d;
            const T* dyh = dy.data() + long(s) * n * d + h * dh;  // [n, dh], row stride d
            const M<T>& P = att[std::size_t(s * n_head + h)];     // [n, n], lower-triangular
            // dP [n, n] = dy_h·Vᵀ (on and below the diagonal); dV [n, dh] = Pᵀ·dy_h (Pᵀ upper-triangular)
            product<T>(n, n, dh, dyh, d, 1, V, 1, ld, dP.data(), n, false, Triangle::LowerC);
            product<T>(n, dh, n, P.data(), 1, n, dyh, d, 1, dV, ld, false, Triangle::UpperA);
            for (int i = 0; i < n; ++i) {
                const auto p = P.row(i).head(i + 1).array();
                const auto dp = dP.row(i).head(i + 1).array();
                const T dot = (dp * p).sum();
                dS.row(i).head(i + 1).array() = p * (dp - dot) * scale;
                dS.row(i).tail(n - i - 1).setZero();
            }
            // dQ [n, dh] = dS·K (dS lower-triangular); dK [n, dh] = dSᵀ·Q (dSᵀ upper-triangular)
            product<T>(n, dh, n, dS.data(), n, 1, K, ld, 1, dQ, ld, false, Triangle::LowerA);
            product<T>(n, dh, n, dS.data(), 1, n, Q, ld, 1, dK, ld, false, Triangle::UpperA);
        }
}

// ---------------------------------------------------------------------------------------------
// Linear: GPT-2's Conv1D W [in, out] (y = x·W + b) or nn.Linear W [out, in] (y = x·Wᵀ + b)
// ---------------------------------------------------------------------------------------------

struct LinearShape {
    int in = 0, out = 0;
    bool out_in = false;
};

/// forward: x [n, in] → y [n, out] (overwritten). b [out] may be null.
///   Conv1D: y = x·W, W [in, out];  nn.Linear: y = x·Wᵀ, W [out, in].
template <typename T>
void linear_forward(const M<T>& x, const T* W, const T* b, LinearShape s, M<T>& y) {
    const int n = int(x.rows());
    y.resize(n, s.out);
    if (s.out_in)  // Wᵀ(k, j) = W[j·in + k]
        product<T>(n, s.out, s.in, x.data(), s.in, 1, W, 1, s.in, y.data(), s.out, false);
    else
        product<T>(n, s.out, s.in, x.data(), s.in, 1, W, s.out, 1, y.data(), s.out, false);
    if (b) y.rowwise() += Eigen::Map<const RowT<T>>(b, s.out);
}

/// backward: dy [n, out] → dW (added, W's layout), db [out] (added, when non-null), dx [n, in]
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

// ---------------------------------------------------------------------------------------------
// One sequence: forward with kept activations, cross-entropy, backward
// ---------------------------------------------------------------------------------------------

/// Tables shared by every sequence of a batch.
template <typename T>
struct Tables {
    M<T> sinusoid;            // [context, d] (sinusoidal positions)
    M<T> rope_cos, rope_sin;  // [context, dh/2] (RoPE)
};

template <typename T>
Tables<T> make_tables(const TrainConfig& c) {
    Tables<T> t;
    if (c.positions == PositionKind::Sinusoidal) t.sinusoid = sinusoid_table<T>(c.context, c.d_model);
    if (c.positions == PositionKind::Rope)
        rope_tables<T>(c.context, c.d_model / c.n_head, t.rope_cos, t.rope_sin);
    return t;
}

template <typename T>
struct LayerActs {
    M<T> in;                // [n, d] residual entering the block
    M<T> a;                 // [n, d] ln_1 output (or `in` without norm)
    M<T> xhat;              // [n, d] normalised input (norms only)
    std::vector<T> rstd;    // [n]
    M<T> qkv;               // [n, 3d] (q and k after RoPE)
    std::vector<M<T>> att;  // [h][n, n]
    M<T> y;                 // [n, d] heads concatenated
    M<T> mid;               // [n, d] residual after attention
    M<T> a2;                // [n, d] ln_2 output (MLP only)
    M<T> xhat2;             // [n, d]
    std::vector<T> rstd2;   // [n]
    M<T> pre;               // [n, f] GELU input, or [n, 2f] SwiGLU gate | up
    M<T> act;               // [n, f] GELU output or SwiGLU product: the down projection's input
};

template <typename T>
struct SeqActs {
    std::vector<LayerActs<T>> layers;
    M<T> x_final;          // [n, d] residual after the last block
    M<T> f;                // [n, d] ln_f output (or x_final)
    M<T> fhat;             // [n, d]
    std::vector<T> frstd;  // [n]
    M<T> probs;            // [n, V]
};

/// Forward of S sequences of n tokens at once (ids [S, n]): every row-wise step and every linear layer
/// on all S·n rows together (one matrix product each), attention per sequence.
template <typename T>
void sequence_forward(const Params<T>& p, const LayoutIdx& idx, const Tables<T>& tab, const int* ids, int S,
                      int n, SeqActs<T>& A) {
    const TrainConfig& c = p.config;
    const int d = c.d_model, V = c.vocab_size, f = idx.d_ff;
    const bool norms = idx.norm != NormKind::None, rms = idx.norm == NormKind::RMSNorm;
    const LinearShape qkv_s{d, 3 * d, idx.out_in}, o_s{d, d, idx.out_in};
    const LinearShape fc_s{d, idx.mlp == MlpKind::SwiGLU ? 2 * f : f, idx.out_in}, proj_s{f, d, idx.out_in};
    const auto wte = view(p, idx.wte, V, d);  // [V, d]
    // pass 1: embeddings. x [S·n, d] = wte[ids] (+ wpe[0..n) or sinusoids, per sequence)
    const int rows = S * n;
    M<T> x(rows, d);
    for (int t = 0; t < rows; ++t) x.row(t) = wte.row(ids[t]);
    for (int s = 0; s < S; ++s) {
        if (idx.positions == PositionKind::Learned)
            x.middleRows(s * n, n) += view(p, idx.wpe, c.context, d).topRows(n);
        if (idx.positions == PositionKind::Sinusoidal) x.middleRows(s * n, n) += tab.sinusoid.topRows(n);
    }
    A.layers.resize(std::size_t(c.n_layer));
    for (int l = 0; l < c.n_layer; ++l) {
        const LayerIdx& li = idx.layers[std::size_t(l)];
        LayerActs<T>& L = A.layers[std::size_t(l)];
        L.in = std::move(x);
        // pass 2: ln_1
        if (norms)
            norm_forward(L.in, at(p, li.ln1_w), at(p, li.ln1_b), rms, c.norm_eps, L.a, L.xhat, L.rstd);
        else
            L.a = L.in;
        // pass 3: qkv [n, 3d], RoPE, attention, output projection, residual
        linear_forward(L.a, at(p, li.qkv_w), at(p, li.qkv_b), qkv_s, L.qkv);
        if (idx.positions == PositionKind::Rope)
            rope_apply(L.qkv, n, c.n_head, tab.rope_cos, tab.rope_sin, T(1));
        attention_forward(L.qkv, S, c.n_head, L.att, L.y);
        M<T> o;  // [n, d]
        linear_forward(L.y, at(p, li.o_w), at(p, li.o_b), o_s, o);
        L.mid = L.in + o;
        if (idx.mlp == MlpKind::None) {
            x = L.mid;
            continue;
        }
        // pass 4: ln_2, MLP, residual
        if (norms)
            norm_forward(L.mid, at(p, li.ln2_w), at(p, li.ln2_b), rms, c.norm_eps, L.a2, L.xhat2, L.rstd2);
        else
            L.a2 = L.mid;
        linear_forward(L.a2, at(p, li.fc_w), at(p, li.fc_b), fc_s, L.pre);
        if (idx.mlp == MlpKind::Gelu)
            gelu_forward(L.pre, L.act);
        else
            swiglu_forward(L.pre, L.act);
        linear_forward(L.act, at(p, li.proj_w), at(p, li.proj_b), proj_s, o);
        x = L.mid + o;
    }
    A.x_final = std::move(x);
    // pass 5: ln_f, unembedding, softmax. probs [n, V]
    if (norms)
        norm_forward(A.x_final, at(p, idx.lnf_w), at(p, idx.lnf_b), rms, c.norm_eps, A.f, A.fhat, A.frstd);
    else
        A.f = A.x_final;
    // logits [S·n, V] = f·Uᵀ, U = unembed [V, d]
    A.probs.resize(rows, V);
    product<T>(rows, V, d, A.f.data(), d, 1, at(p, idx.unembed), 1, d, A.probs.data(), V, false);
    for (int t = 0; t < rows; ++t) {
        const T mx = A.probs.row(t).maxCoeff();
        A.probs.row(t) = (A.probs.row(t).array() - mx).exp();
        A.probs.row(t) /= ordered_sum(A.probs.row(t));
    }
}

/// Backward of one sequence. dlogits [n, V] = (probs − onehot)·weight per scored token, then every
/// pass in reverse. g: gradient buffer (added to).
template <typename T>
void sequence_backward(const Params<T>& p, const LayoutIdx& idx, const Tables<T>& tab, const int* ids,
                       const int* targets, int S, int n, T weight, const SeqActs<T>& A, std::vector<T>& g) {
    const int rows = S * n;
    const TrainConfig& c = p.config;
    const int d = c.d_model, V = c.vocab_size, f = idx.d_ff;
    const auto& layout = p.layout;
    const bool norms = idx.norm != NormKind::None, rms = idx.norm == NormKind::RMSNorm;
    const LinearShape qkv_s{d, 3 * d, idx.out_in}, o_s{d, d, idx.out_in};
    const LinearShape fc_s{d, idx.mlp == MlpKind::SwiGLU ? 2 * f : f, idx.out_in}, proj_s{f, d, idx.out_in};
    auto G = [&](int i) { return at(g, layout, i); };
    // pass 5 backward: cross-entropy + softmax, unembedding, ln_f
    M<T> dlogits = A.probs;  // [S·n, V]
    for (int t = 0; t < rows; ++t) {
        if (targets[t] < 0) {
            dlogits.row(t).setZero();
            continue;
        }
        dlogits(t, targets[t]) -= T(1);
        dlogits.row(t) *= weight;
    }
    // dU [V, d] += dlogitsᵀ·f;  df [S·n, d] = dlogits·U
    product<T>(V, d, rows, dlogits.data(), 1, V, A.f.data(), d, 1, G(idx.unembed), d, true);
    M<T> df(rows, d);
    product<T>(rows, d, V, dlogits.data(), V, 1, at(p, idx.unembed), d, 1, df.data(), d, false);
    M<T> dx;  // [n, d] gradient of the residual stream
    if (norms) {
        dx.setZero(rows, d);
        norm_backward(df, A.fhat, A.frstd, at(p, idx.lnf_w), rms, dx, G(idx.lnf_w), G(idx.lnf_b));
    } else {
        dx = std::move(df);
    }
    // passes 4, 3 and 2 backward, last block first
    M<T> dy, dqkv, da, dact, dpre;
    for (int l = c.n_layer - 1; l >= 0; --l) {
        const LayerIdx& li = idx.layers[std::size_t(l)];
        const LayerActs<T>& L = A.layers[std::size_t(l)];
        if (idx.mlp != MlpKind::None) {
            // pass 4 backward: dx (out of the block) → MLP → ln_2; dx becomes d(mid)
            linear_backward(dx, L.act, at(p, li.proj_w), proj_s, G(li.proj_w), G(li.proj_b), dact);
            if (idx.mlp == MlpKind::Gelu)
                gelu_backward(dact, L.pre, dpre);
            else
                swiglu_backward(dact, L.pre, dpre);
            linear_backward(dpre, L.a2, at(p, li.fc_w), fc_s, G(li.fc_w), G(li.fc_b), da);
            if (norms)
                norm_backward(da, L.xhat2, L.rstd2, at(p, li.ln2_w), rms, dx, G(li.ln2_w), G(li.ln2_b));
            else
                dx += da;
        }
        // pass 3 backward: output projection, attention, RoPE, qkv
        linear_backward(dx, L.y, at(p, li.o_w), o_s, G(li.o_w), G(li.o_b), dy);
        attention_backward(dy, L.qkv, L.att, S, c.n_head, dqkv);
        if (idx.positions == PositionKind::Rope)
            rope_apply(dqkv, n, c.n_head, tab.rope_cos, tab.rope_sin, T(-1));
        linear_backward(dqkv, L.a, at(p, li.qkv_w), qkv_s, G(li.qkv_w), G(li.qkv_b), da);
        // pass 2 backward; residual: dx (into the block) = dx (out of attention) + d(norm path)
        if (norms)
            norm_backward(da, L.xhat, L.rstd, at(p, li.ln1_w), rms, dx, G(li.ln1_w), G(li.ln1_b));
        else
            dx += da;
    }
    // pass 1 backward: embeddings
    auto dwte = gview(g, layout, idx.wte, V, d);
    for (int t = 0; t < rows; ++t) dwte.row(ids[t]) += dx.row(t);
    if (idx.positions == PositionKind::Learned)
        for (int s = 0; s < S; ++s)
            gview(g, layout, idx.wpe, c.context, d).topRows(n) += dx.middleRows(s * n, n);
}

inline void check_batch(const TrainConfig& c, const Batch& batch) {
    if (batch.B <= 0 || batch.n <= 0) throw Error("The training batch is empty.");
    if (batch.n > c.context)
        throw Error("The training sequences have " + std::to_string(batch.n) +
                    " tokens but the model's context is " + std::to_string(c.context) + ".");
    const std::size_t cells = std::size_t(batch.B) * std::size_t(batch.n);
    if (batch.inputs.size() != cells || batch.targets.size() != cells)
        throw Error("The training batch's inputs and targets must both be B x n.");
    for (std::size_t i = 0; i < cells; ++i) {
        if (batch.inputs[i] < 0 || batch.inputs[i] >= c.vocab_size || batch.targets[i] >= c.vocab_size)
            throw Error("Token id " + std::to_string(std::max(batch.inputs[i], batch.targets[i])) +
                        " in the training batch is outside the vocabulary of " +
                        std::to_string(c.vocab_size) + ".");
    }
}

}  // namespace train_detail

template <typename T>
Params<T> make_params(const TrainConfig& config) {
    validate_train_config(config);
    Params<T> p;
    p.config = config;
    p.layout = param_layout(config);
    p.data.assign(param_count(config), T(0));
    return p;
}

template <typename T>
double loss_and_grad(const Params<T>& params, const Batch& batch, Params<T>* grad, int threads,
                     std::vector<double>* per_token_loss) {
    using namespace train_detail;
    const TrainConfig& c = params.config;
    check_batch(c, batch);
    const LayoutIdx idx = layout_index(c, params.layout);
    const Tables<T> tab = make_tables<T>(c);
    long scored = 0;
    for (int t : batch.targets) scored += t >= 0 ? 1 : 0;
    if (scored == 0) throw Error("The training batch has no scored targets.");
    const T weight = T(1) / T(scored);
    const int B = batch.B, n = batch.n;
    if (per_token_loss) per_token_loss->assign(std::size_t(B) * std::size_t(n), 0.0);
    std::vector<double> seq_loss(std::size_t(B), 0.0);
    // The batch in `chunks` contiguous runs of sequences (one per thread), each run in sub-batches of
    // at most `group` sequences whose rows go through every matrix product together; one gradient
    // partial per run, summed in run order: deterministic for a thread count.
    const std::size_t row_floats = std::size_t(c.vocab_size) + 64 * std::size_t(c.d_model) +
                                   std::size_t(c.n_layer) * std::size_t(c.n_head) * std::size_t(n);
    const int max_rows = int(std::max<std::size_t>(
        std::size_t(n), std::min<std::size_t>(2048, (std::size_t(64) << 20) / 4 / row_floats)));
    const int group = std::max(1, max_rows / n);
    // A run holds a gradient partial and one sub-batch's activations and their gradients: at most
    // 2 GiB of them together, whatever the thread count (more runs than that would only wait anyway).
    const std::size_t run_bytes = (grad ? params.data.size() : 0) * sizeof(T) +
                                  2 * std::size_t(group) * std::size_t(n) * row_floats * sizeof(T);
    const std::size_t run_limit = std::max<std::size_t>(1, (std::size_t(2) << 30) / run_bytes);
    const int chunks = std::max(1, std::min({threads, B, int(std::min<std::size_t>(run_limit, 4096))}));
    std::vector<std::vector<T>> partial(grad ? std::size_t(chunks) : 0);
    if (grad) partial[0].swap(grad->data);
    parallel_for(chunks, threads, [&](int k) {
        const int b0 = int(std::int64_t(B) * k / chunks), b1 = int(std::int64_t(B) * (k + 1) / chunks);
        if (grad) partial[std::size_t(k)].assign(params.data.size(), T(0));  // (run 0 reuses grad's memory)
        SeqActs<T> A;
        for (int g0 = b0; g0 < b1; g0 += group) {
            const int S = std::min(group, b1 - g0);
            const int* ids = batch.inputs.data() + std::size_t(g0) * std::size_t(n);
            const int* tg = batch.targets.data() + std::size_t(g0) * std::size_t(n);
            sequence_forward(params, idx, tab, ids, S, n, A);
            for (int s = 0; s < S; ++s) {
                double sum = 0;
                for (int t = 0; t < n; ++t) {
                    const int r = s * n + t;
                    if (tg[r] < 0) continue;
                    const double l = -std::log(std::max(double(A.probs(r, tg[r])), 1e-300));
                    sum += l;
                    if (per_token_loss)
                        (*per_token_loss)[std::size_t(g0) * std::size_t(n) + std::size_t(r)] = l;
                }
                seq_loss[std::size_t(g0 + s)] = sum;
            }
            if (grad) sequence_backward(params, idx, tab, ids, tg, S, n, weight, A, partial[std::size_t(k)]);
        }
    });
    if (grad) {
        grad->config = c;
        grad->layout = params.layout;
        grad->data = std::move(partial[0]);
        for (std::size_t k = 1; k < partial.size(); ++k)
            for (std::size_t i = 0; i < partial[k].size(); ++i) grad->data[i] += partial[k][i];
    }
    double total = 0;
    for (double s : seq_loss) total += s;
    return total / double(scored);
}

}  // namespace attnviz

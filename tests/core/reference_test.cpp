// An independent forward pass written with the plainest loops, in double precision, from the
// trace's own parameters (input, source, W_Q, W_K, W_V, W_O, scoring parameters). It shares no math
// with core/ops.cpp: positional rotations, ALiBi slopes, masks, softmax, kernels, φ and LayerNorm are
// all re-derived here from their textbook definitions. Compared with concat / output / residual.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positive in Eigen's AVX-512 code
#endif
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "common/matrix_expect.hpp"
#include "core/trace.hpp"
#include "core/trace_internal.hpp"

namespace attnviz {
namespace {

using D = std::vector<std::vector<double>>;  // rows x cols, row-major, double

D to_d(const Mat& M) {
    D out(std::size_t(M.rows()), std::vector<double>(std::size_t(M.cols())));
    for (int i = 0; i < M.rows(); ++i)
        for (int j = 0; j < M.cols(); ++j) out[std::size_t(i)][std::size_t(j)] = M(i, j);
    return out;
}
Mat to_f(const D& A) {
    Mat M(int(A.size()), A.empty() ? 0 : int(A[0].size()));
    for (int i = 0; i < M.rows(); ++i)
        for (int j = 0; j < M.cols(); ++j) M(i, j) = float(A[std::size_t(i)][std::size_t(j)]);
    return M;
}
D matmul(const D& A, const D& B) {
    const std::size_t r = A.size(), k = B.size(), c = B[0].size();
    D C(r, std::vector<double>(c, 0.0));
    for (std::size_t i = 0; i < r; ++i)
        for (std::size_t j = 0; j < c; ++j) {
            double s = 0;
            for (std::size_t t = 0; t < k; ++t) s += A[i][t] * B[t][j];
            C[i][j] = s;
        }
    return C;
}
D layernorm(const D& X) {
    D Y = X;
    for (auto& row : Y) {
        double mean = 0, var = 0;
        for (double v : row) mean += v;
        mean /= double(row.size());
        for (double v : row) var += (v - mean) * (v - mean);
        var /= double(row.size());
        for (double& v : row) v = (v - mean) / std::sqrt(var + 1e-5);
    }
    return Y;
}
// RoPE by its definition: pair (2i, 2i+1) of the row at position p rotated by p·base^(−2i/d).
D rope(const D& X, double base) {
    D Y = X;
    const std::size_t d = X[0].size();
    for (std::size_t p = 0; p < X.size(); ++p)
        for (std::size_t i = 0; 2 * i + 1 < d; ++i) {
            const double th = double(p) * std::pow(base, -2.0 * double(i) / double(d));
            const double a = X[p][2 * i], b = X[p][2 * i + 1];
            Y[p][2 * i] = a * std::cos(th) - b * std::sin(th);
            Y[p][2 * i + 1] = a * std::sin(th) + b * std::cos(th);
        }
    return Y;
}
bool visible(const Config& c, int i, int j, int m) {
    switch (c.mask) {
        case MaskKind::None:
            return true;
        case MaskKind::Causal:
            return j <= i;
        case MaskKind::Padding:
            return c.valid_length < 0 || j < std::min(c.valid_length, m);
        case MaskKind::Window:
            return j <= i && j > i - c.window;
        case MaskKind::Custom:
            return !c.custom_mask.is_blocked(i, j);
    }
    return true;
}
double phi(PhiKind k, double x) {
    return k == PhiKind::Relu ? std::max(x, 0.0) : (x > 0 ? x + 1 : std::exp(x));
}

struct Reference {
    D concat, output, residual;
};

Reference reference_forward(const Trace& t) {
    const Config& c = t.config;
    const int n = t.n, m = t.m, dk = t.d_k, dv = t.d_v, H = t.heads;
    const D X = to_d(t.get("input")->matrix());
    const D Y = t.get("source") ? to_d(t.get("source")->matrix()) : X;
    const D Xn = c.layernorm == LayerNormMode::Pre ? layernorm(X) : X;
    const D Yn = c.layernorm == LayerNormMode::Pre ? layernorm(Y) : Y;
    D concat(std::size_t(n), std::vector<double>(std::size_t(H * dv), 0.0));
    for (int h = 0; h < H; ++h) {
        D Q = matmul(Xn, to_d(t.get("W_Q", h)->matrix()));
        D K = matmul(Yn, to_d(t.get("W_K", h)->matrix()));
        const D V = matmul(Yn, to_d(t.get("W_V", h)->matrix()));
        if (c.positional == Positional::Rope) Q = rope(Q, c.pe_base), K = rope(K, c.pe_base);
        D A(std::size_t(n), std::vector<double>(std::size_t(m), 0.0));
        if (c.attention == AttentionKind::Softmax) {
            const ScoringParams sp = seeded_scoring_params(c, h, dk);
            const bool kernel = c.scoring == Scoring::Gaussian || c.scoring == Scoring::Boxcar ||
                                c.scoring == Scoring::Epanechnikov;
            for (int i = 0; i < n; ++i) {
                std::vector<double> s(static_cast<std::size_t>(m));
                for (int j = 0; j < m; ++j) {
                    const auto& q = Q[std::size_t(i)];
                    const auto& k = K[std::size_t(j)];
                    double v = 0;
                    if (c.scoring == Scoring::Additive) {
                        for (int u = 0; u < sp.w_v.size(); ++u) {
                            double z = 0;
                            for (int a = 0; a < dk; ++a)
                                z += sp.W_q(a, u) * q[std::size_t(a)] + sp.W_k(a, u) * k[std::size_t(a)];
                            v += sp.w_v(u) * std::tanh(z);
                        }
                    } else if (c.scoring == Scoring::Bilinear) {
                        for (int a = 0; a < dk; ++a)
                            for (int b = 0; b < dk; ++b)
                                v += q[std::size_t(a)] * sp.W(a, b) * k[std::size_t(b)];
                        v /= std::sqrt(double(dk));
                    } else if (kernel) {
                        double d2 = 0;
                        for (int a = 0; a < dk; ++a)
                            d2 += (q[std::size_t(a)] - k[std::size_t(a)]) *
                                  (q[std::size_t(a)] - k[std::size_t(a)]);
                        const double u = std::sqrt(d2) / c.bandwidth;
                        v = c.scoring == Scoring::Gaussian ? std::exp(-u * u / 2)
                            : c.scoring == Scoring::Boxcar ? (u <= 1 ? 1 : 0)
                                                           : std::max(0.0, 1 - u);
                    } else {
                        for (int a = 0; a < dk; ++a) v += q[std::size_t(a)] * k[std::size_t(a)];
                        if (c.scoring == Scoring::ScaledDot) v /= std::sqrt(double(dk));
                    }
                    if (c.positional == Positional::Alibi && !kernel)
                        v -= std::pow(2.0, -8.0 * (h + 1) / H) * std::abs(i - j);
                    s[std::size_t(j)] = v;
                }
                double sum = 0;
                if (kernel) {
                    for (int j = 0; j < m; ++j) sum += visible(c, i, j, m) ? s[std::size_t(j)] : 0.0;
                    for (int j = 0; j < m; ++j)
                        A[std::size_t(i)][std::size_t(j)] =
                            (visible(c, i, j, m) && sum > 0) ? s[std::size_t(j)] / sum : 0.0;
                } else {
                    double mx = -std::numeric_limits<double>::infinity();
                    for (int j = 0; j < m; ++j)
                        if (visible(c, i, j, m)) mx = std::max(mx, s[std::size_t(j)]);
                    for (int j = 0; j < m; ++j)
                        if (visible(c, i, j, m)) sum += std::exp((s[std::size_t(j)] - mx) / c.temperature);
                    for (int j = 0; j < m; ++j)
                        A[std::size_t(i)][std::size_t(j)] =
                            visible(c, i, j, m) ? std::exp((s[std::size_t(j)] - mx) / c.temperature) / sum
                                                : 0.0;
                }
            }
        } else {
            // Linear attention, materialised: A_ij = φ(q_i)·φ(k_j) / Σ_j' φ(q_i)·φ(k_j') over visible keys.
            D PQ = Q, PK = K;
            if (c.phi == PhiKind::Softmax) {
                for (auto& row : PQ) {
                    double mx = row[0], s = 0;
                    for (double v : row) mx = std::max(mx, v);
                    for (double& v : row) s += (v = std::exp(v - mx));
                    for (double& v : row) v /= s;
                }
                for (int a = 0; a < dk; ++a) {
                    double mx = -1e300, s = 0;
                    for (int j = 0; j < m; ++j)
                        if (visible(c, m - 1, j, m) || c.mask != MaskKind::Padding)
                            mx = std::max(mx, K[std::size_t(j)][std::size_t(a)]);
                    for (int j = 0; j < m; ++j) {
                        const bool ok = c.mask != MaskKind::Padding || visible(c, 0, j, m);
                        PK[std::size_t(j)][std::size_t(a)] =
                            ok ? std::exp(K[std::size_t(j)][std::size_t(a)] - mx) : 0.0;
                        s += PK[std::size_t(j)][std::size_t(a)];
                    }
                    for (int j = 0; j < m; ++j) PK[std::size_t(j)][std::size_t(a)] /= s;
                }
            } else {
                for (auto& row : PQ)
                    for (double& v : row) v = phi(c.phi, v);
                for (auto& row : PK)
                    for (double& v : row) v = phi(c.phi, v);
            }
            for (int i = 0; i < n; ++i) {
                double z = 0;
                std::vector<double> w(std::size_t(m), 0.0);
                for (int j = 0; j < m; ++j) {
                    if (!visible(c, i, j, m)) continue;
                    for (int a = 0; a < dk; ++a)
                        w[std::size_t(j)] +=
                            PQ[std::size_t(i)][std::size_t(a)] * PK[std::size_t(j)][std::size_t(a)];
                    z += w[std::size_t(j)];
                }
                for (int j = 0; j < m; ++j)
                    A[std::size_t(i)][std::size_t(j)] = z > 0 ? w[std::size_t(j)] / z : 0.0;
            }
        }
        const D O = matmul(A, V);  // n x d_v
        for (int i = 0; i < n; ++i)
            for (int a = 0; a < dv; ++a)
                concat[std::size_t(i)][std::size_t(h * dv + a)] = O[std::size_t(i)][std::size_t(a)];
    }
    Reference r;
    r.concat = concat;
    r.output = matmul(concat, to_d(t.get("W_O")->matrix()));
    r.residual = r.output;
    for (int i = 0; i < n; ++i)
        for (int a = 0; a < t.d_model; ++a)
            r.residual[std::size_t(i)][std::size_t(a)] += X[std::size_t(i)][std::size_t(a)];
    return r;
}

void check(const Config& c, double rel = 1e-5) {
    const Trace t = compute_trace(c);
    const Reference r = reference_forward(t);
    EXPECT_MATRIX_NEAR(t.get("concat")->matrix(), to_f(r.concat), rel);
    EXPECT_MATRIX_NEAR(t.get("output")->matrix(), to_f(r.output), rel);
    if (c.residual) {
        EXPECT_MATRIX_NEAR(t.get("residual")->matrix(), to_f(r.residual), rel);
    }
}

TEST(Reference, DefaultScaledDot) {
    check(Config());
}

TEST(Reference, Causal) {
    Config c;
    c.mask = MaskKind::Causal;
    check(c);
}

TEST(Reference, WindowPaddingCustom) {
    Config c;
    c.mask = MaskKind::Window;
    c.window = 2;
    check(c);
    c.mask = MaskKind::Padding;
    c.valid_length = 5;
    check(c);
    c.mask = MaskKind::Custom;
    c.custom_mask.set_blocked(1, 1, true);
    c.custom_mask.set_blocked(3, 0, true);
    check(c);
}

TEST(Reference, CrossAttention) {
    Config c;
    c.source_text = "une créature bleue et duveteuse erre dans la forêt verte";
    check(c);
    c.mask = MaskKind::Causal;
    check(c);
}

TEST(Reference, Temperature) {
    Config c;
    c.temperature = 0.5;
    check(c);
    c.temperature = 3.0;
    check(c);
}

TEST(Reference, RopeAlibiLearnedNone) {
    for (Positional p : {Positional::Rope, Positional::Alibi, Positional::Learned, Positional::None}) {
        SCOPED_TRACE(to_string(p));
        Config c;
        c.positional = p;
        c.mask = MaskKind::Causal;
        check(c);
    }
}

TEST(Reference, LayerNormPreAndPost) {
    Config c;
    c.layernorm = LayerNormMode::Pre;
    check(c);
    c.source_text = "the forest is dark";
    check(c);
}

TEST(Reference, EveryScoringFunction) {
    for (Scoring s : {Scoring::ScaledDot, Scoring::Dot, Scoring::Additive, Scoring::Bilinear,
                      Scoring::Gaussian, Scoring::Boxcar, Scoring::Epanechnikov}) {
        SCOPED_TRACE(to_string(s));
        Config c;
        c.scoring = s;
        c.bandwidth = 4.0;  // distances between q and k are ~5 at d_k = 16: keep the kernels non-trivial
        c.mask = MaskKind::Causal;
        check(c);
    }
}

TEST(Reference, LinearAttentionEveryPhi) {
    for (PhiKind p : {PhiKind::Elu1, PhiKind::Relu, PhiKind::Softmax}) {
        for (MaskKind mk : {MaskKind::None, MaskKind::Causal, MaskKind::Padding, MaskKind::Window}) {
            SCOPED_TRACE(to_string(p) + " / " + to_string(mk));
            Config c;
            c.attention = AttentionKind::Linear;
            c.phi = p;
            c.mask = mk;
            c.valid_length = 6;
            check(c);
        }
    }
}

TEST(Reference, UnevenHeadSizesAndLongerText) {
    Config c;
    c.d_model = 48;
    c.heads = 3;
    c.d_k = 8;
    c.d_v = 24;
    c.length = 37;
    c.mask = MaskKind::Causal;
    check(c);
}

}  // namespace
}  // namespace attnviz

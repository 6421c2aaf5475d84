// Small pure functions over Eigen that do all of attention's math. The trace (trace.hpp) only calls
// these and records their results. No state, no threads, no I/O. Shapes follow core/shapes.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/shapes.hpp"

namespace attnviz {

/// π, for the positional encodings and the kernels (M_PI is not standard C++).
inline constexpr double kPi = 3.14159265358979323846;

// ---------------------------------------------------------------------------------------------
// Random numbers: our own deterministic generator (splitmix64 + Box-Muller), so that the same seed
// gives the same matrices on every machine and standard library.
// ---------------------------------------------------------------------------------------------
class Rng {
  public:
    explicit Rng(std::uint64_t seed);
    std::uint64_t next_u64();
    double uniform();  // [0, 1)
    double normal();   // N(0, 1)
  private:
    std::uint64_t state_;
    bool has_spare_ = false;
    double spare_ = 0.0;
};

/// Stable 64-bit hash of a string (FNV-1a), used to seed a token's embedding row.
std::uint64_t hash_string(const std::string& s);

/// rows x cols matrix with entries N(0, stddev^2) drawn from Rng(seed).
Mat random_normal(int rows, int cols, double stddev, std::uint64_t seed);

// ---------------------------------------------------------------------------------------------
// Tokens, embeddings, positions
// ---------------------------------------------------------------------------------------------

/// one_hot: n x V, row i has a single 1 at column ids[i].
Mat one_hot(const std::vector<int>& ids, int vocab_size);

/// Embedding table: V x d_model. Row v depends only on (vocab[v], seed, d_model): the same word
/// gets the same vector in every sentence. Entries N(0, 1).
Mat embedding_table(const std::vector<std::string>& vocab, int d_model, std::uint64_t seed);

/// Sinusoidal PE: n x d. PE(p, 2i) = sin(p / base^(2i/d)), PE(p, 2i+1) = cos(p / base^(2i/d)),
/// positions p = offset .. offset+n-1.
Mat sinusoidal_pe(int n, int d, double base, int offset = 0);

/// Angular frequency of pair i: w_i = base^(-2i/d).
double pe_frequency(int pair, int d, double base);

/// d x d block-diagonal matrix R(delta) with blocks [[cos dw_i, sin dw_i], [-sin dw_i, cos dw_i]]
/// (the notes' rotation): PE(p + delta)^T = R(delta) . PE(p)^T for sinusoidal PE, for every p.
/// For odd d the last coordinate (a sine without its cosine partner) cannot be shifted linearly;
/// its diagonal entry is 1 and the property holds on the paired coordinates only.
Mat pe_shift_matrix(double delta, int d, double base);

/// Learned PE (untrained, seeded): n x d, N(0, 0.5^2).
Mat learned_pe(int n, int d, std::uint64_t seed);

/// RoPE's angles, written once for both pairings (rope_rotate here, a model's rotate-half in
/// core/model.cpp): cos and sin of (p + offset)·base^(−2i/d) for positions p < n and pairs i < d/2,
/// [n, d/2] each, in double.
struct RopeTable {
    Eigen::ArrayXXd cos, sin;  // [n, d/2]
};
RopeTable rope_table(int n, int d, double base, int offset = 0);

/// RoPE: rotates each row p of X (rows x d, d even) pair by pair: (x_2i, x_2i+1) by angle
/// (p + offset) * w_i, w_i = base^(-2i/d). Rotated q_p . rotated k_s depends only on s - p.
Mat rope_rotate(const Mat& X, double base, int offset = 0);

/// ALiBi slope of head `head` (0-based) out of `heads`: 2^(-8 (head+1) / heads).
double alibi_slope(int head, int heads);

/// ALiBi bias: n x m, B(i, j) = -slope * |i - j|.
Mat alibi_bias(int n, int m, double slope);

// ---------------------------------------------------------------------------------------------
// Masks. All return "allowed" (true = query i may attend to key j), n x m.
// ---------------------------------------------------------------------------------------------
BoolMat no_mask(int n, int m);
BoolMat causal_mask(int n, int m);                        // j <= i
BoolMat padding_mask(int n, int m, int valid);            // j < valid (valid < 0: all)
BoolMat window_mask(int n, int m, int window);            // i - window < j <= i
BoolMat custom_mask(int n, int m, const MaskGrid& grid);  // !grid.is_blocked(i, j)
/// The mask the config asks for, n x m.
BoolMat make_mask(const Config& cfg, int n, int m);
/// One cell of make_mask: whether the config's mask lets query i attend to key j.
bool mask_allows(const Config& cfg, int i, int j);
/// The same cell seen from the other side: true when the mask hides key j from query i.
inline bool masked(const Config& cfg, int i, int j) {
    return !mask_allows(cfg, i, j);
}

/// masked: n x m; S where allowed, -infinity where not.
Mat apply_mask(const Mat& S, const BoolMat& allowed);

// ---------------------------------------------------------------------------------------------
// Scores. Q: n x d_k, K: m x d_k. All return S: n x m.
// ---------------------------------------------------------------------------------------------
Mat dot_scores(const Mat& Q, const Mat& K);  // Q K^T
/// Additive (Bahdanau): S(i,j) = w_v^T tanh(W_q^T q_i + W_k^T k_j).
/// W_q: d_k x hidden, W_k: d_k x hidden, w_v: hidden.
Mat additive_scores(const Mat& Q, const Mat& K, const Mat& W_q, const Mat& W_k, const Vec& w_v);
/// Bilinear: S = Q W K^T, W: d_k x d_k.
Mat bilinear_scores(const Mat& Q, const Mat& K, const Mat& W);
/// Nadaraya-Watson kernels of u = ||q_i - k_j|| / bandwidth, as in the notes (and d2l):
///  Gaussian      exp(-u^2 / 2)
///  Boxcar        1 if u <= 1 else 0
///  Epanechnikov  max(0, 1 - u)
/// Non-negative; normalise with normalize_rows(), not softmax.
Mat kernel_scores(const Mat& Q, const Mat& K, Scoring kernel, double bandwidth);
bool is_kernel(Scoring s);

// ---------------------------------------------------------------------------------------------
// Normalisation
// ---------------------------------------------------------------------------------------------

/// Row-wise softmax(S / T), max subtracted before exp. -inf entries give exactly 0; a row that is
/// all -inf gives all zeros (never NaN). Throws ConfigError if T <= 0 or not finite.
Mat softmax_rows(const Mat& S, double temperature = 1.0);

/// Row-wise W / sum(W) for non-negative W (Nadaraya-Watson weights); a zero row stays zero.
/// Entries where !allowed are zeroed first (pass an empty BoolMat for no mask).
Mat normalize_rows(const Mat& W, const BoolMat& allowed = BoolMat());

/// Shannon entropy of each row of a weight matrix, in nats: n. Zero entries contribute 0.
Vec row_entropy(const Mat& A);

/// LayerNorm over each row (no learned gain/bias): (x - mean) / sqrt(var + eps).
Mat layernorm_rows(const Mat& X, double eps = 1e-5);

// ---------------------------------------------------------------------------------------------
// Linear attention
// ---------------------------------------------------------------------------------------------

/// phi applied to a query or key matrix (rows x d). For PhiKind::Softmax, `is_key` selects the
/// axis: queries softmax over features (each row), keys softmax over tokens (each column).
/// `key_valid` (rows, optional, keys only): hidden keys get a zero row and, for PhiKind::Softmax,
/// are left out of the softmax over tokens so that each column still sums to 1 over visible keys.
Mat phi_map(const Mat& X, PhiKind phi, bool is_key, const std::vector<bool>& key_valid = {});

struct LinearAttention {
    Mat phi_Q;       // n x d_k
    Mat phi_K;       // m x d_k (rows of hidden keys zeroed)
    Mat KV;          // d_k x d_v   = phi(K)^T V (for causal: the full prefix sum, i.e. the last one)
    Mat normalizer;  // n x 1       = phi(q_i) . sum_j phi(k_j) over the keys i may see
    Mat out;         // n x d_v     = phi(Q) KV / normalizer (row with normalizer 0 -> zeros)
};

/// O(n) linear attention: computes phi(K)^T V once (d_k x d_v) and never forms an n x m matrix.
/// causal = true uses prefix sums over keys j <= i. `key_valid` (m, optional) hides padded keys.
LinearAttention linear_attention(const Mat& Q, const Mat& K, const Mat& V, PhiKind phi, bool causal,
                                 const std::vector<bool>& key_valid = {});

/// The n x m weight matrix linear attention implies, for display only:
/// A(i,j) = allowed(i,j) * phi(q_i).phi(k_j) / sum_j' allowed(i,j') * phi(q_i).phi(k_j').
Mat linear_attention_weights(const Mat& phi_Q, const Mat& phi_K, const BoolMat& allowed);

}  // namespace attnviz

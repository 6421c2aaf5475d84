// The math of attention, one small function per formula. Shapes follow core/shapes.hpp: rows are
// tokens. Everything is float32 except a few accumulators kept in double for accuracy.
// GCC 12 with -march=native (AVX-512) reports false "may be used uninitialized" warnings inside
// Eigen's vectorised kernels (in the compiler's own intrinsics headers); they are not our code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "core/ops.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/nn_ops.hpp"

namespace attnviz {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// exp(x) for x below this is smaller than float's smallest normal number (≈ 1.18e-38).
constexpr float kExpUnderflow = -87.3f;

// splitmix64's output function: scrambles a 64-bit value so that nearby seeds give unrelated streams.
std::uint64_t mix64(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void require(bool ok, const std::string& message) {
    if (!ok) throw Error(message);
}

std::string shape(const Mat& M) {
    return std::to_string(M.rows()) + "×" + std::to_string(M.cols());
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Random numbers
// ---------------------------------------------------------------------------------------------

Rng::Rng(std::uint64_t seed) : state_(seed) {}

std::uint64_t Rng::next_u64() {
    state_ += 0x9E3779B97F4A7C15ULL;
    return mix64(state_);
}

double Rng::uniform() {
    // The top 53 bits give every double in [0, 1) on a 2^-53 grid.
    return double(next_u64() >> 11) * (1.0 / 9007199254740992.0);
}

double Rng::normal() {
    if (has_spare_) {
        has_spare_ = false;
        return spare_;
    }
    // Box-Muller: two uniforms -> two independent N(0, 1). u1 in (0, 1] so log(u1) is finite.
    const double u1 = 1.0 - uniform();
    const double u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double theta = 2.0 * kPi * u2;
    spare_ = r * std::sin(theta);
    has_spare_ = true;
    return r * std::cos(theta);
}

std::uint64_t hash_string(const std::string& s) {
    std::uint64_t h = 14695981039346656037ULL;  // FNV-1a offset basis
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ULL;  // FNV prime
    }
    return h;
}

Mat random_normal(int rows, int cols, double stddev, std::uint64_t seed) {
    require(rows >= 0 && cols >= 0, "random_normal: negative size");
    Rng rng(seed);
    Mat M(rows, cols);  // rows x cols, filled row by row so that growing `rows` keeps earlier rows
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) M(i, j) = float(stddev * rng.normal());
    return M;
}

// ---------------------------------------------------------------------------------------------
// Tokens, embeddings, positions
// ---------------------------------------------------------------------------------------------

Mat one_hot(const std::vector<int>& ids, int vocab_size) {
    require(vocab_size >= 0, "one_hot: negative vocabulary size");
    Mat O = Mat::Zero(Eigen::Index(ids.size()), vocab_size);  // n x V
    for (std::size_t i = 0; i < ids.size(); ++i) {
        require(ids[i] >= 0 && ids[i] < vocab_size, "one_hot: token id " + std::to_string(ids[i]) +
                                                        " is outside the vocabulary of " +
                                                        std::to_string(vocab_size));
        O(Eigen::Index(i), ids[i]) = 1.0f;
    }
    return O;
}

Mat embedding_table(const std::vector<std::string>& vocab, int d_model, std::uint64_t seed) {
    require(d_model >= 0, "embedding_table: negative d_model");
    Mat E(Eigen::Index(vocab.size()), d_model);                     // V x d_model
    const std::uint64_t mixed = mix64(seed ^ 0x656D6265646469ULL);  // "embeddi": not the seed of W_Q etc.
    for (std::size_t v = 0; v < vocab.size(); ++v) {
        // Seeded by the word itself, so "forest" has the same vector in every sentence.
        Rng rng(hash_string(vocab[v]) ^ mixed);
        for (int j = 0; j < d_model; ++j) E(Eigen::Index(v), j) = float(rng.normal());
    }
    return E;
}

double pe_frequency(int pair, int d, double base) {
    return std::pow(base, -2.0 * double(pair) / double(d));
}

Mat sinusoidal_pe(int n, int d, double base, int offset) {
    require(n >= 0 && d >= 0, "sinusoidal_pe: negative size");
    Mat P(n, d);  // n x d
    for (int c = 0; c < d; ++c) {
        const double w = pe_frequency(c / 2, d, base);
        for (int p = 0; p < n; ++p) {
            // Angles in double: p·w for p in the thousands needs more than float's 24 bits.
            const double angle = double(p + offset) * w;
            P(p, c) = float(c % 2 == 0 ? std::sin(angle) : std::cos(angle));
        }
    }
    return P;
}

Mat pe_shift_matrix(double delta, int d, double base) {
    require(d >= 0, "pe_shift_matrix: negative size");
    Mat R = Mat::Zero(d, d);  // d x d
    for (int i = 0; 2 * i + 1 < d; ++i) {
        // [sin((p+δ)w); cos((p+δ)w)] = [[cos δw, sin δw]; [−sin δw, cos δw]] · [sin pw; cos pw]
        const double a = delta * pe_frequency(i, d, base);
        R(2 * i, 2 * i) = float(std::cos(a));
        R(2 * i, 2 * i + 1) = float(std::sin(a));
        R(2 * i + 1, 2 * i) = float(-std::sin(a));
        R(2 * i + 1, 2 * i + 1) = float(std::cos(a));
    }
    if (d % 2 == 1) R(d - 1, d - 1) = 1.0f;  // lone sine: no linear shift exists
    return R;
}

Mat learned_pe(int n, int d, std::uint64_t seed) {
    return random_normal(n, d, 0.5, mix64(seed ^ 0x6C6561726E6564ULL));
}

RopeTable rope_table(int n, int d, double base, int offset) {
    RopeTable t;
    t.cos.resize(n, d / 2);  // [n, d/2]
    t.sin.resize(n, d / 2);  // [n, d/2]
    for (int i = 0; 2 * i + 1 < d; ++i) {
        const double w = pe_frequency(i, d, base);
        for (int p = 0; p < n; ++p) {
            const double a = double(p + offset) * w;
            t.cos(p, i) = std::cos(a);
            t.sin(p, i) = std::sin(a);
        }
    }
    return t;
}

Mat rope_rotate(const Mat& X, double base, int offset) {
    const Eigen::Index d = X.cols();
    if (d % 2 != 0) {
        throw ConfigError("RoPE rotates pairs of coordinates, so it needs an even width, not " +
                          std::to_string(d));
    }
    Mat R(X.rows(), d);  // rows x d
    const RopeTable t = rope_table(int(X.rows()), int(d), base, offset);
    for (int i = 0; 2 * i < d; ++i) {
        for (Eigen::Index p = 0; p < X.rows(); ++p) {
            const double c = t.cos(p, i), s = t.sin(p, i);
            const double x0 = X(p, 2 * i), x1 = X(p, 2 * i + 1);
            R(p, 2 * i) = float(x0 * c - x1 * s);
            R(p, 2 * i + 1) = float(x0 * s + x1 * c);
        }
    }
    return R;
}

double alibi_slope(int head, int heads) {
    require(heads >= 1, "alibi_slope: heads must be at least 1");
    return std::pow(2.0, -8.0 * double(head + 1) / double(heads));
}

Mat alibi_bias(int n, int m, double slope) {
    require(n >= 0 && m >= 0, "alibi_bias: negative size");
    Mat B(n, m);  // n x m
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j) B(i, j) = float(-slope * std::abs(i - j));
    return B;
}

// ---------------------------------------------------------------------------------------------
// Masks
// ---------------------------------------------------------------------------------------------

BoolMat no_mask(int n, int m) {
    return BoolMat::Constant(n, m, true);
}

namespace {
// One cell of each mask (true = query i may attend to key j); the matrices below are these, filled.
bool causal_allows(int i, int j) {
    return j <= i;
}
bool padding_allows(int j, int valid) {
    return valid < 0 || j < valid;
}
bool window_allows(int i, int j, int window) {
    return (i - window < j) && (j <= i);
}
}  // namespace

BoolMat causal_mask(int n, int m) {
    BoolMat M(n, m);  // n x m
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j) M(i, j) = causal_allows(i, j);
    return M;
}

BoolMat padding_mask(int n, int m, int valid) {
    BoolMat M(n, m);  // n x m
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j) M(i, j) = padding_allows(j, valid);
    return M;
}

BoolMat window_mask(int n, int m, int window) {
    BoolMat M(n, m);  // n x m
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j) M(i, j) = window_allows(i, j, window);
    return M;
}

BoolMat custom_mask(int n, int m, const MaskGrid& grid) {
    BoolMat M(n, m);  // n x m
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j) M(i, j) = !grid.is_blocked(i, j);
    return M;
}

BoolMat make_mask(const Config& cfg, int n, int m) {
    switch (cfg.mask) {
        case MaskKind::None:
            return no_mask(n, m);
        case MaskKind::Causal:
            return causal_mask(n, m);
        case MaskKind::Padding:
            return padding_mask(n, m, cfg.valid_length);
        case MaskKind::Window:
            return window_mask(n, m, cfg.window);
        case MaskKind::Custom:
            return custom_mask(n, m, cfg.custom_mask);
    }
    return no_mask(n, m);
}

bool mask_allows(const Config& cfg, int i, int j) {
    switch (cfg.mask) {
        case MaskKind::None:
            return true;
        case MaskKind::Causal:
            return causal_allows(i, j);
        case MaskKind::Padding:
            return padding_allows(j, cfg.valid_length);
        case MaskKind::Window:
            return window_allows(i, j, cfg.window);
        case MaskKind::Custom:
            return !cfg.custom_mask.is_blocked(i, j);
    }
    return true;
}

Mat apply_mask(const Mat& S, const BoolMat& allowed) {
    if (allowed.size() == 0) return S;  // no mask
    require(allowed.rows() == S.rows() && allowed.cols() == S.cols(),
            "apply_mask: mask is " + std::to_string(allowed.rows()) + "×" + std::to_string(allowed.cols()) +
                " but the scores are " + shape(S));
    Mat masked(S.rows(), S.cols());      // n x m
    const Eigen::Index size = S.size();  // both row-major: one flat loop (vectorises; select() does not)
    const float* sp = S.data();
    const bool* bp = allowed.data();
    float* mp = masked.data();
    for (Eigen::Index k = 0; k < size; ++k) mp[k] = bp[k] ? sp[k] : kNegInf;
    return masked;
}

// ---------------------------------------------------------------------------------------------
// Scores
// ---------------------------------------------------------------------------------------------

Mat dot_scores(const Mat& Q, const Mat& K) {
    require(Q.cols() == K.cols(), "dot_scores: Q is " + shape(Q) + " but K is " + shape(K));
    Mat S = Q * K.transpose();  // n x m
    return S;
}

Mat additive_scores(const Mat& Q, const Mat& K, const Mat& W_q, const Mat& W_k, const Vec& w_v) {
    require(Q.cols() == K.cols() && W_q.rows() == Q.cols() && W_k.rows() == K.cols() &&
                W_q.cols() == W_k.cols() && w_v.size() == W_q.cols(),
            "additive_scores: shapes do not fit (Q " + shape(Q) + ", K " + shape(K) + ", W_q " + shape(W_q) +
                ", W_k " + shape(W_k) + ", w_v " + std::to_string(w_v.size()) + ")");
    const Mat QW = Q * W_q;     // n x hidden
    const Mat KW = K * W_k;     // m x hidden
    Mat S(Q.rows(), K.rows());  // n x m
    for (Eigen::Index i = 0; i < Q.rows(); ++i) {
        // Row i: every key's KW row plus q_i's, through tanh, then dotted with w_v.
        Mat H = KW;  // m x hidden
        H.rowwise() += QW.row(i);
        H.array() = H.array().tanh();
        S.row(i) = (H * w_v).transpose();
    }
    return S;
}

Mat bilinear_scores(const Mat& Q, const Mat& K, const Mat& W) {
    require(Q.cols() == K.cols() && W.rows() == Q.cols() && W.cols() == K.cols(),
            "bilinear_scores: Q is " + shape(Q) + ", K is " + shape(K) + " and W is " + shape(W));
    const Mat QW = Q * W;        // n x d_k
    Mat S = QW * K.transpose();  // n x m
    return S;
}

bool is_kernel(Scoring s) {
    return s == Scoring::Gaussian || s == Scoring::Boxcar || s == Scoring::Epanechnikov;
}

Mat kernel_scores(const Mat& Q, const Mat& K, Scoring kernel, double bandwidth) {
    require(Q.cols() == K.cols(), "kernel_scores: Q is " + shape(Q) + " but K is " + shape(K));
    require(is_kernel(kernel), "kernel_scores: " + to_string(kernel) + " is not a kernel");
    if (!(bandwidth > 0) || !std::isfinite(bandwidth)) {
        throw ConfigError("bandwidth must be a finite number > 0");
    }
    // ‖q − k‖² = ‖q‖² + ‖k‖² − 2 q·k: one matrix product instead of n·m difference vectors.
    const Eigen::ArrayXf q2 = Q.rowwise().squaredNorm().array();  // n
    const Eigen::ArrayXf k2 = K.rowwise().squaredNorm().array();  // m
    Mat S = Q * K.transpose();                                    // n x m, q·k; becomes the kernel values
    const float inv_h2 = float(1.0 / (bandwidth * bandwidth));
    Eigen::ArrayXf d2(K.rows());  // m: ‖q_i − k_j‖² for one query (reused, so no n×m temporaries)
    for (Eigen::Index i = 0; i < S.rows(); ++i) {
        auto s = S.row(i).array();
        d2 = q2(i) + k2 - 2.0f * s.transpose();
        // The shortcut cancels catastrophically when q ≈ k (a large |q|² + |k|² minus almost the
        // same 2q·k), and √ of that rounding error is visible in Epanechnikov's 1 − u. Those few
        // near-matches are recomputed directly as Σ (q − k)².
        if ((d2 < 1e-2f * (q2(i) + k2)).any()) {
            for (Eigen::Index j = 0; j < d2.size(); ++j) {
                if (d2(j) < 1e-2f * (q2(i) + k2(j))) d2(j) = (Q.row(i) - K.row(j)).squaredNorm();
            }
        }
        // u² = ‖q − k‖² / h². Rounding can make a true 0 slightly negative; a squared distance never is.
        d2 = d2.max(0.0f) * inv_h2;
        switch (kernel) {
            case Scoring::Gaussian:
                // Flushed to exactly 0 below float's normal range, identically on every CPU.
                d2 *= -0.5f;
                s = d2.exp().transpose();
                for (Eigen::Index j = 0; j < d2.size(); ++j) {
                    if (d2(j) < kExpUnderflow) s(j) = 0.0f;
                }
                break;
            case Scoring::Boxcar:
                for (Eigen::Index j = 0; j < d2.size(); ++j) s(j) = d2(j) <= 1.0f ? 1.0f : 0.0f;
                break;
            default:  // Epanechnikov
                s = (1.0f - d2.sqrt()).max(0.0f).transpose();
                break;
        }
    }
    return S;
}

// ---------------------------------------------------------------------------------------------
// Normalisation
// ---------------------------------------------------------------------------------------------

Mat softmax_rows(const Mat& S, double temperature) {
    if (!(temperature > 0) || !std::isfinite(temperature)) {
        throw ConfigError(
            "temperature must be > 0; the T→0 limit is argmax (one-hot), the app cannot divide by 0");
    }
    const float inv_T = float(1.0 / temperature);
    Mat A(S.rows(), S.cols());  // n x m
    for (Eigen::Index i = 0; i < S.rows(); ++i) {
        const auto s = S.row(i).array();
        auto a = A.row(i).array();
        const float mx = S.cols() > 0 ? s.maxCoeff() : 0.0f;
        if (mx == kNegInf || S.cols() == 0) {
            // Every key hidden: nothing to attend to. Zeros, not 0/0 = NaN.
            a.setZero();
            continue;
        }
        if (std::isinf(mx)) {
            // +∞ scores win outright: split the weight evenly between them.
            a = (s == mx).cast<float>();
        } else {
            // softmax(s/T) = exp((s − max)/T) / Σ exp((s − max)/T): every exponent ≤ 0, so no
            // overflow however small T or large s. Below −87 exp is under float's smallest normal
            // number and invisible next to the max's exp(0) = 1; Eigen's vectorised exp returns a
            // tiny denormal there (even for −∞) on some CPUs, so those -- including every masked
            // −∞ -- are set to exactly 0.
            // (Plain loops around Eigen's vectorised exp: Eigen 3.4's select() is not vectorised
            // and made this 5× slower.)
            const float* sp = S.row(i).data();
            float* ap = A.row(i).data();
            const Eigen::Index m = S.cols();
            for (Eigen::Index j = 0; j < m; ++j) ap[j] = (sp[j] - mx) * inv_T;
            a = a.exp();
            for (Eigen::Index j = 0; j < m; ++j) ap[j] = (sp[j] - mx) * inv_T < kExpUnderflow ? 0.0f : ap[j];
        }
        const float sum = a.sum();  // ≥ 1: the max entry contributes exp(0) = 1
        a *= 1.0f / sum;
    }
    return A;
}

namespace {

// A ← rows of (A where allowed, else 0) divided by their sums; in place, so the caller's n×m
// matrix is the only one (a fresh 4096×4096 matrix costs as much in page faults as the math).
void normalize_rows_in_place(Mat& A, const BoolMat& allowed, const char* who) {
    const bool masked = allowed.size() != 0;
    require(!masked || (allowed.rows() == A.rows() && allowed.cols() == A.cols()),
            std::string(who) + ": mask is " + std::to_string(allowed.rows()) + "×" +
                std::to_string(allowed.cols()) + " but the weights are " + shape(A));
    for (Eigen::Index i = 0; i < A.rows(); ++i) {
        auto a = A.row(i).array();
        if (masked) {
            float* ap = A.row(i).data();
            const bool* bp = allowed.data() + i * allowed.cols();
            for (Eigen::Index j = 0; j < A.cols(); ++j) ap[j] = bp[j] ? ap[j] : 0.0f;
        }
        const float sum = a.sum();
        if (sum > 0)
            a *= 1.0f / sum;
        else
            a.setZero();
    }
}

}  // namespace

Mat normalize_rows(const Mat& W, const BoolMat& allowed) {
    Mat A = W;  // n x m
    normalize_rows_in_place(A, allowed, "normalize_rows");
    return A;
}

Vec row_entropy(const Mat& A) {
    Vec H(A.rows());  // n
    for (Eigen::Index i = 0; i < A.rows(); ++i) {
        const auto a = A.row(i).array();
        // −Σ a ln a, with 0 ln 0 = 0 (the limit): a·ln(max(a, FLT_MIN)) is exactly 0 for a = 0 and
        // needs no branch. Summed in double for long rows.
        const Eigen::ArrayXf terms = (a * a.max(std::numeric_limits<float>::min()).log()).transpose();
        H(i) = float(-terms.cast<double>().sum());
    }
    return H;
}

Mat layernorm_rows(const Mat& X, double eps) {
    // The model's LayerNorm (core/nn_ops.hpp), in double: the single layer shows exact arithmetic.
    using MD = nn::M<double>;
    const MD x = X.cast<double>();  // rows x d
    const std::vector<double> ones(std::size_t(X.cols()), 1.0);
    MD y, xhat;
    std::vector<double> rstd;
    nn::norm_forward<double>(x, ones.data(), nullptr, false, eps, y, xhat, rstd);
    return y.cast<float>();
}

// ---------------------------------------------------------------------------------------------
// Linear attention
// ---------------------------------------------------------------------------------------------

Mat phi_map(const Mat& X, PhiKind phi, bool is_key, const std::vector<bool>& key_valid) {
    require(key_valid.empty() || Eigen::Index(key_valid.size()) == X.rows(),
            "phi_map: key_valid has " + std::to_string(key_valid.size()) + " entries for " +
                std::to_string(X.rows()) + " keys");
    auto valid = [&](Eigen::Index j) { return !is_key || key_valid.empty() || key_valid[std::size_t(j)]; };
    Mat P(X.rows(), X.cols());  // rows x d
    switch (phi) {
        case PhiKind::Elu1:
            // elu(x) + 1 = x + 1 for x > 0, eˣ otherwise: positive everywhere.
            P.array() = X.array().min(0.0f).exp();  // eˣ for x ≤ 0
            for (Eigen::Index k = 0; k < P.size(); ++k) {
                if (X.data()[k] > 0.0f) P.data()[k] = X.data()[k] + 1.0f;
            }
            break;
        case PhiKind::Relu:
            P.array() = X.array().max(0.0f);
            break;
        case PhiKind::Softmax:
            if (!is_key) {
                P = softmax_rows(X);  // softmax₂: each query over its features
            } else {
                // softmax₁: each feature column over the (visible) key tokens.
                P.setZero();
                for (Eigen::Index c = 0; c < X.cols(); ++c) {
                    float mx = kNegInf;
                    for (Eigen::Index j = 0; j < X.rows(); ++j)
                        if (valid(j)) mx = std::max(mx, X(j, c));
                    if (mx == kNegInf) continue;
                    double sum = 0;
                    for (Eigen::Index j = 0; j < X.rows(); ++j)
                        if (valid(j)) {
                            P(j, c) = std::exp(X(j, c) - mx);
                            sum += P(j, c);
                        }
                    for (Eigen::Index j = 0; j < X.rows(); ++j) P(j, c) = float(P(j, c) / sum);
                }
            }
            break;
    }
    if (is_key && !key_valid.empty()) {
        for (Eigen::Index j = 0; j < X.rows(); ++j)
            if (!key_valid[std::size_t(j)]) P.row(j).setZero();
    }
    return P;
}

LinearAttention linear_attention(const Mat& Q, const Mat& K, const Mat& V, PhiKind phi, bool causal,
                                 const std::vector<bool>& key_valid) {
    require(Q.cols() == K.cols() && K.rows() == V.rows(),
            "linear_attention: Q is " + shape(Q) + ", K is " + shape(K) + " and V is " + shape(V));
    LinearAttention r;
    r.phi_Q = phi_map(Q, phi, false);            // n x d_k
    r.phi_K = phi_map(K, phi, true, key_valid);  // m x d_k, hidden keys zeroed
    const Eigen::Index n = Q.rows(), m = K.rows(), d_k = Q.cols(), d_v = V.cols();
    r.normalizer.resize(n, 1);  // n x 1
    r.out.resize(n, d_v);       // n x d_v
    if (!causal) {
        // Associativity: (φ(Q) φ(K)ᵀ) V = φ(Q) (φ(K)ᵀ V). The right side costs O(n·d_k·d_v), no n×m.
        r.KV = r.phi_K.transpose() * V;            // d_k x d_v
        const RowVec z = r.phi_K.colwise().sum();  // 1 x d_k, Σ_j φ(k_j)
        r.normalizer = r.phi_Q * z.transpose();    // n x 1
        r.out = r.phi_Q * r.KV;                    // n x d_v
        for (Eigen::Index i = 0; i < n; ++i) {
            const float zi = r.normalizer(i, 0);
            if (zi > 0)
                r.out.row(i) *= 1.0f / zi;
            else
                r.out.row(i).setZero();
        }
        return r;
    }
    // Causal: query i sees keys j ≤ i. Keep running sums (prefix sums over keys) of φ(k_j) v_jᵀ
    // (d_k x d_v) and φ(k_j) (d_k), updated once per step -- like an RNN's state. Accumulated in
    // double: thousands of rank-1 updates in float would drift.
    Eigen::MatrixXd state = Eigen::MatrixXd::Zero(d_k, d_v);  // d_k x d_v, Σ_{j≤i} φ(k_j) v_jᵀ
    Eigen::VectorXd zsum = Eigen::VectorXd::Zero(d_k);        // d_k,       Σ_{j≤i} φ(k_j)
    for (Eigen::Index i = 0; i < n; ++i) {
        if (i < m) {
            const Eigen::VectorXd k = r.phi_K.row(i).transpose().cast<double>();  // d_k
            state.noalias() += k * V.row(i).cast<double>();
            zsum += k;
        }
        const Eigen::RowVectorXd q = r.phi_Q.row(i).cast<double>();  // 1 x d_k
        const double zi = q.dot(zsum);
        r.normalizer(i, 0) = float(zi);
        if (zi > 0)
            r.out.row(i) = ((q * state) / zi).cast<float>();
        else
            r.out.row(i).setZero();
    }
    r.KV = state.cast<float>();  // the prefix sum the last query used
    return r;
}

Mat linear_attention_weights(const Mat& phi_Q, const Mat& phi_K, const BoolMat& allowed) {
    require(phi_Q.cols() == phi_K.cols(),
            "linear_attention_weights: φ(Q) is " + shape(phi_Q) + " but φ(K) is " + shape(phi_K));
    Mat A = phi_Q * phi_K.transpose();  // n x m, φ(q_i)·φ(k_j) ≥ 0, then normalised in place
    normalize_rows_in_place(A, allowed, "linear_attention_weights");
    return A;
}

}  // namespace attnviz

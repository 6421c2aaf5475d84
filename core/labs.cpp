// Teaching labs: each one computes a small experiment with the functions of core/ops.hpp and
// core/metrics.hpp and returns what the GUI draws. See labs.hpp for the contract.
// GCC 12 reports a false -Wmaybe-uninitialized inside its own AVX-512 intrinsics whenever Eigen
// packs a float matrix product under -march=native (GCC bug 105593, fixed in GCC 13). It is not
// about our code, so silence exactly that diagnostic for this file.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "core/labs.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <limits>
#include <numeric>

#include "core/error.hpp"
#include "core/ops.hpp"

namespace attnviz {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// printf-style formatting for the findings sentences.
std::string fmt(const char* format, ...) {
    char buffer[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(buffer, sizeof buffer, format, args);
    va_end(args);
    return buffer;
}

void require_valid(bool ok, const std::string& message) {
    if (!ok) throw ConfigError(message);
}

bool finite_positive(double v) {
    return std::isfinite(v) && v > 0.0;
}

// Largest |entry|. A plain loop: Eigen's vectorised maxCoeff() trips GCC 12's -Wmaybe-uninitialized
// false positive under -march=native with AVX-512, and -Werror turns that into a build failure.
template <typename Derived>
double max_abs(const Eigen::DenseBase<Derived>& M) {
    double best = 0.0;
    for (Eigen::Index i = 0; i < M.rows(); ++i) {
        for (Eigen::Index j = 0; j < M.cols(); ++j) best = std::max(best, std::abs(double(M(i, j))));
    }
    return best;
}

}  // namespace

std::string format_thousands(std::int64_t v) {
    const bool negative = v < 0;
    std::uint64_t u = negative ? std::uint64_t(-(v + 1)) + 1 : std::uint64_t(v);
    std::string digits = std::to_string(u);
    std::string out;
    const int len = int(digits.size());
    for (int i = 0; i < len; ++i) {
        if (i > 0 && (len - i) % 3 == 0) out += ',';
        out += digits[std::size_t(i)];
    }
    return negative ? "-" + out : out;
}

std::string format_bytes(double bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    double v = bytes;
    while (std::abs(v) >= 1024.0 && u < 5) {
        v /= 1024.0;
        ++u;
    }
    if (u == 0) return fmt("%.0f B", v);
    if (std::abs(v) >= 100.0) return fmt("%.0f %s", v, units[u]);
    if (std::abs(v) >= 10.0) return fmt("%.1f %s", v, units[u]);
    return fmt("%.2f %s", v, units[u]);
}

// =============================================================================================
// Texts
// =============================================================================================

const std::vector<LabId>& all_labs() {
    static const std::vector<LabId> labs = {LabId::PositionalEncoding, LabId::NadarayaWatson,
                                            LabId::Temperature, LabId::SoftmaxVsLinear, LabId::Size};
    return labs;
}

namespace {

LabText make_pe_text() {
    LabText t;
    t.title = "Positional encoding";
    t.intro =
        "Attention itself is blind to order: shuffle the tokens and every token gets the same output, "
        "shuffled. "
        "So each position p gets a code PE(p) that is added to the token's embedding. The sinusoidal code "
        "uses "
        "one sine/cosine pair per two dimensions, each pair turning at its own speed.";
    t.sections = {
        {"The PE matrix", "PE(p, 2i) = sin(p·ωᵢ),  PE(p, 2i+1) = cos(p·ωᵢ),  ωᵢ = base^(−2i/d)",
         "Rows are positions, columns are dimensions. The first columns change quickly with p (short "
         "wavelength), "
         "the last ones barely change (wavelengths up to 2π·base): like the hands of a clock, fast to slow."},
        {"Nearby positions look alike", "sim(p, s) = PE(p)·PE(s) = Σᵢ cos((p − s)·ωᵢ)",
         "Every code has the same length √(d/2), and the dot product of two codes depends only on the "
         "distance "
         "p − s: it is largest on the diagonal and falls off (with ripples) away from it."},
        {"Dimensions over positions", "column 2i: sin(p·ωᵢ),  column 2i+1: cos(p·ωᵢ),  wavelength 2π/ωᵢ",
         "Each curve is one column of the PE matrix. A pair (2i, 2i+1) is a point going round a circle; "
         "higher pairs go round more slowly."},
        {"Shifting a position is a rotation",
         "[PE(p+δ,2i), PE(p+δ,2i+1)]ᵀ = [[cos δωᵢ, sin δωᵢ], [−sin δωᵢ, cos δωᵢ]]·[PE(p,2i), PE(p,2i+1)]ᵀ",
         "By sin(a+b) = sin a cos b + cos a sin b and cos(a+b) = cos a cos b − sin a sin b, moving δ "
         "positions "
         "ahead is a fixed block-diagonal rotation R(δ) that does not depend on p. A linear layer can "
         "therefore "
         "learn to look \"δ tokens back\" for every position at once. The lab checks R(δ)·PE(p)ᵀ against "
         "PE(p+δ)ᵀ: they agree to float rounding (~1e−7)."},
        {"RoPE: relative position inside the dot product", "(R_p q)·(R_s k) = qᵀ R_pᵀ R_s k = qᵀ R_(s−p) k",
         "Rotary embeddings rotate q and k themselves by their positions instead of adding a code. Rotations "
         "compose, R_pᵀR_s = R_(s−p), so the score depends only on the offset s − p: every diagonal of the "
         "matrix is constant. Adding absolute codes, (q+PE_p)·(k+PE_s), has no such property."},
    };
    return t;
}

LabText make_nw_text() {
    LabText t;
    t.title = "Nadaraya–Watson: attention without learning";
    t.intro =
        "Long before Transformers, kernel regression predicted y at a query x by averaging the training "
        "targets yᵢ, weighting each by how close its xᵢ is to x. That is attention pooling: the query is x, "
        "the keys are the xᵢ, the values are the yᵢ.";
    t.sections = {
        {"Kernel regression is attention", "f̂(x) = Σᵢ [K(x − xᵢ) / Σⱼ K(x − xⱼ)]·yᵢ = Σᵢ α(x, xᵢ)·yᵢ",
         "Each row of the weight matrix holds one query's weights over the training points; it sums to 1. "
         "The fitted curve is ŷ = A·y."},
        {"Three kernels",
         "Gaussian exp(−u²/2),  boxcar 1 if u ≤ 1 else 0,  Epanechnikov max(0, 1 − u),  u = |x − xᵢ|/h",
         "The bandwidth h sets how far a query looks. Small h: the fit chases the noise (a Gaussian with "
         "tiny h "
         "passes through the training points). Large h: the fit flattens towards the mean of y. Boxcar and "
         "Epanechnikov ignore points farther than h; a query with no point that close has no weights at "
         "all."},
        {"Additive vs dot-product scoring",
         "additive: a(q,k) = w_vᵀ tanh(W_q q + W_k k);   scaled dot: a(q,k) = qᵀk/√d",
         "Additive scoring runs q and k through a one-layer network and works even when q and k have "
         "different "
         "sizes. The dot product needs no parameters and is one matrix product for all pairs, which is why "
         "Transformers use it."},
        {"Why the dot product: it is the Gaussian kernel in disguise", "−½‖q − k‖² = qᵀk − ½‖k‖² − ½‖q‖²",
         "The ‖q‖² term is the same for every key of a query and cancels in the softmax. If all keys have "
         "the "
         "same length (LayerNorm keeps them similar), ‖k‖² cancels too, and softmax(qᵀk) equals the Gaussian "
         "kernel's weights. Tick \"equal-norm keys\" to see the difference vanish."},
    };
    return t;
}

LabText make_temperature_text() {
    LabText t;
    t.title = "Temperature and 1/√d scaling";
    t.intro =
        "The exponential in softmax exaggerates differences: a score a little larger gets a much larger "
        "weight. "
        "Temperature and the 1/√d factor control how sharp the weights are.";
    t.sections = {
        {"Temperature", "softmax(s/T)ⱼ = exp(sⱼ/T) / Σₖ exp(sₖ/T)",
         "Dividing by T > 1 shrinks the differences and flattens the weights; T < 1 sharpens them. As T → 0 "
         "all the weight goes to the largest score (argmax); T = 0 itself is a division by zero, which is "
         "why it "
         "is not allowed."},
        {"Entropy of the weights", "H = −Σⱼ aⱼ ln aⱼ,   0 ≤ H ≤ ln m",
         "Entropy measures how spread out a weight row is: 0 nats for one-hot, ln m for uniform over m keys. "
         "It grows steadily with T."},
        {"Why divide by √d", "q, k ~ N(0, I_d):  Var(qᵀk) = Σᵢ Var(qᵢkᵢ) = d,   Var(qᵀk/√d) = 1",
         "A dot product of d independent unit-variance products has variance d, so raw scores grow like √d. "
         "Dividing by √d keeps them at unit scale whatever the head width."},
        {"Saturation", "max_j softmax(qKᵀ)ⱼ → 1 as d grows;   with /√d it stays put",
         "Without scaling, wide heads produce scores so far apart that softmax is almost one-hot: the "
         "gradient "
         "through it nearly vanishes and the head stops learning. With 1/√d the largest weight stays "
         "moderate."},
    };
    return t;
}

LabText make_linear_text() {
    LabText t;
    t.title = "Softmax vs linear attention";
    t.intro =
        "Softmax attention forms all n×n scores before it can normalise them, so time and memory grow as n². "
        "Linear attention replaces exp(qᵀk) by a product of feature maps φ(q)ᵀφ(k), which lets the sum over "
        "keys "
        "be done once for all queries.";
    t.sections = {
        {"General form", "out_i = Σⱼ sim(qᵢ, kⱼ)·vⱼ / Σⱼ sim(qᵢ, kⱼ),   sim ≥ 0",
         "Softmax attention is the case sim(q, k) = exp(qᵀk/√d). Any non-negative similarity gives weights "
         "that "
         "sum to 1."},
        {"Kernel trick: reorder the product", "(φ(Q)φ(K)ᵀ)V = φ(Q)(φ(K)ᵀV)",
         "φ(K)ᵀV is only d×d and is computed once; each query then needs O(d²) work, so the whole layer is "
         "O(n·d²) instead of O(n²·d), and no n×n matrix is ever stored. φ = elu+1 and ReLU keep features "
         "non-negative."},
        {"Softmax form (Shen et al., efficient attention)", "LinearAttention = softmax₂(Q)·(softmax₁(K)ᵀV)",
         "Softmax over Q's features (each row) and over K's tokens (each column) makes every implied weight "
         "row "
         "sum to 1 automatically, without a separate normaliser."},
        {"Same inputs, different weights",
         "ΔA = A_linear − A_softmax,   ΔO = φ(Q)(φ(K)ᵀV)/norm − softmax(QKᵀ/√d)V",
         "Linear attention is not an approximation that converges to softmax: it is a different similarity. "
         "Its weights are usually flatter, because φ(q)ᵀφ(k) grows polynomially, not exponentially."},
        {"Measured cost", "time ∝ n^slope:  softmax slope ≈ 2,  linear slope ≈ 1",
         "The lab times both on this machine for growing n and fits a straight line on log–log axes. Memory: "
         "the "
         "n×n weights take n²·4 bytes; linear attention keeps d²·4 + n·d·4."},
    };
    return t;
}

LabText make_size_text() {
    LabText t;
    t.title = "How big is attention?";
    t.intro =
        "Parameters grow with the width d_model; the attention pattern grows with the square of the context "
        "length n. The second one is the wall long contexts hit.";
    t.sections = {
        {"Parameters of one layer",
         "h·d_model·(2d_k + d_v) + h·d_v·d_model  =  4·d_model²  when h·d_k = h·d_v = d_model",
         "Each head has its own W_Q, W_K (d_model×d_k) and W_V (d_model×d_v); W_O maps the concatenated "
         "heads back "
         "to d_model. With the usual d_k = d_v = d_model/h that is 3·d_model² + d_model² (no biases)."},
        {"GPT-3's numbers", "12,288 × 50,257 = 617,558,016 (embedding) = unembedding;  96 × 128 = 12,288",
         "The embedding and unembedding tables together hold 1,235,116,032 parameters. Each of the 96 layers "
         "has "
         "96 heads of width 128, so one attention layer has 4·12,288² = 603,979,776 parameters."},
        {"The quadratic wall", "pattern bytes = h·n²·4",
         "Every head keeps an n×n table of weights. Doubling the context quadruples it: 96 heads pass 1 GiB "
         "near "
         "n ≈ 1,700 and 80 GiB near n ≈ 15,000 — for one layer, if the patterns are materialised."},
    };
    return t;
}

}  // namespace

const LabText& lab_text(LabId lab) {
    static const LabText pe = make_pe_text();
    static const LabText nw = make_nw_text();
    static const LabText temperature = make_temperature_text();
    static const LabText linear = make_linear_text();
    static const LabText size = make_size_text();
    switch (lab) {
        case LabId::PositionalEncoding:
            return pe;
        case LabId::NadarayaWatson:
            return nw;
        case LabId::Temperature:
            return temperature;
        case LabId::SoftmaxVsLinear:
            return linear;
        case LabId::Size:
            return size;
    }
    return pe;
}

// =============================================================================================
// 1. Positional encoding
// =============================================================================================

PeLab positional_encoding_lab(const PeLabParams& P) {
    require_valid(P.positions >= 1 && P.positions <= 4096, "positions must be between 1 and 4096.");
    require_valid(P.dims >= 2 && P.dims <= 1024, "dims must be between 2 and 1024.");
    require_valid(std::isfinite(P.base) && P.base > 1.0, "The PE base must be a number greater than 1.");
    for (int c : P.curve_dims) {
        require_valid(c >= 0 && c < P.dims,
                      fmt("Curve dimension %d does not exist; choose 0 .. %d.", c, P.dims - 1));
    }
    require_valid(P.p >= 0 && P.p <= 1000000,
                  "The rotation check's position p must be between 0 and 1,000,000.");
    require_valid(std::abs(P.delta) <= 1000000 && P.p + P.delta >= 0,
                  "The shift δ must keep p + δ at or above position 0 (and |δ| ≤ 1,000,000).");
    require_valid(P.rope_positions >= 1 && P.rope_positions <= 512,
                  "RoPE positions must be between 1 and 512.");

    PeLab L;
    const int d = P.dims;
    L.PE = sinusoidal_pe(P.positions, d, P.base);  // positions x d
    // Dot products of position codes: every row has the same norm √(d/2), so this is a scaled
    // cosine similarity, largest on the diagonal and decaying (with ripples) away from it.
    L.similarity = L.PE * L.PE.transpose();  // positions x positions

    L.curve_dims = P.curve_dims;
    L.curves.resize(P.positions, Eigen::Index(P.curve_dims.size()));  // positions x curves
    for (std::size_t c = 0; c < P.curve_dims.size(); ++c) {
        L.curves.col(Eigen::Index(c)) = L.PE.col(P.curve_dims[c]);
        L.curve_wavelengths.push_back(2.0 * kPi / pe_frequency(P.curve_dims[c] / 2, d, P.base));
    }

    // Rotation check: the notes' identity PE(p+δ)ᵀ = R(δ)·PE(p)ᵀ, with R(δ) independent of p.
    L.R = pe_shift_matrix(double(P.delta), d, P.base);  // d x d
    L.pe_p = sinusoidal_pe(1, d, P.base, P.p).row(0);
    L.rotated = (L.R * L.pe_p.transpose()).transpose();
    L.pe_p_delta = sinusoidal_pe(1, d, P.base, P.p + P.delta).row(0);
    L.difference = L.rotated - L.pe_p_delta;
    if (d % 2 == 1) L.difference(d - 1) = 0.0f;  // an unpaired sine cannot be shifted linearly
    L.rotation_max_abs_diff = max_abs(L.difference);

    // RoPE check. The same q sits at every position p and the same k at every position s; RoPE
    // rotates each by its position, and the dot product then only sees the angle difference.
    const int dr = d - d % 2;  // RoPE rotates pairs: use an even width
    const int np = P.rope_positions;
    L.q = random_normal(1, dr, 1.0, P.seed).row(0);
    L.k = random_normal(1, dr, 1.0, P.seed + 1).row(0);
    const Mat Qs = L.q.replicate(np, 1);     // np x dr, q at positions 0 .. np-1
    const Mat Ks = L.k.replicate(np, 1);     // np x dr
    const Mat Qr = rope_rotate(Qs, P.base);  // np x dr, row p = R_p q
    const Mat Kr = rope_rotate(Ks, P.base);  // np x dr, row s = R_s k
    // Dot products in double so that the spread we report is RoPE's, not the summation's.
    const Eigen::MatrixXd Qrd = Qr.cast<double>(), Krd = Kr.cast<double>();  // np x dr
    const Eigen::MatrixXd D = Qrd * Krd.transpose();                         // np x np
    // For contrast: absolute PE added to q and k (as in the original Transformer's input).
    const Mat PEr = sinusoidal_pe(np, dr, P.base);                                           // np x dr
    const Eigen::MatrixXd Qad = (Qs + PEr).cast<double>(), Kad = (Ks + PEr).cast<double>();  // np x dr
    const Eigen::MatrixXd Dadd = Qad * Kad.transpose();                                      // np x np
    L.rope_dots = D.cast<float>();
    L.additive_dots = Dadd.cast<float>();
    for (int offset = -(np - 1); offset <= np - 1; ++offset) {
        RopeOffsetRow row;
        row.offset = offset;
        double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0.0;
        double alo = lo, ahi = hi;
        for (int p = 0; p < np; ++p) {
            const int s = p + offset;
            if (s < 0 || s >= np) continue;
            lo = std::min(lo, D(p, s));
            hi = std::max(hi, D(p, s));
            alo = std::min(alo, Dadd(p, s));
            ahi = std::max(ahi, Dadd(p, s));
            sum += D(p, s);
            ++row.pairs;
        }
        row.mean = sum / row.pairs;
        row.spread = hi - lo;
        row.additive_spread = ahi - alo;
        L.rope_max_spread = std::max(L.rope_max_spread, row.spread);
        L.additive_max_spread = std::max(L.additive_max_spread, row.additive_spread);
        L.rope_table.push_back(row);
    }

    L.findings.push_back(fmt("R(%d)·PE(%d)ᵀ matches PE(%d)ᵀ: largest difference %.2e (float rounding).",
                             P.delta, P.p, P.p + P.delta, L.rotation_max_abs_diff));
    if (d % 2 == 1) {
        L.findings.push_back(
            fmt("d = %d is odd: the last sine has no cosine partner, so it is left out of the check "
                "and RoPE uses the first %d dimensions.",
                d, dr));
    }
    L.findings.push_back(
        fmt("RoPE: (R_p q)·(R_s k) over all pairs with the same offset s − p differs by at most "
            "%.2e; it depends only on the offset.",
            L.rope_max_spread));
    L.findings.push_back(
        fmt("Adding absolute PE instead, (q+PE_p)·(k+PE_s) with the same offset differs by up to %.3g.",
            L.additive_max_spread));
    if (!L.curve_wavelengths.empty()) {
        L.findings.push_back(fmt("Dimension %d repeats every %.3g positions; dimension %d every %.3g.",
                                 L.curve_dims.front(), L.curve_wavelengths.front(), L.curve_dims.back(),
                                 L.curve_wavelengths.back()));
    }
    return L;
}

// =============================================================================================
// 2. Nadaraya–Watson
// =============================================================================================

std::string to_string(NwTarget t) {
    switch (t) {
        case NwTarget::D2l:
            return "d2l";
        case NwTarget::Sin:
            return "sin";
        case NwTarget::Step:
            return "step";
        case NwTarget::Linear:
            return "linear";
    }
    return "d2l";
}

double nw_target_value(NwTarget t, double x) {
    switch (t) {
        case NwTarget::D2l:
            return 2.0 * std::sin(x) + std::pow(std::max(x, 0.0), 0.8);
        case NwTarget::Sin:
            return std::sin(x);
        case NwTarget::Step:
            return x < 2.5 ? 0.0 : 2.0;
        case NwTarget::Linear:
            return x;
    }
    return 0.0;
}

NwLab nadaraya_watson_lab(const NwLabParams& P) {
    require_valid(P.train >= 1 && P.train <= 10000,
                  "The number of training points must be between 1 and 10,000.");
    require_valid(!P.query_points.empty() || (P.queries >= 1 && P.queries <= 10000),
                  "The number of query points must be between 1 and 10,000.");
    require_valid(P.query_points.size() <= 10000, "At most 10,000 query points are allowed.");
    for (double x : P.query_points)
        require_valid(std::isfinite(x), "Every query point must be a finite number.");
    require_valid(std::isfinite(P.noise) && P.noise >= 0.0, "The noise level must be a number ≥ 0.");
    require_valid(is_kernel(P.kernel), "Nadaraya–Watson needs a kernel: Gaussian, boxcar or Epanechnikov.");
    require_valid(finite_positive(P.bandwidth), "The bandwidth must be a number greater than 0.");
    require_valid(P.score_queries >= 1 && P.score_queries <= 64 && P.score_keys >= 1 && P.score_keys <= 64,
                  "The scoring comparison needs 1 to 64 queries and keys.");
    require_valid(
        P.score_dim >= 1 && P.score_dim <= 512 && P.additive_hidden >= 1 && P.additive_hidden <= 512,
        "The scoring comparison's d and hidden size must be between 1 and 512.");

    NwLab L;
    const int m = P.train;
    // Training data: sorted uniform x in [0, 5), y = f(x) + noise (d2l's setup).
    Rng rng(P.seed);
    std::vector<double> xs(std::size_t(m), 0.0);
    for (double& x : xs) x = 5.0 * rng.uniform();
    std::sort(xs.begin(), xs.end());
    L.x_train.resize(m);
    L.y_train.resize(m);
    double noise_sq = 0.0;
    for (int i = 0; i < m; ++i) {
        const double f = nw_target_value(P.target, xs[std::size_t(i)]);
        const double y = f + P.noise * rng.normal();
        L.x_train(i) = float(xs[std::size_t(i)]);
        L.y_train(i) = float(y);
        noise_sq += (y - f) * (y - f);
    }
    L.train_noise_mse = noise_sq / m;

    if (!P.query_points.empty()) {
        L.x_query =
            Eigen::Map<const Eigen::VectorXd>(P.query_points.data(), Eigen::Index(P.query_points.size()))
                .cast<float>();
    } else if (P.queries == 1) {
        L.x_query = Vec::Constant(1, 2.5f);
    } else {
        L.x_query = Eigen::VectorXd::LinSpaced(P.queries, 0.0, 5.0).cast<float>();
    }
    const int n = int(L.x_query.size());
    L.y_true.resize(n);
    for (int i = 0; i < n; ++i) L.y_true(i) = float(nw_target_value(P.target, double(L.x_query(i))));

    // Queries and keys are 1-D points: Q is n x 1, K is m x 1, values are y (m).
    const Mat Q1 = L.x_query;                                        // n x 1
    const Mat K1 = L.x_train;                                        // m x 1
    L.kernel_values = kernel_scores(Q1, K1, P.kernel, P.bandwidth);  // n x m
    L.A = normalize_rows(L.kernel_values);                           // n x m
    L.y_hat = L.A * L.y_train;                                       // n
    L.covered.assign(std::size_t(n), true);
    double se = 0.0;
    int counted = 0;
    for (int i = 0; i < n; ++i) {
        const bool covered = L.kernel_values.row(i).sum() > 0.0f && std::isfinite(L.y_hat(i));
        L.covered[std::size_t(i)] = covered;
        if (!covered) {
            // No training point within reach: the weights are all 0, so A·y is 0 -- an honest
            // "no information", never a NaN from 0/0.
            L.y_hat(i) = 0.0f;
            ++L.uncovered;
            continue;
        }
        const double e = double(L.y_hat(i)) - double(L.y_true(i));
        se += e * e;
        ++counted;
    }
    L.mse = counted > 0 ? se / counted : std::numeric_limits<double>::quiet_NaN();

    // Scoring comparison on one small seeded Q, K.
    const int nq = P.score_queries, mk = P.score_keys, d = P.score_dim, hidden = P.additive_hidden;
    L.Q = random_normal(nq, d, 1.0, P.seed + 101);  // n x d
    L.K = random_normal(mk, d, 1.0, P.seed + 102);  // m x d
    if (P.equal_norm_keys) {
        for (int j = 0; j < mk; ++j) {
            const float norm = L.K.row(j).norm();
            if (norm > 0.0f) L.K.row(j) *= float(std::sqrt(double(d))) / norm;
        }
    }
    L.W_q = random_normal(d, hidden, 1.0 / std::sqrt(double(d)), P.seed + 103);  // d x hidden
    L.W_k = random_normal(d, hidden, 1.0 / std::sqrt(double(d)), P.seed + 104);  // d x hidden
    L.w_v = random_normal(hidden, 1, 1.0, P.seed + 105).col(0);                  // hidden
    L.S_additive = additive_scores(L.Q, L.K, L.W_q, L.W_k, L.w_v);               // n x m
    L.S_dot = dot_scores(L.Q, L.K) / float(std::sqrt(double(d)));                // n x m
    L.A_additive = softmax_rows(L.S_additive);
    L.A_dot = softmax_rows(L.S_dot);
    // exp(−½‖q−k‖²) = exp(qᵀk)·exp(−½‖q‖²)·exp(−½‖k‖²): the q factor cancels in each row, so the
    // Gaussian kernel's weights are softmax(qᵀk − ½‖k‖²) -- plain dot-product softmax when all
    // keys have the same length.
    L.A_gaussian = normalize_rows(kernel_scores(L.Q, L.K, Scoring::Gaussian, 1.0));
    L.A_dot_unscaled = softmax_rows(dot_scores(L.Q, L.K));
    L.gaussian_vs_dot_max_diff = max_abs(L.A_gaussian - L.A_dot_unscaled);

    const char* kname = P.kernel == Scoring::Gaussian ? "Gaussian"
                        : P.kernel == Scoring::Boxcar ? "boxcar"
                                                      : "Epanechnikov";
    if (counted > 0) {
        L.findings.push_back(
            fmt("%s kernel, bandwidth %.3g: mean squared error against the true curve %.4f "
                "(the noise itself has %.4f).",
                kname, P.bandwidth, L.mse, L.train_noise_mse));
    }
    if (L.uncovered > 0) {
        L.findings.push_back(
            fmt("%d of %d queries have no training point within the bandwidth: their weights are all 0 "
                "and the fit is undefined there (drawn as a gap).",
                L.uncovered, n));
    }
    L.findings.push_back(
        fmt("Additive and scaled dot-product scoring rank keys differently: largest weight difference %.3f.",
            max_abs(L.A_additive - L.A_dot)));
    L.findings.push_back(fmt("Gaussian-kernel weights vs softmax(QKᵀ): largest difference %.2e%s.",
                             L.gaussian_vs_dot_max_diff,
                             P.equal_norm_keys ? " (keys of equal length: identical up to rounding)"
                                               : " (keys of unequal length: −½‖k‖² tilts the weights)"));
    return L;
}

// =============================================================================================
// 3. Temperature & scaling
// =============================================================================================

TemperatureLab temperature_lab(const TemperatureLabParams& P) {
    require_valid(P.scores.size() >= 2 && P.scores.size() <= 4096,
                  "The score row needs between 2 and 4096 entries.");
    for (float s : P.scores) require_valid(std::isfinite(s), "Every score must be a finite number.");
    require_valid(!P.temperatures.empty() && P.temperatures.size() <= 64,
                  "Give between 1 and 64 temperatures.");
    for (double t : P.temperatures)
        require_valid(finite_positive(t), "Every temperature T must be a number greater than 0.");
    require_valid(finite_positive(P.t_min) && finite_positive(P.t_max) && P.t_max > P.t_min,
                  "The temperature range needs 0 < T_min < T_max.");
    require_valid(P.entropy_points >= 2 && P.entropy_points <= 10000,
                  "The entropy curve needs 2 to 10,000 points.");
    TemperatureLab L;
    const int m = int(P.scores.size());
    L.scores = Eigen::Map<const RowVec>(P.scores.data(), m);
    const Mat S = L.scores;  // 1 x m
    L.temperatures = P.temperatures;
    L.weights.resize(Eigen::Index(P.temperatures.size()), m);  // T x m
    for (std::size_t t = 0; t < P.temperatures.size(); ++t) {
        L.weights.row(Eigen::Index(t)) = softmax_rows(S, P.temperatures[t]);
    }
    L.weight_entropy = row_entropy(L.weights);

    L.max_entropy = std::log(double(m));
    L.entropy_T.resize(P.entropy_points);
    L.entropy.resize(P.entropy_points);
    const double lmin = std::log(P.t_min), lmax = std::log(P.t_max);
    for (int i = 0; i < P.entropy_points; ++i) {
        const double T = std::exp(lmin + (lmax - lmin) * i / (P.entropy_points - 1));
        L.entropy_T(i) = float(T);
        L.entropy(i) = row_entropy(softmax_rows(S, T))(0);
    }

    L.findings.push_back(fmt(
        "T = %.3g: entropy %.4f nats (argmax: 0). T = %.3g: entropy %.4f nats (uniform: ln %d = %.4f).",
        P.t_min, double(L.entropy(0)), P.t_max, double(L.entropy(P.entropy_points - 1)), m, L.max_entropy));
    return L;
}

ScalingLab scaling_lab(const ScalingLabParams& P) {
    require_valid(!P.dims.empty() && P.dims.size() <= 32, "Give between 1 and 32 dimensions d.");
    for (int d : P.dims) require_valid(d >= 1 && d <= 8192, "Every dimension d must be between 1 and 8192.");
    require_valid(P.samples >= 2 && P.samples <= 1000000,
                  "The number of samples must be between 2 and 1,000,000.");
    require_valid(P.saturation_keys >= 2 && P.saturation_keys <= 4096,
                  "The saturation experiment needs 2 to 4096 keys.");
    require_valid(P.saturation_trials >= 1 && P.saturation_trials <= 100000,
                  "The saturation experiment needs 1 to 100,000 trials.");

    ScalingLab L;
    L.saturation_keys = P.saturation_keys;
    // Variance of q·k for q, k ~ N(0, I_d): a sum of d independent products of variance 1, so
    // Var = d. Dividing by √d brings it back to 1 whatever d is.
    const int nd = int(P.dims.size());
    L.dims = P.dims;
    L.var_unscaled.resize(nd);
    L.var_scaled.resize(nd);
    L.mean_max_unscaled.resize(nd);
    L.mean_max_scaled.resize(nd);
    std::vector<double> q, s_raw(std::size_t(P.saturation_keys));
    for (int di = 0; di < nd; ++di) {
        const int d = P.dims[std::size_t(di)];
        const double scale = 1.0 / std::sqrt(double(d));
        Rng rng(P.seed * 1000003ULL + std::uint64_t(d));
        double mean = 0.0, m2 = 0.0;  // Welford
        for (int s = 0; s < P.samples; ++s) {
            double dot = 0.0;
            for (int j = 0; j < d; ++j) dot += rng.normal() * rng.normal();
            const double delta = dot - mean;
            mean += delta / (s + 1);
            m2 += delta * (dot - mean);
        }
        const double var = m2 / (P.samples - 1);
        L.var_unscaled(di) = float(var);
        L.var_scaled(di) = float(var * scale * scale);

        // Saturation: one query against m keys. Without 1/√d the scores spread like √d, the
        // largest one wins by a wide margin and softmax becomes (nearly) one-hot.
        q.assign(std::size_t(d), 0.0);
        double sum_max_raw = 0.0, sum_max_scaled = 0.0;
        for (int t = 0; t < P.saturation_trials; ++t) {
            for (double& x : q) x = rng.normal();
            for (int j = 0; j < P.saturation_keys; ++j) {
                double dot = 0.0;
                for (int c = 0; c < d; ++c) dot += q[std::size_t(c)] * rng.normal();
                s_raw[std::size_t(j)] = dot;
            }
            const double mx = *std::max_element(s_raw.begin(), s_raw.end());
            double z_raw = 0.0, z_scaled = 0.0;
            for (double sv : s_raw) {
                z_raw += std::exp(sv - mx);
                z_scaled += std::exp((sv - mx) * scale);
            }
            sum_max_raw += 1.0 / z_raw;  // the max entry's weight is exp(0) / Z
            sum_max_scaled += 1.0 / z_scaled;
        }
        L.mean_max_unscaled(di) = float(sum_max_raw / P.saturation_trials);
        L.mean_max_scaled(di) = float(sum_max_scaled / P.saturation_trials);
    }

    const int last = nd - 1;
    L.findings.push_back(fmt("d = %d: Var(q·k) = %.4g (theory %d); Var(q·k/√d) = %.4g (theory 1).",
                             P.dims[std::size_t(last)], double(L.var_unscaled(last)),
                             P.dims[std::size_t(last)], double(L.var_scaled(last))));
    L.findings.push_back(
        fmt("d = %d, %d keys: the largest softmax weight averages %.3f without 1/√d and %.3f with it.",
            P.dims[std::size_t(last)], P.saturation_keys, double(L.mean_max_unscaled(last)),
            double(L.mean_max_scaled(last))));
    return L;
}

// =============================================================================================
// 4. Softmax vs linear
// =============================================================================================

std::string to_string(CostKind k) {
    return k == CostKind::Softmax ? "softmax" : "linear";
}

LinearLab softmax_vs_linear_lab(const LinearLabParams& P) {
    require_valid(P.n >= 1 && P.n <= 1024, "The number of tokens n must be between 1 and 1024.");
    require_valid(P.d >= 1 && P.d <= 512, "The width d must be between 1 and 512.");
    require_valid(!P.phis.empty(), "Choose at least one feature map φ.");

    LinearLab L;
    const int n = P.n, d = P.d;
    L.Q = random_normal(n, d, 1.0, P.seed);                                // n x d
    L.K = random_normal(n, d, 1.0, P.seed + 1);                            // n x d
    L.V = random_normal(n, d, 1.0, P.seed + 2);                            // n x d
    const BoolMat allowed = P.causal ? causal_mask(n, n) : no_mask(n, n);  // n x n
    const Mat S = dot_scores(L.Q, L.K) / float(std::sqrt(double(d)));      // n x n, QKᵀ/√d
    L.A_softmax = softmax_rows(apply_mask(S, allowed));                    // n x n
    L.out_softmax = L.A_softmax * L.V;                                     // n x d
    const double out_norm = double(L.out_softmax.norm());

    for (PhiKind phi : P.phis) {
        PhiComparison c;
        c.phi = phi;
        const LinearAttention la = linear_attention(L.Q, L.K, L.V, phi, P.causal);
        c.A_linear = linear_attention_weights(la.phi_Q, la.phi_K, allowed);  // n x n
        c.A_diff = c.A_linear - L.A_softmax;
        c.out_linear = la.out;  // n x d
        c.out_diff = c.out_linear - L.out_softmax;
        c.weight_diff_norm = double(c.A_diff.norm());
        c.weight_max_abs = max_abs(c.A_diff);
        c.output_diff_norm = double(c.out_diff.norm());
        c.output_rel = out_norm > 0.0 ? c.output_diff_norm / out_norm : 0.0;
        c.weights_vs_output = max_abs(c.A_linear * L.V - c.out_linear);
        L.findings.push_back(
            fmt("φ = %s: weights differ from softmax by up to %.3f (‖ΔA‖_F = %.3f); outputs by "
                "‖ΔO‖_F = %.3f (%.0f%% of ‖O‖_F).",
                to_string(phi).c_str(), c.weight_max_abs, c.weight_diff_norm, c.output_diff_norm,
                100.0 * c.output_rel));
        L.phis.push_back(std::move(c));
    }
    return L;
}

namespace {
// CPU seconds this thread has run (user + system, page faults included): unlike the wall clock it
// does not grow while another process holds the core.
double thread_cpu_seconds() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}
}  // namespace

CostSample measure_cost(CostKind kind, int n, int d, int repeats) {
    require_valid(n >= 1 && d >= 1 && d <= 4096, "Cost measurement needs n ≥ 1 and 1 ≤ d ≤ 4096.");
    require_valid(repeats >= 1 && repeats <= 100, "Repeat the measurement between 1 and 100 times.");
    if (kind == CostKind::Softmax) {
        require_valid(n <= 32768,
                      fmt("Softmax attention with n = %d would need %s for one n×n matrix; use n ≤ 32,768.",
                          n, format_bytes(4.0 * double(n) * double(n)).c_str()));
    } else {
        require_valid(n <= (1 << 22) && double(n) * d * 4.0 * 4.0 <= 4.0 * kGiB,
                      "Linear attention at this n × d would need more than 4 GiB; choose a smaller n.");
    }
    // Inputs are made outside the timed region: we time attention, not the random generator.
    const Mat Q = random_normal(n, d, 1.0, 1);  // n x d
    const Mat K = random_normal(n, d, 1.0, 2);  // n x d
    const Mat V = random_normal(n, d, 1.0, 3);  // n x d
    std::vector<double> times, cpu_times;
    volatile float sink = 0.0f;  // keeps the optimiser from dropping the work
    for (int r = 0; r < repeats; ++r) {
        const double c0 = thread_cpu_seconds();
        const auto t0 = std::chrono::steady_clock::now();
        if (kind == CostKind::Softmax) {
            Mat S = dot_scores(Q, K);                             // n x n
            const Mat A = softmax_rows(S, std::sqrt(double(d)));  // n x n, softmax(S/√d)
            S = Mat();
            const Mat O = A * V;  // n x d
            sink = sink + O(0, 0);
        } else {
            const LinearAttention la = linear_attention(Q, K, V, PhiKind::Elu1, false);  // never n x n
            sink = sink + la.out(0, 0);
        }
        const auto t1 = std::chrono::steady_clock::now();
        times.push_back(std::chrono::duration<double>(t1 - t0).count());
        cpu_times.push_back(thread_cpu_seconds() - c0);
    }
    std::sort(times.begin(), times.end());
    std::sort(cpu_times.begin(), cpu_times.end());
    CostSample c;
    c.kind = kind;
    c.n = n;
    c.d = d;
    c.seconds = times.front();
    c.median_seconds = times[times.size() / 2];
    c.cpu_seconds = cpu_times.front();
    c.matrix_bytes =
        kind == CostKind::Softmax ? double(n) * n * 4.0 : double(d) * d * 4.0 + double(n) * d * 4.0;
    return c;
}

std::vector<int> default_cost_sweep(CostKind kind) {
    std::vector<int> ns;
    const int top = kind == CostKind::Softmax ? 16384 : 65536;
    for (int n = 256; n <= top; n *= 2) ns.push_back(n);
    return ns;
}

double fit_loglog_slope(const std::vector<double>& ns, const std::vector<double>& values) {
    require_valid(ns.size() == values.size(), "The slope fit needs as many values as sizes n.");
    require_valid(ns.size() >= 2, "The slope fit needs at least 2 points.");
    double mx = 0.0, my = 0.0;
    for (std::size_t i = 0; i < ns.size(); ++i) {
        require_valid(finite_positive(ns[i]) && finite_positive(values[i]),
                      "The slope fit needs positive, finite sizes and values (it works on logarithms).");
        mx += std::log(ns[i]);
        my += std::log(values[i]);
    }
    mx /= double(ns.size());
    my /= double(ns.size());
    double sxy = 0.0, sxx = 0.0;
    for (std::size_t i = 0; i < ns.size(); ++i) {
        const double dx = std::log(ns[i]) - mx;
        sxy += dx * (std::log(values[i]) - my);
        sxx += dx * dx;
    }
    require_valid(sxx > 0.0, "The slope fit needs at least two different sizes n.");
    return sxy / sxx;
}

// =============================================================================================
// 5. Size
// =============================================================================================

SizeLab size_lab(const SizeLabParams& P) {
    const LayerSize& s = P.layer;
    require_valid(s.d_model >= 1 && s.heads >= 1 && s.d_k >= 1 && s.d_v >= 1,
                  "d_model, heads, d_k and d_v must all be at least 1.");
    require_valid(
        s.d_model <= 1000000 && s.heads <= 100000 && s.d_k <= 1000000 && s.d_v <= 1000000,
        "These sizes are too large to count; keep d_model, d_k, d_v ≤ 1,000,000 and heads ≤ 100,000.");
    require_valid(P.pattern_heads >= 1 && P.pattern_heads <= 100000,
                  "The number of heads must be between 1 and 100,000.");
    require_valid(P.n_min >= 1 && P.n_max >= P.n_min && P.n_max <= (std::int64_t(1) << 24),
                  "Context lengths need 1 ≤ n_min ≤ n_max ≤ 16,777,216.");
    require_valid(P.bytes_per_value >= 1 && P.bytes_per_value <= 8,
                  "Bytes per value must be between 1 and 8.");
    require_valid(finite_positive(P.machine_ram_bytes),
                  "The machine's memory must be a positive number of bytes.");

    SizeLab L;
    L.layer = attention_params(s);
    L.standard_shape =
        !s.bias && std::int64_t(s.heads) * s.d_k == s.d_model && std::int64_t(s.heads) * s.d_v == s.d_model;
    L.four_d_model_sq = 4 * std::int64_t(s.d_model) * s.d_model;
    if (s.d_model % s.heads == 0) {
        const int w = s.d_model / s.heads;
        L.standard_layer = attention_params(LayerSize{s.d_model, s.heads, w, w, false});
    }

    L.gpt3 = gpt3_preset();
    L.gpt3_embedding = embedding_params(L.gpt3.vocab, L.gpt3.d_model);
    L.gpt3_unembedding = embedding_params(L.gpt3.vocab, L.gpt3.d_model);
    L.gpt3_embed_sum = L.gpt3_embedding + L.gpt3_unembedding;
    L.gpt3_heads_times_dk = std::int64_t(L.gpt3.heads) * L.gpt3.d_k;
    L.gpt3_attention_layer =
        attention_params(LayerSize{L.gpt3.d_model, L.gpt3.heads, L.gpt3.d_k, L.gpt3.d_k, false});
    L.gpt3_attention_all_layers = L.gpt3_attention_layer.total * L.gpt3.layers;
    L.gpt3_total_params = 175181291520LL;

    for (std::int64_t n = P.n_min; n <= P.n_max; n *= 2) L.context_n.push_back(n);
    if (L.context_n.back() != P.n_max) L.context_n.push_back(P.n_max);
    for (std::int64_t n : L.context_n) {
        L.pattern_bytes.push_back(attention_pattern_bytes(n, n, P.pattern_heads, P.bytes_per_value));
    }
    const auto crossing = [&](const std::string& label, double bytes) {
        MemoryCrossing c;
        c.label = label;
        c.bytes = bytes;
        c.n_exact = std::sqrt(bytes / (double(P.pattern_heads) * P.bytes_per_value));
        for (std::size_t i = 0; i < L.context_n.size(); ++i) {
            if (L.pattern_bytes[i] >= bytes) {
                c.first_grid_n = L.context_n[i];
                break;
            }
        }
        L.crossings.push_back(c);
    };
    crossing("1 GiB", kGiB);
    crossing("this machine's RAM (" + format_bytes(P.machine_ram_bytes) + ")", P.machine_ram_bytes);
    crossing("80 GiB (one large GPU)", 80.0 * kGiB);

    L.findings.push_back(fmt("This layer has %s parameters%s.", format_thousands(L.layer.total).c_str(),
                             L.standard_shape ? fmt(" = 4·d_model² = 4·%d²", s.d_model).c_str() : ""));
    L.findings.push_back(fmt("GPT-3: embedding %s·%s = %s; unembedding the same; together %s.",
                             format_thousands(L.gpt3.d_model).c_str(), format_thousands(L.gpt3.vocab).c_str(),
                             format_thousands(L.gpt3_embedding).c_str(),
                             format_thousands(L.gpt3_embed_sum).c_str()));
    L.findings.push_back(
        fmt("GPT-3: %d heads × d_k %d = %s; one attention layer has 4·12,288² = %s parameters, "
            "%d layers %s (of %s in all).",
            L.gpt3.heads, L.gpt3.d_k, format_thousands(L.gpt3_heads_times_dk).c_str(),
            format_thousands(L.gpt3_attention_layer.total).c_str(), L.gpt3.layers,
            format_thousands(L.gpt3_attention_all_layers).c_str(),
            format_thousands(L.gpt3_total_params).c_str()));
    for (const MemoryCrossing& c : L.crossings) {
        L.findings.push_back(fmt("%d heads of n×n float patterns pass %s at n ≈ %s.", P.pattern_heads,
                                 c.label.c_str(),
                                 format_thousands(std::int64_t(std::ceil(c.n_exact))).c_str()));
    }
    return L;
}

}  // namespace attnviz

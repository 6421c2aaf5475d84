// Teaching labs: small, self-contained experiments that show *why* attention is built the way it is.
// Each lab is one pure function: parameters in, a plain struct of matrices, curves and numbers out.
// The GUI draws the matrices as heatmaps, the vectors as curves, and prints `findings` (sentences
// with the measured numbers) next to the text of lab_text(). Shapes follow core/shapes.hpp.
//
// All functions validate their parameters and throw ConfigError with one learner-facing sentence.
// They are deterministic: the same parameters (including seed) give the same result.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/metrics.hpp"
#include "core/shapes.hpp"

namespace attnviz {

// ---------------------------------------------------------------------------------------------
// Texts the GUI shows (English, Unicode math).
// ---------------------------------------------------------------------------------------------

enum class LabId { PositionalEncoding, NadarayaWatson, Temperature, SoftmaxVsLinear, Size };

struct LabSection {
    std::string heading;      // e.g. "Shifting a position is a rotation"
    std::string formula;      // e.g. "PE(p+δ)ᵀ = R(δ)·PE(p)ᵀ"
    std::string explanation;  // a short paragraph for the learner
};

struct LabText {
    std::string title;
    std::string intro;
    std::vector<LabSection> sections;
};

/// The static text of one lab (title, introduction, one section per sub-experiment).
const LabText& lab_text(LabId lab);
/// Every lab, in menu order.
const std::vector<LabId>& all_labs();

// ---------------------------------------------------------------------------------------------
// 1. Positional encoding lab
// ---------------------------------------------------------------------------------------------

struct PeLabParams {
    int positions = 64;                          // rows of the PE matrix (positions 0 .. positions-1)
    int dims = 32;                               // d, columns of the PE matrix (>= 2)
    double base = 10000.0;                       // PE(p, 2i) = sin(p / base^(2i/d)); must be > 1
    std::vector<int> curve_dims = {6, 7, 8, 9};  // columns drawn as curves over positions (d2l's choice)
    int p = 5;                                   // rotation check: position ...
    int delta = 3;                               // ... and shift δ
    int rope_positions = 24;                     // RoPE check: positions p, s in [0, rope_positions)
    std::uint64_t seed = 7;                      // random q, k of the RoPE check (d = dims, must be even)
};

/// One row of the RoPE table: all pairs (p, s) with s − p = offset.
struct RopeOffsetRow {
    int offset = 0;                // s − p
    int pairs = 0;                 // how many (p, s) pairs have this offset
    double mean = 0.0;             // mean of (R_p q)·(R_s k) over those pairs
    double spread = 0.0;           // max − min over those pairs (≈ 1e−6: float rounding only)
    double additive_spread = 0.0;  // same, for absolute PE added to q and k: (q+PE_p)·(k+PE_s)
};

struct PeLab {
    Mat PE;          // positions x dims
    Mat similarity;  // positions x positions, PE·PEᵀ (nearby positions look alike)
    Mat curves;      // positions x curve_dims.size(), column c = PE(:, curve_dims[c])
    std::vector<int> curve_dims;
    std::vector<double> curve_wavelengths;  // 2π / ω of each curve's pair, in positions

    // Rotation check, R(δ)·PE(p)ᵀ vs PE(p+δ)ᵀ.
    Mat R;              // dims x dims, pe_shift_matrix(δ)
    RowVec pe_p;        // 1 x dims, PE(p)
    RowVec rotated;     // 1 x dims, (R(δ)·PE(p)ᵀ)ᵀ
    RowVec pe_p_delta;  // 1 x dims, PE(p+δ)
    RowVec difference;  // 1 x dims, rotated − pe_p_delta (unpaired last coordinate of odd d: 0)
    double rotation_max_abs_diff = 0.0;

    // RoPE check: D(p, s) = (R_p q)·(R_s k) depends only on s − p.
    RowVec q, k;        // 1 x dims, random
    Mat rope_dots;      // rope_positions x rope_positions, D(p, s); constant along diagonals
    Mat additive_dots;  // rope_positions x rope_positions, (q+PE_p)·(k+PE_s); NOT constant
    std::vector<RopeOffsetRow> rope_table;  // offsets −(P−1) .. P−1
    double rope_max_spread = 0.0;
    double additive_max_spread = 0.0;

    std::vector<std::string> findings;  // sentences with the numbers, for the view
};

PeLab positional_encoding_lab(const PeLabParams& params);

// ---------------------------------------------------------------------------------------------
// 2. Nadaraya–Watson lab (attention pooling without learning) + scoring functions
// ---------------------------------------------------------------------------------------------

/// The function the noisy training points come from.
///  D2l     2·sin x + x^0.8  (d2l's example)
///  Sin     sin x
///  Step    0 for x < 2.5, 2 for x ≥ 2.5
///  Linear  x
enum class NwTarget { D2l, Sin, Step, Linear };
std::string to_string(NwTarget t);  // d2l | sin | step | linear
double nw_target_value(NwTarget t, double x);

struct NwLabParams {
    int train = 50;                    // m training points x_i, sorted uniform in [0, 5)
    int queries = 101;                 // n query points, evenly spaced over [0, 5]
    std::vector<double> query_points;  // if non-empty, used instead of the grid
    NwTarget target = NwTarget::D2l;
    double noise = 0.5;                  // y_i = f(x_i) + N(0, noise²)
    Scoring kernel = Scoring::Gaussian;  // Gaussian, Boxcar or Epanechnikov
    double bandwidth = 1.0;              // kernel of |x − x_i| / bandwidth
    std::uint64_t seed = 42;

    // Scoring comparison (same Q, K for additive and scaled dot product).
    int score_queries = 4;         // n
    int score_keys = 6;            // m
    int score_dim = 8;             // d (queries and keys)
    int additive_hidden = 8;       // hidden size of the additive scorer
    bool equal_norm_keys = false;  // rescale every key to norm √d (what LayerNorm roughly does)
};

struct NwLab {
    Vec x_train, y_train;          // m
    Vec x_query;                   // n
    Vec y_true;                    // n, f(x_query)
    Vec y_hat;                     // n, A·y (0 where no training point is within reach)
    Mat kernel_values;             // n x m, K((x_q − x_i)/h) before normalisation
    Mat A;                         // n x m, attention weights; rows sum to 1 (or are all 0)
    std::vector<bool> covered;     // n, false = no training point within the kernel's reach
    int uncovered = 0;             // number of queries with an all-zero weight row
    double mse = 0.0;              // mean (ŷ − f)² over covered queries (NaN if none)
    double train_noise_mse = 0.0;  // mean (y_i − f(x_i))², the noise floor for comparison

    // Scoring comparison.
    Mat Q;               // n x d
    Mat K;               // m x d
    Mat W_q, W_k;        // d x hidden
    Vec w_v;             // hidden
    Mat S_additive;      // n x m, w_vᵀ tanh(W_qᵀq + W_kᵀk)
    Mat S_dot;           // n x m, QKᵀ/√d
    Mat A_additive;      // n x m, softmax(S_additive)
    Mat A_dot;           // n x m, softmax(S_dot)
    Mat A_gaussian;      // n x m, softmax(−½‖q−k‖²) (Gaussian kernel, bandwidth 1)
    Mat A_dot_unscaled;  // n x m, softmax(QKᵀ); equals A_gaussian when all keys have equal norm
    double gaussian_vs_dot_max_diff = 0.0;  // max |A_gaussian − A_dot_unscaled|

    std::vector<std::string> findings;
};

NwLab nadaraya_watson_lab(const NwLabParams& params);

// ---------------------------------------------------------------------------------------------
// 3. Temperature & scaling lab
// ---------------------------------------------------------------------------------------------

// Two functions: temperature_lab() is instant (call it on every slider move); scaling_lab()
// samples millions of normals (~0.2-0.5 s) and depends only on its own parameters, so run it once in
// the background and keep the result.

struct TemperatureLabParams {
    std::vector<float> scores = {2.0f, 1.0f, 0.5f, 3.0f, -1.0f, 0.0f, 1.5f, -0.5f};  // one row, m keys
    std::vector<double> temperatures = {0.1, 0.5, 1.0, 2.0, 10.0};
    double t_min = 0.01, t_max = 100.0;  // entropy curve on a log grid
    int entropy_points = 41;
};

struct TemperatureLab {
    RowVec scores;  // 1 x m
    std::vector<double> temperatures;
    Mat weights;         // temperatures.size() x m, softmax(s / T)
    Vec weight_entropy;  // temperatures.size(), entropy of each row (nats)

    Vec entropy_T;             // entropy_points, log-spaced T
    Vec entropy;               // entropy_points, H(softmax(s / T)) in nats
    double max_entropy = 0.0;  // ln m (uniform)

    std::vector<std::string> findings;
};

TemperatureLab temperature_lab(const TemperatureLabParams& params);

struct ScalingLabParams {
    std::vector<int> dims = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
    int samples = 2000;           // q·k samples per d for the variance
    int saturation_keys = 16;     // m keys for the saturation experiment
    int saturation_trials = 200;  // rows averaged per d
    std::uint64_t seed = 42;
};

struct ScalingLab {
    std::vector<int> dims;
    Vec var_unscaled;       // dims.size(), sample variance of q·k  (≈ d)
    Vec var_scaled;         // dims.size(), sample variance of q·k/√d (≈ 1)
    Vec mean_max_unscaled;  // dims.size(), mean max weight of softmax(q·Kᵀ)
    Vec mean_max_scaled;    // dims.size(), mean max weight of softmax(q·Kᵀ/√d)
    int saturation_keys = 0;

    std::vector<std::string> findings;
};

/// q, k ~ N(0, I_d) sampled with Rng(seed): Var(q·k) with and without 1/√d, and how one-hot
/// softmax gets over `saturation_keys` keys, for each d.
ScalingLab scaling_lab(const ScalingLabParams& params);

// ---------------------------------------------------------------------------------------------
// 4. Softmax vs linear attention lab
// ---------------------------------------------------------------------------------------------

struct LinearLabParams {
    int n = 12;  // tokens (self-attention: m = n)
    int d = 8;   // d_k = d_v
    bool causal = false;
    std::uint64_t seed = 42;
    std::vector<PhiKind> phis = {PhiKind::Elu1, PhiKind::Relu, PhiKind::Softmax};
};

struct PhiComparison {
    PhiKind phi = PhiKind::Elu1;
    Mat A_linear;                    // n x n, weights linear attention implies
    Mat A_diff;                      // n x n, A_linear − A_softmax
    Mat out_linear;                  // n x d, O(n) linear attention output
    Mat out_diff;                    // n x d, out_linear − out_softmax
    double weight_diff_norm = 0.0;   // ‖A_linear − A_softmax‖_F
    double weight_max_abs = 0.0;     // max |A_linear − A_softmax|
    double output_diff_norm = 0.0;   // ‖out_linear − out_softmax‖_F
    double output_rel = 0.0;         // output_diff_norm / ‖out_softmax‖_F
    double weights_vs_output = 0.0;  // max |A_linear·V − out_linear| (the two routes agree)
};

struct LinearLab {
    Mat Q, K, V;      // n x d each
    Mat A_softmax;    // n x n, softmax(QKᵀ/√d) (causal-masked if asked)
    Mat out_softmax;  // n x d
    std::vector<PhiComparison> phis;
    std::vector<std::string> findings;
};

LinearLab softmax_vs_linear_lab(const LinearLabParams& params);

enum class CostKind { Softmax, Linear };
std::string to_string(CostKind k);  // softmax | linear

struct CostSample {
    CostKind kind = CostKind::Softmax;
    int n = 0, d = 0;
    double seconds = 0.0;  // fastest of the repeats (least disturbed by other processes)
    double median_seconds = 0.0;
    double cpu_seconds = 0.0;   // fastest of the repeats in this thread's CPU time (what the work costs,
                                // whatever else runs on the machine)
    double matrix_bytes = 0.0;  // largest matrix the method needs by design: n·n·4 vs d·d·4 + n·d·4
};

/// Times one attention forward pass on this machine with seeded n x d Q, K, V (self-attention,
/// no mask): softmax materialises the n x n weights (softmax(QKᵀ/√d)·V); linear computes
/// φ(Q)·(φ(K)ᵀV) with φ = elu+1. One call = one measurement, so a caller can stop between calls.
/// Throws ConfigError for n < 1, d < 1, repeats < 1, or a softmax n whose n x n matrices would
/// not fit in memory comfortably (n > 32768).
CostSample measure_cost(CostKind kind, int n, int d = 64, int repeats = 3);

/// The default sweep: softmax n = 256 .. 16384, linear n = 256 .. 65536 (powers of two).
std::vector<int> default_cost_sweep(CostKind kind);

/// Least-squares slope of log(value) against log(n): ≈ 2 for O(n²) costs, ≈ 1 for O(n).
/// Throws ConfigError with fewer than 2 points, mismatched sizes, non-positive values, or all n equal.
double fit_loglog_slope(const std::vector<double>& ns, const std::vector<double>& values);

// ---------------------------------------------------------------------------------------------
// 5. Size lab
// ---------------------------------------------------------------------------------------------

struct SizeLabParams {
    LayerSize layer{512, 8, 64, 64, false};
    int pattern_heads = 96;                                // heads whose n x n patterns are kept (GPT-3: 96)
    std::int64_t n_min = 128, n_max = 131072;              // context lengths, powers of two in between
    int bytes_per_value = 4;                               // float32
    double machine_ram_bytes = 24.0 * 1024 * 1024 * 1024;  // shown as "this machine's RAM"
};

struct MemoryCrossing {
    std::string label;  // "1 GiB", "this machine's RAM (24 GiB)", "80 GiB (one large GPU)"
    double bytes = 0.0;
    double n_exact = 0.0;           // √(bytes / (heads · bytes_per_value))
    std::int64_t first_grid_n = 0;  // first context length of the grid at or above it (0: none)
};

struct SizeLab {
    ParamCount layer;                  // attention_params(params.layer)
    bool standard_shape = false;       // h·d_k = h·d_v = d_model and no bias
    std::int64_t four_d_model_sq = 0;  // 4·d_model²
    /// The usual shape for comparison: d_k = d_v = d_model/h, no bias (only when h divides d_model;
    /// otherwise total = 0). Its total is exactly 4·d_model².
    ParamCount standard_layer;

    ModelPreset gpt3;
    std::int64_t gpt3_embedding = 0;             // 12,288 × 50,257 = 617,558,016
    std::int64_t gpt3_unembedding = 0;           // 617,558,016
    std::int64_t gpt3_embed_sum = 0;             // 1,235,116,032
    std::int64_t gpt3_heads_times_dk = 0;        // 96 × 128 = 12,288
    ParamCount gpt3_attention_layer;             // 4·12288² = 603,979,776
    std::int64_t gpt3_attention_all_layers = 0;  // × 96 layers
    std::int64_t gpt3_total_params = 0;          // 175,181,291,520 (the notes)

    std::vector<std::int64_t> context_n;    // n_min, 2·n_min, ..., n_max
    std::vector<double> pattern_bytes;      // heads · n² · bytes_per_value (one layer)
    std::vector<MemoryCrossing> crossings;  // 1 GiB, machine RAM, 80 GiB

    std::vector<std::string> findings;
};

SizeLab size_lab(const SizeLabParams& params);

/// "617,558,016": thousands separated by commas (for the view and the findings).
std::string format_thousands(std::int64_t v);
/// "1.50 GiB", "512 MiB", "24.0 KiB", "12 B".
std::string format_bytes(double bytes);

}  // namespace attnviz

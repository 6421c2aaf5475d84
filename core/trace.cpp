// compute_trace(): one attention layer, stage by stage, recorded for the learner. The math itself
// lives in core/ops.cpp; this file decides the order, the shapes, the seeds, what is stored and
// what is derived lazily, how the heads are spread over threads, and what each stage says.
// GCC 12 reports a false -Wmaybe-uninitialized inside its own AVX-512 intrinsics when Eigen packs a
// row-major GEMM operand (Eigen's ptranspose); it is not about our code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "core/trace.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/axes.hpp"
#include "core/cell_text.hpp"
#include "core/error.hpp"
#include "core/layer_weights.hpp"
#include "core/ops.hpp"
#include "core/presets.hpp"
#include "core/thread_pool.hpp"
#include "core/tokenize.hpp"
#include "core/trace_internal.hpp"
#include "core/weight_cache.hpp"

namespace attnviz {

// ---------------------------------------------------------------------------------------------
// Small members of the trace types
// ---------------------------------------------------------------------------------------------

std::string Axis::label(int i) const {
    if (tokens && i >= 0 && i < int(tokens->size())) return (*tokens)[std::size_t(i)];
    if (kind == Kind::Single) return name;
    return std::to_string(i);
}

namespace {

// The letter a shape is written with: n, m, V, or the dimension's own name.
std::string axis_symbol(const Axis& a) {
    switch (a.kind) {
        case Axis::Kind::QueryTokens:
            return "n";
        case Axis::Kind::KeyTokens:
            return "m";
        case Axis::Kind::Vocabulary:
            return "V";
        case Axis::Kind::Single:
            return "1";
        case Axis::Kind::Dimension:
            break;
    }
    return a.name;
}

}  // namespace

std::string Stage::shape_text() const {
    return axis_symbol(rows) + "×" + axis_symbol(cols) + " = " + std::to_string(rows.size) + "×" +
           std::to_string(cols.size);
}

Mat Stage::matrix() const {
    if (data) return *data;
    if (derive) return derive();
    return Mat();
}

float Stage::at(int i, int j) const {
    if (data) return (*data)(i, j);
    if (derive_cell) return derive_cell(i, j);
    if (derive) return derive()(i, j);
    return 0.0f;
}

RowVec Stage::row(int i) const {
    if (data) return data->row(i);
    if (derive_cell) {
        RowVec r(n_cols());  // [1, n_cols]
        for (int j = 0; j < n_cols(); ++j) r(j) = derive_cell(i, j);
        return r;
    }
    if (derive) return derive().row(i);
    return RowVec();
}

int Trace::find(const std::string& name, int head) const {
    for (std::size_t s = 0; s < stages.size(); ++s) {
        const Stage& st = stages[s];
        if (st.name != name) continue;
        if (st.head < 0 || head < 0 || st.head == head) return int(s);
    }
    return -1;
}

const Stage* Trace::get(const std::string& name, int head) const {
    const int s = find(name, head);
    return s < 0 ? nullptr : &stages[std::size_t(s)];
}

std::vector<std::string> Trace::stage_names() const {
    std::vector<std::string> names;
    std::unordered_set<std::string> seen;
    for (const Stage& st : stages)
        if (seen.insert(st.name).second) names.push_back(st.name);
    return names;
}

double Trace::total_flops() const {
    double f = 0;
    for (const Stage& st : stages) f += st.flops;
    return f;
}

double Trace::stored_bytes() const {
    std::unordered_set<const Mat*> seen;
    double b = 0;
    for (const Stage& st : stages)
        if (st.data && seen.insert(st.data.get()).second) b += double(st.data->size()) * sizeof(float);
    return b;
}

// ---------------------------------------------------------------------------------------------
// Scoring scale (shared with explain_cell)
// ---------------------------------------------------------------------------------------------

double score_scale(Scoring scoring, int d_k) {
    return (scoring == Scoring::ScaledDot || scoring == Scoring::Bilinear) ? 1.0 / std::sqrt(double(d_k))
                                                                           : 1.0;
}

// ---------------------------------------------------------------------------------------------
// Tokens
// ---------------------------------------------------------------------------------------------

Tokenized tokenize_config(const Config& cfg) {
    Tokenized t;
    t.query_tokens = tokenize_strings(cfg.text);
    if (t.query_tokens.empty()) throw TextError("the text has no tokens: type at least one word");
    if (cfg.length > 0) {
        // Tile cyclically: "a b c" with length 7 -> a b c a b c a.
        std::vector<std::string> tiled;
        tiled.reserve(std::size_t(cfg.length));
        for (int i = 0; i < cfg.length; ++i)
            tiled.push_back(t.query_tokens[std::size_t(i) % t.query_tokens.size()]);
        t.query_tokens = std::move(tiled);
    }
    if (int(t.query_tokens.size()) > cfg.max_tokens) {
        throw TextError("the text has " + std::to_string(t.query_tokens.size()) +
                        " tokens, more than max_tokens = " + std::to_string(cfg.max_tokens) +
                        "; shorten it or raise max_tokens");
    }
    if (cfg.cross_attention()) {
        t.key_tokens = tokenize_strings(cfg.source_text);
        if (t.key_tokens.empty()) {
            throw TextError(
                "the source text has no tokens: type at least one word, or clear it for self-attention");
        }
        if (int(t.key_tokens.size()) > cfg.max_tokens) {
            throw TextError("the source text has " + std::to_string(t.key_tokens.size()) +
                            " tokens, more than max_tokens = " + std::to_string(cfg.max_tokens) +
                            "; shorten it");
        }
    } else {
        t.key_tokens = t.query_tokens;
    }
    std::unordered_map<std::string, int> index;
    auto id_of = [&](const std::string& tok) {
        auto it = index.find(tok);
        if (it != index.end()) return it->second;
        const int id = int(t.vocab.size());
        index.emplace(tok, id);
        t.vocab.push_back(tok);
        return id;
    };
    for (const auto& tok : t.query_tokens) t.query_ids.push_back(id_of(tok));
    for (const auto& tok : t.key_tokens) t.key_ids.push_back(id_of(tok));
    return t;
}

// ---------------------------------------------------------------------------------------------
// compute_trace
// ---------------------------------------------------------------------------------------------

namespace {

using MatPtr = std::shared_ptr<const Mat>;
using Clock = std::chrono::steady_clock;

std::string num(double v) {
    std::ostringstream o;
    o << v;
    return o.str();
}

// Unicode subscript digits for head numbers in formulas: W_Q⁽²⁾ reads better as W_Q,2 here.
using cell_text::sub;

using axes::dim_axis;
using axes::token_axis;

Axis single_axis(const std::string& name) {
    Axis a;
    a.kind = Axis::Kind::Single;
    a.name = name;
    a.size = 1;
    return a;
}

// Columns [first, last] of row i that the mask may leave visible; first > last when the whole row
// is hidden. Outside this span every weight is exactly 0, so the softmax pass and the A·V product
// can skip it: for a causal mask that is the upper triangle, half of each n×m matrix.
struct RowSpan {
    Eigen::Index first, last;
};
std::vector<RowSpan> visible_spans(const BoolMat* allowed, Eigen::Index n, Eigen::Index m) {
    std::vector<RowSpan> spans(std::size_t(n), RowSpan{0, m - 1});
    if (!allowed) return spans;
    for (Eigen::Index i = 0; i < n; ++i) {
        const bool* b = allowed->data() + i * m;
        Eigen::Index lo = 0, hi = m - 1;
        while (lo < m && !b[lo]) ++lo;
        while (hi >= lo && !b[hi]) --hi;
        spans[std::size_t(i)] = RowSpan{lo, hi};
    }
    return spans;
}

// weights = softmax((S·scale + B, −∞ where hidden) / T) row by row, in one pass over S without
// materialising the n×m `masked` matrix (the trace derives it lazily for display). Same rules as
// softmax_rows(): the row max is subtracted before exp, hidden keys get exactly 0, a row with every
// key hidden is all zeros. Only each row's visible span is computed (the rest is hidden: 0).
// Also returns each row's entropy without a log per cell:
//   a_j = e_j / Z with e_j = exp((x_j − max)/T)  ⇒  H = −Σ a_j ln a_j = ln Z − Σ a_j (x_j − max)/T.
void fused_softmax(const Mat& S, float scale, double alibi_slope_or_0, const BoolMat* allowed,
                   const std::vector<RowSpan>& spans, double T, Mat& A, Vec& H) {
    const Eigen::Index n = S.rows(), m = S.cols();
    A.resize(n, m);  // n x m
    H.resize(n);     // n
    const float inv_T = float(1.0 / T);
    const float neg_inf = -std::numeric_limits<float>::infinity();
    Eigen::ArrayXf x(m);  // one row of `masked`, visible span only
    for (Eigen::Index i = 0; i < n; ++i) {
        const Eigen::Index lo = spans[std::size_t(i)].first, len = spans[std::size_t(i)].last - lo + 1;
        auto row = A.row(i).array();
        if (len <= 0) {
            row.setZero();
            H(i) = 0;
            continue;
        }
        row.head(lo).setZero();
        row.tail(m - lo - len).setZero();
        auto xs = x.head(len);
        xs = S.row(i).segment(lo, len).transpose().array() * scale;
        if (alibi_slope_or_0 != 0.0)
            for (Eigen::Index j = 0; j < len; ++j)
                xs(j) -= float(alibi_slope_or_0 * std::abs(double(i - (lo + j))));
        if (allowed) {  // a plain loop vectorises; Eigen 3.4's select() does not
            const bool* b = allowed->data() + i * m + lo;
            float* xp = xs.data();
            for (Eigen::Index j = 0; j < len; ++j) xp[j] = b[j] ? xp[j] : neg_inf;
        }
        const float mx = xs.maxCoeff();
        auto a = row.segment(lo, len);
        if (mx == neg_inf) {
            a.setZero();
            H(i) = 0;
            continue;
        }
        xs = (xs - mx) * inv_T;  // ≤ 0, −∞ for hidden keys
        a = xs.exp().transpose();
        // Eigen's SSE exp(−∞) returns a denormal, not 0: hidden keys must get exactly 0 weight.
        float* ap = A.row(i).data() + lo;
        const float* xp = xs.data();
        for (Eigen::Index j = 0; j < len; ++j) ap[j] = xp[j] == neg_inf ? 0.0f : ap[j];
        const float Z = a.sum();  // ≥ 1: the max contributes exp(0)
        a *= 1.0f / Z;
        // Σ a_j (x_j − max)/T over visible keys (hidden ones have a_j = 0 and x_j = −∞: skip them).
        float ax = 0;
        for (Eigen::Index j = 0; j < len; ++j) ax += ap[j] > 0.0f ? ap[j] * xp[j] : 0.0f;
        H(i) = std::log(Z) - ax;
    }
}

// out = A·V where A is exactly 0 outside each row's visible span (softmax and kernel weights).
// Rows go in blocks of 128; each block multiplies only the columns any of its rows can see, so a
// causal mask skips about half of the product. The result equals A·V up to float rounding (the
// skipped terms are 0·v = 0).
Mat weights_times_values(const Mat& A, const Mat& V, const std::vector<RowSpan>& spans) {
    const Eigen::Index n = A.rows();
    Mat out(n, V.cols());  // n x d_v
    constexpr Eigen::Index kBlock = 128;
    for (Eigen::Index r0 = 0; r0 < n; r0 += kBlock) {
        const Eigen::Index rows = std::min(kBlock, n - r0);
        Eigen::Index lo = A.cols(), hi = -1;
        for (Eigen::Index i = r0; i < r0 + rows; ++i) {
            const RowSpan& sp = spans[std::size_t(i)];
            if (sp.first > sp.last) continue;
            lo = std::min(lo, sp.first);
            hi = std::max(hi, sp.last);
        }
        if (hi < lo) {
            out.middleRows(r0, rows).setZero();
            continue;
        }
        out.middleRows(r0, rows).noalias() =
            A.block(r0, lo, rows, hi - lo + 1) * V.middleRows(lo, hi - lo + 1);
    }
    return out;
}

// Everything one head computes. Heads run in parallel and only write their own HeadResult.
struct HeadResult {
    MatPtr W_Q, W_K, W_V;                 // d_model x d_k, d_model x d_k, d_model x d_v
    MatPtr Q, K, V;                       // n x d_k, m x d_k, m x d_v
    MatPtr Q_rot, K_rot;                  // RoPE only
    MatPtr S;                             // n x m scores (softmax attention)
    MatPtr A;                             // n x m weights (null for linear attention too large to show)
    MatPtr phi_Q, phi_K, KV, normalizer;  // linear attention
    MatPtr out;                           // n x d_v
    Vec entropy;                          // n (empty when A is null)
    std::string preset_text;              // designed-head explanation
};

}  // namespace

namespace {

// Row of the weights' embedding table for each vocabulary entry of the trace: [V].
std::vector<int> embedding_rows(const LayerWeights& w, const std::vector<std::string>& vocab) {
    std::vector<int> rows(vocab.size());
    if (w.vocab == vocab) {
        for (std::size_t v = 0; v < rows.size(); ++v) rows[v] = int(v);
        return rows;
    }
    std::unordered_map<std::string, int> index;
    for (std::size_t v = 0; v < w.vocab.size(); ++v) index.emplace(w.vocab[v], int(v));
    for (std::size_t v = 0; v < vocab.size(); ++v) {
        const auto it = index.find(vocab[v]);
        if (it == index.end())
            throw Error("layer weights: the embedding table has no row for token '" + vocab[v] + "'");
        rows[v] = it->second;
    }
    return rows;
}

// M + b on every row (no-op for an empty bias): [rows, cols].
Mat plus_bias(Mat M, const RowVec& b) {
    if (b.size() != 0) M.rowwise() += b;
    return M;
}

Trace compute_with_weights(const Config& cfg, Tokenized tk, std::shared_ptr<const LayerWeights> weights,
                           const ComputeOptions& options, Clock::time_point t_start) {
    auto poll = [&] {
        if (options.cancel && options.cancel->load()) throw Cancelled();
    };
    const LayerWeights& W = *weights;
    poll();

    Trace T;
    T.config = cfg;
    T.weights = weights;
    const bool cross = cfg.cross_attention();
    const int n = int(tk.query_tokens.size());
    const int m = int(tk.key_tokens.size());
    const int d = cfg.d_model;
    const int h = cfg.heads;
    const int d_k = cfg.resolved_d_k();
    const int d_v = cfg.resolved_d_v();
    const int V = int(tk.vocab.size());
    T.n = n, T.m = m, T.d_model = d, T.heads = h, T.d_k = d_k, T.d_v = d_v;
    T.query_tokens = std::make_shared<const std::vector<std::string>>(std::move(tk.query_tokens));
    T.key_tokens =
        cross ? std::make_shared<const std::vector<std::string>>(std::move(tk.key_tokens)) : T.query_tokens;
    T.vocab = std::make_shared<const std::vector<std::string>>(tk.vocab);

    const bool linear = cfg.attention == AttentionKind::Linear;
    const bool kernel = !linear && is_kernel(cfg.scoring);
    const bool rope = cfg.positional == Positional::Rope;
    const bool alibi = cfg.positional == Positional::Alibi && !linear && !kernel;
    const bool pre_ln = cfg.layernorm == LayerNormMode::Pre;
    const bool post_ln = cfg.layernorm == LayerNormMode::Post;
    // Starting threads costs ~50 µs; below a few million multiply-adds one thread is faster.
    const double work =
        double(cfg.heads) * (double(n) * m * cfg.resolved_d_k() +
                             double(n + m) * cfg.d_model * (cfg.resolved_d_k() + cfg.resolved_d_v()));
    const int threads = work < 4e6 ? 1 : resolve_threads(options.threads);
    const double nf = n, mf = m, df = d, dkf = d_k, dvf = d_v;

    const Axis q_ax = token_axis(Axis::Kind::QueryTokens, T.query_tokens);
    const Axis k_ax = token_axis(Axis::Kind::KeyTokens, T.key_tokens);
    const Axis v_ax = token_axis(Axis::Kind::Vocabulary, T.vocab);
    const Axis dm_ax = dim_axis("d_model", d), dk_ax = dim_axis("d_k", d_k), dv_ax = dim_axis("d_v", d_v);
    const Axis hdv_ax = dim_axis("h·d_v", h * d_v);

    auto add = [&](const std::string& name, int head, std::string title, std::string formula,
                   std::string expl, const Axis& rows, const Axis& cols, ValueKind kind, double flops,
                   MatPtr data, std::function<Mat()> derive = nullptr,
                   std::function<float(int, int)> derive_cell = nullptr) {
        Stage s;
        s.name = name;
        s.head = head;
        s.title = std::move(title);
        s.formula = std::move(formula);
        s.explanation = std::move(expl);
        s.rows = rows;
        s.cols = cols;
        s.kind = kind;
        s.flops = flops;
        s.bytes = double(rows.size) * double(cols.size) * sizeof(float);
        s.data = std::move(data);
        s.derive = std::move(derive);
        s.derive_cell = std::move(derive_cell);
        T.stages.push_back(std::move(s));
    };

    // --- tokens -> vectors --------------------------------------------------------------------
    auto OH = std::make_shared<const Mat>(one_hot(tk.query_ids, V));  // n x V
    const Mat& table = *W.embedding;                                  // V_w x d_model
    const std::vector<int> table_row = embedding_rows(W, tk.vocab);   // V
    auto lookup = [&](const std::vector<int>& ids) {
        // one_hot × table picks rows; we pick them directly (same numbers, no n×V×d multiply).
        Mat E(int(ids.size()), d);  // rows x d_model
        for (std::size_t i = 0; i < ids.size(); ++i)
            E.row(Eigen::Index(i)) = table.row(table_row[std::size_t(ids[i])]);
        return E;
    };
    auto positions = [&](int count) {
        switch (cfg.positional) {
            case Positional::Sinusoidal:
                return Mat(*cached_sinusoidal_pe(count, d, cfg.pe_base));
            case Positional::Learned:
                return Mat(W.positions->topRows(count));
            default:
                return Mat(Mat::Zero(count, d));
        }
    };
    auto E = std::make_shared<const Mat>(lookup(tk.query_ids));  // n x d_model
    auto P = std::make_shared<const Mat>(positions(n));          // n x d_model
    auto X = std::make_shared<const Mat>(*E + *P);               // n x d_model
    MatPtr Y = X;                                                // m x d_model
    if (cross) Y = std::make_shared<const Mat>(lookup(tk.key_ids) + positions(m));
    MatPtr Xn = X, Yn = Y;  // what Q and K, V read: LN(X), LN(Y) with pre-LayerNorm
    if (pre_ln) {
        Xn = std::make_shared<const Mat>(layernorm_rows(*X));
        Yn = cross ? std::make_shared<const Mat>(layernorm_rows(*Y)) : Xn;
    }
    poll();

    std::shared_ptr<const BoolMat> allowed;  // n x m, null = every key visible
    if (cfg.mask != MaskKind::None) allowed = std::make_shared<const BoolMat>(make_mask(cfg, n, m));
    const bool linear_native_mask =
        cfg.mask == MaskKind::None || cfg.mask == MaskKind::Causal || cfg.mask == MaskKind::Padding;
    const bool linear_weights_fit = double(h) * nf * mf * 4.0 <= kMaxLinearWeightsBytes;
    if (linear && !linear_native_mask && !linear_weights_fit) {
        throw ConfigError(
            "a " + to_string(cfg.mask) +
            " mask with linear attention needs the full n×m weight matrix of every head, which does not "
            "fit in 1 GiB here; use a causal or padding mask, fewer tokens, or softmax attention");
    }
    const std::vector<RowSpan> spans = visible_spans(allowed.get(), n, m);  // n, shared by the heads
    std::vector<bool> key_valid;
    if (cfg.mask == MaskKind::Padding && cfg.valid_length >= 0) {
        key_valid.assign(std::size_t(m), true);
        for (int j = std::max(0, cfg.valid_length); j < m; ++j) key_valid[std::size_t(j)] = false;
    }

    // --- heads, in parallel -------------------------------------------------------------------
    std::vector<HeadResult> heads(static_cast<std::size_t>(h));
    auto run_head = [&](int hd) {
        HeadResult& R = heads[std::size_t(hd)];
        const HeadWeights& HW = W.heads[std::size_t(hd)];
        R.W_Q = HW.W_Q, R.W_K = HW.W_K, R.W_V = HW.W_V;
        R.preset_text = HW.designed;
        if (Xn == Yn) {
            // Self-attention: one wider product X·[W_Q | W_K | W_V] keeps the GEMM kernel busier
            // than three thin ones (d_k columns each).
            Mat W_cat(d, 2 * d_k + d_v);  // d_model x (2d_k + d_v)
            W_cat << *R.W_Q, *R.W_K, *R.W_V;
            Mat QKV(n, 2 * d_k + d_v);  // n x (2d_k + d_v)
            QKV.noalias() = *Xn * W_cat;
            R.Q = std::make_shared<const Mat>(plus_bias(QKV.leftCols(d_k), HW.b_Q));         // n x d_k
            R.K = std::make_shared<const Mat>(plus_bias(QKV.middleCols(d_k, d_k), HW.b_K));  // n x d_k
            R.V = std::make_shared<const Mat>(plus_bias(QKV.rightCols(d_v), HW.b_V));        // n x d_v
        } else {
            R.Q = std::make_shared<const Mat>(plus_bias(*Xn * *R.W_Q, HW.b_Q));  // n x d_k
            R.K = std::make_shared<const Mat>(plus_bias(*Yn * *R.W_K, HW.b_K));  // m x d_k
            R.V = std::make_shared<const Mat>(plus_bias(*Yn * *R.W_V, HW.b_V));  // m x d_v
        }
        MatPtr Qs = R.Q, Ks = R.K;  // what the scores read
        if (rope) {
            R.Q_rot = std::make_shared<const Mat>(rope_rotate(*R.Q, cfg.pe_base));
            R.K_rot = std::make_shared<const Mat>(rope_rotate(*R.K, cfg.pe_base));
            Qs = R.Q_rot, Ks = R.K_rot;
        }
        poll();
        if (!linear) {
            Mat S;  // n x m
            switch (cfg.scoring) {
                case Scoring::ScaledDot:
                case Scoring::Dot:
                    S = dot_scores(*Qs, *Ks);
                    break;
                case Scoring::Additive: {
                    const ScoringParams& p = HW.scoring;
                    S = additive_scores(*Qs, *Ks, p.W_q, p.W_k, p.w_v);
                    break;
                }
                case Scoring::Bilinear:
                    S = bilinear_scores(*Qs, *Ks, HW.scoring.W);
                    break;
                default:
                    S = kernel_scores(*Qs, *Ks, cfg.scoring, cfg.bandwidth);
                    break;
            }
            R.S = std::make_shared<const Mat>(std::move(S));
            poll();
            if (kernel) {
                R.A = std::make_shared<const Mat>(normalize_rows(*R.S, allowed ? *allowed : BoolMat()));
            } else {
                // masked = S·scale (+ B) with −∞ where hidden is never stored: fused into one pass.
                auto A = std::make_shared<Mat>();
                fused_softmax(*R.S, float(score_scale(cfg.scoring, d_k)), alibi ? alibi_slope(hd, h) : 0.0,
                              allowed.get(), spans, cfg.temperature, *A, R.entropy);
                R.A = std::move(A);
            }
            R.out = std::make_shared<const Mat>(weights_times_values(*R.A, *R.V, spans));  // n x d_v
        } else {
            const bool causal = cfg.mask == MaskKind::Causal;
            LinearAttention la = linear_native_mask
                                     ? linear_attention(*Qs, *Ks, *R.V, cfg.phi, causal, key_valid)
                                     : linear_attention(*Qs, *Ks, *R.V, cfg.phi, false);
            if (linear_native_mask) {
                if (linear_weights_fit) {
                    R.A = std::make_shared<const Mat>(
                        linear_attention_weights(la.phi_Q, la.phi_K, allowed ? *allowed : no_mask(n, m)));
                }
                R.out = std::make_shared<const Mat>(std::move(la.out));
            } else {
                // Window and custom masks cannot be folded into φ(K)ᵀV: materialise the n×m weights.
                Mat U = la.phi_Q * la.phi_K.transpose();  // n x m, φ(q_i)·φ(k_j)
                U.array() = allowed->select(U.array(), 0.0f);
                la.normalizer = U.rowwise().sum();
                R.A = std::make_shared<const Mat>(linear_attention_weights(la.phi_Q, la.phi_K, *allowed));
                R.out = std::make_shared<const Mat>(*R.A * *R.V);
            }
            R.phi_Q = std::make_shared<const Mat>(std::move(la.phi_Q));
            R.phi_K = std::make_shared<const Mat>(std::move(la.phi_K));
            R.KV = std::make_shared<const Mat>(std::move(la.KV));
            R.normalizer = std::make_shared<const Mat>(std::move(la.normalizer));
        }
        if (R.A && R.entropy.size() == 0) R.entropy = row_entropy(*R.A);
    };
    parallel_for(h, threads, run_head, options.cancel);
    poll();

    // --- concat, W_O, output (row blocks in parallel) ------------------------------------------
    auto concat = std::make_shared<Mat>(n, h * d_v);  // n x (h·d_v)
    for (int hd = 0; hd < h; ++hd) concat->middleCols(hd * d_v, d_v) = *heads[std::size_t(hd)].out;
    const MatPtr W_O = W.W_O;                   // h·d_v x d_model
    auto output = std::make_shared<Mat>(n, d);  // n x d_model
    {
        // Row blocks of ≈ 128 tokens handed out one at a time: when the other core is busy its
        // thread takes fewer blocks instead of the whole product waiting for its half.
        const int blocks = (n >= 256 && threads > 1) ? std::max(threads, n / 128) : 1;
        const int rows_per = (n + blocks - 1) / blocks;
        parallel_for(
            blocks, threads,
            [&](int b) {
                const int r0 = b * rows_per, len = std::min(rows_per, n - r0);
                if (len <= 0) return;
                output->middleRows(r0, len).noalias() = concat->middleRows(r0, len) * *W_O;
                if (W.b_O.size() != 0) output->middleRows(r0, len).rowwise() += W.b_O;
            },
            options.cancel);
    }
    MatPtr residual;
    if (cfg.residual) residual = std::make_shared<const Mat>(*X + *output);
    MatPtr post;
    if (post_ln) post = std::make_shared<const Mat>(layernorm_rows(residual ? *residual : *output));
    poll();

    // --- record the stages ----------------------------------------------------------------------
    const std::string dk_s = std::to_string(d_k), dm_s = std::to_string(d);
    add("one_hot", -1, "One-hot tokens", "onehot(tᵢ) ∈ {0,1}ᵛ",
        "Each token becomes a row of " + std::to_string(V) +
            " zeros with a single 1 in the column of its vocabulary entry (the vocabulary lists every "
            "distinct "
            "token in order of first appearance). One-hot rows are all equally far apart and say nothing "
            "about "
            "meaning; they are only an address. Look for the single bright cell per row, and for repeated "
            "words, "
            "whose rows are identical.",
        q_ax, v_ax, ValueKind::Indicator, 0, OH);
    add("embedding", -1, "Embedding  E = onehot × table", "E = onehot · W_E   (W_E: V×d_model)",
        "Multiplying a one-hot row by the embedding table (" + std::to_string(V) + "×" + dm_s +
            ", entries drawn from N(0,1) here, learned in a real model) picks out exactly one row of the "
            "table: "
            "matrix multiplication by a one-hot vector is a table lookup. So the embedding of a word is just "
            "its row "
            "of the table, and the same word gets the same vector wherever it appears. The sparse, "
            "meaningless "
            "one-hot address becomes a dense vector in which directions can carry meaning." +
            W.embedding_note,
        q_ax, dm_ax, ValueKind::Signed, nf * df, E);
    {
        std::string title, formula, expl;
        switch (cfg.positional) {
            case Positional::Sinusoidal:
                title = "Positional encoding (sinusoidal)";
                formula = "PE(p,2i) = sin(p/" + num(cfg.pe_base) + "^(2i/d)),  PE(p,2i+1) = cos(p/" +
                          num(cfg.pe_base) + "^(2i/d))";
                expl =
                    "Attention itself treats the tokens as a set: shuffle them and every output shuffles the "
                    "same "
                    "way. To know word order, each position p gets a fixed vector of sines and cosines at "
                    "geometrically spaced frequencies, from one cycle per ~6 tokens (left columns) to very "
                    "slow "
                    "waves (right columns). Shifting a position by δ is a rotation of each (sin, cos) pair: "
                    "PE(p+δ) = R(δ)·PE(p), so relative offsets are easy for W_Q and W_K to read. Look for "
                    "stripes "
                    "that get wider to the right.";
                break;
            case Positional::Learned:
                title = "Positional encoding (learned)";
                formula = "P = W_pos[0:n]   (one trainable row per position)";
                expl =
                    "Each position gets its own vector, learned during training (here: random, untrained). "
                    "Unlike sinusoids, a learned table cannot encode positions beyond the longest training "
                    "text.";
                break;
            case Positional::Rope:
                title = "Positional encoding (none added: RoPE)";
                formula = "P = 0   (RoPE rotates Q and K instead)";
                expl =
                    "With rotary position embeddings nothing is added to the input: position enters later, "
                    "by "
                    "rotating each (q, k) pair of coordinates by an angle proportional to the position "
                    "(stages "
                    "Q_rot, K_rot), so q_p·k_s depends only on the offset s − p.";
                break;
            case Positional::Alibi:
                title = "Positional encoding (none added: ALiBi)";
                formula = "P = 0   (ALiBi adds −slope·|i−j| to the scores)";
                expl =
                    "With ALiBi nothing is added to the input: each head instead subtracts a penalty "
                    "proportional "
                    "to the distance |i − j| from its scores (stage alibi), so nearby tokens are preferred.";
                break;
            case Positional::None:
                title = "Positional encoding (none)";
                formula = "P = 0";
                expl =
                    "No positional information: the layer sees the tokens as an unordered set. Permuting the "
                    "tokens permutes the outputs in exactly the same way (without a mask). Try it: the "
                    "pattern "
                    "of a repeated word is identical at every position.";
                break;
        }
        add("positional", -1, title, formula, expl, q_ax, dm_ax, ValueKind::Signed, nf * df * 2, P);
    }
    add("input", -1, "Input  X = E + P", "X = E + P",
        "The layer's input: each token's embedding plus its position's vector. Adding (rather than "
        "appending) "
        "keeps the width d_model = " +
            dm_s +
            "; meaning and position share the same space, and W_Q, W_K, W_V can read either. This is the "
            "start of "
            "the residual stream that the layer will later add its change to.",
        q_ax, dm_ax, ValueKind::Signed, nf * df, X);
    if (cross) {
        add("source", -1, "Source  Y (keys and values)", "Y = onehot(source)·W_E + P",
            "Cross-attention: queries come from the text X, but keys and values come from a second text Y "
            "(as when a "
            "translation decoder reads the encoded source sentence). Y is embedded with the same table and "
            "positional encoding. Scores, weights and the pattern are n×m: one row per query token, one "
            "column per "
            "source token.",
            k_ax, dm_ax, ValueKind::Signed, mf * df * 2, Y);
    }
    if (pre_ln) {
        add("layernorm", -1, "LayerNorm (pre)", "LN(x) = (x − mean(x)) / √(var(x) + ε)",
            "Pre-LayerNorm: before projecting, every token's vector is re-centred to mean 0 and rescaled to "
            "variance "
            "1 (no learned gain or bias here). This keeps q·k in a predictable range however large the "
            "residual "
            "stream grows, which is why most modern transformers normalise first. Q, K and V read LN(X)" +
                std::string(cross ? " and LN(Y)" : "") +
                "; the residual still adds to the raw X. Layer norm normalises across the features of ONE "
                "token (one row), so each sequence and each token is treated on its own; batch norm, common "
                "in CNNs, normalises one feature across the samples of a batch instead, which suits images "
                "but not sequences of varying length.",
            q_ax, dm_ax, ValueKind::Signed, 5 * nf * df, Xn);
    }

    const std::string scale_txt = score_scale(cfg.scoring, d_k) != 1.0 ? "/√d_k" : "";
    for (int hd = 0; hd < h; ++hd) {
        const HeadResult& R = heads[std::size_t(hd)];
        const std::string H = " (head " + std::to_string(hd) + ")";
        const std::string in = pre_ln ? "LN(X)" : "X";
        const std::string kin = cross ? (pre_ln ? "LN(Y)" : "Y") : in;
        const std::string random_w =
            "A learned matrix (here: random, N(0, 1/d_model) so that projected entries stay about unit "
            "size). ";
        add("W_Q", hd, "Query weights W_Q" + H, "W_Q" + sub(hd) + " ∈ ℝ^(d_model×d_k) = " + dm_s + "×" + dk_s,
            R.preset_text.empty()
                ? random_w +
                      "Each column is one question direction: a token's query is its input projected onto "
                      "these d_k = " +
                      dk_s +
                      " directions, i.e. what this head is looking for (e.g. 'is there an adjective before "
                      "me?'). Each "
                      "head has its own W_Q, so each looks at a different subspace of the input." +
                      (cfg.preset != HeadPreset::None
                           ? " This head is random; the designed pattern is in head 0."
                           : "")
                : R.preset_text,
            dm_ax, dk_ax, ValueKind::Signed, 0, R.W_Q);
        add("W_K", hd, "Key weights W_K" + H, "W_K" + sub(hd) + " ∈ ℝ^(d_model×d_k) = " + dm_s + "×" + dk_s,
            R.preset_text.empty()
                ? random_w +
                      "W_K maps each token to a key: how it advertises itself to the questions of the other "
                      "tokens. A query and a key match when they point the same way in the d_k-dimensional "
                      "space the two matrices define together."
                : R.preset_text,
            dm_ax, dk_ax, ValueKind::Signed, 0, R.W_K);
        add("W_V", hd, "Value weights W_V" + H,
            "W_V" + sub(hd) + " ∈ ℝ^(d_model×d_v) = " + dm_s + "×" + std::to_string(d_v),
            random_w +
                "W_V maps each token to the information it passes on when attended to: a value is the change "
                "this token proposes to make to whoever looks at it.",
            dm_ax, dv_ax, ValueKind::Signed, 0, R.W_V);
        add("Q", hd, "Queries  Q = " + in + "·W_Q" + H, "Q = " + in + " W_Q   (n×d_k)",
            "One query row per token: the input row times W_Q. q_i is token i's question. Each entry is a "
            "dot "
            "product of the token's " +
                dm_s + " input numbers with one column of W_Q.",
            q_ax, dk_ax, ValueKind::Signed, 2 * nf * df * dkf, R.Q);
        add("K", hd, "Keys  K = " + kin + "·W_K" + H, "K = " + kin + " W_K   (m×d_k)",
            "One key row per " + std::string(cross ? "source " : "") +
                "token: what each token offers to be matched against. The score of query i for key j will be "
                "large "
                "when q_i and k_j point the same way.",
            k_ax, dk_ax, ValueKind::Signed, 2 * mf * df * dkf, R.K);
        add("V", hd, "Values  V = " + kin + "·W_V" + H, "V = " + kin + " W_V   (m×d_v)",
            "One value row per token: what a token contributes to the output of every query that attends to "
            "it, in "
            "proportion to the attention weight.",
            k_ax, dv_ax, ValueKind::Signed, 2 * mf * df * dvf, R.V);
        if (rope) {
            const std::string rexp =
                "RoPE: each pair of coordinates (2i, 2i+1) of the row at position p is rotated by the angle "
                "p·ωᵢ, "
                "ωᵢ = " +
                num(cfg.pe_base) +
                "^(−2i/d_k). Rotations preserve length, and rotating q by p·ω and k by s·ω makes q·k depend "
                "only "
                "on the offset s − p: relative position enters the scores directly, nothing is added to X.";
            add("Q_rot", hd, "Rotated queries (RoPE)" + H, "q̃_p = R(p·ω) q_p", rexp, q_ax, dk_ax,
                ValueKind::Signed, 3 * nf * dkf, R.Q_rot);
            add("K_rot", hd, "Rotated keys (RoPE)" + H, "k̃_s = R(s·ω) k_s", rexp, k_ax, dk_ax,
                ValueKind::Signed, 3 * mf * dkf, R.K_rot);
        }
        const std::string qn = rope ? "Q̃" : "Q", kn = rope ? "K̃" : "K";
        if (!linear) {
            const double slope = alibi ? alibi_slope(hd, h) : 0.0;
            if (alibi) {
                add(
                    "alibi", hd, "ALiBi bias" + H, "B_ij = −" + num(slope) + "·|i − j|",
                    "ALiBi gives every head a fixed distance penalty with its own slope (here 2^(−8·" +
                        std::to_string(hd + 1) + "/" + std::to_string(h) + ") = " + num(slope) +
                        "). Added to the scaled scores, it makes far-away keys less likely; steep-slope "
                        "heads look "
                        "locally, shallow-slope heads look far. It needs no learned parameters and extends "
                        "to longer "
                        "texts than seen in training.",
                    q_ax, k_ax, ValueKind::Signed, nf * mf, nullptr,
                    [n, m, slope] { return alibi_bias(n, m, slope); },
                    [slope](int i, int j) { return float(-slope * std::abs(i - j)); });
            }
            std::string stitle, sformula, sexp;
            ValueKind skind = ValueKind::Signed;
            double sflops = 2 * nf * mf * dkf;
            switch (cfg.scoring) {
                case Scoring::ScaledDot:
                case Scoring::Dot:
                    stitle = "Scores  S = " + qn + kn + "ᵀ";
                    sformula = "S = " + qn + " " + kn + "ᵀ,   S_ij = q_i·k_j";
                    sexp =
                        "Every query is compared with every key by a dot product: S_ij = Σₖ q_ik k_jk. Large "
                        "and "
                        "positive when the two vectors point the same way, negative when opposite. Row i "
                        "says how "
                        "well each key answers token i's question. This n×m matrix is why attention costs "
                        "O(n²).";
                    break;
                case Scoring::Additive:
                    stitle = "Scores (additive)";
                    sformula = "S_ij = w_vᵀ tanh(W_qᵀ q_i + W_kᵀ k_j)";
                    sexp =
                        "Additive (Bahdanau) scoring: a tiny one-hidden-layer network (hidden size " +
                        std::to_string(cfg.resolved_additive_hidden()) +
                        ") scores each (query, key) pair. More flexible than a dot product but it cannot be "
                        "written as one matrix product, so it is slower on long texts.";
                    sflops = 2 * (nf + mf) * dkf * cfg.resolved_additive_hidden() +
                             4 * nf * mf * cfg.resolved_additive_hidden();
                    break;
                case Scoring::Bilinear:
                    stitle = "Scores (bilinear)";
                    sformula = "S = " + qn + " W " + kn + "ᵀ   (W: d_k×d_k)";
                    sexp =
                        "Bilinear (Luong 'general') scoring: a learned d_k×d_k matrix W sits between query "
                        "and "
                        "key, S_ij = q_iᵀ W k_j. With W = I it is the plain dot product.";
                    sflops += 2 * nf * dkf * dkf;
                    break;
                default: {
                    const std::string b = num(cfg.bandwidth);
                    stitle = "Kernel values (" + to_string(cfg.scoring) + ")";
                    const std::string u = "u = ‖q_i − k_j‖/" + b;
                    sformula = cfg.scoring == Scoring::Gaussian ? "S_ij = exp(−u²/2),  " + u
                               : cfg.scoring == Scoring::Boxcar ? "S_ij = 1 if u ≤ 1 else 0,  " + u
                                                                : "S_ij = max(0, 1 − u),  " + u;
                    sexp =
                        "Nadaraya–Watson kernel regression, the ancestor of attention: the similarity is a "
                        "kernel "
                        "of the distance between query and key (bandwidth " +
                        b +
                        "). Near keys get large values, far keys small or zero. The values are already "
                        "non-negative, so they are normalised by their row sum instead of by softmax; "
                        "temperature "
                        "is not used.";
                    skind = ValueKind::NonNegative;
                    sflops = 3 * nf * mf * dkf;
                    break;
                }
            }
            add("scores", hd, stitle + H, sformula, sexp, q_ax, k_ax, skind, sflops, R.S);

            const double scale = kernel ? 1.0 : score_scale(cfg.scoring, d_k);
            const MatPtr S = R.S;
            const bool use_alibi = alibi;
            auto scaled_fn = [S, scale, use_alibi, slope] {
                Mat r = *S * float(scale);  // n x m
                if (use_alibi) r += alibi_bias(int(r.rows()), int(r.cols()), slope);
                return r;
            };
            // One cell of scaled_fn, the same float operations in the same order.
            auto scaled_cell = [S, scale, use_alibi, slope](int i, int j) {
                float r = (*S)(i, j) * float(scale);
                if (use_alibi) r += float(-slope * std::abs(i - j));
                return r;
            };
            const std::string B = alibi ? " + B" : "";
            std::string cformula, cexp;
            if (cfg.scoring == Scoring::ScaledDot || cfg.scoring == Scoring::Bilinear) {
                cformula = "scaled = S / √d_k" + B + " = S / " + num(std::sqrt(dkf)) + B;
                cexp = "If the entries of q and k have variance 1, q·k is a sum of d_k = " + dk_s +
                       " such products and has variance d_k: the scores grow like √d_k. Large scores push "
                       "softmax "
                       "into saturation (one weight ≈ 1, gradients ≈ 0). Dividing by √d_k = " +
                       num(std::sqrt(dkf)) + " brings the variance back to 1 whatever the head size.";
            } else if (kernel) {
                cformula = "scaled = S   (kernels are not scaled)";
                cexp =
                    "Kernel values are already on a fixed scale (the bandwidth sets it), so there is nothing "
                    "to "
                    "scale: this stage equals the kernel values.";
            } else {
                cformula = "scaled = S" + B + "   (" + to_string(cfg.scoring) + " scoring: no √d_k scaling)";
                cexp = cfg.scoring == Scoring::Dot
                           ? "Plain dot-product scoring does not divide by √d_k. Compare with scaled_dot: "
                             "with d_k = " +
                                 dk_s + " the scores here are √d_k = " + num(std::sqrt(dkf)) +
                                 " times larger, so softmax is sharper (often saturated)."
                           : "Additive scores come out of tanh and a small weight vector, so they are "
                             "already of "
                             "moderate size and are not scaled.";
            }
            if (alibi) cexp += " ALiBi's distance penalty B is added here.";
            add("scaled", hd, "Scaled scores" + H, cformula, cexp, q_ax, k_ax, skind,
                nf * mf * (alibi ? 2 : 1), nullptr, scaled_fn, scaled_cell);

            const std::shared_ptr<const BoolMat> mask = allowed;
            std::string mexp;
            if (!mask) {
                mexp =
                    "No mask: every query may look at every key, including keys after it. This is an "
                    "encoder's bidirectional attention (BERT reads the whole sentence at once, e.g. to fill "
                    "in a masked word). Choose causal to stop tokens from seeing the future, as a decoder "
                    "that generates text one token at a time must (GPT).";
            } else {
                mexp =
                    "Hidden cells are set to −∞ so that exp(−∞) = 0 exactly: the key gets zero weight, not a "
                    "small "
                    "one, and the remaining weights still sum to 1. ";
                switch (cfg.mask) {
                    case MaskKind::Causal:
                        mexp +=
                            "Causal mask: token i may only see keys j ≤ i (no peeking at the future), the "
                            "upper triangle is hidden. This is a decoder's self-attention (GPT): during "
                            "training the whole target sentence is fed at once and the mask hides, for "
                            "each position, the tokens it will have to predict. Encoder–decoder models "
                            "(T5, translation) add cross-attention, where the decoder's queries read the "
                            "encoder's keys and values (the second text here).";
                        break;
                    case MaskKind::Padding:
                        mexp += "Padding mask: keys from position " + std::to_string(cfg.valid_length) +
                                " on are padding and hidden from every query.";
                        break;
                    case MaskKind::Window:
                        mexp += "Window mask: token i sees only the last " + std::to_string(cfg.window) +
                                " keys (i − " + std::to_string(cfg.window) +
                                " < j ≤ i), a band along the diagonal.";
                        break;
                    case MaskKind::Custom:
                        mexp += "Custom mask: the cells you switched off are hidden.";
                        break;
                    case MaskKind::None:
                        break;
                }
                mexp += " A row with every key hidden gets all-zero weights (never NaN).";
                if (kernel) mexp += " For kernels the hidden cells are simply left out of the row sum.";
            }
            add(
                "masked", hd, "Masked scores" + H,
                mask ? "masked_ij = scaled_ij if allowed(i,j) else −∞" : "masked = scaled   (no mask)", mexp,
                q_ax, k_ax, skind, nf * mf, nullptr,
                [scaled_fn, mask] {
                    Mat r = scaled_fn();
                    return mask ? apply_mask(r, *mask) : r;
                },
                [scaled_cell, mask](int i, int j) {
                    return mask && !(*mask)(i, j) ? -std::numeric_limits<float>::infinity()
                                                  : scaled_cell(i, j);
                });
            if (kernel) {
                add("weights", hd, "Weights  A = normalise(kernel)" + H, "A_ij = S_ij / Σⱼ S_ij",
                    "Each row of kernel values divided by its sum, so the weights are non-negative and sum "
                    "to 1 (a "
                    "row whose keys are all out of reach stays all zero). Temperature is not used by "
                    "kernels: the "
                    "bandwidth " +
                        num(cfg.bandwidth) + " plays its role (small = sharp, large = flat).",
                    q_ax, k_ax, ValueKind::Probability, 2 * nf * mf, R.A);
            } else {
                const std::string t = num(cfg.temperature);
                add("weights", hd, "Weights  A = softmax(masked / T)" + H,
                    "A_ij = exp(masked_ij/T) / Σⱼ exp(masked_ij/T),   T = " + t,
                    "Softmax turns each row of scores into probabilities: exp makes every value positive and "
                    "keeps "
                    "the order, dividing by the row sum makes the row sum to 1 (the row max is subtracted "
                    "first so "
                    "exp never overflows). Temperature T = " +
                        t +
                        " divides the scores first: T → 0 approaches argmax (all weight on the best key), T "
                        "→ ∞ "
                        "approaches uniform weights. Read row i as 'how much token i listens to each key'.",
                    q_ax, k_ax, ValueKind::Probability, 5 * nf * mf, R.A);
            }
            std::string hexp =
                "Each output row is the weighted average of the value rows: o_i = Σⱼ A_ij v_j. Token i's "
                "new information is mostly the values of the keys it attends to.";
            if (cfg.positional == Positional::Alibi && kernel)
                hexp += " (ALiBi adds to softmax scores; kernel weights ignore it.)";
            add("head_output", hd, "Head output  A·V" + H, "head" + sub(hd) + " = A V   (n×d_v)", hexp, q_ax,
                dv_ax, ValueKind::Signed, 2 * nf * mf * dvf, R.out);
        } else {
            const std::string pname = to_string(cfg.phi);
            const std::string pform = cfg.phi == PhiKind::Elu1 ? "φ(x) = elu(x) + 1"
                                      : cfg.phi == PhiKind::Relu
                                          ? "φ(x) = max(x, 0)"
                                          : "φ = softmax (queries over features, keys over tokens)";
            const std::string pexp =
                "Linear attention replaces exp(q·k) by a similarity φ(q)·φ(k) of non-negative feature "
                "vectors (" +
                pform +
                "). Because it factors, (φ(Q)φ(K)ᵀ)V = φ(Q)(φ(K)ᵀV): the keys and values can be summarised "
                "once, "
                "before any query looks at them.";
            add("phi_Q", hd, "φ(Q)" + H, "φ(" + qn + "),   " + pform, pexp, q_ax, dk_ax,
                ValueKind::NonNegative, nf * dkf * 2, R.phi_Q);
            add("phi_K", hd, "φ(K)" + H, "φ(" + kn + "),   " + pform,
                pexp + (cfg.mask == MaskKind::Padding ? " Rows of padded keys are zeroed, which hides them."
                                                      : ""),
                k_ax, dk_ax, ValueKind::NonNegative, mf * dkf * 2, R.phi_K);
            std::string kvexp =
                "φ(K)ᵀV sums φ(k_j) v_jᵀ over all keys into one d_k×d_v = " + dk_s + "×" +
                std::to_string(d_v) +
                " matrix, whatever the text length. Every query then reads this summary instead of "
                "every key: the cost is O(n·d_k·d_v), linear in n, and no n×n matrix is formed.";
            if (cfg.mask == MaskKind::Causal)
                kvexp +=
                    " With a causal mask the sum is a running (prefix) sum over j ≤ i, like an RNN's state; "
                    "shown "
                    "here is the final one, after the last key.";
            if (!linear_native_mask)
                kvexp += " A " + to_string(cfg.mask) +
                         " mask cannot be folded into this sum, so here the weights are materialised as an "
                         "n×m matrix "
                         "(O(n²), as in softmax attention) and this summary is shown unmasked for reference.";
            add("KV", hd, "Key–value summary  φ(K)ᵀV" + H, "KV = φ(K)ᵀ V   (d_k×d_v)", kvexp, dk_ax, dv_ax,
                ValueKind::Signed, 2 * mf * dkf * dvf, R.KV);
            add("normalizer", hd, "Normaliser  φ(q_i)·Σⱼφ(k_j)" + H, "z_i = φ(q_i) · Σⱼ φ(k_j)",
                "The row sum of the implied weights before normalising: dividing by z_i makes each query's "
                "weights "
                "sum to 1, like softmax's denominator. Also computed in O(n) from the column sums of φ(K).",
                q_ax, single_axis("z"), ValueKind::NonNegative, 2 * nf * dkf + mf * dkf, R.normalizer);
            if (R.A) {
                add("weights", hd, "Implied weights (display only)" + H, "A_ij = φ(q_i)·φ(k_j) / z_i",
                    "Linear attention never needs this n×m matrix; it is formed here only so you can compare "
                    "the "
                    "pattern with softmax attention's. The weights are non-negative and each row sums to 1, "
                    "but "
                    "they are flatter than softmax's: φ(q)·φ(k) grows linearly, not exponentially.",
                    q_ax, k_ax, ValueKind::Probability, 2 * nf * mf * dkf + 2 * nf * mf, R.A);
            }
            std::string hexp =
                "o_i = φ(q_i)ᵀ(φ(K)ᵀV) / z_i: each query reads the d_k×d_v summary and divides by its "
                "normaliser. Same result as (implied weights)·V, at linear cost.";
            if (!R.A)
                hexp += " The implied n×m weights are not shown: for " + std::to_string(h) +
                        " heads at n = " + std::to_string(n) + " they would need " +
                        num(std::round(double(h) * nf * mf * 4 / 1048576.0)) +
                        " MiB — exactly the quadratic cost linear attention avoids.";
            if (cfg.positional == Positional::Alibi)
                hexp +=
                    " ALiBi adds a bias to softmax scores; linear attention has no score matrix, so it has "
                    "no effect here.";
            add("head_output", hd, "Head output (linear)" + H,
                "head" + sub(hd) + " = φ(Q)(φ(K)ᵀV) / z   (n×d_v)", hexp, q_ax, dv_ax, ValueKind::Signed,
                2 * nf * dkf * dvf + nf * dvf, R.out);
        }
        T.row_entropy.push_back(R.entropy);
    }

    add("concat", -1, "Concatenate heads",
        "concat = [head₀ | head₁ | … | head" + sub(h - 1) + "]   (n×h·d_v)",
        "The " + std::to_string(h) + " head outputs are placed side by side: columns " + "0–" +
            std::to_string(d_v - 1) + " come from head 0, the next " + std::to_string(d_v) +
            " from head 1, and so on. Each head attended in its own subspace, with its own pattern; nothing "
            "is mixed "
            "yet.",
        q_ax, hdv_ax, ValueKind::Signed, 0, concat);
    add("W_O", -1, "Output weights W_O", "W_O ∈ ℝ^(h·d_v×d_model) = " + std::to_string(h * d_v) + "×" + dm_s,
        "A learned matrix (here: random, N(0, 1/(h·d_v))) that mixes the heads' findings and maps them back "
        "to the "
        "width of the residual stream.",
        hdv_ax, dm_ax, ValueKind::Signed, 0, W_O);
    add("output", -1, "Output  concat·W_O", "output = concat W_O   (n×d_model)",
        "The layer's proposed change for each token: a vector of width d_model = " + dm_s +
            " built from what every head found.",
        q_ax, dm_ax, ValueKind::Signed, 2 * nf * h * dvf * df, output);
    if (residual) {
        add("residual", -1, "Residual  X + output", "residual = X + output",
            "The residual connection adds the change vector to the input instead of replacing it: the token "
            "keeps its "
            "original meaning and position, nudged by what it gathered from context (the notes' 'the "
            "embedding of "
            "creature moves toward fluffy blue creature'). It also lets gradients flow straight through deep "
            "stacks.",
            q_ax, dm_ax, ValueKind::Signed, nf * df, residual);
    }
    if (post) {
        add("layernorm_post", -1, "LayerNorm (post)",
            "LN(" + std::string(residual ? "X + output" : "output") + ")",
            "Post-LayerNorm (the original Transformer's order, Add & Norm): after the residual add, each "
            "row is re-centred and rescaled to mean 0, variance 1, so the next layer sees inputs of a "
            "fixed size. Modern LLMs mostly normalise before the sublayer instead (pre-LN), which trains "
            "more stably. Layer norm works across one token's features, not across a batch (batch norm).",
            q_ax, dm_ax, ValueKind::Signed, 5 * nf * df, post);
    }
    T.compute_seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
    return T;
}

}  // namespace

Trace compute_trace(const Config& cfg, std::shared_ptr<const LayerWeights> weights,
                    const ComputeOptions& options) {
    const auto t_start = Clock::now();
    require_valid(cfg);
    check_preset(cfg);
    if (!weights) throw Error("compute_trace: no layer weights given");
    Tokenized tk = tokenize_config(cfg);
    check_layer_weights(*weights, cfg, int(tk.query_tokens.size()), int(tk.key_tokens.size()));
    return compute_with_weights(cfg, std::move(tk), std::move(weights), options, t_start);
}

Trace compute_trace(const Config& cfg, const ComputeOptions& options) {
    const auto t_start = Clock::now();
    require_valid(cfg);
    check_preset(cfg);
    Tokenized tk = tokenize_config(cfg);
    const int positions = int(std::max(tk.query_tokens.size(), tk.key_tokens.size()));
    auto weights = std::make_shared<const LayerWeights>(layer_weights(cfg, tk.vocab, positions));
    return compute_with_weights(cfg, std::move(tk), std::move(weights), options, t_start);
}

Mat display_matrix(const Trace& trace, const Stage& stage) {
    Mat M = stage.matrix();  // rows x cols of the stage
    if (stage.name == "weights" && trace.config.mask != MaskKind::None &&
        stage.rows.kind == Axis::Kind::QueryTokens && stage.cols.kind == Axis::Kind::KeyTokens) {
        const BoolMat allowed = make_mask(trace.config, int(M.rows()), int(M.cols()));  // n x m
        const float minus_inf = -std::numeric_limits<float>::infinity();
        for (Eigen::Index i = 0; i < M.rows(); ++i)
            for (Eigen::Index j = 0; j < M.cols(); ++j)
                if (!allowed(i, j)) M(i, j) = minus_inf;
    }
    return M;
}

}  // namespace attnviz

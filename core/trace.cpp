// compute_trace(): one attention layer, stage by stage, recorded for the learner. The math itself
// lives in core/ops.cpp and core/attention.cpp; this file runs the forward pass (heads spread over
// threads, the fused products) and hands its matrices to the stage entries (core/stages/*.cpp),
// which decide what each stage records, stored or derived lazily, and what it says.
// GCC 12 reports a false -Wmaybe-uninitialized inside its own AVX-512 intrinsics when Eigen packs a
// row-major GEMM operand (Eigen's ptranspose); it is not about our code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "core/trace.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "core/attention.hpp"
#include "core/axes.hpp"
#include "core/error.hpp"
#include "core/layer_weights.hpp"
#include "core/ops.hpp"
#include "core/presets.hpp"
#include "core/stage_catalogue.hpp"
#include "core/stages/layer_run.hpp"
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

std::vector<StageId> Trace::stage_ids(int head) const {
    const int h = std::max(0, std::min(head, heads - 1));
    std::vector<StageId> ids;
    std::unordered_set<std::string> seen;
    for (const Stage& st : stages)
        if (seen.insert(st.name).second) ids.push_back(StageId{layer, st.name, st.head >= 0 ? h : -1});
    return ids;
}

const Stage* Trace::get(const StageId& id) const {
    return id.layer == layer ? get(id.name, id.head) : nullptr;
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

using Clock = std::chrono::steady_clock;

using axes::dim_axis;
using axes::token_axis;

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

// The forward pass, then every stage recorded by its catalogue entry (core/stages/*.cpp) in the
// layer's plan: the stages before the heads, each head's stages, the stages after the heads.
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
    LayerRun run(cfg);
    const bool cross = run.cross = cfg.cross_attention();
    const int n = run.n = int(tk.query_tokens.size());
    const int m = run.m = int(tk.key_tokens.size());
    const int d = run.d = cfg.d_model;
    const int h = run.h = cfg.heads;
    const int d_k = run.d_k = cfg.resolved_d_k();
    const int d_v = run.d_v = cfg.resolved_d_v();
    const int V = int(tk.vocab.size());
    T.n = n, T.m = m, T.d_model = d, T.heads = h, T.d_k = d_k, T.d_v = d_v;
    T.query_tokens = std::make_shared<const std::vector<std::string>>(std::move(tk.query_tokens));
    T.key_tokens =
        cross ? std::make_shared<const std::vector<std::string>>(std::move(tk.key_tokens)) : T.query_tokens;
    T.vocab = std::make_shared<const std::vector<std::string>>(tk.vocab);

    const LayerModes& modes = run.modes;
    const bool linear = modes.linear, kernel = modes.kernel, rope = modes.rope, alibi = modes.alibi;
    const bool pre_ln = modes.pre_ln, post_ln = modes.post_ln;
    // Starting threads costs ~50 µs; below a few million multiply-adds one thread is faster.
    const double work =
        double(cfg.heads) * (double(n) * m * cfg.resolved_d_k() +
                             double(n + m) * cfg.d_model * (cfg.resolved_d_k() + cfg.resolved_d_v()));
    const int threads = work < 4e6 ? 1 : resolve_threads(options.threads);
    run.nf = n, run.mf = m, run.df = d, run.dkf = d_k, run.dvf = d_v;
    const double nf = n, mf = m;

    run.q_ax = token_axis(Axis::Kind::QueryTokens, T.query_tokens);
    run.k_ax = token_axis(Axis::Kind::KeyTokens, T.key_tokens);
    run.v_ax = token_axis(Axis::Kind::Vocabulary, T.vocab);
    run.dm_ax = dim_axis("d_model", d), run.dk_ax = dim_axis("d_k", d_k), run.dv_ax = dim_axis("d_v", d_v);
    run.hdv_ax = dim_axis("h·d_v", h * d_v);

    // --- tokens -> vectors --------------------------------------------------------------------
    run.OH = std::make_shared<const Mat>(one_hot(tk.query_ids, V));  // n x V
    const Mat& table = *W.embedding;                                 // V_w x d_model
    const std::vector<int> table_row = embedding_rows(W, tk.vocab);  // V
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
    run.E = std::make_shared<const Mat>(lookup(tk.query_ids));              // n x d_model
    run.P = std::make_shared<const Mat>(positions(n));                      // n x d_model
    const MatPtr X = run.X = std::make_shared<const Mat>(*run.E + *run.P);  // n x d_model
    MatPtr Y = X;                                                           // m x d_model
    if (cross) Y = std::make_shared<const Mat>(lookup(tk.key_ids) + positions(m));
    run.Y = Y;
    MatPtr Xn = X, Yn = Y;  // what Q and K, V read: LN(X), LN(Y) with pre-LayerNorm
    if (pre_ln) {
        Xn = std::make_shared<const Mat>(layernorm_rows(*X));
        Yn = cross ? std::make_shared<const Mat>(layernorm_rows(*Y)) : Xn;
    }
    run.Xn = Xn;
    poll();

    std::shared_ptr<const BoolMat> allowed;  // n x m, null = every key visible
    if (cfg.mask != MaskKind::None) allowed = std::make_shared<const BoolMat>(make_mask(cfg, n, m));
    run.allowed = allowed;
    const bool linear_native_mask = modes.linear_native_mask;
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
    std::vector<HeadResult>& heads = run.heads;
    heads.resize(static_cast<std::size_t>(h));
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
    run.concat = concat, run.W_O = W_O, run.output = output;
    if (cfg.residual) run.residual = std::make_shared<const Mat>(*X + *output);
    if (post_ln)
        run.post = std::make_shared<const Mat>(layernorm_rows(run.residual ? *run.residual : *output));
    poll();

    // --- record the stages: each entry's record function (core/stages/*.cpp) --------------------
    LayerTextContext text_ctx;
    text_ctx.n = n, text_ctx.m = m, text_ctx.V = V;
    text_ctx.embedding_note = W.embedding_note;
    for (const HeadWeights& hw : W.heads) text_ctx.designed.push_back(hw.designed);
    text_ctx.implied_weights = h == 0 || heads[0].A != nullptr;
    LayerRecorder recorder(run, text_ctx, T);
    const LayerStagePlan& plan = layer_stage_plan();
    for (const StageEntry* e : plan.before) recorder.record(*e, -1);
    for (int hd = 0; hd < h; ++hd) {
        for (const StageEntry* e : plan.per_head) recorder.record(*e, hd);
        T.row_entropy.push_back(heads[std::size_t(hd)].entropy);
    }
    for (const StageEntry* e : plan.after) recorder.record(*e, -1);
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

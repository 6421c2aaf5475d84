// run_model(): GPT-2 and Llama-style decoder-only transformers, block by block. See core/model.hpp.
// GCC 12 reports a false -Wmaybe-uninitialized inside its own AVX-512 intrinsics when Eigen packs a
// row-major GEMM operand (as in core/trace.cpp); it is not about our code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "core/model.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numeric>

#include "core/attention.hpp"
#include "core/error.hpp"
#include "core/ops.hpp"
#include "core/thread_pool.hpp"

namespace attnviz {

namespace {

std::string dims(int r, int c) {
    return "[" + std::to_string(r) + ", " + std::to_string(c) + "]";
}

void check_ref(const WeightRef& w, int rows, int cols, const std::string& what) {
    if (w.data == nullptr) throw Error("model: " + what + " is missing");
    if (w.rows != rows || w.cols != cols || w.stride < w.cols)
        throw Error("model: " + what + " has shape " + dims(w.rows, w.cols) + ", expected " +
                    dims(rows, cols));
}

void check_linear(const Linear& L, int in, int out, bool bias_required, const std::string& what) {
    if (L.out_in)
        check_ref(L.weight, out, in, what + ".weight");
    else
        check_ref(L.weight, in, out, what + ".weight");
    if (bias_required && L.bias == nullptr) throw Error("model: " + what + ".bias is missing");
}

void check_norm(const Norm& n, int d, bool bias_required, const std::string& what) {
    if (n.weight == nullptr) throw Error("model: " + what + ".weight is missing");
    if (n.dim != d)
        throw Error("model: " + what + " has width " + std::to_string(n.dim) + ", expected " +
                    std::to_string(d));
    if (bias_required && n.bias == nullptr) throw Error("model: " + what + ".bias is missing");
}

}  // namespace

NormKind norm_kind(const ModelSpec& s) {
    if (s.norm != NormKind::Auto) return s.norm;
    return s.family == ModelFamily::Gpt2 ? NormKind::LayerNorm : NormKind::RMSNorm;
}
MlpKind mlp_kind(const ModelSpec& s) {
    if (s.mlp != MlpKind::Auto) return s.mlp;
    return s.family == ModelFamily::Gpt2 ? MlpKind::Gelu : MlpKind::SwiGLU;
}
PositionKind position_kind(const ModelSpec& s) {
    if (s.positions != PositionKind::Auto) return s.positions;
    return s.family == ModelFamily::Gpt2 ? PositionKind::Learned : PositionKind::Rope;
}

void validate_model(const ModelWeights& m) {
    const ModelSpec& s = m.spec;
    if (s.n_layer <= 0 || s.n_head <= 0 || s.n_kv_head <= 0 || s.d_model <= 0 || s.d_head <= 0 ||
        s.d_ff <= 0 || s.vocab_size <= 0 || s.max_positions <= 0)
        throw Error("model: every size (layers, heads, widths, vocabulary, positions) must be positive");
    if (s.n_head % s.n_kv_head != 0)
        throw Error("model: " + std::to_string(s.n_head) + " attention heads cannot share " +
                    std::to_string(s.n_kv_head) + " key/value heads (it must divide the number of heads)");
    const NormKind nk = norm_kind(s);
    const MlpKind mk = mlp_kind(s);
    const PositionKind pk = position_kind(s);
    if (pk == PositionKind::Rope && s.d_head % 2 != 0)
        throw Error("model: RoPE needs an even head width, got " + std::to_string(s.d_head));
    if (!(s.norm_eps >= 0) || !std::isfinite(s.norm_eps)) throw Error("model: the norm epsilon must be >= 0");
    if (!(s.rope_theta > 0) || !std::isfinite(s.rope_theta)) throw Error("model: rope_theta must be > 0");
    if (int(m.blocks.size()) != s.n_layer)
        throw Error("model: expected " + std::to_string(s.n_layer) + " blocks");
    const bool gpt2 = s.family == ModelFamily::Gpt2;
    const int d = s.d_model, qd = s.n_head * s.d_head, kvd = s.n_kv_head * s.d_head;
    check_ref(m.wte, s.vocab_size, d, "token embedding");
    if (pk == PositionKind::Learned) check_ref(m.wpe, s.max_positions, d, "position embedding");
    check_ref(m.lm_head, s.vocab_size, d, "unembedding");
    const bool norms = nk != NormKind::None, norm_bias = nk == NormKind::LayerNorm;
    if (norms) check_norm(m.ln_f, d, norm_bias, "final norm");
    for (int l = 0; l < s.n_layer; ++l) {
        const BlockWeights& b = m.blocks[std::size_t(l)];
        const std::string p = "layer " + std::to_string(l) + " ";
        if (norms) check_norm(b.ln_1, d, norm_bias, p + "ln_1");
        if (norms && mk != MlpKind::None) check_norm(b.ln_2, d, norm_bias, p + "ln_2");
        check_linear(b.q, d, qd, gpt2, p + "q");
        check_linear(b.k, d, kvd, gpt2, p + "k");
        check_linear(b.v, d, kvd, gpt2, p + "v");
        check_linear(b.o, qd, d, gpt2, p + "o");
        if (mk == MlpKind::Gelu) {
            check_linear(b.fc, d, s.d_ff, gpt2, p + "mlp fc");
            check_linear(b.proj, s.d_ff, d, gpt2, p + "mlp proj");
        } else if (mk == MlpKind::SwiGLU) {
            check_linear(b.gate, d, s.d_ff, false, p + "gate_proj");
            check_linear(b.up, d, s.d_ff, false, p + "up_proj");
            check_linear(b.down, s.d_ff, d, false, p + "down_proj");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Small pure functions
// ---------------------------------------------------------------------------------------------

Mat gelu_tanh(const Mat& X) {
    const float c = float(std::sqrt(2.0 / M_PI));
    Mat Y(X.rows(), X.cols());  // same shape as X
    Y.array() = 0.5f * X.array() * (1.0f + (c * (X.array() + 0.044715f * X.array().cube())).tanh());
    return Y;
}

Mat silu(const Mat& X) {
    Mat Y(X.rows(), X.cols());  // same shape as X
    Y.array() = X.array() / (1.0f + (-X.array()).exp());
    return Y;
}

Mat rmsnorm_rows(const Mat& X, double eps) {
    Mat Y(X.rows(), X.cols());  // [rows, d]
    for (Eigen::Index i = 0; i < X.rows(); ++i) {
        const double ms = X.row(i).cast<double>().squaredNorm() / double(std::max<Eigen::Index>(1, X.cols()));
        Y.row(i) = X.row(i) * float(1.0 / std::sqrt(ms + eps));
    }
    return Y;
}

Mat rope_rotate_half(const Mat& X, int d_head, double theta, int offset) {
    if (d_head <= 0 || d_head % 2 != 0 || X.cols() % d_head != 0)
        throw Error("rope_rotate_half: head width " + std::to_string(d_head) + " must be even and divide " +
                    std::to_string(X.cols()));
    const int half = d_head / 2;
    const int heads = int(X.cols()) / d_head;
    // The same angles as the single layer's RoPE (rope_table), paired i with i + dh/2.
    const RopeTable t = rope_table(int(X.rows()), d_head, theta, offset);
    const Mat cosines = t.cos.cast<float>().matrix(), sines = t.sin.cast<float>().matrix();  // [n, dh/2]
    Mat Y(X.rows(), X.cols());                                                               // [n, heads·dh]
    for (int h = 0; h < heads; ++h) {
        const auto x1 = X.middleCols(h * d_head, half).array();
        const auto x2 = X.middleCols(h * d_head + half, half).array();
        Y.middleCols(h * d_head, half).array() = x1 * cosines.array() - x2 * sines.array();
        Y.middleCols(h * d_head + half, half).array() = x2 * cosines.array() + x1 * sines.array();
    }
    return Y;
}

Mat apply_norm(const Mat& X, const Norm& norm, double eps) {
    if (X.cols() != norm.dim)
        throw Error("apply_norm: rows of width " + std::to_string(X.cols()) + ", norm of " +
                    std::to_string(norm.dim));
    Mat Y = norm.bias ? layernorm_rows(X, eps) : rmsnorm_rows(X, eps);  // [n, d]
    const Eigen::Map<const RowVec> w(norm.weight, norm.dim);
    Y.array().rowwise() *= w.array();
    if (norm.bias) Y.rowwise() += Eigen::Map<const RowVec>(norm.bias, norm.dim);
    return Y;
}

Mat apply_norm(const Mat& X, const Norm& norm, NormKind kind, double eps) {
    if (kind == NormKind::None) return X;
    if (X.cols() != norm.dim)
        throw Error("apply_norm: rows of width " + std::to_string(X.cols()) + ", norm of " +
                    std::to_string(norm.dim));
    Mat Y = kind == NormKind::RMSNorm ? rmsnorm_rows(X, eps) : layernorm_rows(X, eps);  // [n, d]
    const Eigen::Map<const RowVec> w(norm.weight, norm.dim);
    Y.array().rowwise() *= w.array();
    if (norm.bias) Y.rowwise() += Eigen::Map<const RowVec>(norm.bias, norm.dim);
    return Y;
}

Mat apply_linear(const Mat& X, const Linear& L, int threads) {
    const int in = L.in_features(), out = L.out_features();
    if (X.cols() != in)
        throw Error("apply_linear: input rows of width " + std::to_string(X.cols()) + " for a " +
                    std::to_string(in) + "-input layer");
    const auto W = L.weight.map();
    Mat Y(X.rows(), out);  // [n, out]
    // Output columns in blocks: each task reads only its own slice of W (which dominates the traffic).
    // A block is at most 4096 columns: Eigen packs a block of W whole (for a vocabulary of a million
    // rows, 0.7 GiB per block otherwise).
    threads = std::max(1, threads);
    constexpr int kMaxBlock = 4096;
    const int tasks = std::max({1, std::min(threads * 2, out / 64), (out + kMaxBlock - 1) / kMaxBlock});
    const int block = (out + tasks - 1) / tasks;
    parallel_for(tasks, threads, [&](int t) {
        const int c0 = t * block, nc = std::min(block, out - c0);
        if (nc <= 0) return;
        if (L.out_in)
            Y.middleCols(c0, nc).noalias() = X * W.middleRows(c0, nc).transpose();
        else
            Y.middleCols(c0, nc).noalias() = X * W.middleCols(c0, nc);
        if (L.bias) Y.middleCols(c0, nc).rowwise() += Eigen::Map<const RowVec>(L.bias + c0, nc);
    });
    return Y;
}

HeadAttention causal_attention_head(const Mat& Q, const Mat& K, const Mat& V, bool keep) {
    const Eigen::Index n = Q.rows();
    if (K.rows() != n || V.rows() != n || K.cols() != Q.cols())
        throw Error("causal_attention_head: Q " + dims(int(Q.rows()), int(Q.cols())) + ", K " +
                    dims(int(K.rows()), int(K.cols())) + ", V " + dims(int(V.rows()), int(V.cols())) +
                    " do not fit");
    const float scale = float(1.0 / std::sqrt(double(std::max<Eigen::Index>(1, Q.cols()))));
    HeadAttention r;
    r.output.resize(n, V.cols());  // [n, dv]
    if (keep) {
        r.scores.noalias() = Q * K.transpose();  // [n, n]
        r.weights.setZero(n, n);                 // [n, n]
    }
    // Row blocks: block [r0, r1) only sees keys 0 .. r1-1, so the hidden triangle is mostly skipped.
    constexpr Eigen::Index kBlock = 64;
    Mat S, P;             // [nr, r1]
    Eigen::ArrayXf x(n);  // softmax_row's scratch
    for (Eigen::Index r0 = 0; r0 < n; r0 += kBlock) {
        const Eigen::Index nr = std::min(kBlock, n - r0), r1 = r0 + nr;
        if (keep)
            S = r.scores.block(r0, 0, nr, r1);
        else
            S.noalias() = Q.middleRows(r0, nr) * K.topRows(r1).transpose();
        P.resize(nr, r1);
        // The same row kernel as the single layer's softmax (core/attention.hpp): the causal mask is
        // the span of keys j <= query r0 + i, T = 1, no ALiBi, no entropy.
        for (Eigen::Index i = 0; i < nr; ++i)
            softmax_row(S.row(i).data(), r0 + i, 0, r0 + i + 1, scale, 0.0, nullptr, 1.0f, x, P, i, false);
        r.output.middleRows(r0, nr).noalias() = P * V.topRows(r1);
        if (keep) r.weights.block(r0, 0, nr, r1) = P;
    }
    return r;
}

Mat rollout_step(const Mat& mean_weights, const Mat& prev) {
    const Eigen::Index n = mean_weights.rows();
    if (mean_weights.cols() != n || (prev.size() != 0 && (prev.rows() != n || prev.cols() != n)))
        throw Error("rollout_step: weights and the previous rollout must be the same square size");
    Mat A = 0.5f * mean_weights;  // [n, n]
    A.diagonal().array() += 0.5f;
    for (Eigen::Index i = 0; i < n; ++i) {
        const double sum = A.row(i).cast<double>().sum();
        if (sum != 0) A.row(i) /= float(sum);
    }
    if (prev.size() == 0) return A;
    const bool lower =
        n == 0 || A.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().cwiseAbs().maxCoeff() == 0;
    Mat R(n, n);  // [n, n]
    if (lower)
        R.noalias() = A.triangularView<Eigen::Lower>() * prev;
    else
        R.noalias() = A * prev;
    return R;
}

Vec next_token_probs(const RowVec& logits, double temperature) {
    if (!(temperature > 0) || !std::isfinite(temperature)) throw ConfigError("temperature must be > 0");
    const Eigen::ArrayXd z = logits.transpose().cast<double>().array() / temperature;
    const double mx = z.maxCoeff();
    const Eigen::ArrayXd e = (z - mx).exp();
    return (e / e.sum()).cast<float>().matrix();
}

int sample_next_token(const RowVec& logits, const SamplingOptions& o, double u) {
    if (logits.size() == 0) throw Error("sample_next_token: no logits");
    if (!(o.temperature >= 0) || !std::isfinite(o.temperature)) throw ConfigError("temperature must be >= 0");
    if (o.top_k < 0) throw ConfigError("top-k must be >= 0");
    if (!(o.top_p > 0 && o.top_p <= 1)) throw ConfigError("top-p must be in (0, 1]");
    Eigen::Index best = 0;
    if (o.temperature == 0) {
        logits.maxCoeff(&best);
        return int(best);
    }
    const Vec p = next_token_probs(logits, o.temperature);  // [V]
    std::vector<int> order(std::size_t(p.size()));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p(a) > p(b); });
    std::size_t keep = order.size();
    if (o.top_k > 0) keep = std::min(keep, std::size_t(o.top_k));
    double cum = 0;
    for (std::size_t i = 0; i < keep; ++i) {
        cum += p(order[i]);
        if (cum >= o.top_p) {
            keep = i + 1;
            break;
        }
    }
    double total = 0;
    for (std::size_t i = 0; i < keep; ++i) total += p(order[i]);
    double target = std::clamp(u, 0.0, 1.0) * total, acc = 0;
    for (std::size_t i = 0; i < keep; ++i) {
        acc += p(order[i]);
        if (target < acc) return order[i];
    }
    return order[keep - 1];
}

// ---------------------------------------------------------------------------------------------
// The forward pass
// ---------------------------------------------------------------------------------------------

std::uint64_t model_forward_bytes(const ModelSpec& s, int n, const ModelRunOptions& o) {
    const std::uint64_t N = std::uint64_t(std::max(0, n)), f = 4;
    const std::uint64_t nd = N * std::uint64_t(s.d_model) * f, nn = N * N * f;
    const std::uint64_t heads_layer =
        std::uint64_t(s.n_head) * (4 * N * std::uint64_t(s.d_head) * f + 2 * nn);
    std::uint64_t kept_head_layers = 0;
    for (int l = 0; l < s.n_layer; ++l)
        if (o.keep_heads.empty() || (std::size_t(l) < o.keep_heads.size() && o.keep_heads[std::size_t(l)]))
            ++kept_head_layers;
    std::uint64_t bytes = kept_head_layers * heads_layer;
    if (o.keep_layers) bytes += std::uint64_t(s.n_layer) * 6 * nd;
    bytes += (o.all_logits ? N : 1) * std::uint64_t(s.vocab_size) * f;
    if (o.rollout) bytes += 3 * nn;
    // Working set: the residual stream and norms, Q/K/V/concat, the MLP hidden layer, per-thread n×n.
    const std::uint64_t threads = std::uint64_t(std::max(1, o.threads));
    bytes += 8 * nd + 4 * N * std::uint64_t(s.n_head) * std::uint64_t(s.d_head) * f +
             3 * N * std::uint64_t(s.d_ff) * f + threads * 2 * nn + heads_layer;
    return bytes;
}

ModelForward run_model(const ModelWeights& model, const std::vector<int>& ids, const ModelRunOptions& o) {
    const ModelSpec& s = model.spec;
    const int n = int(ids.size());
    if (n == 0) throw Error("the model needs at least one token");
    if (n > s.max_positions)
        throw Error(std::to_string(n) + " tokens are more than the model's " +
                    std::to_string(s.max_positions) + " positions");
    for (int id : ids)
        if (id < 0 || id >= s.vocab_size)
            throw Error("token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                        std::to_string(s.vocab_size - 1) + ")");
    if (!o.keep_heads.empty() && int(o.keep_heads.size()) != s.n_layer)
        throw Error("keep_heads must have one entry per layer");
    const int threads = std::max(1, o.threads);
    const int h = s.n_head, dh = s.d_head, group = s.n_head / s.n_kv_head;
    const NormKind nk = norm_kind(s);
    const MlpKind mk = mlp_kind(s);
    const PositionKind pk = position_kind(s);
    auto check_cancel = [&] {
        if (o.cancel && o.cancel->load()) throw Cancelled();
    };

    Mat x(n, s.d_model);  // [n, d] the residual stream
    const auto wte = model.wte.map();
    for (int i = 0; i < n; ++i) {
        x.row(i) = wte.row(ids[std::size_t(i)]);
        if (pk == PositionKind::Learned) x.row(i) += model.wpe.map().row(i);
    }
    if (pk == PositionKind::Sinusoidal) x += sinusoidal_pe(n, s.d_model, s.rope_theta);

    ModelForward out;
    out.layers.resize(std::size_t(s.n_layer));
    for (int l = 0; l < s.n_layer; ++l) {
        check_cancel();
        const BlockWeights& b = model.blocks[std::size_t(l)];
        LayerStages& st = out.layers[std::size_t(l)];
        const bool keep_h = o.keep_heads.empty() || o.keep_heads[std::size_t(l)];

        Mat a = apply_norm(x, b.ln_1, nk, s.norm_eps);  // [n, d]
        Mat Q = apply_linear(a, b.q, threads);          // [n, h·dh]
        Mat K = apply_linear(a, b.k, threads);          // [n, g·dh]
        const Mat V = apply_linear(a, b.v, threads);    // [n, g·dh]
        if (pk == PositionKind::Rope) {
            Q = rope_rotate_half(Q, dh, s.rope_theta);
            K = rope_rotate_half(K, dh, s.rope_theta);
        }
        Mat concat(n, h * dh);  // [n, h·dh]
        Mat mean_w;             // [n, n]
        if (o.rollout) mean_w.setZero(n, n);
        std::mutex mean_mutex;
        if (keep_h) st.heads.resize(std::size_t(h));
        parallel_for(
            h, threads,
            [&](int hh) {
                const int kv = hh / group;
                Mat q = Q.middleCols(hh * dh, dh);  // [n, dh]
                Mat k = K.middleCols(kv * dh, dh);  // [n, dh]
                Mat v = V.middleCols(kv * dh, dh);  // [n, dh]
                HeadAttention r = causal_attention_head(q, k, v, keep_h || o.rollout);
                concat.middleCols(hh * dh, dh) = r.output;
                if (o.rollout) {
                    std::lock_guard<std::mutex> lock(mean_mutex);
                    mean_w += r.weights;
                }
                if (keep_h) {
                    HeadStages& hs = st.heads[std::size_t(hh)];
                    hs.Q = std::move(q);
                    hs.K = std::move(k);
                    hs.V = std::move(v);
                    hs.scores = std::move(r.scores);
                    hs.weights = std::move(r.weights);
                    hs.head_output = std::move(r.output);
                }
            },
            o.cancel);
        if (o.rollout) {
            mean_w /= float(h);
            out.rollout = rollout_step(mean_w, out.rollout);
        }
        Mat attn_out = apply_linear(concat, b.o, threads);  // [n, d]
        Mat resid_mid = x + attn_out;                       // [n, d]
        Mat m, mlp;                                         // [n, d] each (empty without an MLP)
        if (mk == MlpKind::Gelu) {
            m = apply_norm(resid_mid, b.ln_2, nk, s.norm_eps);
            mlp = apply_linear(gelu_tanh(apply_linear(m, b.fc, threads)), b.proj, threads);  // via [n, f]
        } else if (mk == MlpKind::SwiGLU) {
            m = apply_norm(resid_mid, b.ln_2, nk, s.norm_eps);
            Mat g = silu(apply_linear(m, b.gate, threads));  // [n, f]
            g.array() *= apply_linear(m, b.up, threads).array();
            mlp = apply_linear(g, b.down, threads);
        }
        x = mk == MlpKind::None ? resid_mid : Mat(resid_mid + mlp);
        if (o.keep_layers) {
            st.ln_1 = std::move(a);
            st.attn_out = std::move(attn_out);
            st.resid_mid = std::move(resid_mid);
            st.ln_2 = std::move(m);
            st.mlp_out = std::move(mlp);
            st.resid_post = x;
        }
    }
    check_cancel();
    out.ln_f = apply_norm(x, model.ln_f, nk, s.norm_eps);  // [n, d]
    const Linear unembed{model.lm_head, true, nullptr};
    if (o.all_logits)
        out.logits = apply_linear(out.ln_f, unembed, threads);  // [n, V]
    else
        out.logits = apply_linear(out.ln_f.bottomRows(1), unembed, threads);  // [1, V]
    return out;
}

}  // namespace attnviz

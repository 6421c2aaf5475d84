// The trainable attention-only GPT-2-layout decoder: forward with kept activations, backward beside
// each forward, AdamW. See core/train.hpp for the shapes.
#include "core/train.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.hpp"
#include "core/thread_pool.hpp"

namespace attnviz {

namespace {

void check_range(const char* name, int value, int lo, int hi) {
    if (value < lo || value > hi)
        throw ConfigError(std::string("Training option ") + name + " is " + std::to_string(value) +
                          "; it must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ".");
}

}  // namespace

void validate_train_config(const TrainConfig& c) {
    check_range("layers", c.n_layer, 1, 6);
    check_range("heads", c.n_head, 1, 8);
    check_range("d_model", c.d_model, 16, 256);
    check_range("context", c.context, 8, 256);
    check_range("vocab", c.vocab_size, 2, 65536);
    if (c.d_model % c.n_head != 0)
        throw ConfigError("Training option heads (" + std::to_string(c.n_head) + ") must divide d_model (" +
                          std::to_string(c.d_model) + ").");
}

std::vector<ParamView> param_layout(const TrainConfig& c) {
    std::vector<ParamView> out;
    std::size_t offset = 0;
    auto add = [&](std::string name, std::vector<int> shape) {
        std::size_t size = 1;
        for (int s : shape) size *= std::size_t(s);
        out.push_back(ParamView{std::move(name), std::move(shape), offset, size});
        offset += size;
    };
    const int d = c.d_model;
    add("wte.weight", {c.vocab_size, d});
    add("wpe.weight", {c.context, d});
    for (int l = 0; l < c.n_layer; ++l) {
        const std::string p = "h." + std::to_string(l) + ".";
        if (c.layer_norm) {
            add(p + "ln_1.weight", {d});
            add(p + "ln_1.bias", {d});
        }
        add(p + "attn.c_attn.weight", {d, 3 * d});
        add(p + "attn.c_attn.bias", {3 * d});
        add(p + "attn.c_proj.weight", {d, d});
        add(p + "attn.c_proj.bias", {d});
    }
    if (c.layer_norm) {
        add("ln_f.weight", {d});
        add("ln_f.bias", {d});
    }
    if (!c.tied) add("lm_head.weight", {c.vocab_size, d});
    return out;
}

std::size_t param_count(const TrainConfig& c) {
    const auto layout = param_layout(c);
    return layout.back().offset + layout.back().size;
}

template <typename T>
Params<T> make_params(const TrainConfig& config) {
    validate_train_config(config);
    Params<T> p;
    p.config = config;
    p.layout = param_layout(config);
    p.data.assign(param_count(config), T(0));
    return p;
}

Params<float> init_params(const TrainConfig& config, std::uint64_t seed) {
    Params<float> p = make_params<float>(config);
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    const float proj_scale = 1.0f / std::sqrt(2.0f * float(config.n_layer));
    for (const ParamView& v : p.layout) {
        float* x = p.data.data() + v.offset;
        const bool is_norm = v.name.find("ln_") != std::string::npos;
        if (v.shape.size() == 1) {
            std::fill(x, x + v.size, (is_norm && v.name.find(".weight") != std::string::npos) ? 1.0f : 0.0f);
        } else {
            const float scale = v.name.find("c_proj") != std::string::npos ? proj_scale : 1.0f;
            for (std::size_t i = 0; i < v.size; ++i) x[i] = normal(rng) * scale;
        }
    }
    return p;
}

namespace {

template <typename T>
using M = MatT<T>;
template <typename T>
using CMap = Eigen::Map<const M<T>>;
template <typename T>
using WMap = Eigen::Map<M<T>>;
template <typename T>
using RowT = Eigen::Matrix<T, 1, Eigen::Dynamic>;

/// Indices of a config's tensors in param_layout order.
struct LayerIdx {
    int ln_w = -1, ln_b = -1, attn_w, attn_b, proj_w, proj_b;
};
struct LayoutIdx {
    int wte = 0, wpe = 1;
    std::vector<LayerIdx> layers;
    int lnf_w = -1, lnf_b = -1;
    int unembed = 0;  // wte when tied, else lm_head
};

LayoutIdx layout_index(const TrainConfig& c) {
    LayoutIdx idx;
    int k = 2;
    for (int l = 0; l < c.n_layer; ++l) {
        LayerIdx li;
        if (c.layer_norm) {
            li.ln_w = k++;
            li.ln_b = k++;
        }
        li.attn_w = k++;
        li.attn_b = k++;
        li.proj_w = k++;
        li.proj_b = k++;
        idx.layers.push_back(li);
    }
    if (c.layer_norm) {
        idx.lnf_w = k++;
        idx.lnf_b = k++;
    }
    idx.unembed = c.tied ? idx.wte : k++;
    return idx;
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

// ---------------------------------------------------------------------------------------------
// LayerNorm
// ---------------------------------------------------------------------------------------------

/// forward: y = x̂·γ + β with x̂ = (x − mean)·rstd per row. x: [n, d] → y, xhat: [n, d], rstd: [n].
template <typename T>
void layernorm_forward(const M<T>& x, const T* gamma, const T* beta, double eps, M<T>& y, M<T>& xhat,
                       std::vector<T>& rstd) {
    const int n = int(x.rows()), d = int(x.cols());
    xhat.resize(n, d);
    y.resize(n, d);
    rstd.resize(std::size_t(n));
    for (int i = 0; i < n; ++i) {
        const T mean = ordered_sum(x.row(i)) / T(d);
        T var = 0;
        for (int j = 0; j < d; ++j) var += (x(i, j) - mean) * (x(i, j) - mean);
        var /= T(d);
        const T r = T(1) / std::sqrt(var + T(eps));
        rstd[std::size_t(i)] = r;
        for (int j = 0; j < d; ++j) {
            xhat(i, j) = (x(i, j) - mean) * r;
            y(i, j) = xhat(i, j) * gamma[j] + beta[j];
        }
    }
}

/// backward: dy [n, d] → dx [n, d] (added), dγ, dβ [d] (added).
/// dx = rstd·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂)), dx̂ = dy·γ.
template <typename T>
void layernorm_backward(const M<T>& dy, const M<T>& xhat, const std::vector<T>& rstd, const T* gamma,
                        M<T>& dx, T* dgamma, T* dbeta) {
    const int n = int(dy.rows()), d = int(dy.cols());
    for (int i = 0; i < n; ++i) {
        T mean_dxhat = 0, mean_dxhat_xhat = 0;
        for (int j = 0; j < d; ++j) {
            const T dxhat = dy(i, j) * gamma[j];
            mean_dxhat += dxhat;
            mean_dxhat_xhat += dxhat * xhat(i, j);
            dgamma[j] += dy(i, j) * xhat(i, j);
            dbeta[j] += dy(i, j);
        }
        mean_dxhat /= T(d);
        mean_dxhat_xhat /= T(d);
        for (int j = 0; j < d; ++j) {
            const T dxhat = dy(i, j) * gamma[j];
            dx(i, j) += rstd[std::size_t(i)] * (dxhat - mean_dxhat - xhat(i, j) * mean_dxhat_xhat);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Causal multi-head attention (temperature 1, scale 1/√dh)
// ---------------------------------------------------------------------------------------------

/// forward: qkv [n, 3d] (q | k | v, head h at columns h·dh) → att [h][n, n] softmax weights (zero
/// above the diagonal), y [n, d] (head outputs concatenated).
template <typename T>
void attention_forward(const M<T>& qkv, int n_head, std::vector<M<T>>& att, M<T>& y) {
    const int n = int(qkv.rows()), d = int(qkv.cols()) / 3, dh = d / n_head;
    const T scale = T(1) / std::sqrt(T(dh));
    att.resize(std::size_t(n_head));
    y.setZero(n, d);
    for (int h = 0; h < n_head; ++h) {
        const auto Q = qkv.middleCols(h * dh, dh);          // [n, dh]
        const auto K = qkv.middleCols(d + h * dh, dh);      // [n, dh]
        const auto V = qkv.middleCols(2 * d + h * dh, dh);  // [n, dh]
        M<T>& P = att[std::size_t(h)];                      // [n, n]
        P.noalias() = (Q * K.transpose()) * scale;
        for (int i = 0; i < n; ++i) {
            const T mx = P.row(i).head(i + 1).maxCoeff();
            T sum = 0;
            for (int j = 0; j <= i; ++j) {
                P(i, j) = std::exp(P(i, j) - mx);
                sum += P(i, j);
            }
            P.row(i).head(i + 1) /= sum;
            P.row(i).tail(n - i - 1).setZero();
        }
        y.middleCols(h * dh, dh).noalias() = P * V;
    }
}

/// backward: dy [n, d] → dqkv [n, 3d] (overwritten).
///   dP = dy_h·Vᵀ; dV = Pᵀ·dy_h; dS = P ⊙ (dP − rowsum(dP ⊙ P))·scale; dQ = dS·K; dK = dSᵀ·Q.
template <typename T>
void attention_backward(const M<T>& dy, const M<T>& qkv, const std::vector<M<T>>& att, int n_head,
                        M<T>& dqkv) {
    const int n = int(qkv.rows()), d = int(qkv.cols()) / 3, dh = d / n_head;
    const T scale = T(1) / std::sqrt(T(dh));
    dqkv.setZero(n, 3 * d);
    M<T> dP, dS;  // [n, n]
    for (int h = 0; h < n_head; ++h) {
        const auto Q = qkv.middleCols(h * dh, dh);
        const auto K = qkv.middleCols(d + h * dh, dh);
        const auto V = qkv.middleCols(2 * d + h * dh, dh);
        const auto dyh = dy.middleCols(h * dh, dh);  // [n, dh]
        const M<T>& P = att[std::size_t(h)];
        dP.noalias() = dyh * V.transpose();
        dqkv.middleCols(2 * d + h * dh, dh).noalias() = P.transpose() * dyh;
        dS.resize(n, n);
        for (int i = 0; i < n; ++i) {
            T dot = 0;
            for (int j = 0; j <= i; ++j) dot += dP(i, j) * P(i, j);
            for (int j = 0; j < n; ++j) dS(i, j) = j <= i ? P(i, j) * (dP(i, j) - dot) * scale : T(0);
        }
        dqkv.middleCols(h * dh, dh).noalias() = dS * K;
        dqkv.middleCols(d + h * dh, dh).noalias() = dS.transpose() * Q;
    }
}

// ---------------------------------------------------------------------------------------------
// Linear (Conv1D layout: W [in, out])
// ---------------------------------------------------------------------------------------------

/// forward: y = x·W + b. x [n, in], W [in, out], b [out] → y [n, out].
template <typename T>
void linear_forward(const M<T>& x, const CMap<T>& W, const T* b, M<T>& y) {
    y.noalias() = x * W;
    y.rowwise() += Eigen::Map<const RowT<T>>(b, W.cols());
}

/// backward: dy [n, out] → dW [in, out] (added), db [out] (added), dx [n, in] (overwritten).
template <typename T>
void linear_backward(const M<T>& dy, const M<T>& x, const CMap<T>& W, WMap<T> dW, T* db, M<T>& dx) {
    dW.noalias() += x.transpose() * dy;
    for (Eigen::Index i = 0; i < dy.rows();
         ++i)  // rows in order (not Eigen's alignment-dependent colwise sum)
        for (Eigen::Index j = 0; j < dy.cols(); ++j) db[j] += dy(i, j);
    dx.noalias() = dy * W.transpose();
}

// ---------------------------------------------------------------------------------------------
// One sequence: forward with kept activations, cross-entropy, backward
// ---------------------------------------------------------------------------------------------

template <typename T>
struct LayerActs {
    M<T> in;                // [n, d] residual entering the block
    M<T> a;                 // [n, d] ln_1 output (or `in` without norm)
    M<T> xhat;              // [n, d] normalised input (LayerNorm only)
    std::vector<T> rstd;    // [n]
    M<T> qkv;               // [n, 3d]
    std::vector<M<T>> att;  // [h][n, n]
    M<T> y;                 // [n, d] heads concatenated
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

template <typename T>
void sequence_forward(const Params<T>& p, const LayoutIdx& idx, const int* ids, int n, SeqActs<T>& A) {
    const TrainConfig& c = p.config;
    const int d = c.d_model, V = c.vocab_size;
    const auto wte = view(p, idx.wte, V, d);          // [V, d]
    const auto wpe = view(p, idx.wpe, c.context, d);  // [context, d]
    // pass 1: embeddings. x [n, d] = wte[ids] + wpe[0..n)
    M<T> x(n, d);
    for (int t = 0; t < n; ++t) x.row(t) = wte.row(ids[t]) + wpe.row(t);
    A.layers.resize(std::size_t(c.n_layer));
    for (int l = 0; l < c.n_layer; ++l) {
        const LayerIdx& li = idx.layers[std::size_t(l)];
        LayerActs<T>& L = A.layers[std::size_t(l)];
        L.in = x;
        // pass 2: ln_1
        if (c.layer_norm) {
            const T* g = p.data.data() + p.layout[std::size_t(li.ln_w)].offset;
            const T* b = p.data.data() + p.layout[std::size_t(li.ln_b)].offset;
            layernorm_forward(L.in, g, b, c.norm_eps, L.a, L.xhat, L.rstd);
        } else {
            L.a = L.in;
        }
        // pass 3: qkv [n, 3d], attention, c_proj, residual
        linear_forward(L.a, view(p, li.attn_w, d, 3 * d),
                       p.data.data() + p.layout[std::size_t(li.attn_b)].offset, L.qkv);
        attention_forward(L.qkv, c.n_head, L.att, L.y);
        M<T> o;  // [n, d]
        linear_forward(L.y, view(p, li.proj_w, d, d), p.data.data() + p.layout[std::size_t(li.proj_b)].offset,
                       o);
        x = L.in + o;
    }
    A.x_final = x;
    // pass 4: ln_f, tied unembedding, softmax. probs [n, V]
    if (c.layer_norm) {
        const T* g = p.data.data() + p.layout[std::size_t(idx.lnf_w)].offset;
        const T* b = p.data.data() + p.layout[std::size_t(idx.lnf_b)].offset;
        layernorm_forward(A.x_final, g, b, c.norm_eps, A.f, A.fhat, A.frstd);
    } else {
        A.f = A.x_final;
    }
    const auto unembed = view(p, idx.unembed, V, d);  // [V, d]
    A.probs.noalias() = A.f * unembed.transpose();
    for (int t = 0; t < n; ++t) {
        const T mx = A.probs.row(t).maxCoeff();
        A.probs.row(t) = (A.probs.row(t).array() - mx).exp();
        A.probs.row(t) /= ordered_sum(A.probs.row(t));
    }
}

/// Backward of one sequence. dlogits [n, V] = (probs − onehot)·weight per scored token, then every
/// pass in reverse. g: gradient buffer (added to).
template <typename T>
void sequence_backward(const Params<T>& p, const LayoutIdx& idx, const int* ids, const int* targets, int n,
                       T weight, const SeqActs<T>& A, std::vector<T>& g) {
    const TrainConfig& c = p.config;
    const int d = c.d_model, V = c.vocab_size;
    const auto& layout = p.layout;
    // pass 4 backward: cross-entropy + softmax, unembedding, ln_f
    M<T> dlogits = A.probs;  // [n, V]
    for (int t = 0; t < n; ++t) {
        if (targets[t] < 0) {
            dlogits.row(t).setZero();
            continue;
        }
        dlogits(t, targets[t]) -= T(1);
        dlogits.row(t) *= weight;
    }
    gview(g, layout, idx.unembed, V, d).noalias() += dlogits.transpose() * A.f;
    M<T> df = dlogits * view(p, idx.unembed, V, d);  // [n, d]
    M<T> dx;                                         // [n, d] gradient of the residual stream
    if (c.layer_norm) {
        dx.setZero(n, d);
        const T* gm = p.data.data() + layout[std::size_t(idx.lnf_w)].offset;
        layernorm_backward(df, A.fhat, A.frstd, gm, dx, g.data() + layout[std::size_t(idx.lnf_w)].offset,
                           g.data() + layout[std::size_t(idx.lnf_b)].offset);
    } else {
        dx = df;
    }
    // pass 3 and 2 backward, last block first
    M<T> dy, dqkv, da;
    for (int l = c.n_layer - 1; l >= 0; --l) {
        const LayerIdx& li = idx.layers[std::size_t(l)];
        const LayerActs<T>& L = A.layers[std::size_t(l)];
        linear_backward(dx, L.y, view(p, li.proj_w, d, d), gview(g, layout, li.proj_w, d, d),
                        g.data() + layout[std::size_t(li.proj_b)].offset, dy);
        attention_backward(dy, L.qkv, L.att, c.n_head, dqkv);
        linear_backward(dqkv, L.a, view(p, li.attn_w, d, 3 * d), gview(g, layout, li.attn_w, d, 3 * d),
                        g.data() + layout[std::size_t(li.attn_b)].offset, da);
        // residual: dx (into the block) = dx (out of the block) + d(norm path)
        if (c.layer_norm) {
            const T* gm = p.data.data() + layout[std::size_t(li.ln_w)].offset;
            layernorm_backward(da, L.xhat, L.rstd, gm, dx, g.data() + layout[std::size_t(li.ln_w)].offset,
                               g.data() + layout[std::size_t(li.ln_b)].offset);
        } else {
            dx += da;
        }
    }
    // pass 1 backward: embeddings
    auto dwte = gview(g, layout, idx.wte, V, d);
    auto dwpe = gview(g, layout, idx.wpe, c.context, d);
    for (int t = 0; t < n; ++t) {
        dwte.row(ids[t]) += dx.row(t);
        dwpe.row(t) += dx.row(t);
    }
}

void check_batch(const TrainConfig& c, const Batch& batch) {
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

}  // namespace

template <typename T>
double loss_and_grad(const Params<T>& params, const Batch& batch, Params<T>* grad, int threads,
                     std::vector<double>* per_token_loss) {
    const TrainConfig& c = params.config;
    check_batch(c, batch);
    const LayoutIdx idx = layout_index(c);
    long scored = 0;
    for (int t : batch.targets) scored += t >= 0 ? 1 : 0;
    if (scored == 0) throw Error("The training batch has no scored targets.");
    const T weight = T(1) / T(scored);
    const int B = batch.B, n = batch.n;
    if (per_token_loss) per_token_loss->assign(std::size_t(B) * std::size_t(n), 0.0);
    std::vector<double> seq_loss(std::size_t(B), 0.0);
    // One gradient partial per sequence, summed in order afterwards: the result does not depend on
    // how the sequences were spread over threads.
    std::vector<std::vector<T>> partial(grad ? std::size_t(B) : 0);
    parallel_for(B, threads, [&](int b) {
        SeqActs<T> A;
        const int* ids = batch.inputs.data() + std::size_t(b) * std::size_t(n);
        const int* tg = batch.targets.data() + std::size_t(b) * std::size_t(n);
        sequence_forward(params, idx, ids, n, A);
        double s = 0;
        for (int t = 0; t < n; ++t) {
            if (tg[t] < 0) continue;
            const double l = -std::log(std::max(double(A.probs(t, tg[t])), 1e-300));
            s += l;
            if (per_token_loss) (*per_token_loss)[std::size_t(b) * std::size_t(n) + std::size_t(t)] = l;
        }
        seq_loss[std::size_t(b)] = s;
        if (grad) {
            partial[std::size_t(b)].assign(params.data.size(), T(0));
            sequence_backward(params, idx, ids, tg, n, weight, A, partial[std::size_t(b)]);
        }
    });
    if (grad) {
        grad->config = c;
        grad->layout = params.layout;
        grad->data.assign(params.data.size(), T(0));
        for (const auto& part : partial)
            for (std::size_t i = 0; i < part.size(); ++i) grad->data[i] += part[i];
    }
    double total = 0;
    for (double s : seq_loss) total += s;
    return total / double(scored);
}

std::vector<std::vector<MatT<float>>> attention_patterns(const Params<float>& params,
                                                         const std::vector<int>& ids) {
    Batch b;
    b.B = 1;
    b.n = int(ids.size());
    b.inputs = ids;
    b.targets.assign(ids.size(), -1);
    const TrainConfig& c = params.config;
    b.targets[0] = 0;
    check_batch(c, b);
    SeqActs<float> A;
    sequence_forward(params, layout_index(c), ids.data(), b.n, A);
    std::vector<std::vector<MatT<float>>> out;
    for (auto& L : A.layers) out.push_back(std::move(L.att));
    return out;
}

template Params<float> make_params<float>(const TrainConfig&);
template Params<double> make_params<double>(const TrainConfig&);
template double loss_and_grad<float>(const Params<float>&, const Batch&, Params<float>*, int,
                                     std::vector<double>*);
template double loss_and_grad<double>(const Params<double>&, const Batch&, Params<double>*, int,
                                      std::vector<double>*);

// ---------------------------------------------------------------------------------------------
// AdamW, clipping, schedule
// ---------------------------------------------------------------------------------------------

void adamw_step(std::vector<float>& params, const std::vector<float>& grad, AdamWState& s,
                const AdamWConfig& c, double lr) {
    if (grad.size() != params.size()) throw Error("AdamW: the gradient and the parameters differ in size.");
    if (s.m.size() != params.size()) {
        s.m.assign(params.size(), 0.0f);
        s.v.assign(params.size(), 0.0f);
    }
    s.step += 1;
    const double bc1 = 1.0 - std::pow(c.beta1, double(s.step));
    const double bc2 = 1.0 - std::pow(c.beta2, double(s.step));
    const float decay = float(1.0 - lr * c.weight_decay);
    const float b1 = float(c.beta1), b2 = float(c.beta2);
    const float step_size = float(lr / bc1);
    const float sqrt_bc2 = float(std::sqrt(bc2));
    for (std::size_t i = 0; i < params.size(); ++i) {
        const float g = grad[i];
        s.m[i] = b1 * s.m[i] + (1.0f - b1) * g;
        s.v[i] = b2 * s.v[i] + (1.0f - b2) * g * g;
        params[i] *= decay;
        const float denom = std::sqrt(s.v[i]) / sqrt_bc2 + float(c.eps);
        params[i] -= step_size * s.m[i] / denom;
    }
}

double clip_grad_norm(std::vector<float>& grad, double max_norm) {
    double sq = 0;
    for (float g : grad) sq += double(g) * double(g);
    const double norm = std::sqrt(sq);
    if (max_norm > 0 && norm > max_norm) {
        const float k = float(max_norm / (norm + 1e-6));
        for (float& g : grad) g *= k;
    }
    return norm;
}

double lr_schedule(long step, long warmup, long total, double lr, double min_ratio) {
    if (warmup > 0 && step < warmup) return lr * double(step + 1) / double(warmup);
    if (total <= warmup) return lr;
    const double progress = std::min(1.0, double(step - warmup) / double(total - warmup));
    const double min_lr = lr * min_ratio;
    return min_lr + 0.5 * (lr - min_lr) * (1.0 + std::cos(3.14159265358979323846 * progress));
}

}  // namespace attnviz

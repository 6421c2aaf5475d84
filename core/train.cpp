// The trainable attention-only GPT-2-layout decoder: forward with kept activations, backward beside
// each forward, AdamW. See core/train.hpp for the shapes.
#include "core/train.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/architecture.hpp"
#include "core/error.hpp"
#include "core/train_kernels.hpp"

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
    if (c.norm != NormKind::LayerNorm && c.norm != NormKind::RMSNorm)
        throw ConfigError("Training option norm must be layernorm or rmsnorm (or no norm at all).");
    if (c.mlp == MlpKind::Auto) throw ConfigError("Training option mlp must be none, gelu or swiglu.");
    if (c.positions == PositionKind::Auto)
        throw ConfigError("Training option positions must be learned, sinusoidal or rope.");
    if (c.d_ff != 0) check_range("d_ff", c.d_ff, 1, 1024);
    if (c.positions == PositionKind::Rope && (c.d_model / c.n_head) % 2 != 0)
        throw ConfigError("Training option positions rope needs an even head width; d_model / heads is " +
                          std::to_string(c.d_model / c.n_head) + ".");
    if (!(c.norm_eps > 0) || !std::isfinite(c.norm_eps))
        throw ConfigError("Training option norm_eps must be a positive number.");
    check_range("encoder layers", c.encoder_layers, 0, 6);
}

NormKind train_norm(const TrainConfig& c) {
    return c.layer_norm ? c.norm : NormKind::None;
}
int train_d_ff(const TrainConfig& c) {
    return c.d_ff > 0 ? c.d_ff : 4 * c.d_model;
}
bool llama_layout(const TrainConfig& c) {
    return train_architecture(c).family == ModelFamily::Llama;
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
    if (c.encoder_layers > 0) {  // T5's names and layout (core/train_seq2seq.hpp)
        s2s_detail::t5_layout(c, add);
        return out;
    }
    const int d = c.d_model, f = train_d_ff(c);
    const NormKind nk = train_norm(c);
    const TensorNames& t = train_architecture(c).tensors;  // the checkpoint's names (core/architecture.hpp)
    auto norm = [&](const std::string& p) {
        if (nk == NormKind::None) return;
        add(p + ".weight", {d});
        if (nk == NormKind::LayerNorm) add(p + ".bias", {d});
    };
    // A projection from `in` to `out` features: Conv1D [in, out] + bias [out], or nn.Linear [out, in].
    auto linear = [&](const std::string& p, int in, int out_features) {
        if (t.conv1d) {
            add(p + ".weight", {in, out_features});
            add(p + ".bias", {out_features});
        } else {
            add(p + ".weight", {out_features, in});
        }
    };
    add(t.embed + ".weight", {c.vocab_size, d});
    if (c.positions == PositionKind::Learned) add(t.positions + ".weight", {c.context, d});
    for (int l = 0; l < c.n_layer; ++l) {
        const std::string p = t.block_prefix(l);
        norm(p + t.attn_norm);
        if (!t.qkv.empty()) {
            linear(p + t.qkv, d, 3 * d);
        } else {  // q, k, v adjacent: together one [3d, d] matrix
            linear(p + t.q, d, d);
            linear(p + t.k, d, d);
            linear(p + t.v, d, d);
        }
        linear(p + t.o, d, d);
        if (c.mlp != MlpKind::None) {
            norm(p + t.mlp_norm);
            if (c.mlp == MlpKind::SwiGLU) {  // gate and up adjacent: together one [2f, d] matrix
                linear(p + t.gate, d, f);
                linear(p + t.up, d, f);
                linear(p + t.down, f, d);
            } else {
                linear(p + t.fc, d, f);
                linear(p + t.proj, f, d);
            }
        }
    }
    norm(t.final_norm);
    if (!c.tied) add(t.lm_head + ".weight", {c.vocab_size, d});
    return out;
}

std::size_t param_count(const TrainConfig& c) {
    const auto layout = param_layout(c);
    return layout.back().offset + layout.back().size;
}

namespace {
bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
}  // namespace

namespace {

// T5's initialisation (transformers' T5PreTrainedModel._init_weights, factor 1): embeddings N(0, 1);
// q N(0, (d·dh)^−½) (the scores are not scaled), k and v N(0, d^−½), o N(0, (h·dh)^−½), wi N(0, d^−½),
// wo N(0, f^−½), the position biases N(0, d^−½), norm gains 1; lm_head N(0, d^−½) (T5's 1 would start
// the logits at a spread of √d).
Params<float> init_t5_params(const TrainConfig& c, std::uint64_t seed) {
    Params<float> p = make_params<float>(c);
    std::mt19937_64 rng(seed);
    const double d = c.d_model, dh = double(c.d_model) / c.n_head, f = train_d_ff(c);
    for (const ParamView& v : p.layout) {
        float* x = p.data.data() + v.offset;
        const std::string& name = v.name;
        auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
        double sd = 1.0;
        if (v.shape.size() == 1) {
            std::fill(x, x + v.size, 1.0f);
            continue;
        }
        if (has(".q.weight")) sd = 1.0 / std::sqrt(d * dh);
        else if (has(".k.weight") || has(".v.weight") || has("wi_") || has("relative_attention_bias") ||
                 has("lm_head"))
            sd = 1.0 / std::sqrt(d);
        else if (has(".o.weight")) sd = 1.0 / std::sqrt(dh * c.n_head);
        else if (has(".wo.weight")) sd = 1.0 / std::sqrt(f);
        std::normal_distribution<float> normal(0.0f, float(sd));
        for (std::size_t i = 0; i < v.size; ++i) x[i] = normal(rng);
    }
    return p;
}

}  // namespace

Params<float> init_params(const TrainConfig& config, std::uint64_t seed) {
    if (config.encoder_layers > 0) return init_t5_params(config, seed);
    Params<float> p = make_params<float>(config);
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    const float proj_scale = 1.0f / std::sqrt(2.0f * float(config.n_layer));
    for (const ParamView& v : p.layout) {
        float* x = p.data.data() + v.offset;
        if (v.shape.size() == 1) {  // norm gains 1, biases 0
            std::fill(x, x + v.size, ends_with(v.name, ".weight") ? 1.0f : 0.0f);
        } else {
            const bool proj = v.name.find("c_proj") != std::string::npos ||
                              v.name.find("o_proj") != std::string::npos ||
                              v.name.find("down_proj") != std::string::npos;
            const float scale = proj ? proj_scale : 1.0f;
            for (std::size_t i = 0; i < v.size; ++i) x[i] = normal(rng) * scale;
        }
    }
    return p;
}

std::vector<std::vector<MatT<float>>> attention_patterns(const Params<float>& params,
                                                         const std::vector<int>& ids) {
    using namespace train_detail;
    Batch b;
    b.B = 1;
    b.n = int(ids.size());
    b.inputs = ids;
    b.targets.assign(ids.size(), -1);
    const TrainConfig& c = params.config;
    if (c.encoder_layers > 0)
        throw ConfigError("attention_patterns: an encoder-decoder's are cross_attention_patterns.");
    b.targets[0] = 0;
    check_batch(c, b);
    SeqActs<float> A;
    const LayoutIdx idx = layout_index(c, params.layout);
    const DecoderWeights<float> w = train_weights(params, idx);
    sequence_forward(w, make_tables<float>(w.shape, c.context), ids.data(), 1, b.n, A);
    std::vector<std::vector<MatT<float>>> out;
    for (auto& L : A.layers) out.push_back(std::move(L.att));
    return out;
}

std::vector<std::vector<MatT<float>>> cross_attention_patterns(const Params<float>& params,
                                                               const std::vector<int>& source,
                                                               const std::vector<int>& target) {
    using namespace s2s_detail;
    const TrainConfig& c = params.config;
    if (c.encoder_layers <= 0) throw ConfigError("cross_attention_patterns: the model has no encoder.");
    Batch b;
    b.B = 1;
    b.n = int(target.size());
    b.m = int(source.size());
    b.inputs = target;
    b.targets.assign(target.size(), -1);
    b.source = source;
    s2s_detail::check_batch(c, b);
    const Idx idx = s2s_detail::layout_index(c, params.layout);
    Acts<float> A;
    seq_forward(weights(params, idx), source.data(), b.m, target.data(), b.n, 1, A, false);
    std::vector<std::vector<MatT<float>>> out;
    for (auto& L : A.D.layers) out.push_back(std::move(L.catt));
    return out;
}

std::vector<double> next_token_logits(const Params<float>& params, const std::vector<int>& ids) {
    using namespace train_detail;
    const TrainConfig& c = params.config;
    if (c.encoder_layers > 0) throw ConfigError("next_token_logits: the model is an encoder-decoder.");
    if (ids.empty() || int(ids.size()) > c.context)
        throw ConfigError("next_token_logits: 1 to " + std::to_string(c.context) + " ids, not " +
                          std::to_string(ids.size()));
    for (int id : ids)
        if (id < 0 || id >= c.vocab_size)
            throw ConfigError("next_token_logits: an id outside the vocabulary");
    SeqActs<float> A;
    const LayoutIdx idx = layout_index(c, params.layout);
    const DecoderWeights<float> w = train_weights(params, idx);
    decoder_forward(w, make_tables<float>(w.shape, c.context), ids.data(), 1, int(ids.size()), A,
                    ForwardOptions<float>{});
    const Eigen::Index last = A.logits.rows() - 1;
    std::vector<double> out(std::size_t(A.logits.cols()));
    for (Eigen::Index v = 0; v < A.logits.cols(); ++v) out[std::size_t(v)] = double(A.logits(last, v));
    return out;
}

// float only: the double instantiations are the core tests' (tests/core/train_double.cpp).
template Params<float> make_params<float>(const TrainConfig&);
template double loss_and_grad<float>(const Params<float>&, const Batch&, Params<float>*, int,
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
    adamw_update(params.data(), grad.data(), s.m.data(), s.v.data(), params.size(), s.step, c, lr);
}

void adamw_update(float* params, const float* grad, float* m_buf, float* v_buf, std::size_t n, long step,
                  const AdamWConfig& c, double lr) {
    const double bc1 = 1.0 - std::pow(c.beta1, double(step));
    const double bc2 = 1.0 - std::pow(c.beta2, double(step));
    const float decay = float(1.0 - lr * c.weight_decay);
    const float b1 = float(c.beta1), b2 = float(c.beta2);
    const float step_size = float(lr / bc1);
    const float sqrt_bc2 = float(std::sqrt(bc2));
    const float eps = float(c.eps);
    // m ← β₁m + (1 − β₁)g;  v ← β₂v + (1 − β₂)g²;  p ← p·decay − step·m / (√v / √bc₂ + eps).
    // A plain loop over restrict pointers: the compiler vectorises it (train.cpp is compiled with
    // -fno-math-errno, so sqrt needs no errno check) and forms the same fused multiply-adds in the
    // vector body and the scalar remainder. (Eigen's array maps were faster to write but not
    // reproducible: which elements they do in scalar code depends on the buffer's address, and their
    // scalar and packet code round a·x + b·y differently.)
    float* __restrict p = params;
    float* __restrict m = m_buf;
    float* __restrict v = v_buf;
    const float* __restrict g = grad;
    for (std::size_t i = 0; i < n; ++i) {
        m[i] = b1 * m[i] + (1.0f - b1) * g[i];
        v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
        const float denom = std::sqrt(v[i]) / sqrt_bc2 + eps;
        p[i] = p[i] * decay - step_size * m[i] / denom;
    }
}

double clip_grad_norm(std::vector<float>& grad, double max_norm) {
    return clip_grad_norm(grad.data(), grad.size(), max_norm);
}

double clip_grad_norm(float* grad, std::size_t size, double max_norm) {
    // Σg² in double, 8 interleaved partial sums added in a fixed order (vectorised; the same result
    // wherever the buffer lies).
    const float* __restrict gp = grad;
    double acc[8] = {};
    std::size_t i = 0;
    for (; i + 8 <= size; i += 8)
        for (int l = 0; l < 8; ++l) acc[l] += double(gp[i + l]) * double(gp[i + l]);
    for (int l = 0; i + std::size_t(l) < size; ++l) acc[l] += double(gp[i + l]) * double(gp[i + l]);
    const double sq = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
    const double norm = std::sqrt(sq);
    if (max_norm > 0 && norm > max_norm) {
        const float k = float(max_norm / (norm + 1e-6));
        for (std::size_t j = 0; j < size; ++j) grad[j] *= k;
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

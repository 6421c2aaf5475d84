// Ablation, patching, direct logit attribution and the logit lens: see core/interventions.hpp.
// GCC 12 reports a false -Wmaybe-uninitialized inside its AVX-512 intrinsics when Eigen packs a
// row-major GEMM operand (as in core/model.cpp); it is not about our code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "core/interventions.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "core/decoder.hpp"
#include "core/error.hpp"

namespace attnviz {

std::string head_name(const HeadRef& h) {
    return std::to_string(h.layer) + "." + std::to_string(h.head);
}

void check_head(const HeadRef& h, const ModelSpec& s) {
    if (h.layer < 0 || h.layer >= s.n_layer)
        throw Error("head '" + head_name(h) + "': layer " + std::to_string(h.layer) +
                    " is out of range (the model has layers 0.." + std::to_string(s.n_layer - 1) + ")");
    if (h.head < 0 || h.head >= s.n_head)
        throw Error("head '" + head_name(h) + "': head " + std::to_string(h.head) +
                    " is out of range (the model has heads 0.." + std::to_string(s.n_head - 1) + ")");
}

HeadRef parse_head(const std::string& text, const ModelSpec& s) {
    const std::size_t dot = text.find('.');
    auto number = [&](const std::string& part, int& out) {
        if (part.empty() || part.size() > 6) return false;
        out = 0;
        for (char ch : part) {
            if (ch < '0' || ch > '9') return false;
            out = out * 10 + (ch - '0');
        }
        return true;
    };
    HeadRef h;
    if (dot == std::string::npos || !number(text.substr(0, dot), h.layer) ||
        !number(text.substr(dot + 1), h.head))
        throw Error("head '" + text + "' is not LAYER.HEAD (e.g. 1.4)");
    check_head(h, s);
    return h;
}

const char* ablation_mode_name(AblationMode m) {
    return m == AblationMode::Zero ? "zero" : "mean";
}

namespace {

using nn::M;

struct Prepared {
    DecoderWeights<float> w;
    Tables<float> tab;
    int n = 0;
};

Prepared prepare(const ModelWeights& model, int n) {
    Prepared p;
    p.w = decoder_weights(model);
    p.tab = make_tables<float>(p.w.shape, n);
    p.n = n;
    return p;
}

/// log Σ exp(x) of a row of logits, which it overwrites with exp(x − max x) (as causal_softmax does).
template <typename Row>
double log_sum_exp(Row r) {
    const float mx = r.maxCoeff();
    r = (r - mx).exp();
    return double(mx) + std::log(double(r.sum()));
}

/// The loss of each of S sequences from the final norm's output f [S·n, d], averaged over the
/// predictions i ≥ from. The unembedding runs as one product over all S·n rows (gemm_blocks: the
/// unembedding matrix is packed once per call, not once per block of rows) whose blocks of logits are
/// reduced as they come -- a running max and Σ exp per row -- so the [S·n, V] logits are never stored.
/// The vocabulary is cut in parts of a fixed width, taken by the threads in any order and merged in
/// part order: a row's loss depends only on its own logits, never on S, the threads or the batch.
/// `last` [S, V] (when given) gets each sequence's last row of logits, `tokens` [S][n − 1] every
/// prediction's loss.
std::vector<double> sequence_losses(const DecoderWeights<float>& w, const M<float>& f, int S, int n,
                                    const std::vector<int>& ids, int threads, int from, Mat* last = nullptr,
                                    std::vector<std::vector<double>>* tokens = nullptr) {
    std::vector<double> losses(std::size_t(S), std::numeric_limits<double>::quiet_NaN());
    if (last) last->resize(S, w.shape.vocab);
    if (tokens) tokens->assign(std::size_t(S), std::vector<double>(std::size_t(std::max(0, n - 1))));
    from = std::max(0, from);
    const int d = w.shape.d_model, V = w.shape.vocab, R = S * n;
    constexpr int kPart = 4096;  // vocabulary columns per part (a multiple of gemm_blocks' 256)
    const int parts = (V + kPart - 1) / kPart;
    // per part and row: the running max of the logits and Σ exp(logit − max) over the part's columns
    std::vector<float> part_max(std::size_t(parts) * std::size_t(R), -std::numeric_limits<float>::infinity());
    std::vector<double> part_sum(std::size_t(parts) * std::size_t(R), 0.0);
    std::vector<float> target(std::size_t(R), 0.0f);  // each row's logit of its next token
    auto wanted = [&](int row) {
        const int i = row % n;
        return i < n - 1 && (i >= from || tokens);
    };
    parallel_for(parts, std::max(1, std::min(threads, parts)), [&](int p) {
        const int c0 = p * kPart, width = std::min(kPart, V - c0);
        float* pmax = part_max.data() + std::size_t(p) * std::size_t(R);
        double* psum = part_sum.data() + std::size_t(p) * std::size_t(R);
        alignas(64) float e[256];
        gemm_blocks(R, width, d, GemmOperand{f.data(), long(d), 1},
                    GemmOperand{w.unembed + long(c0) * w.unembed_ld, 1, w.unembed_ld},
                    [&](int i0, int rows, int j0, int cols, const float* c, long ldc) {
                        for (int r = 0; r < rows; ++r) {
                            const int row = i0 + r, i = row % n;
                            const float* x = c + long(r) * ldc;
                            if (last && i == n - 1)
                                std::copy(x, x + cols, last->data() + long(row / n) * V + c0 + j0);
                            if (!wanted(row)) continue;
                            const int t = ids[std::size_t(i + 1)] - c0 - j0;
                            if (t >= 0 && t < cols) target[std::size_t(row)] = x[t];
                            const Eigen::Map<const Eigen::ArrayXf> xs(x, cols);
                            const float mx = xs.maxCoeff();
                            if (mx > pmax[row]) {  // rescale the sum so far to the new max
                                psum[row] *= std::exp(double(pmax[row]) - double(mx));
                                pmax[row] = mx;
                            }
                            Eigen::Map<Eigen::ArrayXf, Eigen::Aligned64> ex(e, cols);
                            ex = (xs - pmax[row]).exp();
                            psum[row] += double(nn::lane_sum<float>(cols, [&](int j) { return e[j]; }));
                        }
                    });
    });
    std::vector<double> sum(std::size_t(S), 0.0);
    for (int row = 0; row < R; ++row) {
        if (!wanted(row)) continue;
        float mx = -std::numeric_limits<float>::infinity();
        for (int p = 0; p < parts; ++p)
            mx = std::max(mx, part_max[std::size_t(p) * std::size_t(R) + std::size_t(row)]);
        double z = 0;
        for (int p = 0; p < parts; ++p) {
            const std::size_t k = std::size_t(p) * std::size_t(R) + std::size_t(row);
            z += part_sum[k] * std::exp(double(part_max[k]) - double(mx));
        }
        const int s = row / n, i = row % n;
        const double loss = double(mx) + std::log(z) - double(target[std::size_t(row)]);
        if (tokens) (*tokens)[std::size_t(s)][std::size_t(i)] = loss;
        if (i >= from) sum[std::size_t(s)] += loss;
    }
    if (n - 1 > from)
        for (int s = 0; s < S; ++s) losses[std::size_t(s)] = sum[std::size_t(s)] / double(n - 1 - from);
    return losses;
}

/// S copies of one residual [n, d] stacked: [S·n, d].
M<float> repeat_rows(const Mat& x, int S) {
    const Eigen::Index n = x.rows();
    M<float> r(S * n, x.cols());
    for (int s = 0; s < S; ++s) r.middleRows(s * n, n) = x;
    return r;
}

void ablate_block(nn::Block<float>& z, AblationMode mode) {
    if (mode == AblationMode::Zero) {
        z.setZero();
        return;
    }
    // Row mean in double, then every row set to it.
    const Eigen::RowVectorXd mean =
        z.cast<double>().colwise().sum() / double(std::max<Eigen::Index>(1, z.rows()));
    const RowVec m = mean.cast<float>();
    for (Eigen::Index r = 0; r < z.rows(); ++r) z.row(r) = m;
}

/// Runs S sequences from block `first` with the residual `resume` [S·n, d] and the given hooks.
void run_from(const Prepared& p, int first, const M<float>& resume, int S, const ForwardHooks<float>& hooks,
              const InterventionOptions& o, SeqActs<float>& A) {
    ForwardOptions<float> fo;
    fo.keep_layers = false;
    fo.skip_logits = true;  // the losses' unembedding gives the logits needed
    fo.threads = std::max(1, o.threads);
    fo.hooks = &hooks;
    fo.cancel = o.cancel;
    fo.first_layer = first;
    fo.resume = &resume;
    decoder_forward(p.w, p.tab, static_cast<const int*>(nullptr), S, p.n, A, fo);
    if (o.cancel && o.cancel->load()) throw Cancelled();
}

/// Heads per batched forward: up to 4096 rows at once (the working set stays ≈ 4096 × 20 · d floats).
int batch_heads(int n, int h) {
    return std::max(1, std::min(h, 4096 / std::max(1, n)));
}

/// The text of `run` with `change` applied to the output of each of `heads` (checked): the forward
/// resumes at the first of their layers from the run's residual there. Its loss, last logits and
/// per-token losses.
InterventionResult run_changed(const ModelWeights& model, const CleanRun& run,
                               const std::vector<HeadRef>& heads, const InterventionOptions& o,
                               const std::function<void(const HookPoint&, nn::Block<float>&)>& change) {
    const ModelSpec& s = model.spec;
    int first = s.n_layer;
    for (const HeadRef& h : heads) {
        check_head(h, s);
        first = std::min(first, h.layer);
    }
    const int n = int(run.ids.size());
    const Prepared p = prepare(model, n);
    ForwardHooks<float> hooks;
    for (const HeadRef& h : heads) hooks.add(HookStage::head_output, h.layer);
    hooks.call = [&](const HookPoint& pt, nn::Block<float> v) {
        if (std::find(heads.begin(), heads.end(), HeadRef{pt.layer, pt.head}) != heads.end()) change(pt, v);
    };
    const M<float> x = run.resid[std::size_t(first)];
    SeqActs<float> A;
    run_from(p, first, x, 1, hooks, o, A);
    Mat last;  // [1, V]
    std::vector<std::vector<double>> tokens;
    const double loss =
        sequence_losses(p.w, A.f, 1, n, run.ids, std::max(1, o.threads), 0, &last, &tokens)[0];
    return {loss, last.row(0), std::move(tokens[0])};
}

/// Each head of each layer changed alone, batch_heads() heads per forward: sequence q of a batch is
/// `base`'s text resumed at layer l with head j0 + q's output changed by change(l, head, output);
/// read(l, j0, S, A) takes the batch's result (A.f [S·n, d]). o.progress hears after each batch.
void sweep_heads(const Prepared& p, const ModelSpec& s, const CleanRun& base, const InterventionOptions& o,
                 const std::function<void(int, int, nn::Block<float>&)>& change,
                 const std::function<void(int, int, int, const SeqActs<float>&)>& read) {
    const int L = s.n_layer, h = s.n_head;
    const int batch = batch_heads(p.n, h);
    int done = 0;
    for (int l = 0; l < L; ++l)
        for (int j0 = 0; j0 < h; j0 += batch) {
            const int S = std::min(batch, h - j0);
            ForwardHooks<float> hooks;
            hooks.add(HookStage::head_output, l);
            hooks.call = [&](const HookPoint& pt, nn::Block<float> v) {
                if (pt.layer == l && pt.head == j0 + pt.seq) change(l, pt.head, v);
            };
            const M<float> x = repeat_rows(base.resid[std::size_t(l)], S);
            SeqActs<float> A;
            run_from(p, l, x, S, hooks, o, A);
            read(l, j0, S, A);
            done += S;
            if (o.progress) o.progress(done, L * h);
        }
}

void check_same_length(const CleanRun& clean, const CleanRun& corrupt) {
    if (clean.ids.size() != corrupt.ids.size())
        throw Error("the clean text has " + std::to_string(clean.ids.size()) + " tokens, the corrupt text " +
                    std::to_string(corrupt.ids.size()) + ": patching needs the same number");
}

}  // namespace

std::uint64_t intervention_bytes(const ModelSpec& s, int n) {
    const std::uint64_t N = std::uint64_t(std::max(0, n)), f = 4, L = std::uint64_t(s.n_layer);
    const std::uint64_t d = std::uint64_t(s.d_model), h = std::uint64_t(s.n_head),
                        g = std::uint64_t(s.n_kv_head), dh = std::uint64_t(s.d_head),
                        ff = std::uint64_t(s.d_ff), V = std::uint64_t(s.vocab_size);
    const std::uint64_t clean = ((2 * L + 1) * N * d + L * N * h * dh) * f;  // resid, mlp_out, z
    // The batched forward of S sequences: per row the residuals and norms (≈ 8·d), q | k | v, the heads'
    // outputs, the MLP's hidden layer; S·h weight matrices n×n; the last logits, and 32 MiB of headroom
    // for the losses' per-thread product buffers (the logits themselves are never all stored).
    const std::uint64_t S = std::uint64_t(batch_heads(n, s.n_head)), rows = S * N;
    const std::uint64_t forward =
        (rows * (8 * d + (2 * h + 2 * g) * dh + 3 * ff) + S * h * N * N + S * V) * f;
    return 2 * clean + forward + (std::uint64_t(1) << 25) + V * f;
}

double text_loss(const Mat& logits, const std::vector<int>& ids) {
    const Eigen::Index n = logits.rows();
    if (n < 2 || std::size_t(n) != ids.size()) return std::numeric_limits<double>::quiet_NaN();
    double sum = 0;
    RowVec row;  // [V]
    for (Eigen::Index i = 0; i + 1 < n; ++i) {
        row = logits.row(i);
        sum += log_sum_exp(row.array()) - double(logits(i, ids[std::size_t(i + 1)]));
    }
    return sum / double(n - 1);
}

double mean_loss(const std::vector<double>& token_loss, int from) {
    from = std::max(0, from);
    if (std::size_t(from) >= token_loss.size()) return std::numeric_limits<double>::quiet_NaN();
    double sum = 0;
    for (std::size_t i = std::size_t(from); i < token_loss.size(); ++i) sum += token_loss[i];
    return sum / double(token_loss.size() - std::size_t(from));
}

double logit_difference(const RowVec& logits, int answer, int wrong) {
    if (answer < 0 || answer >= logits.size() || wrong < 0 || wrong >= logits.size())
        throw Error("logit_difference: token outside the vocabulary");
    return double(logits(answer)) - double(logits(wrong));
}

CleanRun clean_run(const ModelWeights& model, const std::vector<int>& ids, const InterventionOptions& o) {
    const ModelSpec& s = model.spec;
    check_token_ids(s, ids);
    const int n = int(ids.size()), L = s.n_layer, dh = s.d_head;
    const Prepared p = prepare(model, n);
    CleanRun run;
    run.ids = ids;
    run.resid.resize(std::size_t(L + 1));
    run.z.assign(std::size_t(L), Mat(n, s.n_head * dh));
    run.mlp_out.resize(std::size_t(L));
    const M<float> x0 = decoder_embed(p.w, p.tab, ids.data(), 1, n);
    run.resid[0] = x0;
    ForwardHooks<float> hooks;
    for (int l = 0; l < L; ++l)
        for (HookStage st : {HookStage::head_output, HookStage::mlp_out, HookStage::resid_post})
            hooks.add(st, l);
    hooks.call = [&](const HookPoint& pt, nn::Block<float> v) {
        const std::size_t l = std::size_t(pt.layer);
        if (pt.stage == HookStage::head_output)  // from several threads: each its own columns
            run.z[l].middleCols(pt.head * dh, dh) = v;
        else if (pt.stage == HookStage::mlp_out)
            run.mlp_out[l] = v;
        else if (pt.stage == HookStage::resid_post)
            run.resid[l + 1] = v;
    };
    SeqActs<float> A;
    run_from(p, 0, x0, 1, hooks, o, A);
    Mat last;  // [1, V]
    std::vector<std::vector<double>> tokens;
    run.loss = sequence_losses(p.w, A.f, 1, n, ids, std::max(1, o.threads), 0, &last, &tokens)[0];
    run.last_logits = last.row(0);
    run.token_loss = std::move(tokens[0]);
    return run;
}

InterventionResult run_ablated(const ModelWeights& model, const CleanRun& clean,
                               const std::vector<HeadRef>& heads, AblationMode mode,
                               const InterventionOptions& o) {
    if (heads.empty()) return {clean.loss, clean.last_logits, clean.token_loss};
    return run_changed(model, clean, heads, o,
                       [&](const HookPoint&, nn::Block<float>& v) { ablate_block(v, mode); });
}

Eigen::MatrixXd ablation_sweep(const ModelWeights& model, const CleanRun& clean, AblationMode mode,
                               const InterventionOptions& o) {
    const int n = int(clean.ids.size());
    const Prepared p = prepare(model, n);
    Eigen::MatrixXd loss(model.spec.n_layer, model.spec.n_head);
    sweep_heads(
        p, model.spec, clean, o, [&](int, int, nn::Block<float>& v) { ablate_block(v, mode); },
        [&](int l, int j0, int S, const SeqActs<float>& A) {
            const std::vector<double> ls =
                sequence_losses(p.w, A.f, S, n, clean.ids, std::max(1, o.threads), o.loss_from);
            for (int q = 0; q < S; ++q) loss(l, j0 + q) = ls[std::size_t(q)];
        });
    return loss;
}

InterventionResult run_patched(const ModelWeights& model, const CleanRun& source, const CleanRun& target,
                               const std::vector<HeadRef>& heads, const InterventionOptions& o) {
    check_same_length(source, target);
    if (heads.empty()) return {target.loss, target.last_logits, target.token_loss};
    const int dh = model.spec.d_head;
    return run_changed(model, target, heads, o, [&](const HookPoint& pt, nn::Block<float>& v) {
        v = source.z[std::size_t(pt.layer)].middleCols(pt.head * dh, dh);
    });
}

PatchSweep patch_sweep(const ModelWeights& model, const CleanRun& clean, const CleanRun& corrupt, int answer,
                       int wrong, const InterventionOptions& o) {
    check_same_length(clean, corrupt);
    const ModelSpec& s = model.spec;
    const int n = int(clean.ids.size()), L = s.n_layer, h = s.n_head, dh = s.d_head;
    PatchSweep r;
    r.m_clean = logit_difference(clean.last_logits, answer, wrong);
    r.m_corrupt = logit_difference(corrupt.last_logits, answer, wrong);
    r.m_patched.resize(L, h);
    const Prepared p = prepare(model, n);
    // m needs two logits of each last row: two dot products, not the whole unembedding
    const int d = s.d_model;
    const Eigen::RowVectorXd ua = Eigen::Map<const RowVec>(
                                      model.lm_head.data + long(answer) * model.lm_head.stride, d)
                                      .cast<double>(),
                             uw = Eigen::Map<const RowVec>(
                                      model.lm_head.data + long(wrong) * model.lm_head.stride, d)
                                      .cast<double>();
    sweep_heads(
        p, s, corrupt, o,
        [&](int l, int head, nn::Block<float>& v) { v = clean.z[std::size_t(l)].middleCols(head * dh, dh); },
        [&](int l, int j0, int S, const SeqActs<float>& A) {
            for (int q = 0; q < S; ++q) {
                const Eigen::RowVectorXd f = A.f.row(long(q) * n + n - 1).cast<double>();
                r.m_patched(l, j0 + q) = f.dot(ua) - f.dot(uw);
            }
        });
    const double span = r.m_clean - r.m_corrupt;
    r.patched_fraction = span != 0
                             ? Eigen::MatrixXd((r.m_patched.array() - r.m_corrupt) / span)
                             : Eigen::MatrixXd::Constant(L, h, std::numeric_limits<double>::quiet_NaN());
    return r;
}

namespace {

/// The final norm's linear part with the whole residual x's scale, on a part p: [d] → [d].
Eigen::VectorXd norm_linear(const ModelWeights& model, const Eigen::VectorXd& x,
                            const Eigen::VectorXd& part) {
    const NormKind kind = norm_kind(model.spec);
    if (kind == NormKind::None) return part;
    const int d = model.spec.d_model;
    const Eigen::Map<const Eigen::VectorXf> gain(model.ln_f.weight, d);
    const double eps = model.spec.norm_eps;
    if (kind == NormKind::LayerNorm) {
        const double mu = x.mean(), var = (x.array() - mu).square().mean();
        return ((part.array() - part.mean()) / std::sqrt(var + eps) * gain.cast<double>().array()).matrix();
    }
    const double ms = x.array().square().mean();
    return (part.array() / std::sqrt(ms + eps) * gain.cast<double>().array()).matrix();
}

}  // namespace

Attribution direct_logit_attribution(const ModelWeights& model, const CleanRun& run, int target) {
    const ModelSpec& s = model.spec;
    if (target < 0 || target >= s.vocab_size)
        throw Error("target token id " + std::to_string(target) + " is outside the vocabulary");
    const int n = int(run.ids.size()), L = s.n_layer, h = s.n_head, dh = s.d_head, d = s.d_model;
    const Eigen::Index last = n - 1;
    const Eigen::VectorXd x = run.resid[std::size_t(L)].row(last).transpose().cast<double>();
    const Eigen::VectorXd u =
        Eigen::Map<const Eigen::VectorXf>(model.lm_head.data + long(target) * model.lm_head.stride, d)
            .cast<double>();
    Attribution a;
    a.target = target;
    a.logit = double(run.last_logits(target));
    auto add = [&](AttributionPart::Kind kind, int layer, int head, std::string name,
                   const Eigen::VectorXd& part) {
        AttributionPart pt;
        pt.kind = kind;
        pt.layer = layer;
        pt.head = head;
        pt.name = std::move(name);
        pt.value = norm_linear(model, x, part).dot(u);
        a.parts.push_back(std::move(pt));
    };
    add(AttributionPart::Kind::Embed, -1, -1, "embed", run.resid[0].row(last).transpose().cast<double>());
    const bool mlp = mlp_kind(s) != MlpKind::None;
    for (int l = 0; l < L; ++l) {
        const BlockWeights& b = model.blocks[std::size_t(l)];
        const auto W = b.o.weight.map();  // nn.Linear [d, h·dh] or Conv1D [h·dh, d]
        for (int j = 0; j < h; ++j) {
            const Eigen::VectorXd zj =
                run.z[std::size_t(l)].row(last).segment(j * dh, dh).transpose().cast<double>();  // [dh]
            const Eigen::VectorXd part =
                b.o.out_in ? Eigen::VectorXd(W.middleCols(j * dh, dh).cast<double>() * zj)
                           : Eigen::VectorXd(W.middleRows(j * dh, dh).cast<double>().transpose() * zj);
            add(AttributionPart::Kind::Head, l, j, head_name({l, j}), part);
        }
        if (b.o.bias)
            add(AttributionPart::Kind::AttnBias, l, -1, "attn_bias." + std::to_string(l),
                Eigen::Map<const Eigen::VectorXf>(b.o.bias, d).cast<double>());
        if (mlp)
            add(AttributionPart::Kind::Mlp, l, -1, "mlp." + std::to_string(l),
                run.mlp_out[std::size_t(l)].row(last).transpose().cast<double>());
    }
    if (norm_kind(s) == NormKind::LayerNorm && model.ln_f.bias) {
        AttributionPart pt;
        pt.kind = AttributionPart::Kind::NormBias;
        pt.name = "ln_f_bias";
        pt.value = Eigen::Map<const Eigen::VectorXf>(model.ln_f.bias, d).cast<double>().dot(u);
        a.parts.push_back(std::move(pt));
    }
    a.parts_sum = 0;
    for (const AttributionPart& pt : a.parts) a.parts_sum += pt.value;
    return a;
}

std::vector<LensRow> logit_lens(const ModelWeights& model, const CleanRun& run, int k) {
    const ModelSpec& s = model.spec;
    const int n = int(run.ids.size()), L = s.n_layer, V = s.vocab_size;
    k = std::max(1, std::min(k, V));
    Mat rows(L + 1, s.d_model);  // the last position's residual after the embeddings and each block
    for (int l = 0; l <= L; ++l) rows.row(l) = run.resid[std::size_t(l)].row(n - 1);
    const Mat f = apply_norm(rows, model.ln_f, norm_kind(s), s.norm_eps);
    Linear unembed;
    unembed.weight = model.lm_head;
    unembed.out_in = true;
    const Mat logits = apply_linear(f, unembed);  // [L + 1, V]
    std::vector<LensRow> out;
    std::vector<int> order(static_cast<std::size_t>(V));
    for (int l = 0; l <= L; ++l) {
        const auto x = logits.row(l);
        const double mx = double(x.maxCoeff());
        const double z = (x.cast<double>().array() - mx).exp().sum();
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + k, order.end(),
                          [&](int a, int b) { return x(a) > x(b) || (x(a) == x(b) && a < b); });
        LensRow r;
        r.layer = l - 1;
        for (int i = 0; i < k; ++i) {
            r.ids.push_back(order[std::size_t(i)]);
            r.probs.push_back(std::exp(double(x(order[std::size_t(i)])) - mx) / z);
        }
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace attnviz

// The forward's encoder options (core/decoder.hpp): bidirectional attention, post-norm blocks, the
// embeddings' LayerNorm, token types, a position offset, GELU's erf form and a masked-LM head, all at
// once on a tiny random model in double, against a plain forward written here from the formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/decoder.hpp"

namespace attnviz {
namespace {

using Md = nn::M<double>;

struct Rand {
    unsigned s;
    double next() {
        s = s * 1664525u + 1013904223u;
        return (double(s >> 8) / double(1u << 24)) * 2.0 - 1.0;  // in [-1, 1)
    }
    std::vector<double> vec(std::size_t n, double scale = 1.0, double shift = 0.0) {
        std::vector<double> v(n);
        for (double& x : v) x = shift + scale * next();
        return v;
    }
};

Md layer_norm(const Md& x, const double* g, const double* b, double eps) {
    Md y(x.rows(), x.cols());
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
        const double mean = x.row(i).mean();
        const double var = (x.row(i).array() - mean).square().mean();
        for (Eigen::Index j = 0; j < x.cols(); ++j) y(i, j) = (x(i, j) - mean) / std::sqrt(var + eps) * g[j] + b[j];
    }
    return y;
}

// nn.Linear: W [out, in], y = x·Wᵀ + b
Md linear(const Md& x, const std::vector<double>& W, const std::vector<double>& b, int in, int out) {
    const Eigen::Map<const Md> w(W.data(), out, in);
    Md y = x * w.transpose();
    for (Eigen::Index i = 0; i < y.rows(); ++i)
        for (int j = 0; j < out; ++j) y(i, j) += b[std::size_t(j)];
    return y;
}

Md gelu_erf(const Md& x) {
    return x.unaryExpr([](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); });
}

struct TinyEncoder {
    int V = 11, d = 8, h = 2, dh = 4, f = 12, L = 2, types = 2, offset = 2, context = 9;
    double eps = 1e-12;
    std::vector<double> wte, wpe, wtt, lne_g, lne_b, head_w, head_b, lnf_g, lnf_b, bias;
    struct Layer {
        std::vector<double> q, qb, k, kb, v, vb, o, ob, ln1_g, ln1_b, fc, fcb, proj, projb, ln2_g, ln2_b;
    };
    std::vector<Layer> layers;

    TinyEncoder() {
        Rand r{42};
        wte = r.vec(std::size_t(V * d));
        wpe = r.vec(std::size_t((context + offset) * d));
        wtt = r.vec(std::size_t(types * d));
        lne_g = r.vec(std::size_t(d), 0.2, 1.0);
        lne_b = r.vec(std::size_t(d), 0.1);
        head_w = r.vec(std::size_t(d * d), 0.4);
        head_b = r.vec(std::size_t(d), 0.1);
        lnf_g = r.vec(std::size_t(d), 0.2, 1.0);
        lnf_b = r.vec(std::size_t(d), 0.1);
        bias = r.vec(std::size_t(V), 0.3);
        for (int l = 0; l < L; ++l) {
            Layer y;
            for (auto* w : {&y.q, &y.k, &y.v, &y.o}) *w = r.vec(std::size_t(d * d), 0.5);
            for (auto* b : {&y.qb, &y.kb, &y.vb, &y.ob}) *b = r.vec(std::size_t(d), 0.1);
            y.fc = r.vec(std::size_t(f * d), 0.5);
            y.fcb = r.vec(std::size_t(f), 0.1);
            y.proj = r.vec(std::size_t(d * f), 0.5);
            y.projb = r.vec(std::size_t(d), 0.1);
            y.ln1_g = r.vec(std::size_t(d), 0.2, 1.0);
            y.ln1_b = r.vec(std::size_t(d), 0.1);
            y.ln2_g = r.vec(std::size_t(d), 0.2, 1.0);
            y.ln2_b = r.vec(std::size_t(d), 0.1);
            layers.push_back(y);
        }
    }

    DecoderWeights<double> view() const {
        DecoderWeights<double> w;
        DecoderShape& c = w.shape;
        c.n_layer = L;
        c.n_head = c.n_kv_head = h;
        c.d_model = d;
        c.d_head = dh;
        c.d_ff = f;
        c.vocab = V;
        c.context = context;
        c.norm = NormKind::LayerNorm;
        c.mlp = MlpKind::GeluErf;
        c.positions = PositionKind::Learned;
        c.eps = eps;
        c.causal = false;
        c.post_norm = true;
        c.position_offset = offset;
        c.head_act = MlpKind::GeluErf;
        w.wte = wte.data();
        w.wte_ld = d;
        w.wpe = wpe.data();
        w.wpe_ld = d;
        w.wtt = wtt.data();
        w.wtt_ld = d;
        w.ln_embed = {lne_g.data(), lne_b.data()};
        w.head = {head_w.data(), head_b.data(), nn::LinearShape{d, d, true}};
        w.ln_f = {lnf_g.data(), lnf_b.data()};
        w.unembed = wte.data();  // tied
        w.unembed_ld = d;
        w.unembed_b = bias.data();
        for (const Layer& y : layers) {
            BlockW<double> b;
            b.q = {y.q.data(), y.qb.data(), nn::LinearShape{d, d, true}};
            b.k = {y.k.data(), y.kb.data(), nn::LinearShape{d, d, true}};
            b.v = {y.v.data(), y.vb.data(), nn::LinearShape{d, d, true}};
            b.o = {y.o.data(), y.ob.data(), nn::LinearShape{d, d, true}};
            b.fc = {y.fc.data(), y.fcb.data(), nn::LinearShape{d, f, true}};
            b.proj = {y.proj.data(), y.projb.data(), nn::LinearShape{f, d, true}};
            b.ln_1 = {y.ln1_g.data(), y.ln1_b.data()};
            b.ln_2 = {y.ln2_g.data(), y.ln2_b.data()};
            w.blocks.push_back(b);
        }
        return w;
    }

    // BERT's forward, written from the formulas: the attention weights of every layer and head, the logits.
    Md reference(const std::vector<int>& ids, const std::vector<int>& tt, std::vector<Md>& weights) const {
        const int n = int(ids.size());
        Md x(n, d);
        for (int t = 0; t < n; ++t)
            for (int j = 0; j < d; ++j)
                x(t, j) = wte[std::size_t(ids[std::size_t(t)] * d + j)] +
                          wtt[std::size_t(tt[std::size_t(t)] * d + j)] + wpe[std::size_t((t + offset) * d + j)];
        x = layer_norm(x, lne_g.data(), lne_b.data(), eps);
        for (const Layer& y : layers) {
            const Md q = linear(x, y.q, y.qb, d, d), k = linear(x, y.k, y.kb, d, d), v = linear(x, y.v, y.vb, d, d);
            Md heads(n, d);
            for (int j = 0; j < h; ++j) {
                Md s = q.middleCols(j * dh, dh) * k.middleCols(j * dh, dh).transpose() / std::sqrt(double(dh));
                for (int i = 0; i < n; ++i) {
                    s.row(i).array() = (s.row(i).array() - s.row(i).maxCoeff()).exp();
                    s.row(i) /= s.row(i).sum();
                }
                weights.push_back(s);
                heads.middleCols(j * dh, dh) = s * v.middleCols(j * dh, dh);
            }
            x = layer_norm(x + linear(heads, y.o, y.ob, d, d), y.ln1_g.data(), y.ln1_b.data(), eps);
            const Md m = linear(gelu_erf(linear(x, y.fc, y.fcb, d, f)), y.proj, y.projb, f, d);
            x = layer_norm(x + m, y.ln2_g.data(), y.ln2_b.data(), eps);
        }
        const Md t = layer_norm(gelu_erf(linear(x, head_w, head_b, d, d)), lnf_g.data(), lnf_b.data(), eps);
        return linear(t, wte, bias, d, V);
    }
};

TEST(EncoderOptions, TheForwardIsBertsFromTheFormulas) {
    const TinyEncoder m;
    const DecoderWeights<double> w = m.view();
    const std::vector<int> ids = {1, 5, 9, 2, 7, 3}, types = {0, 0, 0, 1, 1, 1};
    const int n = int(ids.size());
    std::vector<Md> expected_weights;
    const Md expected = m.reference(ids, types, expected_weights);

    ForwardHooks<double> hooks;
    std::vector<Md> weights(std::size_t(m.L * m.h));
    for (int l = 0; l < m.L; ++l) hooks.add(HookStage::weights, l);
    hooks.call = [&](const HookPoint& p, nn::Block<double> v) {
        weights[std::size_t(p.layer * m.h + p.head)] = v;
    };
    ForwardOptions<double> opt;
    opt.hooks = &hooks;
    opt.token_types = types.data();
    SeqActs<double> A;
    decoder_forward(w, make_tables<double>(w.shape, n), ids.data(), 1, n, A, opt);
    ASSERT_EQ(A.logits.rows(), n);
    ASSERT_EQ(A.logits.cols(), m.V);
    for (int i = 0; i < n; ++i)
        for (int v = 0; v < m.V; ++v)
            EXPECT_NEAR(A.logits(i, v), expected(i, v), 1e-10) << "logits(" << i << ", " << v << ")";
    for (std::size_t k = 0; k < weights.size(); ++k)
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                EXPECT_NEAR(weights[k](i, j), expected_weights[k](i, j), 1e-12)
                    << "layer " << k / 2 << " head " << k % 2 << " weights(" << i << ", " << j << ")";
                EXPECT_GT(weights[k](i, j), 0.0) << "bidirectional: every key has weight";
            }
}

TEST(EncoderOptions, TokenTypesAndThePositionOffsetChangeTheInput) {
    const TinyEncoder m;
    DecoderWeights<double> w = m.view();
    const std::vector<int> ids = {1, 5, 9};
    const Tables<double> tab = make_tables<double>(w.shape, 3);
    const std::vector<int> zeros = {0, 0, 0}, pair = {0, 1, 1};
    const Md a = decoder_embed(w, tab, ids.data(), 1, 3);  // no types given: segment 0
    EXPECT_EQ((a - decoder_embed(w, tab, ids.data(), 1, 3, zeros.data())).cwiseAbs().maxCoeff(), 0.0);
    const Md b = decoder_embed(w, tab, ids.data(), 1, 3, pair.data());
    EXPECT_EQ((a.row(0) - b.row(0)).cwiseAbs().maxCoeff(), 0.0);
    EXPECT_GT((a.row(2) - b.row(2)).cwiseAbs().maxCoeff(), 1e-3);
    w.shape.position_offset = 0;
    EXPECT_GT((a - decoder_embed(w, tab, ids.data(), 1, 3)).cwiseAbs().maxCoeff(), 1e-3);
}

}  // namespace
}  // namespace attnviz

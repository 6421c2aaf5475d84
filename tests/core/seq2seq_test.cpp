// core/seq2seq.hpp on a tiny random T5-like model in double: a batch of two is the same as two runs of
// one, and a padded source (ForwardOptions::key_lengths) gives the decoder exactly what the unpadded
// source gives it.
#include "core/seq2seq.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <vector>

namespace attnviz {
namespace {

struct TinyT5 {
    std::deque<std::vector<double>> arena;  // the weights' storage (stable addresses)
    unsigned seed = 5;
    Seq2SeqWeights<double> w;
    static constexpr int d = 8, h = 2, dh = 4, f = 12, V = 11, buckets = 8;
    const double* vec(int n, double scale, double mean = 0) {
        arena.emplace_back(std::size_t(n));
        for (double& x : arena.back()) {
            seed = seed * 1664525u + 1013904223u;
            x = mean + scale * ((double(seed >> 8) / double(1u << 24)) * 2.0 - 1.0);
        }
        return arena.back().data();
    }
    LinearW<double> lin(int in, int out) {
        return {vec(in * out, 0.5), nullptr, nn::LinearShape{in, out, true, 0}};
    }
    DecoderWeights<double> stack(bool decoder) {
        DecoderWeights<double> s;
        DecoderShape& c = s.shape;
        c.n_layer = 2;
        c.n_head = c.n_kv_head = h;
        c.d_model = d;
        c.d_head = dh;
        c.d_ff = f;
        c.vocab = V;
        c.context = 64;
        c.norm = NormKind::RMSNorm;
        c.mlp = MlpKind::Relu;
        c.positions = PositionKind::Relative;
        c.eps = 1e-6;
        c.causal = decoder;
        c.cross = decoder;
        c.scale_scores = false;
        c.rel_buckets = buckets;
        c.rel_max_distance = 20;
        s.wte = vec(V * d, 1.0);
        s.wte_ld = d;
        s.rel_bias = vec(buckets * h, 1.0);
        for (int l = 0; l < 2; ++l) {
            BlockW<double> b;
            b.ln_1 = {vec(d, 0.1, 1.0), nullptr};
            b.ln_2 = {vec(d, 0.1, 1.0), nullptr};
            b.q = lin(d, h * dh);
            b.k = lin(d, h * dh);
            b.v = lin(d, h * dh);
            b.o = lin(h * dh, d);
            b.fc = lin(d, f);
            b.proj = lin(f, d);
            if (decoder) {
                b.ln_cross = {vec(d, 0.1, 1.0), nullptr};
                b.cq = lin(d, h * dh);
                b.ck = lin(d, h * dh);
                b.cv = lin(d, h * dh);
                b.co = lin(h * dh, d);
            }
            s.blocks.push_back(b);
        }
        s.ln_f = {vec(d, 0.1, 1.0), nullptr};
        if (decoder) {
            s.unembed = s.wte;
            s.unembed_ld = d;
        }
        return s;
    }
    TinyT5() {
        w.encoder = stack(false);
        w.decoder = stack(true);
        w.decoder.wte = w.encoder.wte;  // shared
        w.decoder.unembed = w.encoder.wte;
    }
};

/// Decoder logits [S·n, V] for sources src [S·m] and targets tgt [S·n].
nn::M<double> logits(const TinyT5& t, const std::vector<int>& src, int m, const std::vector<int>& tgt, int n,
                     int S, const int* key_lengths = nullptr) {
    ForwardOptions<double> o;
    o.key_lengths = key_lengths;
    SeqActs<double> E, D;
    seq2seq_encode(t.w, src.data(), S, m, E, o);
    seq2seq_decode(t.w, E.f, m, tgt.data(), S, n, D, o);
    return D.logits;
}

TEST(Seq2Seq, ABatchOfTwoIsTwoRunsOfOne) {
    const TinyT5 t;
    const std::vector<int> src = {1, 4, 2, 9, 3, 5, 7, 7, 0, 10}, tgt = {0, 3, 6, 0, 8, 2};
    const nn::M<double> both = logits(t, src, 5, tgt, 3, 2);
    for (int s = 0; s < 2; ++s) {
        const std::vector<int> one_src(src.begin() + 5 * s, src.begin() + 5 * s + 5);
        const std::vector<int> one_tgt(tgt.begin() + 3 * s, tgt.begin() + 3 * s + 3);
        const nn::M<double> one = logits(t, one_src, 5, one_tgt, 3, 1);
        for (int i = 0; i < 3; ++i)
            for (int v = 0; v < TinyT5::V; ++v)
                EXPECT_NEAR(both(s * 3 + i, v), one(i, v), 1e-12)
                    << "sequence " << s << " row " << i << " id " << v;
    }
}

TEST(Seq2Seq, APaddedSourceGivesTheDecoderWhatTheUnpaddedOneGives) {
    const TinyT5 t;
    // Sequence 0: a 3-token source padded to 5 (with tokens that would matter if they were seen).
    const std::vector<int> src = {1, 4, 2, 9, 9, 3, 5, 7, 7, 0}, tgt = {0, 3, 6, 0, 8, 2};
    const int lengths[] = {3, 5};
    const nn::M<double> padded = logits(t, src, 5, tgt, 3, 2, lengths);
    const nn::M<double> alone = logits(t, {1, 4, 2}, 3, {0, 3, 6}, 3, 1);
    for (int i = 0; i < 3; ++i)
        for (int v = 0; v < TinyT5::V; ++v)
            EXPECT_NEAR(padded(i, v), alone(i, v), 1e-12) << "row " << i << " id " << v;
    // Without the lengths the padding is seen, and the logits differ.
    const nn::M<double> unmasked = logits(t, src, 5, tgt, 3, 2);
    EXPECT_GT((unmasked.topRows(3) - alone).cwiseAbs().maxCoeff(), 1e-6);
}

}  // namespace
}  // namespace attnviz

#include "core/layer_weights.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/error.hpp"
#include "core/model.hpp"
#include "core/ops.hpp"
#include "core/presets.hpp"
#include "core/trace_internal.hpp"
#include "core/weight_cache.hpp"

namespace attnviz {

namespace {

std::string dims(Eigen::Index r, Eigen::Index c) {
    return std::to_string(r) + "×" + std::to_string(c);
}

void expect_shape(const std::shared_ptr<const Mat>& M, const std::string& what, Eigen::Index rows,
                  Eigen::Index cols) {
    if (!M) throw Error("layer weights: " + what + " is missing");
    if (M->rows() != rows || M->cols() != cols)
        throw Error("layer weights: " + what + " is " + dims(M->rows(), M->cols()) + ", the config needs " +
                    dims(rows, cols));
}

void expect_bias(const RowVec& b, const std::string& what, Eigen::Index size) {
    if (b.size() != 0 && b.size() != size)
        throw Error("layer weights: " + what + " has " + std::to_string(b.size()) +
                    " entries, the config needs " + std::to_string(size));
}

// Columns [c0, c0 + count) of y = x·W (+ b) as a [in, count] matrix, whatever the checkpoint's layout.
Mat linear_columns(const Linear& L, int c0, int count) {
    if (L.out_in) return L.weight.map().middleRows(c0, count).transpose();  // [in, count]
    return L.weight.map().middleCols(c0, count);                            // [in, count]
}

RowVec bias_slice(const Linear& L, int c0, int count) {
    if (!L.bias) return RowVec();
    return Eigen::Map<const RowVec>(L.bias + c0, count);  // [1, count]
}

}  // namespace

std::uint64_t weight_seed(std::uint64_t seed, int head, WeightSlot slot) {
    auto mix = [](std::uint64_t z) {
        z += 0x9E3779B97F4A7C15ULL;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    };
    return mix(mix(mix(seed) ^ std::uint64_t(head + 1)) ^ static_cast<std::uint64_t>(slot));
}

ScoringParams seeded_scoring_params(const Config& cfg, int head, int d_k) {
    ScoringParams p;
    if (cfg.scoring == Scoring::Additive) {
        const int hid = cfg.resolved_additive_hidden();
        p.W_q = random_normal(d_k, hid, 1.0 / std::sqrt(double(d_k)),
                              weight_seed(cfg.seed, head, WeightSlot::AdditiveW_q));
        p.W_k = random_normal(d_k, hid, 1.0 / std::sqrt(double(d_k)),
                              weight_seed(cfg.seed, head, WeightSlot::AdditiveW_k));
        const Mat w = random_normal(hid, 1, 1.0 / std::sqrt(double(hid)),
                                    weight_seed(cfg.seed, head, WeightSlot::AdditiveW_v));
        p.w_v = w.col(0);
    } else if (cfg.scoring == Scoring::Bilinear) {
        p.W = random_normal(d_k, d_k, 1.0 / std::sqrt(double(d_k)),
                            weight_seed(cfg.seed, head, WeightSlot::Bilinear));
    }
    return p;
}

LayerWeights seeded_layer_weights(const Config& cfg, const std::vector<std::string>& vocab, int positions) {
    const int d = cfg.d_model, h = cfg.heads, d_k = cfg.resolved_d_k(), d_v = cfg.resolved_d_v();
    LayerWeights w;
    w.source = "seeded";
    w.vocab = vocab;
    w.embedding = std::make_shared<const Mat>(embedding_table(vocab, d, cfg.seed));  // [V, d_model]
    if (cfg.positional == Positional::Learned)
        w.positions = std::make_shared<const Mat>(
            learned_pe(positions, d, weight_seed(cfg.seed, -1, WeightSlot::LearnedPE)));  // [P, d_model]
    const double sd = 1.0 / std::sqrt(double(d));  // N(0, 1/d_model): q entries stay ~unit size
    w.heads.resize(std::size_t(h));
    for (int hd = 0; hd < h; ++hd) {
        HeadWeights& H = w.heads[std::size_t(hd)];
        H.W_Q = cached_random_normal(d, d_k, sd, weight_seed(cfg.seed, hd, WeightSlot::W_Q));
        H.W_K = cached_random_normal(d, d_k, sd, weight_seed(cfg.seed, hd, WeightSlot::W_K));
        H.W_V = cached_random_normal(d, d_v, sd, weight_seed(cfg.seed, hd, WeightSlot::W_V));
        H.scoring = seeded_scoring_params(cfg, hd, d_k);
    }
    w.W_O = cached_random_normal(h * d_v, d, 1.0 / std::sqrt(double(h * d_v)),
                                 weight_seed(cfg.seed, 0, WeightSlot::W_O));  // [h·d_v, d_model]
    return w;
}

void apply_designed_heads(LayerWeights& w, const Config& cfg) {
    if (cfg.preset == HeadPreset::None) return;
    Mat table = *w.embedding;  // [V, d_model]
    apply_preset_embedding(table, w.vocab, cfg);
    w.embedding = std::make_shared<const Mat>(std::move(table));
    w.embedding_note = preset_embedding_note(cfg);
    PresetHead ph = preset_head(cfg);
    HeadWeights& H = w.heads.at(std::size_t(kPresetHead));
    H.W_Q = std::make_shared<const Mat>(std::move(ph.W_Q));  // [d_model, d_k]
    H.W_K = std::make_shared<const Mat>(std::move(ph.W_K));  // [d_model, d_k]
    H.designed = std::move(ph.explanation);
    w.source = "designed";
}

LayerWeights layer_weights(const Config& cfg, const std::vector<std::string>& vocab, int positions) {
    LayerWeights w = seeded_layer_weights(cfg, vocab, positions);
    apply_designed_heads(w, cfg);
    return w;
}

LayerWeights checkpoint_layer_weights(const ModelWeights& model, int layer, const Config& cfg,
                                      const std::vector<std::string>& vocab, const std::vector<int>& ids) {
    const ModelSpec& s = model.spec;
    if (layer < 0 || layer >= int(model.blocks.size()))
        throw Error("checkpoint weights: layer " + std::to_string(layer) + " is outside 0.." +
                    std::to_string(int(model.blocks.size()) - 1));
    auto need = [](const std::string& field, int have, int want) {
        if (have != want)
            throw Error("checkpoint weights: " + field + " = " + std::to_string(have) +
                        " but the model has " + std::to_string(want));
    };
    need("d_model", cfg.d_model, s.d_model);
    need("heads", cfg.heads, s.n_head);
    need("d_k", cfg.resolved_d_k(), s.d_head);
    need("d_v", cfg.resolved_d_v(), s.d_head);
    if (vocab.size() != ids.size())
        throw Error("checkpoint weights: " + std::to_string(vocab.size()) + " tokens but " +
                    std::to_string(ids.size()) + " token ids");
    if (cfg.scoring == Scoring::Additive || cfg.scoring == Scoring::Bilinear)
        throw Error("checkpoint weights: a checkpoint has no " + to_string(cfg.scoring) +
                    " scoring parameters; use scaled_dot, dot or a kernel");
    const BlockWeights& b = model.blocks[std::size_t(layer)];
    const int dh = s.d_head, h = s.n_head, group = std::max(1, s.n_head / std::max(1, s.n_kv_head));
    LayerWeights w;
    w.source = "checkpoint: " + s.architecture + " layer " + std::to_string(layer);
    w.vocab = vocab;
    auto E = std::make_shared<Mat>(int(ids.size()), s.d_model);  // [V, d_model]
    for (std::size_t v = 0; v < ids.size(); ++v) {
        if (ids[v] < 0 || ids[v] >= model.wte.rows)
            throw Error("checkpoint weights: token '" + vocab[v] + "' has id " + std::to_string(ids[v]) +
                        ", outside the vocabulary of " + std::to_string(model.wte.rows));
        E->row(Eigen::Index(v)) = model.wte.map().row(ids[v]);
    }
    w.embedding = std::move(E);
    if (cfg.positional == Positional::Learned) {
        if (model.wpe.empty())
            throw Error("checkpoint weights: learned positions need wpe, which this model lacks");
        w.positions = std::make_shared<const Mat>(model.wpe.map());  // [max_positions, d_model]
    }
    w.heads.resize(std::size_t(h));
    for (int hh = 0; hh < h; ++hh) {
        const int kv = hh / group;
        HeadWeights& H = w.heads[std::size_t(hh)];
        H.W_Q = std::make_shared<const Mat>(linear_columns(b.q, hh * dh, dh));  // [d_model, d_k]
        H.W_K = std::make_shared<const Mat>(linear_columns(b.k, kv * dh, dh));  // [d_model, d_k]
        H.W_V = std::make_shared<const Mat>(linear_columns(b.v, kv * dh, dh));  // [d_model, d_v]
        H.b_Q = bias_slice(b.q, hh * dh, dh);
        H.b_K = bias_slice(b.k, kv * dh, dh);
        H.b_V = bias_slice(b.v, kv * dh, dh);
    }
    w.W_O = std::make_shared<const Mat>(linear_columns(b.o, 0, b.o.out_features()));  // [h·d_v, d_model]
    w.b_O = bias_slice(b.o, 0, b.o.out_features());
    return w;
}

void check_layer_weights(const LayerWeights& w, const Config& cfg, int n, int m) {
    const int d = cfg.d_model, h = cfg.heads, d_k = cfg.resolved_d_k(), d_v = cfg.resolved_d_v();
    expect_shape(w.embedding, "the embedding table", Eigen::Index(w.vocab.size()), d);
    if (cfg.positional == Positional::Learned) {
        if (!w.positions) throw Error("layer weights: learned positional encoding needs a position table");
        if (w.positions->cols() != d || w.positions->rows() < std::max(n, m))
            throw Error("layer weights: the position table is " +
                        dims(w.positions->rows(), w.positions->cols()) + ", the config needs at least " +
                        dims(std::max(n, m), d));
    }
    if (int(w.heads.size()) != h)
        throw Error("layer weights: " + std::to_string(w.heads.size()) + " heads, the config has " +
                    std::to_string(h));
    const int hid = cfg.resolved_additive_hidden();
    for (int hd = 0; hd < h; ++hd) {
        const HeadWeights& H = w.heads[std::size_t(hd)];
        const std::string of = " of head " + std::to_string(hd);
        expect_shape(H.W_Q, "W_Q" + of, d, d_k);
        expect_shape(H.W_K, "W_K" + of, d, d_k);
        expect_shape(H.W_V, "W_V" + of, d, d_v);
        expect_bias(H.b_Q, "b_Q" + of, d_k);
        expect_bias(H.b_K, "b_K" + of, d_k);
        expect_bias(H.b_V, "b_V" + of, d_v);
        const ScoringParams& p = H.scoring;
        if (cfg.attention == AttentionKind::Softmax && cfg.scoring == Scoring::Additive &&
            (p.W_q.rows() != d_k || p.W_q.cols() != hid || p.W_k.rows() != d_k || p.W_k.cols() != hid ||
             p.w_v.size() != hid))
            throw Error("layer weights: the additive scoring parameters" + of +
                        " do not fit d_k = " + std::to_string(d_k) + ", hidden = " + std::to_string(hid));
        if (cfg.attention == AttentionKind::Softmax && cfg.scoring == Scoring::Bilinear &&
            (p.W.rows() != d_k || p.W.cols() != d_k))
            throw Error("layer weights: the bilinear matrix W" + of + " is " + dims(p.W.rows(), p.W.cols()) +
                        ", the config needs " + dims(d_k, d_k));
    }
    expect_shape(w.W_O, "W_O", Eigen::Index(h) * d_v, d);
    expect_bias(w.b_O, "b_O", d);
}

}  // namespace attnviz

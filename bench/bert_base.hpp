// A randomly initialised BERT-base-shaped encoder (12 layers, d = 768, 12 heads, d_ff 3072, vocabulary
// 30522, 512 positions, 2 token types, the masked-LM head; weights N(0, 0.02), nn.Linear [out, in]
// layout, no download) for the benchmarks, built once per process.
#pragma once

#include "bench/random_weights.hpp"

namespace attnviz::bench {

struct BertBase : RandomWeights {
    Linear linear(int in, int out) { return Linear{mat(out, in), true, vec(out, 0.01f)}; }
    BertBase() : RandomWeights(101) {
        ModelSpec& s = m.spec;
        s.architecture = "bert";
        s.family = ModelFamily::Gpt2;
        s.n_layer = 12;
        s.n_head = s.n_kv_head = 12;
        s.d_model = 768;
        s.d_head = 64;
        s.d_ff = 3072;
        s.vocab_size = 30522;
        s.max_positions = 512;
        s.norm_eps = 1e-12;
        s.norm = NormKind::LayerNorm;
        s.mlp = MlpKind::GeluErf;
        s.positions = PositionKind::Learned;
        s.causal = false;
        s.post_norm = true;
        s.embed_norm = true;
        s.type_vocab = 2;
        s.head_transform = true;
        s.head_act = MlpKind::GeluErf;
        m.wte = mat(s.vocab_size, s.d_model);
        m.wpe = mat(s.max_positions, s.d_model);
        m.wtt = mat(s.type_vocab, s.d_model);
        m.ln_embed = layer_norm(s.d_model);
        m.lm_head = m.wte;
        m.lm_bias = vec(s.vocab_size, 0.0f);
        m.head_dense = linear(768, 768);
        m.ln_f = layer_norm(s.d_model);
        for (int l = 0; l < s.n_layer; ++l) {
            BlockWeights b;
            b.ln_1 = layer_norm(768);
            b.ln_2 = layer_norm(768);
            b.q = linear(768, 768);
            b.k = linear(768, 768);
            b.v = linear(768, 768);
            b.o = linear(768, 768);
            b.fc = linear(768, 3072);
            b.proj = linear(3072, 768);
            m.blocks.push_back(b);
        }
        validate_model(m);
    }
};

inline const ModelWeights& bert_base() {
    static const BertBase model;
    return model.m;
}

}  // namespace attnviz::bench

// A randomly initialised GPT-2-small-shaped model (12 layers, d = 768, 12 heads, d_ff 3072, vocabulary
// 50257, 1024 positions, weights N(0, 0.02), no download) for the benchmarks, built once per process.
#pragma once

#include "bench/random_weights.hpp"

namespace attnviz::bench {

struct Gpt2Small : RandomWeights {
    Linear conv(int in, int out) { return Linear{mat(in, out), false, vec(out, 0.01f)}; }
    Gpt2Small() : RandomWeights(1) {
        ModelSpec& s = m.spec;
        s.architecture = "gpt2";
        s.family = ModelFamily::Gpt2;
        s.n_layer = 12;
        s.n_head = s.n_kv_head = 12;
        s.d_model = 768;
        s.d_head = 64;
        s.d_ff = 3072;
        s.vocab_size = 50257;
        s.max_positions = 1024;
        m.wte = mat(s.vocab_size, s.d_model);
        m.wpe = mat(s.max_positions, s.d_model);
        m.lm_head = m.wte;
        m.ln_f = layer_norm(s.d_model);
        for (int l = 0; l < s.n_layer; ++l) {
            BlockWeights b;
            b.ln_1 = layer_norm(768);
            b.ln_2 = layer_norm(768);
            const Linear qkv = conv(768, 3 * 768);
            b.q = Linear{qkv.weight.cols_slice(0, 768), false, qkv.bias};
            b.k = Linear{qkv.weight.cols_slice(768, 768), false, qkv.bias + 768};
            b.v = Linear{qkv.weight.cols_slice(1536, 768), false, qkv.bias + 1536};
            b.o = conv(768, 768);
            b.fc = conv(768, 3072);
            b.proj = conv(3072, 768);
            m.blocks.push_back(b);
        }
        validate_model(m);
    }
};

inline const ModelWeights& gpt2_small() {
    static const Gpt2Small model;
    return model.m;
}

}  // namespace attnviz::bench

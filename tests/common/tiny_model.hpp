// A tiny random decoder (GPT-2 or Llama family) whose weights live in buffers owned by
// model.storage, for the model and model-trace tests. d_model 8, d_head 4, d_ff 12, vocabulary 11,
// 16 positions.
#pragma once

#include <cstdint>
#include <memory>

#include "core/model.hpp"
#include "core/ops.hpp"

namespace attnviz::test {

struct TinyBuilder {
    ModelWeights m;
    std::uint64_t seed = 1;
    WeightRef mat(int rows, int cols, double sd = 0.3) {
        auto buf = std::make_shared<Mat>(random_normal(rows, cols, sd, seed++));
        m.storage.push_back(buf);
        return WeightRef{buf->data(), rows, cols, cols};
    }
    const float* vec(int n, double mean, double sd) {
        auto buf = std::make_shared<Mat>(random_normal(1, n, sd, seed++));
        buf->array() += float(mean);
        m.storage.push_back(buf);
        return buf->data();
    }
    Linear linear(int in, int out, bool out_in, bool bias) {
        Linear L;
        L.out_in = out_in;
        L.weight = out_in ? mat(out, in) : mat(in, out);
        if (bias) L.bias = vec(out, 0, 0.1);
        return L;
    }
    Norm norm(int d, bool bias) { return Norm{vec(d, 1, 0.1), bias ? vec(d, 0, 0.1) : nullptr, d}; }
};

struct TinyModelOptions {
    bool qkv_bias = false;  // Llama family: q/k/v biases (Qwen2); GPT-2 always has biases
    int n_layer = 2;
    std::uint64_t seed = 1;
};

inline ModelWeights tiny_model(ModelFamily family, int n_head, int n_kv_head, TinyModelOptions o = {}) {
    TinyBuilder b;
    b.seed = o.seed;
    ModelSpec& s = b.m.spec;
    const bool gpt2 = family == ModelFamily::Gpt2;
    s.family = family;
    s.architecture = gpt2 ? "gpt2" : "llama";
    s.n_layer = o.n_layer;
    s.n_head = n_head;
    s.n_kv_head = n_kv_head;
    s.d_head = 4;
    s.d_model = 8;
    s.d_ff = 12;
    s.vocab_size = 11;
    s.max_positions = 16;
    b.m.wte = b.mat(s.vocab_size, s.d_model, 1.0);
    if (gpt2) b.m.wpe = b.mat(s.max_positions, s.d_model, 0.5);
    b.m.lm_head = gpt2 ? b.m.wte : b.mat(s.vocab_size, s.d_model);
    b.m.ln_f = b.norm(s.d_model, gpt2);
    for (int l = 0; l < s.n_layer; ++l) {
        BlockWeights w;
        w.ln_1 = b.norm(s.d_model, gpt2);
        w.ln_2 = b.norm(s.d_model, gpt2);
        const bool bias = gpt2 || o.qkv_bias;
        w.q = b.linear(s.d_model, n_head * s.d_head, !gpt2, bias);
        w.k = b.linear(s.d_model, n_kv_head * s.d_head, !gpt2, bias);
        w.v = b.linear(s.d_model, n_kv_head * s.d_head, !gpt2, bias);
        w.o = b.linear(n_head * s.d_head, s.d_model, !gpt2, gpt2);
        if (gpt2) {
            w.fc = b.linear(s.d_model, s.d_ff, false, true);
            w.proj = b.linear(s.d_ff, s.d_model, false, true);
        } else {
            w.gate = b.linear(s.d_model, s.d_ff, true, false);
            w.up = b.linear(s.d_model, s.d_ff, true, false);
            w.down = b.linear(s.d_ff, s.d_model, true, false);
        }
        b.m.blocks.push_back(w);
    }
    validate_model(b.m);
    return b.m;
}

}  // namespace attnviz::test

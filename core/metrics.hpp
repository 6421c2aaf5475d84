// Sizes and costs: parameter counts, FLOPs, memory of the attention pattern. Pure arithmetic.
#pragma once

#include <cstdint>
#include <string>

#include "core/config.hpp"

namespace attnviz {

struct LayerSize {
    int d_model = 0, heads = 0, d_k = 0, d_v = 0;
    bool bias = false;
};

struct ParamCount {
    std::int64_t w_q = 0, w_k = 0, w_v = 0, w_o = 0;  // weights (+ biases when asked)
    std::int64_t scoring = 0;                         // extra parameters of additive/bilinear scoring
    std::int64_t total = 0;
    /// General formula in words, e.g. "h·d_model·(2d_k + d_v) + h·d_v·d_model = 4·d_model²".
    std::string formula;
};

/// Parameter count of one attention layer. Without bias and with h·d_k = h·d_v = d_model this is
/// exactly 4·d_model². General form: h·d_model·(2·d_k + d_v) + h·d_v·d_model (+ biases
/// h·(2·d_k + d_v) + d_model).
ParamCount attention_params(const LayerSize& s, Scoring scoring = Scoring::ScaledDot,
                            int additive_hidden = 0);
ParamCount attention_params(const Config& cfg);

/// Embedding table (and, separately, unembedding) parameters: vocab · d_model.
std::int64_t embedding_params(std::int64_t vocab, std::int64_t d_model);

/// Bytes of the attention pattern: heads · n · m · bytes_per_value (quadratic in context length).
double attention_pattern_bytes(std::int64_t n, std::int64_t m, int heads, int bytes_per_value = 4);

/// FLOPs of the whole forward pass (projections, scores, softmax, A·V, W_O), counting a
/// multiply-add as 2.
double forward_flops(const Config& cfg, int n, int m);

/// The notes' GPT-3 numbers for the size calculator (weights not needed).
struct ModelPreset {
    const char* name;
    int d_model;
    int heads;
    int d_k;
    std::int64_t vocab;
    int layers;
    std::int64_t context;
};
/// GPT-3 175B: d_model 12288, 96 heads, d_k 128, vocab 50257, 96 layers, context 2048.
ModelPreset gpt3_preset();

}  // namespace attnviz

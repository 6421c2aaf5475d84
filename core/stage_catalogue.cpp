#include "core/stage_catalogue.hpp"

namespace attnviz {

const std::vector<StageEntry>& stage_catalogue() {
    using K = ValueKind;
    static const std::vector<StageEntry> entries = {
        // --- one attention layer (compute_trace) ----------------------------------------------
        {"one_hot", "embed", K::Indicator, false, "each token as a one-hot row over the vocabulary"},
        {"embedding", "embed", K::Signed, false, "each token's row of the embedding table"},
        {"positional", "embed", K::Signed, false, "the position signal added to the embeddings"},
        {"input", "embed", K::Signed, false, "X = E + P, what the layer reads"},
        {"source", "embed", K::Signed, false, "Y, the keys' and values' input in cross-attention"},
        {"layernorm", "embed", K::Signed, false, "pre-LayerNorm of the input"},
        {"W_Q", "project", K::Signed, false, "a head's query weights"},
        {"W_K", "project", K::Signed, false, "a head's key weights"},
        {"W_V", "project", K::Signed, false, "a head's value weights"},
        {"Q", "project", K::Signed, false, "queries: what each token looks for"},
        {"K", "project", K::Signed, false, "keys: what each token offers to be found by"},
        {"V", "project", K::Signed, false, "values: what each token hands over"},
        {"Q_rot", "project", K::Signed, false, "queries rotated by RoPE"},
        {"K_rot", "project", K::Signed, false, "keys rotated by RoPE"},
        {"alibi", "score", K::Signed, false, "ALiBi's distance bias added to the scores"},
        {"scores", "score", K::Signed, true, "every query against every key"},
        {"scaled", "score", K::Signed, true, "the scores scaled (÷√d_k, or by temperature)"},
        {"masked", "score", K::Signed, true, "the scaled scores with hidden keys at −∞"},
        {"phi_Q", "score", K::NonNegative, false, "linear attention's feature map of the queries"},
        {"phi_K", "score", K::NonNegative, false, "linear attention's feature map of the keys"},
        {"KV", "score", K::Signed, false, "linear attention's key–value summary φ(K)ᵀV"},
        {"weights", "normalise", K::Probability, false, "attention weights: each row sums to 1"},
        {"normalizer", "normalise", K::NonNegative, false, "linear attention's per-query normaliser"},
        {"head_output", "combine", K::Signed, false, "a head's weighted average of the values"},
        {"concat", "combine", K::Signed, false, "the heads' outputs side by side"},
        {"W_O", "combine", K::Signed, false, "the output projection"},
        {"output", "combine", K::Signed, false, "concat · W_O, the layer's attention output"},
        {"residual", "combine", K::Signed, false, "X + output"},
        {"layernorm_post", "combine", K::Signed, false, "post-LayerNorm of the residual"},
        // --- a real model's block (model_layer_trace) -----------------------------------------
        {"ln_1", "embed", K::Signed, false, "the block's input normalised before attention"},
        {"attn_out", "combine", K::Signed, false, "the heads projected back to d_model by W_O"},
        {"resid_mid", "combine", K::Signed, false, "the residual stream after attention"},
        {"ln_2", "combine", K::Signed, false, "the residual stream normalised before the MLP"},
        {"mlp_out", "combine", K::Signed, false, "the MLP's output, token by token"},
        {"resid_post", "combine", K::Signed, false, "the block's output, the next block's input"},
        {"residual_stream", "combine", K::NonNegative, false, "residual norms for every layer and token"},
        {"rollout", "combine", K::Probability, false, "attention followed through every layer"},
    };
    return entries;
}

const StageEntry* find_stage_entry(const std::string& name) {
    for (const StageEntry& e : stage_catalogue())
        if (name == e.name) return &e;
    return nullptr;
}

std::string stage_phase_of(const std::string& name) {
    const StageEntry* e = find_stage_entry(name);
    return e ? e->phase : "combine";
}

}  // namespace attnviz

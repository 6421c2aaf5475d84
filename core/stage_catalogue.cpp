#include "core/stage_catalogue.hpp"

#include <algorithm>

#include "core/cell_text.hpp"

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

namespace {
using cell_text::sub;
}  // namespace

StageText model_stage_text(const ModelSpec& s, const std::string& name, int head) {
    const bool gpt2 = s.family == ModelFamily::Gpt2;
    const bool layernorm = norm_kind(s) == NormKind::LayerNorm;
    const bool rope_pos = position_kind(s) == PositionKind::Rope;
    const bool gelu = mlp_kind(s) == MlpKind::Gelu;
    const std::string h = head >= 0 ? sub(head) : "";
    const std::string norm = layernorm ? "LayerNorm" : "RMSNorm";
    const std::string norm_formula = layernorm ? "γ ⊙ (x − μ) / √(σ² + ε) + β" : "γ ⊙ x / √(mean(x²) + ε)";
    const std::string norm_why =
        layernorm
            ? "LayerNorm subtracts each token's mean over d_model, divides by its standard deviation, then "
              "scales by γ and shifts by β (both learned)."
            : "RMSNorm divides each token's vector by its root mean square (no mean subtracted, no shift), "
              "then scales by the learned γ.";
    const int group = s.n_head / std::max(1, s.n_kv_head);
    std::string shared;
    if (group > 1 && head >= 0) {
        const int kv = head / group;
        shared = " Grouped-query attention: K and V shared by heads " + std::to_string(kv * group) + ".." +
                 std::to_string(kv * group + group - 1) + " (K/V head " + std::to_string(kv) + " of " +
                 std::to_string(s.n_kv_head) + ").";
    }
    const std::string rope = rope_pos ? "RoPE(" : "";
    const std::string rope_end = rope_pos ? ")" : "";
    const std::string bias = gpt2 ? " + b" : "";
    if (name == "ln_1" && norm_kind(s) == NormKind::None)
        return {
            "Block input x (no norm)", "x̂ = x",
            "This model has no norms: queries, keys and values are read from the residual stream x itself."};
    if (name == "ln_1")
        return {norm + " before attention  x̂ = " + norm + "(x)", "x̂ = " + norm_formula,
                "The block's input x (the residual stream) normalised per token. " + norm_why +
                    " Queries, keys and values are all read from x̂."};
    if (name == "Q")
        return {
            "Queries Q" + h, "Q" + h + " = " + rope + "x̂ W_Q" + h + bias + rope_end,
            "What each token looks for, as head " + std::to_string(head) + " sees it: x̂ times the head's " +
                "learned query weights." +
                (!rope_pos ? std::string(
                                 " GPT-2 adds learned position embeddings to the input instead of rotating.")
                           : " RoPE then rotates pairs of coordinates by an angle proportional to the "
                             "token's position, so Q·K depends on how far apart two tokens are.")};
    if (name == "K")
        return {"Keys K" + h, "K" + h + " = " + rope + "x̂ W_K" + h + bias + rope_end,
                "What each token offers to be found by. A query's score with a key is their dot product." +
                    shared};
    if (name == "V")
        return {"Values V" + h, "V" + h + " = x̂ W_V" + h + bias,
                "What each token hands over when it is attended to." + shared};
    if (name == "scores")
        return {"Scores  S" + h + " = Q Kᵀ", "S" + h + " = Q" + h + " K" + h + "ᵀ",
                "Every query against every key, unscaled and before the mask. Large means 'this key answers "
                "this query'."};
    if (name == "weights")
        return {"Attention weights A" + h, "A" + h + " = softmax(causal(S / √d_h))",
                "Scores divided by √d_h = √" + std::to_string(s.d_head) +
                    ", later keys hidden by the causal mask (a token never sees the future: hatched, "
                    "exactly 0), then softmax along each row, so each row sums to 1."};
    if (name == "head_output")
        return {"Head output O" + h + " = A V", "O" + h + " = A" + h + " V" + h,
                "Each query's weighted average of the values it attends to."};
    if (name == "attn_out")
        return {"Attention output", "attn = concat(O₀ … O" + sub(s.n_head - 1) + ") W_O" + bias,
                "The heads' outputs side by side, projected back to d_model by W_O. This is what attention "
                "adds to the residual stream."};
    if (name == "resid_mid")
        return {"Residual after attention", "r = x + attn",
                "The block's input plus what attention computed: the residual connection keeps the "
                "original information and adds the update."};
    if (name == "ln_2")
        return {norm + " before the MLP", "r̂ = " + norm + "(r)",
                "The residual stream normalised again. " + norm_why};
    if (name == "mlp_out")
        return {
            "MLP output",
            gelu ? "mlp = GELU(r̂ W_fc" + bias + ") W_proj" + bias : "mlp = (SiLU(r̂ W_gate) ⊙ r̂ W_up) W_down",
            gelu ? "Each token on its own (no mixing between tokens): widen to d_ff = " +
                       std::to_string(s.d_ff) + ", GELU, narrow back to d_model."
                 : "Each token on its own (no mixing between tokens): SwiGLU, a SiLU gate times a linear "
                   "branch, both of width d_ff = " +
                       std::to_string(s.d_ff) + ", then back to d_model."};
    if (name == "resid_post")
        return {"Residual after the block", "x' = r + mlp",
                "The layer's output: the next layer's input x (the residual stream)."};
    if (name == "residual_stream")
        return {"Residual stream norms", "‖x'_ℓ[t]‖₂ for every layer ℓ and token t",
                "How large each token's residual vector is after every layer. Rows are layers, columns "
                "tokens. A token whose norm grows a lot is being written to heavily (the first token often "
                "becomes very large: an 'attention sink')."};
    if (name == "rollout")
        return {"Attention rollout", "R_ℓ = Â_ℓ R_ℓ₋₁,  Â = rownorm(½ mean_h A + ½ I)",
                "Attention followed through every layer (Abnar & Zuidema 2020): how much each output token "
                "draws on each input token overall, counting the residual connection as half."};
    return {name, name, ""};
}

std::string stage_phase_of(const std::string& name) {
    const StageEntry* e = find_stage_entry(name);
    return e ? e->phase : "combine";
}

}  // namespace attnviz

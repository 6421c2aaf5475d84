// A real model's block (core/model_trace.hpp): the stages around attention that the single layer
// does not have — the norms, attention's output, the residual stream, the MLP — and the two views
// over every layer (residual norms, rollout). Their texts are worded for the model's family; their
// hover comes from core/model_trace.cpp. Q, K, V, scores, weights and head_output are shared with the
// single layer and live in their phases' files.
#include "core/stages/common.hpp"

namespace attnviz {
namespace {

using namespace stages;

StageText embed_text(const ModelWords& w) {
    const PositionKind pos = position_kind(w.s);
    if (pos == PositionKind::Rope)
        return {"Token embeddings  x₀ = W_E[token]", "x₀[t] = W_E[id_t]",
                "Each token's row of the embedding table: the residual stream block 0 reads. This model "
                "has no position vector to add: RoPE rotates Q and K inside every head instead."};
    const bool learned = pos == PositionKind::Learned;
    if (w.s.embed_norm)
        return {
            w.s.type_vocab > 0 ? "Token + segment + position embeddings, LayerNorm  x₀"
                               : "Token + position embeddings, LayerNorm  x₀",
            std::string("x₀[t] = LayerNorm(W_E[id_t]") + (w.s.type_vocab > 0 ? " + W_T[segment_t]" : "") +
                " + W_P[t" + (w.s.position_offset ? " + " + std::to_string(w.s.position_offset) : "") + "])",
            std::string("Each token's row of the embedding table") +
                (w.s.type_vocab > 0 ? ", plus the row of its segment (0 for the first text, 1 for the second "
                                      "of a pair)"
                                    : "") +
                ", plus the learned vector of its position, normalised per token: the residual stream that "
                "block 0 reads."};
    return {"Token + position embeddings  x₀",
            std::string("x₀[t] = W_E[id_t] + ") + (learned ? "W_P[t]" : "PE(t)"),
            std::string("Each token's row of the embedding table plus the vector of its position (") +
                (learned ? "a learned table" : "sinusoids") +
                "): the residual stream that block 0 reads and every block adds to."};
}

StageText ln_1_text(const ModelWords& w) {
    if (w.s.post_norm)
        return {"Block input x (post-norm)", "x̂ = x",
                "This model normalises after each sum instead of before (post-LayerNorm, as the original "
                "Transformer and BERT): queries, keys and values are read from the block's input x itself."};
    if (norm_kind(w.s) == NormKind::None)
        return {
            "Block input x (no norm)", "x̂ = x",
            "This model has no norms: queries, keys and values are read from the residual stream x itself."};
    return {w.norm + " before attention  x̂ = " + w.norm + "(x)", "x̂ = " + w.norm_formula,
            "The block's input x (the residual stream) normalised per token. " + w.norm_why +
                " Queries, keys and values are all read from x̂."};
}

StageText attn_out_text(const ModelWords& w) {
    return {"Attention output", "attn = concat(O₀ … O" + sub(w.s.n_head - 1) + ") W_O" + w.bias,
            "The heads' outputs side by side, projected back to d_model by W_O. This is what attention "
            "adds to the residual stream."};
}

StageText resid_mid_text(const ModelWords& w) {
    if (w.s.post_norm)
        return {"Residual after attention, normalised", "r = " + w.norm + "(x + attn)",
                "The block's input plus what attention computed, then normalised per token (post-norm). " +
                    w.norm_why};
    return {"Residual after attention", "r = x + attn",
            "The block's input plus what attention computed: the residual connection keeps the "
            "original information and adds the update."};
}

StageText ln_2_text(const ModelWords& w) {
    if (w.s.post_norm)
        return {"MLP input r (post-norm)", "r̂ = r",
                "The MLP reads the residual after attention as it is: it was normalised already."};
    return {w.norm + " before the MLP", "r̂ = " + w.norm + "(r)",
            "The residual stream normalised again. " + w.norm_why};
}

StageText mlp_out_text(const ModelWords& w) {
    return {"MLP output",
            w.gelu    ? "mlp = GELU(r̂ W_fc" + w.bias + ") W_proj" + w.bias
            : w.geglu ? "mlp = (GELU(r̂ W_gate) ⊙ r̂ W_up) W_down"
                      : "mlp = (SiLU(r̂ W_gate) ⊙ r̂ W_up) W_down",
            w.gelu ? "Each token on its own (no mixing between tokens): widen to d_ff = " +
                         std::to_string(w.s.d_ff) + ", GELU, narrow back to d_model."
                   : "Each token on its own (no mixing between tokens): " +
                         std::string(w.geglu ? "GeGLU, a GELU gate" : "SwiGLU, a SiLU gate") +
                         " times a linear branch, both of width d_ff = " + std::to_string(w.s.d_ff) +
                         ", then back to d_model."};
}

StageText resid_post_text(const ModelWords& w) {
    if (w.s.post_norm)
        return {"Residual after the block, normalised", "x' = " + w.norm + "(r + mlp)",
                "The residual after attention plus the MLP's output, normalised per token: the next layer's "
                "input x."};
    return {"Residual after the block", "x' = r + mlp",
            "The layer's output: the next layer's input x (the residual stream)."};
}

StageText ln_f_text(const ModelWords& w) {
    if (w.s.head_transform)
        return {"Masked-LM head  ĥ = LayerNorm(GELU(x_L W_t + b))", "ĥ = LayerNorm(GELU(x_L W_t + b_t))",
                "The masked-language-model head: the last block's output through one more dense layer, a "
                "GELU and a LayerNorm, per token. The row at a [MASK] makes the guess for the hidden word."};
    if (norm_kind(w.s) == NormKind::None)
        return {"Final residual (no norm)", "x̂ = x_L",
                "This model has no final norm: the last block's output goes straight to the unembedding."};
    return {"Final " + w.norm + "  x̂ = " + w.norm + "(x_L)", "x̂ = " + w.norm_formula,
            "After the last block, the residual stream is normalised once more per token. " + w.norm_why +
                " Only the last token's row makes the next-token prediction."};
}

StageText logits_text(const ModelWords& w) {
    if (is_encoder(w.s))
        return {"Logits at the [MASK]", "z = ĥ[mask] W_Eᵀ + b",
                "The head's vector at the masked position times every row of the word embeddings (" +
                    std::to_string(w.s.vocab_size) +
                    " tokens, the same table the input used), plus a bias: one score per token for the "
                    "hidden word. The model saw the words on both sides."};
    return {"Logits of the next token", "z = x̂[last] W_Uᵀ",
            "The last token's normalised vector times every row of the unembedding W_U (" +
                std::to_string(w.s.vocab_size) +
                " tokens): one score per token of the vocabulary. Higher = more likely next."};
}

StageText probs_text(const ModelWords& w) {
    if (is_encoder(w.s))
        return {"Fill-the-mask probabilities  p = softmax(z / T)", "p_v = exp(z_v / T) / Σ_u exp(z_u / T)",
                "The logits at the [MASK] through a softmax at temperature T: how likely each token is as "
                "the hidden word. Top-k and top-p cut the list as for a next token."};
    return {"Next-token probabilities  p = softmax(z / T)", "p_v = exp(z_v / T) / Σ_u exp(z_u / T)",
            "The logits through a softmax at temperature T: the distribution the next token is drawn "
            "from. Sampling then keeps the k most likely tokens (top-k) and, of those, the fewest whose "
            "probability reaches p (top-p); the rest can never be drawn (greyed)."};
}

StageText residual_stream_text(const ModelWords&) {
    return {"Residual stream norms", "‖x'_ℓ[t]‖₂ for every layer ℓ and token t",
            "How large each token's residual vector is after every layer. Rows are layers, columns "
            "tokens. A token whose norm grows a lot is being written to heavily (the first token often "
            "becomes very large: an 'attention sink')."};
}

StageText rollout_text(const ModelWords&) {
    return {"Attention rollout", "R_ℓ = Â_ℓ R_ℓ₋₁,  Â = rownorm(½ mean_h A + ½ I)",
            "Attention followed through every layer (Abnar & Zuidema 2020): how much each output token "
            "draws on each input token overall, counting the residual connection as half."};
}

// --- an encoder–decoder's decoder block (t5, bart): cross-attention, and T5's position bias --------

std::string cross_scale(const ModelWords& w) {
    return w.s.s2s.scale_scores ? "/√d_h" : "";
}

StageText cross_q_text(const ModelWords& w) {
    return {"Cross-attention queries  Q" + w.h + " (target)", "Q" + w.h + " = r̂_c W_Q" + w.h,
            "Each target token (the decoder's input so far) asks a question of the source sentence. The "
            "queries come from the decoder's residual stream; keys and values come from the encoder."};
}

StageText cross_k_text(const ModelWords& w) {
    return {"Cross-attention keys  K" + w.h + " (source)", "K" + w.h + " = E W_K" + w.h,
            "One key per source token, from the encoder's output E: what each source word offers to be "
            "found by. The same E feeds every decoder layer."};
}

StageText cross_v_text(const ModelWords& w) {
    return {"Cross-attention values  V" + w.h + " (source)", "V" + w.h + " = E W_V" + w.h,
            "One value per source token, from the encoder's output E: what each source word passes on "
            "to the target tokens that attend to it."};
}

StageText cross_scores_text(const ModelWords& w) {
    return {"Cross-attention scores  S" + w.h + " = Q Kᵀ", "S" + w.h + " = Q" + w.h + " K" + w.h + "ᵀ",
            "Rows are target tokens, columns source tokens: how well each target query matches each "
            "source key. No mask: every target token may read the whole source."};
}

StageText cross_weights_text(const ModelWords& w) {
    return {"Cross-attention weights  A" + w.h + " (target → source)",
            "A" + w.h + " = softmax(S" + w.h + cross_scale(w) + ")",
            "Each target token's attention over the source sentence (each row sums to 1): the alignment "
            "picture of translation (Bahdanau et al. 2015). A bright cell says this target word took "
            "much of its information from that source word. Each row is a step of writing: row i reads "
            "target token i (the first is the start token) and writes target word i + 1, so it looks at "
            "the source word of that next word. The view labels each row with the word it writes "
            "(→ word; the last row, → word?, writes the word the model picks next, not yet appended)."};
}

StageText cross_head_output_text(const ModelWords& w) {
    return {"Cross-attention head output  O" + w.h, "O" + w.h + " = A" + w.h + " V" + w.h,
            "For each target token, the weighted mix of the source's values its row of A chose."};
}

StageText cross_attn_out_text(const ModelWords& w) {
    return {"Cross-attention output", "cross = concat(O₀ … O" + sub(w.s.n_head - 1) + ") W_O" + w.bias,
            "The cross-attention heads projected back to d_model: what the source sentence adds to each "
            "target token's residual stream, before the MLP."};
}

StageText position_bias_text(const ModelWords& w) {
    return {"Relative position bias  B" + w.h + " (T5)", "B" + w.h + "[i, j] = b" + w.h + "[bucket(j − i)]",
            "T5 has no position embeddings: each head adds a learned number to the score of key j seen "
            "from query i, one number per bucket of the distance j − i (exact for near tokens, "
            "logarithmic for far ones). The weights are softmax(S + B); the scores are not divided by "
            "√d_h in T5."};
}

}  // namespace

std::vector<StageEntry> block_stages() {
    using K = ValueKind;
    // name, phase, kind, kind varies, role, per head, layer text, model text, explain, record
    return {
        {"embed", "embed", K::Signed, false, "token and position embeddings: the residual stream's start",
         false, nullptr, embed_text, nullptr, nullptr},
        {"ln_1", "embed", K::Signed, false, "the block's input normalised before attention", false, nullptr,
         ln_1_text, nullptr, nullptr},
        {"attn_out", "combine", K::Signed, false, "the heads projected back to d_model by W_O", false,
         nullptr, attn_out_text, nullptr, nullptr},
        {"resid_mid", "combine", K::Signed, false, "the residual stream after attention", false, nullptr,
         resid_mid_text, nullptr, nullptr},
        {"position_bias", "score", K::Signed, false,
         "T5's learned bias per relative distance, added to the scores", false, nullptr, position_bias_text,
         nullptr, nullptr},
        {"cross_Q", "project", K::Signed, false, "cross-attention queries from the target tokens", false,
         nullptr, cross_q_text, nullptr, nullptr},
        {"cross_K", "project", K::Signed, false, "cross-attention keys from the encoder's output", false,
         nullptr, cross_k_text, nullptr, nullptr},
        {"cross_V", "project", K::Signed, false, "cross-attention values from the encoder's output", false,
         nullptr, cross_v_text, nullptr, nullptr},
        {"cross_scores", "score", K::Signed, false, "target queries against source keys", false, nullptr,
         cross_scores_text, nullptr, nullptr},
        {"cross_weights", "normalise", K::Probability, false, "each target token's attention over the source",
         false, nullptr, cross_weights_text, nullptr, nullptr},
        {"cross_head_output", "combine", K::Signed, false, "the source's values mixed for each target token",
         false, nullptr, cross_head_output_text, nullptr, nullptr},
        {"cross_attn_out", "combine", K::Signed, false, "the cross-attention heads projected to d_model",
         false, nullptr, cross_attn_out_text, nullptr, nullptr},
        {"ln_2", "combine", K::Signed, false, "the residual stream normalised before the MLP", false, nullptr,
         ln_2_text, nullptr, nullptr},
        {"mlp_out", "combine", K::Signed, false, "the MLP's output, token by token", false, nullptr,
         mlp_out_text, nullptr, nullptr},
        {"resid_post", "combine", K::Signed, false, "the block's output, the next block's input", false,
         nullptr, resid_post_text, nullptr, nullptr},
        {"ln_f", "output", K::Signed, false, "the last block's output normalised", false, nullptr, ln_f_text,
         nullptr, nullptr},
        {"logits", "output", K::Signed, false, "one score per vocabulary token for the next token", false,
         nullptr, logits_text, nullptr, nullptr},
        {"probs", "output", K::Probability, false, "the next-token distribution sampling draws from", false,
         nullptr, probs_text, nullptr, nullptr},
        {"residual_stream", "combine", K::NonNegative, false, "residual norms for every layer and token",
         false, nullptr, residual_stream_text, nullptr, nullptr},
        {"rollout", "combine", K::Probability, false, "attention followed through every layer", false,
         nullptr, rollout_text, nullptr, nullptr},
    };
}

}  // namespace attnviz

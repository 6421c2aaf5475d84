#include "core/stage_catalogue.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/cell_text.hpp"
#include "core/ops.hpp"

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

namespace {

std::string text_num(double v) {
    std::ostringstream o;
    o << v;
    return o.str();
}

}  // namespace

StageText layer_stage_text(const Config& cfg, const LayerTextContext& x, const std::string& name, int hd) {
    using cell_text::sub;
    const int n = x.n, m = x.m, V = x.V, d = cfg.d_model, h = cfg.heads;
    const int d_k = cfg.resolved_d_k(), d_v = cfg.resolved_d_v();
    const double nf = n, mf = m, dkf = d_k;
    const bool cross = cfg.cross_attention();
    const LayerModes modes = layer_modes(cfg);
    const bool linear = modes.linear, kernel = modes.kernel, rope = modes.rope, alibi = modes.alibi;
    const bool pre_ln = modes.pre_ln, post_ln = modes.post_ln;
    const bool linear_native_mask = modes.linear_native_mask;
    const std::string dk_s = std::to_string(d_k), dm_s = std::to_string(d);
    const std::string designed =
        hd >= 0 && hd < int(x.designed.size()) ? x.designed[std::size_t(hd)] : std::string();
    if (name == "one_hot")
        return StageText{
            "One-hot tokens", "onehot(tᵢ) ∈ {0,1}ᵛ",
            "Each token becomes a row of " + std::to_string(V) +
                " zeros with a single 1 in the column of its vocabulary entry (the vocabulary lists every "
                "distinct "
                "token in order of first appearance). One-hot rows are all equally far apart and say nothing "
                "about "
                "meaning; they are only an address. Look for the single bright cell per row, and for "
                "repeated "
                "words, "
                "whose rows are identical."};
    if (name == "embedding")
        return StageText{
            "Embedding  E = onehot × table", "E = onehot · W_E   (W_E: V×d_model)",
            "Multiplying a one-hot row by the embedding table (" + std::to_string(V) + "×" + dm_s +
                ", entries drawn from N(0,1) here, learned in a real model) picks out exactly one row of the "
                "table: "
                "matrix multiplication by a one-hot vector is a table lookup. So the embedding of a word is "
                "just "
                "its row "
                "of the table, and the same word gets the same vector wherever it appears. The sparse, "
                "meaningless "
                "one-hot address becomes a dense vector in which directions can carry meaning." +
                x.embedding_note};
    if (name == "positional") {
        std::string title, formula, expl;
        switch (cfg.positional) {
            case Positional::Sinusoidal:
                title = "Positional encoding (sinusoidal)";
                formula = "PE(p,2i) = sin(p/" + text_num(cfg.pe_base) + "^(2i/d)),  PE(p,2i+1) = cos(p/" +
                          text_num(cfg.pe_base) + "^(2i/d))";
                expl =
                    "Attention itself treats the tokens as a set: shuffle them and every output shuffles the "
                    "same "
                    "way. To know word order, each position p gets a fixed vector of sines and cosines at "
                    "geometrically spaced frequencies, from one cycle per ~6 tokens (left columns) to very "
                    "slow "
                    "waves (right columns). Shifting a position by δ is a rotation of each (sin, cos) pair: "
                    "PE(p+δ) = R(δ)·PE(p), so relative offsets are easy for W_Q and W_K to read. Look for "
                    "stripes "
                    "that get wider to the right.";
                break;
            case Positional::Learned:
                title = "Positional encoding (learned)";
                formula = "P = W_pos[0:n]   (one trainable row per position)";
                expl =
                    "Each position gets its own vector, learned during training (here: random, untrained). "
                    "Unlike sinusoids, a learned table cannot encode positions beyond the longest training "
                    "text.";
                break;
            case Positional::Rope:
                title = "Positional encoding (none added: RoPE)";
                formula = "P = 0   (RoPE rotates Q and K instead)";
                expl =
                    "With rotary position embeddings nothing is added to the input: position enters later, "
                    "by "
                    "rotating each (q, k) pair of coordinates by an angle proportional to the position "
                    "(stages "
                    "Q_rot, K_rot), so q_p·k_s depends only on the offset s − p.";
                break;
            case Positional::Alibi:
                title = "Positional encoding (none added: ALiBi)";
                formula = "P = 0   (ALiBi adds −slope·|i−j| to the scores)";
                expl =
                    "With ALiBi nothing is added to the input: each head instead subtracts a penalty "
                    "proportional "
                    "to the distance |i − j| from its scores (stage alibi), so nearby tokens are preferred.";
                break;
            case Positional::None:
                title = "Positional encoding (none)";
                formula = "P = 0";
                expl =
                    "No positional information: the layer sees the tokens as an unordered set. Permuting the "
                    "tokens permutes the outputs in exactly the same way (without a mask). Try it: the "
                    "pattern "
                    "of a repeated word is identical at every position.";
                break;
        }
        if (name == "positional") return StageText{title, formula, expl};
    }
    if (name == "input")
        return StageText{
            "Input  X = E + P", "X = E + P",
            "The layer's input: each token's embedding plus its position's vector. Adding (rather than "
            "appending) "
            "keeps the width d_model = " +
                dm_s +
                "; meaning and position share the same space, and W_Q, W_K, W_V can read either. This is the "
                "start of "
                "the residual stream that the layer will later add its change to."};
    if (cross) {
        if (name == "source")
            return StageText{
                "Source  Y (keys and values)", "Y = onehot(source)·W_E + P",
                "Cross-attention: queries come from the text X, but keys and values come from a second text "
                "Y "
                "(as when a "
                "translation decoder reads the encoded source sentence). Y is embedded with the same table "
                "and "
                "positional encoding. Scores, weights and the pattern are n×m: one row per query token, one "
                "column per "
                "source token."};
    }
    if (pre_ln) {
        if (name == "layernorm")
            return StageText{
                "LayerNorm (pre)", "LN(x) = (x − mean(x)) / √(var(x) + ε)",
                "Pre-LayerNorm: before projecting, every token's vector is re-centred to mean 0 and rescaled "
                "to "
                "variance "
                "1 (no learned gain or bias here). This keeps q·k in a predictable range however large the "
                "residual "
                "stream grows, which is why most modern transformers normalise first. Q, K and V read LN(X)" +
                    std::string(cross ? " and LN(Y)" : "") +
                    "; the residual still adds to the raw X. Layer norm normalises across the features of "
                    "ONE "
                    "token (one row), so each sequence and each token is treated on its own; batch norm, "
                    "common "
                    "in CNNs, normalises one feature across the samples of a batch instead, which suits "
                    "images "
                    "but not sequences of varying length."};
    }

    if (hd >= 0) {
        const std::string H = " (head " + std::to_string(hd) + ")";
        const std::string in = pre_ln ? "LN(X)" : "X";
        const std::string kin = cross ? (pre_ln ? "LN(Y)" : "Y") : in;
        const std::string random_w =
            "A learned matrix (here: random, N(0, 1/d_model) so that projected entries stay about unit "
            "size). ";
        if (name == "W_Q")
            return StageText{
                "Query weights W_Q" + H, "W_Q" + sub(hd) + " ∈ ℝ^(d_model×d_k) = " + dm_s + "×" + dk_s,
                designed.empty()
                    ? random_w +
                          "Each column is one question direction: a token's query is its input projected "
                          "onto "
                          "these d_k = " +
                          dk_s +
                          " directions, i.e. what this head is looking for (e.g. 'is there an adjective "
                          "before "
                          "me?'). Each "
                          "head has its own W_Q, so each looks at a different subspace of the input." +
                          (cfg.preset != HeadPreset::None
                               ? " This head is random; the designed pattern is in head 0."
                               : "")
                    : designed};
        if (name == "W_K")
            return StageText{"Key weights W_K" + H,
                             "W_K" + sub(hd) + " ∈ ℝ^(d_model×d_k) = " + dm_s + "×" + dk_s,
                             designed.empty() ? random_w +
                                                    "W_K maps each token to a key: how it advertises itself "
                                                    "to the questions of the other "
                                                    "tokens. A query and a key match when they point the "
                                                    "same way in the d_k-dimensional "
                                                    "space the two matrices define together."
                                              : designed};
        if (name == "W_V")
            return StageText{"Value weights W_V" + H,
                             "W_V" + sub(hd) + " ∈ ℝ^(d_model×d_v) = " + dm_s + "×" + std::to_string(d_v),
                             random_w +
                                 "W_V maps each token to the information it passes on when attended to: a "
                                 "value is the change "
                                 "this token proposes to make to whoever looks at it."};
        if (name == "Q")
            return StageText{"Queries  Q = " + in + "·W_Q" + H, "Q = " + in + " W_Q   (n×d_k)",
                             "One query row per token: the input row times W_Q. q_i is token i's question. "
                             "Each entry is a "
                             "dot "
                             "product of the token's " +
                                 dm_s + " input numbers with one column of W_Q."};
        if (name == "K")
            return StageText{"Keys  K = " + kin + "·W_K" + H, "K = " + kin + " W_K   (m×d_k)",
                             "One key row per " + std::string(cross ? "source " : "") +
                                 "token: what each token offers to be matched against. The score of query i "
                                 "for key j will be "
                                 "large "
                                 "when q_i and k_j point the same way."};
        if (name == "V")
            return StageText{"Values  V = " + kin + "·W_V" + H, "V = " + kin + " W_V   (m×d_v)",
                             "One value row per token: what a token contributes to the output of every query "
                             "that attends to "
                             "it, in "
                             "proportion to the attention weight."};
        if (rope) {
            const std::string rexp =
                "RoPE: each pair of coordinates (2i, 2i+1) of the row at position p is rotated by the angle "
                "p·ωᵢ, "
                "ωᵢ = " +
                text_num(cfg.pe_base) +
                "^(−2i/d_k). Rotations preserve length, and rotating q by p·ω and k by s·ω makes q·k depend "
                "only "
                "on the offset s − p: relative position enters the scores directly, nothing is added to X.";
            if (name == "Q_rot") return StageText{"Rotated queries (RoPE)" + H, "q̃_p = R(p·ω) q_p", rexp};
            if (name == "K_rot") return StageText{"Rotated keys (RoPE)" + H, "k̃_s = R(s·ω) k_s", rexp};
        }
        const std::string qn = rope ? "Q̃" : "Q", kn = rope ? "K̃" : "K";
        if (!linear) {
            const double slope = alibi ? alibi_slope(hd, h) : 0.0;
            if (alibi) {
                if (name == "alibi")
                    return StageText{
                        "ALiBi bias" + H, "B_ij = −" + text_num(slope) + "·|i − j|",
                        "ALiBi gives every head a fixed distance penalty with its own slope (here 2^(−8·" +
                            std::to_string(hd + 1) + "/" + std::to_string(h) + ") = " + text_num(slope) +
                            "). Added to the scaled scores, it makes far-away keys less likely; steep-slope "
                            "heads look "
                            "locally, shallow-slope heads look far. It needs no learned parameters and "
                            "extends "
                            "to longer "
                            "texts than seen in training."};
            }
            if (name == "scores") {
                std::string stitle, sformula, sexp;
                switch (cfg.scoring) {
                    case Scoring::ScaledDot:
                    case Scoring::Dot:
                        stitle = "Scores  S = " + qn + kn + "ᵀ";
                        sformula = "S = " + qn + " " + kn + "ᵀ,   S_ij = q_i·k_j";
                        sexp =
                            "Every query is compared with every key by a dot product: S_ij = Σₖ q_ik k_jk. "
                            "Large "
                            "and "
                            "positive when the two vectors point the same way, negative when opposite. Row i "
                            "says how "
                            "well each key answers token i's question. This n×m matrix is why attention "
                            "costs "
                            "O(n²).";
                        break;
                    case Scoring::Additive:
                        stitle = "Scores (additive)";
                        sformula = "S_ij = w_vᵀ tanh(W_qᵀ q_i + W_kᵀ k_j)";
                        sexp = "Additive (Bahdanau) scoring: a tiny one-hidden-layer network (hidden size " +
                               std::to_string(cfg.resolved_additive_hidden()) +
                               ") scores each (query, key) pair. More flexible than a dot product but it "
                               "cannot be "
                               "written as one matrix product, so it is slower on long texts.";
                        break;
                    case Scoring::Bilinear:
                        stitle = "Scores (bilinear)";
                        sformula = "S = " + qn + " W " + kn + "ᵀ   (W: d_k×d_k)";
                        sexp =
                            "Bilinear (Luong 'general') scoring: a learned d_k×d_k matrix W sits between "
                            "query "
                            "and "
                            "key, S_ij = q_iᵀ W k_j. With W = I it is the plain dot product.";
                        break;
                    default: {
                        const std::string b = text_num(cfg.bandwidth);
                        stitle = "Kernel values (" + to_string(cfg.scoring) + ")";
                        const std::string u = "u = ‖q_i − k_j‖/" + b;
                        sformula = cfg.scoring == Scoring::Gaussian ? "S_ij = exp(−u²/2),  " + u
                                   : cfg.scoring == Scoring::Boxcar ? "S_ij = 1 if u ≤ 1 else 0,  " + u
                                                                    : "S_ij = max(0, 1 − u),  " + u;
                        sexp =
                            "Nadaraya–Watson kernel regression, the ancestor of attention: the similarity is "
                            "a "
                            "kernel "
                            "of the distance between query and key (bandwidth " +
                            b +
                            "). Near keys get large values, far keys small or zero. The values are already "
                            "non-negative, so they are normalised by their row sum instead of by softmax; "
                            "temperature "
                            "is not used.";
                        break;
                    }
                }
                return StageText{stitle + H, sformula, sexp};
            }

            const std::string B = alibi ? " + B" : "";
            std::string cformula, cexp;
            if (cfg.scoring == Scoring::ScaledDot || cfg.scoring == Scoring::Bilinear) {
                cformula = "scaled = S / √d_k" + B + " = S / " + text_num(std::sqrt(dkf)) + B;
                cexp = "If the entries of q and k have variance 1, q·k is a sum of d_k = " + dk_s +
                       " such products and has variance d_k: the scores grow like √d_k. Large scores push "
                       "softmax "
                       "into saturation (one weight ≈ 1, gradients ≈ 0). Dividing by √d_k = " +
                       text_num(std::sqrt(dkf)) + " brings the variance back to 1 whatever the head size.";
            } else if (kernel) {
                cformula = "scaled = S   (kernels are not scaled)";
                cexp =
                    "Kernel values are already on a fixed scale (the bandwidth sets it), so there is nothing "
                    "to "
                    "scale: this stage equals the kernel values.";
            } else {
                cformula = "scaled = S" + B + "   (" + to_string(cfg.scoring) + " scoring: no √d_k scaling)";
                cexp = cfg.scoring == Scoring::Dot
                           ? "Plain dot-product scoring does not divide by √d_k. Compare with scaled_dot: "
                             "with d_k = " +
                                 dk_s + " the scores here are √d_k = " + text_num(std::sqrt(dkf)) +
                                 " times larger, so softmax is sharper (often saturated)."
                           : "Additive scores come out of tanh and a small weight vector, so they are "
                             "already of "
                             "moderate size and are not scaled.";
            }
            if (alibi) cexp += " ALiBi's distance penalty B is added here.";
            if (name == "scaled") return StageText{"Scaled scores" + H, cformula, cexp};

            const bool mask = cfg.mask != MaskKind::None;
            std::string mexp;
            if (!mask) {
                mexp =
                    "No mask: every query may look at every key, including keys after it. This is an "
                    "encoder's bidirectional attention (BERT reads the whole sentence at once, e.g. to fill "
                    "in a masked word). Choose causal to stop tokens from seeing the future, as a decoder "
                    "that generates text one token at a time must (GPT).";
            } else {
                mexp =
                    "Hidden cells are set to −∞ so that exp(−∞) = 0 exactly: the key gets zero weight, not a "
                    "small "
                    "one, and the remaining weights still sum to 1. ";
                switch (cfg.mask) {
                    case MaskKind::Causal:
                        mexp +=
                            "Causal mask: token i may only see keys j ≤ i (no peeking at the future), the "
                            "upper triangle is hidden. This is a decoder's self-attention (GPT): during "
                            "training the whole target sentence is fed at once and the mask hides, for "
                            "each position, the tokens it will have to predict. Encoder–decoder models "
                            "(T5, translation) add cross-attention, where the decoder's queries read the "
                            "encoder's keys and values (the second text here).";
                        break;
                    case MaskKind::Padding:
                        mexp += "Padding mask: keys from position " + std::to_string(cfg.valid_length) +
                                " on are padding and hidden from every query.";
                        break;
                    case MaskKind::Window:
                        mexp += "Window mask: token i sees only the last " + std::to_string(cfg.window) +
                                " keys (i − " + std::to_string(cfg.window) +
                                " < j ≤ i), a band along the diagonal.";
                        break;
                    case MaskKind::Custom:
                        mexp += "Custom mask: the cells you switched off are hidden.";
                        break;
                    case MaskKind::None:
                        break;
                }
                mexp += " A row with every key hidden gets all-zero weights (never NaN).";
                if (kernel) mexp += " For kernels the hidden cells are simply left out of the row sum.";
            }
            if (name == "masked")
                return StageText{
                    "Masked scores" + H,
                    mask ? "masked_ij = scaled_ij if allowed(i,j) else −∞" : "masked = scaled   (no mask)",
                    mexp};
            if (kernel) {
                if (name == "weights")
                    return StageText{
                        "Weights  A = normalise(kernel)" + H, "A_ij = S_ij / Σⱼ S_ij",
                        "Each row of kernel values divided by its sum, so the weights are non-negative and "
                        "sum "
                        "to 1 (a "
                        "row whose keys are all out of reach stays all zero). Temperature is not used by "
                        "kernels: the "
                        "bandwidth " +
                            text_num(cfg.bandwidth) + " plays its role (small = sharp, large = flat)."};
            } else {
                const std::string t = text_num(cfg.temperature);
                if (name == "weights")
                    return StageText{"Weights  A = softmax(masked / T)" + H,
                                     "A_ij = exp(masked_ij/T) / Σⱼ exp(masked_ij/T),   T = " + t,
                                     "Softmax turns each row of scores into probabilities: exp makes every "
                                     "value positive and "
                                     "keeps "
                                     "the order, dividing by the row sum makes the row sum to 1 (the row max "
                                     "is subtracted "
                                     "first so "
                                     "exp never overflows). Temperature T = " +
                                         t +
                                         " divides the scores first: T → 0 approaches argmax (all weight on "
                                         "the best key), T "
                                         "→ ∞ "
                                         "approaches uniform weights. Read row i as 'how much token i "
                                         "listens to each key'."};
            }
            std::string hexp =
                "Each output row is the weighted average of the value rows: o_i = Σⱼ A_ij v_j. Token i's "
                "new information is mostly the values of the keys it attends to.";
            if (cfg.positional == Positional::Alibi && kernel)
                hexp += " (ALiBi adds to softmax scores; kernel weights ignore it.)";
            if (name == "head_output")
                return StageText{"Head output  A·V" + H, "head" + sub(hd) + " = A V   (n×d_v)", hexp};
        } else {
            const std::string pname = to_string(cfg.phi);
            const std::string pform = cfg.phi == PhiKind::Elu1 ? "φ(x) = elu(x) + 1"
                                      : cfg.phi == PhiKind::Relu
                                          ? "φ(x) = max(x, 0)"
                                          : "φ = softmax (queries over features, keys over tokens)";
            const std::string pexp =
                "Linear attention replaces exp(q·k) by a similarity φ(q)·φ(k) of non-negative feature "
                "vectors (" +
                pform +
                "). Because it factors, (φ(Q)φ(K)ᵀ)V = φ(Q)(φ(K)ᵀV): the keys and values can be summarised "
                "once, "
                "before any query looks at them.";
            if (name == "phi_Q") return StageText{"φ(Q)" + H, "φ(" + qn + "),   " + pform, pexp};
            if (name == "phi_K")
                return StageText{"φ(K)" + H, "φ(" + kn + "),   " + pform,
                                 pexp + (cfg.mask == MaskKind::Padding
                                             ? " Rows of padded keys are zeroed, which hides them."
                                             : "")};
            std::string kvexp =
                "φ(K)ᵀV sums φ(k_j) v_jᵀ over all keys into one d_k×d_v = " + dk_s + "×" +
                std::to_string(d_v) +
                " matrix, whatever the text length. Every query then reads this summary instead of "
                "every key: the cost is O(n·d_k·d_v), linear in n, and no n×n matrix is formed.";
            if (cfg.mask == MaskKind::Causal)
                kvexp +=
                    " With a causal mask the sum is a running (prefix) sum over j ≤ i, like an RNN's state; "
                    "shown "
                    "here is the final one, after the last key.";
            if (!linear_native_mask)
                kvexp += " A " + to_string(cfg.mask) +
                         " mask cannot be folded into this sum, so here the weights are materialised as an "
                         "n×m matrix "
                         "(O(n²), as in softmax attention) and this summary is shown unmasked for reference.";
            if (name == "KV")
                return StageText{"Key–value summary  φ(K)ᵀV" + H, "KV = φ(K)ᵀ V   (d_k×d_v)", kvexp};
            if (name == "normalizer")
                return StageText{"Normaliser  φ(q_i)·Σⱼφ(k_j)" + H, "z_i = φ(q_i) · Σⱼ φ(k_j)",
                                 "The row sum of the implied weights before normalising: dividing by z_i "
                                 "makes each query's "
                                 "weights "
                                 "sum to 1, like softmax's denominator. Also computed in O(n) from the "
                                 "column sums of φ(K)."};
            if (x.implied_weights) {
                if (name == "weights")
                    return StageText{
                        "Implied weights (display only)" + H, "A_ij = φ(q_i)·φ(k_j) / z_i",
                        "Linear attention never needs this n×m matrix; it is formed here only so you can "
                        "compare "
                        "the "
                        "pattern with softmax attention's. The weights are non-negative and each row sums to "
                        "1, "
                        "but "
                        "they are flatter than softmax's: φ(q)·φ(k) grows linearly, not exponentially."};
            }
            std::string hexp =
                "o_i = φ(q_i)ᵀ(φ(K)ᵀV) / z_i: each query reads the d_k×d_v summary and divides by its "
                "normaliser. Same result as (implied weights)·V, at linear cost.";
            if (!x.implied_weights)
                hexp += " The implied n×m weights are not shown: for " + std::to_string(h) +
                        " heads at n = " + std::to_string(n) + " they would need " +
                        text_num(std::round(double(h) * nf * mf * 4 / 1048576.0)) +
                        " MiB — exactly the quadratic cost linear attention avoids.";
            if (cfg.positional == Positional::Alibi)
                hexp +=
                    " ALiBi adds a bias to softmax scores; linear attention has no score matrix, so it has "
                    "no effect here.";
            if (name == "head_output")
                return StageText{"Head output (linear)" + H,
                                 "head" + sub(hd) + " = φ(Q)(φ(K)ᵀV) / z   (n×d_v)", hexp};
        }
    }

    if (name == "concat")
        return StageText{
            "Concatenate heads", "concat = [head₀ | head₁ | … | head" + sub(h - 1) + "]   (n×h·d_v)",
            "The " + std::to_string(h) + " head outputs are placed side by side: columns " + "0–" +
                std::to_string(d_v - 1) + " come from head 0, the next " + std::to_string(d_v) +
                " from head 1, and so on. Each head attended in its own subspace, with its own pattern; "
                "nothing "
                "is mixed "
                "yet."};
    if (name == "W_O")
        return StageText{"Output weights W_O",
                         "W_O ∈ ℝ^(h·d_v×d_model) = " + std::to_string(h * d_v) + "×" + dm_s,
                         "A learned matrix (here: random, N(0, 1/(h·d_v))) that mixes the heads' findings "
                         "and maps them back "
                         "to the "
                         "width of the residual stream."};
    if (name == "output")
        return StageText{"Output  concat·W_O", "output = concat W_O   (n×d_model)",
                         "The layer's proposed change for each token: a vector of width d_model = " + dm_s +
                             " built from what every head found."};
    if (cfg.residual) {
        if (name == "residual")
            return StageText{
                "Residual  X + output", "residual = X + output",
                "The residual connection adds the change vector to the input instead of replacing it: the "
                "token "
                "keeps its "
                "original meaning and position, nudged by what it gathered from context (the embedding of "
                "'creature' moves toward 'fluffy blue creature'). It also lets gradients flow straight "
                "through "
                "deep "
                "stacks."};
    }
    if (post_ln) {
        if (name == "layernorm_post")
            return StageText{
                "LayerNorm (post)", "LN(" + std::string(cfg.residual ? "X + output" : "output") + ")",
                "Post-LayerNorm (the original Transformer's order, Add & Norm): after the residual add, each "
                "row is re-centred and rescaled to mean 0, variance 1, so the next layer sees inputs of a "
                "fixed size. Modern LLMs mostly normalise before the sublayer instead (pre-LN), which trains "
                "more stably. Layer norm works across one token's features, not across a batch (batch "
                "norm)."};
    }
    return StageText{name, "", ""};
}

std::string stage_phase_of(const std::string& name) {
    const StageEntry* e = find_stage_entry(name);
    return e ? e->phase : "combine";
}

}  // namespace attnviz

// BART (model_type "bart"), an encoder–decoder with GPT-2's byte-level BPE. Both stacks: token
// embeddings (× √d_model when scale_embedding) plus learned positions read at position + 2 (BART's
// offset), then layernorm_embedding; post-LayerNorm blocks (each sub-layer's residual sum is
// normalised: self_attn_layer_norm, encoder_attn_layer_norm, final_layer_norm); GELU's exact (erf)
// form in fc1 → fc2; q, k, v and out_proj with biases, q scaled by 1/√dh. Each decoder layer has a
// cross-attention (encoder_attn) between its self-attention and its feed-forward. No final norm. The
// logits are the decoder's output times the shared embedding plus final_logits_bias.
#include <cmath>

#include "core/architecture.hpp"

namespace attnviz {

namespace {

void read_bart(const ConfigFields& c, const std::string&, ModelSpec& s) {
    s.encoder_decoder = true;
    s.d_model = c.positive("d_model");
    s.n_layer = c.positive("decoder_layers");
    s.s2s.n_encoder_layer = c.positive("encoder_layers");
    s.n_head = c.positive("decoder_attention_heads");
    if (c.positive("encoder_attention_heads", s.n_head) != s.n_head)
        c.fail("encoder_attention_heads",
               "must equal decoder_attention_heads (" + std::to_string(s.n_head) + ")");
    s.n_kv_head = s.n_head;
    if (s.d_model % s.n_head != 0)
        c.fail("decoder_attention_heads",
               "(" + std::to_string(s.n_head) + ") must divide d_model (" + std::to_string(s.d_model) + ")");
    s.d_head = s.d_model / s.n_head;
    s.d_ff = c.positive("decoder_ffn_dim");
    if (c.positive("encoder_ffn_dim", s.d_ff) != s.d_ff)
        c.fail("encoder_ffn_dim", "must equal decoder_ffn_dim (" + std::to_string(s.d_ff) + ")");
    s.vocab_size = c.positive("vocab_size");
    s.max_positions = c.positive("max_position_embeddings");
    s.norm_eps = 1e-5;  // nn.LayerNorm's default: BART's config has no field for it
    s.norm = NormKind::LayerNorm;
    s.positions = PositionKind::Learned;
    s.position_offset = 2;
    s.post_norm = true;
    s.embed_norm = true;
    const std::string act = c.string("activation_function", "gelu");
    if (act == "gelu")
        s.mlp = MlpKind::GeluErf;
    else if (act == "gelu_new" || act == "gelu_pytorch_tanh")
        s.mlp = MlpKind::Gelu;
    else
        c.fail("activation_function", "'" + act + "' is not supported (gelu, gelu_new)");
    if (c.boolean("scale_embedding", false)) s.embed_scale = std::sqrt(double(s.d_model));
    s.s2s.final_norm = false;
    s.s2s.decoder_start = c.positive_or_zero("decoder_start_token_id", 2);
    s.s2s.eos = c.positive_or_zero("eos_token_id", 2);
}

TensorNames bart_stack(const std::string& stack, bool decoder) {
    TensorNames t;
    t.embed = "shared";
    t.embed_alternates = {stack + ".embed_tokens"};
    t.positions = stack + ".embed_positions";
    t.embed_norm = stack + ".layernorm_embedding";
    t.block = stack + ".layers.";
    t.q = "self_attn.q_proj";
    t.k = "self_attn.k_proj";
    t.v = "self_attn.v_proj";
    t.o = "self_attn.out_proj";
    t.attn_norm = "self_attn_layer_norm";
    if (decoder) {
        t.cross_q = "encoder_attn.q_proj";
        t.cross_k = "encoder_attn.k_proj";
        t.cross_v = "encoder_attn.v_proj";
        t.cross_o = "encoder_attn.out_proj";
        t.cross_norm = "encoder_attn_layer_norm";
    }
    t.fc = "fc1";
    t.proj = "fc2";
    t.mlp_norm = "final_layer_norm";
    t.lm_head = decoder ? "lm_head" : "";
    t.logits_bias = decoder ? "final_logits_bias" : "";
    t.fallback_prefix = "model.";  // BartForConditionalGeneration; BartModel names them "encoder...."
    return t;
}

}  // namespace

Architecture bart_architecture() {
    Architecture a;
    a.model_types = {"bart"};
    a.family = ModelFamily::Gpt2;
    a.tensors = bart_stack("decoder", true);
    a.encoder_tensors = bart_stack("encoder", false);
    a.tied_by_default = true;
    a.all_biases = true;
    a.read = read_bart;
    return a;
}

}  // namespace attnviz

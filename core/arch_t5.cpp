// T5 (model_type "t5": t5 v1.0, t5 v1.1, flan-t5), an encoder–decoder. No position embeddings: each
// stack's first block holds a relative_attention_bias table [buckets, heads] whose entry for the bucket
// of (key − query) is added to every layer's scores (bidirectional buckets in the encoder, causal ones
// in the decoder); scores are not divided by √dh. T5LayerNorm is RMSNorm without a bias, before each
// sub-layer; the feed-forward is ReLU (wi, wo) or gated-GELU (wi_0 gate with GELU's tanh form, wi_1,
// wo). Each decoder block has a cross-attention (EncDecAttention) between its self-attention and its
// feed-forward. With tied embeddings (v1.0) the decoder's output is scaled by d_model^−½ before the
// unembedding by `shared`; v1.1 / flan-t5 have their own lm_head.
#include <cmath>

#include "core/architecture.hpp"

namespace attnviz {

namespace {

void read_t5(const ConfigFields& c, const std::string&, ModelSpec& s) {
    s.encoder_decoder = true;
    s.d_model = c.positive("d_model");
    s.d_head = c.positive("d_kv");
    s.d_ff = c.positive("d_ff");
    s.n_head = c.positive("num_heads");
    s.n_kv_head = s.n_head;
    s.s2s.n_encoder_layer = c.positive("num_layers");
    s.n_layer = c.positive("num_decoder_layers", s.s2s.n_encoder_layer);
    s.vocab_size = c.positive("vocab_size");
    s.max_positions = 4096;  // relative positions have no table; this bounds the input's memory
    s.norm_eps = c.number("layer_norm_epsilon", 1e-6, true);
    s.norm = NormKind::RMSNorm;
    s.positions = PositionKind::Relative;
    s.s2s.rel_buckets = c.positive("relative_attention_num_buckets", 32);
    s.s2s.rel_max_distance = c.positive("relative_attention_max_distance", 128);
    if (s.s2s.rel_buckets < 4) c.fail("relative_attention_num_buckets", "must be at least 4");
    // Beyond the exact buckets (up to half the buckets) the distance is bucketed logarithmically up to
    // max_distance, which must therefore lie beyond them.
    if (s.s2s.rel_max_distance <= s.s2s.rel_buckets / 2)
        c.fail("relative_attention_max_distance",
               "must be more than half of relative_attention_num_buckets (" +
                   std::to_string(s.s2s.rel_buckets) + "), got " + std::to_string(s.s2s.rel_max_distance));
    s.s2s.scale_scores = false;
    const std::string ff = c.string("feed_forward_proj", "relu");
    if (ff == "relu")
        s.mlp = MlpKind::Relu;
    else if (ff == "gated-gelu" || ff == "gated-gelu_new" || ff == "gated-gelu_pytorch_tanh")
        s.mlp = MlpKind::GeGLU;  // Hugging Face reads "gated-gelu" as gelu_new, the tanh form
    else if (ff == "gated-silu")
        s.mlp = MlpKind::SwiGLU;
    else
        c.fail("feed_forward_proj", "'" + ff + "' is not supported (relu, gated-gelu or gated-silu)");
    if (c.boolean("tie_word_embeddings", true)) s.s2s.logit_scale = 1.0 / std::sqrt(double(s.d_model));
    s.s2s.decoder_start = c.positive_or_zero("decoder_start_token_id", 0);
    s.s2s.eos = c.positive_or_zero("eos_token_id", 1);
}

TensorNames t5_stack(const std::string& stack, bool decoder) {
    TensorNames t;
    t.embed = "shared";
    t.embed_alternates = {stack + ".embed_tokens"};
    t.block = stack + ".block.";
    t.attn_norm = "layer.0.layer_norm";
    t.q = "layer.0.SelfAttention.q";
    t.k = "layer.0.SelfAttention.k";
    t.v = "layer.0.SelfAttention.v";
    t.o = "layer.0.SelfAttention.o";
    t.rel_bias = "layer.0.SelfAttention.relative_attention_bias";
    const std::string ff = decoder ? "layer.2." : "layer.1.";
    if (decoder) {
        t.cross_norm = "layer.1.layer_norm";
        t.cross_q = "layer.1.EncDecAttention.q";
        t.cross_k = "layer.1.EncDecAttention.k";
        t.cross_v = "layer.1.EncDecAttention.v";
        t.cross_o = "layer.1.EncDecAttention.o";
    }
    t.mlp_norm = ff + "layer_norm";
    t.fc = ff + "DenseReluDense.wi";
    t.proj = ff + "DenseReluDense.wo";
    t.gate = ff + "DenseReluDense.wi_0";
    t.up = ff + "DenseReluDense.wi_1";
    t.down = ff + "DenseReluDense.wo";
    t.final_norm = stack + ".final_layer_norm";
    t.lm_head = decoder ? "lm_head" : "";
    return t;
}

}  // namespace

Architecture t5_architecture() {
    Architecture a;
    a.model_types = {"t5"};
    a.family = ModelFamily::Llama;
    a.tensors = t5_stack("decoder", true);
    a.encoder_tensors = t5_stack("encoder", false);
    a.tied_by_default = true;
    a.read = read_t5;
    return a;
}

}  // namespace attnviz

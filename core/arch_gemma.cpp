// Gemma (model_type "gemma"): Llama's tensors and blocks with three changes. The MLP is GeGLU (a
// tanh-GELU gate instead of SiLU), the token embeddings are multiplied by √d_model, and each RMSNorm
// scales by (1 + w) where the file stores w: the loader adds the 1 (norm_weight_offset), as
// llama.cpp's converter does. Input and output embeddings are always tied. attnviz reads Gemma but
// never trains in its layout.
#include <cmath>

#include "core/architecture.hpp"

namespace attnviz {

namespace {

void read_gemma(const ConfigFields& c, const std::string&, ModelSpec& s) {
    s.n_layer = c.positive("num_hidden_layers");
    s.n_head = c.positive("num_attention_heads");
    s.n_kv_head = c.positive("num_key_value_heads", s.n_head);
    s.d_model = c.positive("hidden_size");
    s.d_head = c.positive("head_dim", 256);
    if (s.n_head % s.n_kv_head != 0) c.fail("num_key_value_heads", "must divide num_attention_heads");
    s.d_ff = c.positive("intermediate_size");
    s.vocab_size = c.positive("vocab_size");
    s.max_positions = c.positive("max_position_embeddings", 8192);
    s.norm_eps = c.number("rms_norm_eps", 1e-6, true);
    s.rope_theta = c.number("rope_theta", 10000.0, false);
    s.mlp = MlpKind::GeGLU;
    s.embed_scale = std::sqrt(double(float(s.d_model)));
    // Gemma's activation is GELU's tanh form. Its first configs said hidden_act "gelu" with no
    // hidden_activation, which Hugging Face reads as the tanh form too; an exact (erf) GELU is refused.
    const bool has_activation = c.present("hidden_activation");
    const std::string field = has_activation ? "hidden_activation" : "hidden_act";
    const std::string act = c.string(field, "gelu_pytorch_tanh");
    const bool tanh_form =
        act == "gelu_pytorch_tanh" || act == "gelu_new" || (!has_activation && act == "gelu");
    if (!tanh_form) c.fail(field, "'" + act + "' is not supported (only gelu_pytorch_tanh)");
    if (c.present("rope_scaling")) {
        const std::string kind = c.kind("rope_scaling");
        if (kind != "default") c.fail("rope_scaling", "'" + kind + "' is not supported (only null)");
    }
}

}  // namespace

Architecture gemma_architecture() {
    Architecture a;
    a.model_types = {"gemma"};
    a.family = ModelFamily::Llama;
    TensorNames& t = a.tensors;
    t.embed = "model.embed_tokens";
    t.block = "model.layers.";
    t.attn_norm = "input_layernorm";
    t.mlp_norm = "post_attention_layernorm";
    t.q = "self_attn.q_proj";
    t.k = "self_attn.k_proj";
    t.v = "self_attn.v_proj";
    t.o = "self_attn.o_proj";
    t.gate = "mlp.gate_proj";
    t.up = "mlp.up_proj";
    t.down = "mlp.down_proj";
    t.final_norm = "model.norm";
    t.lm_head = "lm_head";
    a.tied_by_default = true;
    a.norm_weight_offset = 1.0f;
    a.read = read_gemma;
    return a;
}

}  // namespace attnviz

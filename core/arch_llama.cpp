// Llama (model_type "llama") and the models that share its tensors: Qwen2 (biases on q, k and v) and
// Mistral (a sliding window). RMSNorm, SwiGLU, RoPE, grouped-query attention, nn.Linear weights
// [out, in]. The trainer writes this layout (model_type "llama") once a config has one of Llama's
// choices: RMSNorm, SwiGLU or RoPE; its GELU MLP is then named up_proj / down_proj.
#include "core/architecture.hpp"

#include <algorithm>

namespace attnviz {

namespace {

void read_llama(const ConfigFields& c, const std::string& type, ModelSpec& s) {
    s.n_layer = c.positive("num_hidden_layers");
    s.n_head = c.positive("num_attention_heads");
    s.n_kv_head = c.positive("num_key_value_heads", s.n_head);
    s.d_model = c.positive("hidden_size");
    if (!c.present("head_dim") && s.d_model % s.n_head != 0)
        c.fail("num_attention_heads", "must divide hidden_size when head_dim is not given");
    s.d_head = c.positive("head_dim", s.d_model / s.n_head);
    if (s.n_head % s.n_kv_head != 0) c.fail("num_key_value_heads", "must divide num_attention_heads");
    s.d_ff = c.positive("intermediate_size");
    s.vocab_size = c.positive("vocab_size");
    s.max_positions = c.positive("max_position_embeddings", 2048);
    s.norm_eps = c.number("rms_norm_eps", 1e-6, true);
    s.rope_theta = c.number("rope_theta", 10000.0, false);
    const std::string act = c.string("hidden_act", "silu");
    if (act != "silu") c.fail("hidden_act", "'" + act + "' is not supported (only silu)");
    if (c.present("rope_scaling")) {
        const std::string kind = c.kind("rope_scaling");
        if (kind != "default") c.fail("rope_scaling", "'" + kind + "' is not supported (only null)");
    }
    if (c.boolean("mlp_bias", false)) c.fail("mlp_bias", "true is not supported");
    if (type == "qwen2" && c.boolean("use_sliding_window", false))
        c.fail("use_sliding_window", "true is not supported (sliding-window attention)");
    if (type == "mistral" && c.present("sliding_window")) {
        // Below the window, sliding-window attention is plain causal attention: accept inputs up to it.
        const int window = c.positive("sliding_window");
        s.max_positions = std::min(s.max_positions, window);
    }
}

bool trains_llama(const TrainConfig&) {
    return true;
}

void write_llama(const TrainConfig& c, ConfigSink& j) {
    j.set("model_type", "llama");
    j.set("architectures", std::vector<std::string>{"LlamaForCausalLM"});
    j.set("num_hidden_layers", c.n_layer);
    j.set("num_attention_heads", c.n_head);
    j.set("num_key_value_heads", c.n_head);
    j.set("hidden_size", c.d_model);
    j.set("intermediate_size", train_d_ff(c));
    j.set("max_position_embeddings", c.context);
    j.set("vocab_size", c.vocab_size);
    j.set("rms_norm_eps", c.norm_eps);
    j.set("rope_theta", 10000.0);
    j.set("hidden_act", "silu");
    j.set("attention_bias", false);
    j.set("mlp_bias", false);
}

Architecture llama_family(std::vector<std::string> types) {
    Architecture a;
    a.model_types = std::move(types);
    a.family = ModelFamily::Llama;
    TensorNames& t = a.tensors;
    t.embed = "model.embed_tokens";
    t.positions = "model.embed_positions";  // attnviz checkpoints with learned positions
    t.block = "model.layers.";
    t.attn_norm = "input_layernorm";
    t.mlp_norm = "post_attention_layernorm";
    t.q = "self_attn.q_proj";
    t.k = "self_attn.k_proj";
    t.v = "self_attn.v_proj";
    t.o = "self_attn.o_proj";
    t.fc = "mlp.up_proj";  // attnviz checkpoints' GELU MLP: GELU(x·up_projᵀ)·down_projᵀ
    t.proj = "mlp.down_proj";
    t.gate = "mlp.gate_proj";
    t.up = "mlp.up_proj";
    t.down = "mlp.down_proj";
    t.final_norm = "model.norm";
    t.lm_head = "lm_head";
    a.read = read_llama;
    return a;
}

}  // namespace

Architecture llama_architecture() {
    Architecture a = llama_family({"llama"});
    a.trains = trains_llama;
    a.write = write_llama;
    return a;
}

Architecture qwen2_architecture() {
    Architecture a = llama_family({"qwen2"});
    a.qkv_bias = true;
    return a;
}

Architecture mistral_architecture() {
    return llama_family({"mistral"});
}

}  // namespace attnviz

// GPT-2 (model_type "gpt2"): learned positions, LayerNorm, GELU (tanh form), a fused q|k|v projection,
// every weight stored [in, out] (Conv1D) with a bias. The trainer writes this layout while a config
// has none of Llama's choices (RMSNorm, SwiGLU, RoPE).
#include "core/architecture.hpp"

namespace attnviz {

namespace {

void read_gpt2(const ConfigFields& c, const std::string&, ModelSpec& s) {
    s.n_layer = c.positive("n_layer");
    s.n_head = c.positive("n_head");
    s.n_kv_head = s.n_head;
    s.d_model = c.positive("n_embd");
    if (s.d_model % s.n_head != 0)
        c.fail("n_head",
               "(" + std::to_string(s.n_head) + ") must divide n_embd (" + std::to_string(s.d_model) + ")");
    s.d_head = s.d_model / s.n_head;
    s.d_ff = c.positive("n_inner", 4 * s.d_model);
    s.vocab_size = c.positive("vocab_size");
    s.max_positions = c.positive("n_positions");
    s.norm_eps = c.number("layer_norm_epsilon", 1e-5, true);
    const std::string act = c.string("activation_function", "gelu_new");
    if (act != "gelu_new" && act != "gelu_pytorch_tanh")
        c.fail("activation_function", "'" + act + "' is not supported (only gelu_new, the tanh form)");
}

bool trains_gpt2(const TrainConfig& c) {
    return train_norm(c) != NormKind::RMSNorm && c.mlp != MlpKind::SwiGLU &&
           c.positions != PositionKind::Rope;
}

void write_gpt2(const TrainConfig& c, ConfigSink& j) {
    j.set("model_type", "gpt2");
    j.set("architectures", std::vector<std::string>{"GPT2LMHeadModel"});
    j.set("n_layer", c.n_layer);
    j.set("n_head", c.n_head);
    j.set("n_embd", c.d_model);
    j.set("n_inner", train_d_ff(c));
    j.set("n_positions", c.context);
    j.set("vocab_size", c.vocab_size);
    j.set("layer_norm_epsilon", c.norm_eps);
    j.set("activation_function", "gelu_new");
}

}  // namespace

Architecture gpt2_architecture() {
    Architecture a;
    a.model_types = {"gpt2"};
    a.family = ModelFamily::Gpt2;
    TensorNames& t = a.tensors;
    t.embed = "wte";
    t.positions = "wpe";
    t.block = "h.";
    t.attn_norm = "ln_1";
    t.mlp_norm = "ln_2";
    t.qkv = "attn.c_attn";
    t.o = "attn.c_proj";
    t.fc = "mlp.c_fc";
    t.proj = "mlp.c_proj";
    t.final_norm = "ln_f";
    t.lm_head = "lm_head";
    t.conv1d = true;
    t.fallback_prefix = "transformer.";  // GPT2LMHeadModel; GPT2Model names them "h.0...."
    a.tied_by_default = true;
    a.read = read_gpt2;
    a.trains = trains_gpt2;
    a.write = write_gpt2;
    return a;
}

}  // namespace attnviz

// The encoders: BERT (model_type "bert"), RoBERTa ("roberta", "xlm-roberta") and DistilBERT
// ("distilbert"), with Hugging Face's tensor names. Every token attends to every token (no causal
// mask), blocks are post-LayerNorm (x = LN(x + attn(x)); x = LN(x + mlp(x))), the summed embeddings
// (token + token type + learned position) go through a LayerNorm, and the masked-LM head (dense d → d,
// GELU, LayerNorm, the tied unembedding plus a bias) gives the logits at every position. RoBERTa reads
// its positions from row pad_token_id + 1 on; DistilBERT has no token types. A checkpoint without the
// head's tensors (BertModel, RobertaModel, DistilBertModel) is a bare encoder with no logits.
#include "core/architecture.hpp"

namespace attnviz {

namespace {

/// hidden_act (or DistilBERT's activation): "gelu" is the erf form; the tanh forms are read too.
MlpKind gelu_kind(const ConfigFields& c, const std::string& field) {
    const std::string act = c.string(field, "gelu");
    if (act != "gelu" && act != "gelu_new" && act != "gelu_pytorch_tanh")
        c.fail(field, "'" + act + "' is not supported (only gelu, gelu_new or gelu_pytorch_tanh)");
    return act == "gelu" ? MlpKind::GeluErf : MlpKind::Gelu;
}

void encoder_kinds(ModelSpec& s) {
    s.norm = NormKind::LayerNorm;
    s.positions = PositionKind::Learned;
    s.causal = false;
    s.post_norm = true;
    s.embed_norm = true;
    s.head_transform = true;  // (the loader clears it for a checkpoint without the head)
}

/// BertConfig / RobertaConfig's fields; the choices attnviz does not compute are refused by name.
void read_bert(const ConfigFields& c, const std::string& type, ModelSpec& s) {
    s.n_layer = c.positive("num_hidden_layers");
    s.n_head = c.positive("num_attention_heads");
    s.n_kv_head = s.n_head;
    s.d_model = c.positive("hidden_size");
    if (s.d_model % s.n_head != 0) c.fail("num_attention_heads", "must divide hidden_size");
    s.d_head = s.d_model / s.n_head;
    s.d_ff = c.positive("intermediate_size");
    s.vocab_size = c.positive("vocab_size");
    const int table = c.positive("max_position_embeddings", 512);
    s.type_vocab = c.positive("type_vocab_size", type == "bert" ? 2 : 1);
    s.norm_eps = c.number("layer_norm_eps", 1e-12, true);
    encoder_kinds(s);
    s.mlp = gelu_kind(c, "hidden_act");
    // BERT's head uses hidden_act; RoBERTa's lm_head always the erf GELU.
    s.head_act = type == "bert" ? s.mlp : MlpKind::GeluErf;
    const std::string pet = c.string("position_embedding_type", "absolute");
    if (pet != "absolute")
        c.fail("position_embedding_type", "'" + pet + "' is not supported (only absolute)");
    if (c.boolean("is_decoder", false)) c.fail("is_decoder", "true is not supported (a causal BERT)");
    if (c.boolean("add_cross_attention", false)) c.fail("add_cross_attention", "true is not supported");
    if (type != "bert") {
        // RobertaEmbeddings: positions pad + 1, pad + 2, ... (create_position_ids_from_input_ids)
        const int pad = c.present("pad_token_id") ? c.positive("pad_token_id") : 1;
        s.position_offset = pad + 1;
        if (table <= s.position_offset)
            c.fail("max_position_embeddings",
                   "(" + std::to_string(table) + ") must be more than pad_token_id + 1");
    }
    s.max_positions = table - s.position_offset;
}

void read_distilbert(const ConfigFields& c, const std::string&, ModelSpec& s) {
    s.n_layer = c.positive("n_layers");
    s.n_head = c.positive("n_heads");
    s.n_kv_head = s.n_head;
    s.d_model = c.positive("dim");
    if (s.d_model % s.n_head != 0) c.fail("n_heads", "must divide dim");
    s.d_head = s.d_model / s.n_head;
    s.d_ff = c.positive("hidden_dim");
    s.vocab_size = c.positive("vocab_size");
    s.max_positions = c.positive("max_position_embeddings", 512);
    s.norm_eps = 1e-12;  // DistilBERT's LayerNorms, fixed in its code
    encoder_kinds(s);
    s.mlp = gelu_kind(c, "activation");
    s.head_act = s.mlp;
    // sinusoidal_pos_embds: the sinusoids are stored in position_embeddings.weight like learned ones.
    (void)c.boolean("sinusoidal_pos_embds", false);
}

/// BERT's and RoBERTa's shared tensor names inside the encoder.
void bert_blocks(TensorNames& t) {
    t.embed = "embeddings.word_embeddings";
    t.positions = "embeddings.position_embeddings";
    t.token_types = "embeddings.token_type_embeddings";
    t.embed_norm = "embeddings.LayerNorm";
    t.block = "encoder.layer.";
    t.q = "attention.self.query";
    t.k = "attention.self.key";
    t.v = "attention.self.value";
    t.o = "attention.output.dense";
    t.attn_norm = "attention.output.LayerNorm";
    t.fc = "intermediate.dense";
    t.proj = "output.dense";
    t.mlp_norm = "output.LayerNorm";
}

Architecture encoder_entry(std::vector<std::string> types) {
    Architecture a;
    a.model_types = std::move(types);
    a.family = ModelFamily::Gpt2;  // LayerNorm, learned positions, biases everywhere
    a.tied_by_default = true;
    a.norm_gamma_beta = true;
    return a;
}

}  // namespace

Architecture bert_architecture() {
    Architecture a = encoder_entry({"bert"});
    TensorNames& t = a.tensors;
    bert_blocks(t);
    t.head_dense = "cls.predictions.transform.dense";
    t.final_norm = "cls.predictions.transform.LayerNorm";
    t.lm_head = "cls.predictions.decoder";
    t.lm_bias = {"cls.predictions.bias", "cls.predictions.decoder.bias"};
    t.fallback_prefix = "bert.";  // BertForMaskedLM; BertModel names them "embeddings...."
    a.read = read_bert;
    return a;
}

Architecture roberta_architecture() {
    Architecture a = encoder_entry({"roberta", "xlm-roberta"});
    TensorNames& t = a.tensors;
    bert_blocks(t);
    t.head_dense = "lm_head.dense";
    t.final_norm = "lm_head.layer_norm";
    t.lm_head = "lm_head.decoder";
    t.lm_bias = {"lm_head.bias", "lm_head.decoder.bias"};
    t.fallback_prefix = "roberta.";
    a.read = read_bert;
    return a;
}

Architecture distilbert_architecture() {
    Architecture a = encoder_entry({"distilbert"});
    TensorNames& t = a.tensors;
    t.embed = "embeddings.word_embeddings";
    t.positions = "embeddings.position_embeddings";
    t.embed_norm = "embeddings.LayerNorm";
    t.block = "transformer.layer.";
    t.q = "attention.q_lin";
    t.k = "attention.k_lin";
    t.v = "attention.v_lin";
    t.o = "attention.out_lin";
    t.attn_norm = "sa_layer_norm";
    t.fc = "ffn.lin1";
    t.proj = "ffn.lin2";
    t.mlp_norm = "output_layer_norm";
    t.head_dense = "vocab_transform";
    t.final_norm = "vocab_layer_norm";
    t.lm_head = "vocab_projector";
    t.lm_bias = {"vocab_projector.bias"};
    t.fallback_prefix = "distilbert.";
    a.read = read_distilbert;
    return a;
}

}  // namespace attnviz

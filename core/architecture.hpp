// The architectures attnviz reads (Hugging Face folders, io/model_loader) and writes (the trainer's
// checkpoints: core/train's param_layout, io/checkpoint's config.json), one entry each in one table
// (core/architecture.cpp): the config.json model_type it answers to, how config.json's fields become
// a ModelSpec and a TrainConfig becomes config.json's fields, and the names and storage layout of its
// tensors. Each architecture's entry sits in a file of its own (core/arch_gpt2.cpp,
// core/arch_llama.cpp, core/arch_gemma.cpp); adding one is a line in the table plus its file.
//
// core has no JSON: io hands the fields in through ConfigFields and takes them out through
// ConfigSink.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/train.hpp"

namespace attnviz {

/// config.json's fields, read (io/model_loader implements it over the JSON). Every reader throws
/// attnviz::Error naming the file and the field when a value is of the wrong type or out of range.
class ConfigFields {
  public:
    virtual ~ConfigFields() = default;
    virtual bool present(const std::string& field) const = 0;
    /// An integer from 1 to 2^20; `fallback` when absent (absent without a fallback: an error).
    virtual int positive(const std::string& field, std::optional<int> fallback = std::nullopt) const = 0;
    /// An integer from 0 to 2^20 (a token id); `fallback` when absent.
    virtual int positive_or_zero(const std::string& field, int fallback) const = 0;
    /// A finite number >= 0 (> 0 unless allow_zero); `fallback` when absent.
    virtual double number(const std::string& field, double fallback, bool allow_zero) const = 0;
    virtual bool boolean(const std::string& field, bool fallback) const = 0;
    virtual std::string string(const std::string& field, const std::string& fallback) const = 0;
    /// An object field's "rope_type" (or "type") string, else the field's JSON text.
    virtual std::string kind(const std::string& field) const = 0;
    [[noreturn]] virtual void fail(const std::string& field, const std::string& what) const = 0;
};

/// config.json's fields, written in the order set (io/checkpoint implements it over the JSON).
class ConfigSink {
  public:
    virtual ~ConfigSink() = default;
    virtual void set(const std::string& field, int value) = 0;
    virtual void set(const std::string& field, double value) = 0;
    virtual void set(const std::string& field, bool value) = 0;
    virtual void set(const std::string& field, const char* value) = 0;
    virtual void set(const std::string& field, const std::vector<std::string>& value) = 0;
};

/// The tensors of an architecture: names without the ".weight" / ".bias" suffix; a block's names
/// follow block_prefix(l). Empty = the architecture has no such tensor.
struct TensorNames {
    std::string embed;      // [V, d] token embeddings
    std::string positions;  // [context, d] learned positions
    std::string block;      // block l's prefix is block + l + "."
    std::string attn_norm, mlp_norm;
    std::string qkv;                  // fused [d, 3d] q | k | v (Conv1D), or
    std::string q, k, v;              // separate projections
    std::string o;                    // attention output
    std::string fc, proj;             // GELU MLP: in, out
    std::string gate, up, down;       // SwiGLU MLP
    std::string final_norm, lm_head;  // lm_head: [V, d] when not tied
    bool conv1d = false;              // weights stored [in, out], every one with a bias (GPT-2's Conv1D);
                                      // else nn.Linear [out, in], biases where the config says
    std::string fallback_prefix;      // tried when a name is missing ("transformer." in GPT2LMHeadModel)
    // Encoder–decoders (t5, bart):
    std::vector<std::string> embed_alternates;  // tried when `embed` is missing ("encoder.embed_tokens")
    std::string embed_norm;                     // the embeddings' norm (BART's layernorm_embedding)
    std::string rel_bias;                       // T5: block 0's relative_attention_bias [buckets, h]
    std::string cross_norm;                     // a decoder block's cross-attention: its norm and maps
    std::string cross_q, cross_k, cross_v, cross_o;
    std::string logits_bias;  // BART's final_logits_bias [1, V] (zeros when absent)

    std::string block_prefix(int layer) const { return block + std::to_string(layer) + "."; }
};

struct Architecture {
    std::vector<std::string> model_types;  // config.json model_type values it reads: "llama", ...
    ModelFamily family = ModelFamily::Gpt2;
    TensorNames tensors;           // an encoder–decoder: the decoder stack's (and the shared embedding's)
    TensorNames encoder_tensors;   // an encoder–decoder's encoder stack (spec.encoder_decoder)
    bool all_biases = false;       // every linear map has a bias (BART)
    bool tied_by_default = false;  // tie_word_embeddings when config.json does not say
    bool qkv_bias = false;         // q, k and v always have biases (Qwen2)
    float norm_weight_offset = 0;  // added to every stored norm weight on loading (Gemma stores γ − 1)
    /// config.json → ModelSpec: every field but architecture and family, and the architecture's own
    /// refusals (activations, rope_scaling, sliding windows, ...).
    void (*read)(const ConfigFields& fields, const std::string& model_type, ModelSpec& spec) = nullptr;
    /// Whether the trainer writes its models in this architecture, and when: the first entry whose
    /// `trains` holds for a TrainConfig is the one its checkpoints use. Null: never.
    bool (*trains)(const TrainConfig& config) = nullptr;
    /// TrainConfig → config.json's own fields (model_type first; io/checkpoint adds attnviz's).
    void (*write)(const TrainConfig& config, ConfigSink& sink) = nullptr;
};

/// Every architecture, in the order model_type messages list them.
const std::vector<Architecture>& architectures();
/// The entry reading this model_type, or null.
const Architecture* find_architecture(const std::string& model_type);
/// "gpt2, llama, qwen2 or mistral".
std::string architecture_names();
/// The architecture the trainer's checkpoints of this config use.
const Architecture& train_architecture(const TrainConfig& config);

// Each architecture's entry, defined in its own file.
Architecture gpt2_architecture();     // core/arch_gpt2.cpp
Architecture llama_architecture();    // core/arch_llama.cpp
Architecture qwen2_architecture();    // core/arch_llama.cpp
Architecture mistral_architecture();  // core/arch_llama.cpp
Architecture gemma_architecture();    // core/arch_gemma.cpp
Architecture t5_architecture();       // core/arch_t5.cpp
Architecture bart_architecture();     // core/arch_bart.cpp

}  // namespace attnviz

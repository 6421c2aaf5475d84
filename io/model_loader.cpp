// config.json + safetensors → ModelWeights. See io/model_loader.hpp.
#include "io/model_loader.hpp"

#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json_limits.hpp"
#include "io/safetensors.hpp"

namespace attnviz {

namespace {

using json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// config.json
// ---------------------------------------------------------------------------------------------

constexpr std::int64_t kMaxDim = 1 << 20;  // any one size of the model (layers, widths, vocabulary)

struct ConfigReader {
    const json& j;
    std::string name;

    [[noreturn]] void fail(const std::string& field, const std::string& what) const {
        throw Error(name + ": field '" + field + "' " + what);
    }
    bool present(const std::string& f) const { return j.contains(f) && !j.at(f).is_null(); }
    int positive(const std::string& f, std::optional<int> fallback = std::nullopt) const {
        if (!present(f)) {
            if (fallback) return *fallback;
            fail(f, "is missing");
        }
        const json& v = j.at(f);
        if (!v.is_number_integer()) fail(f, "must be an integer, got " + v.dump());
        const std::int64_t x = v.get<std::int64_t>();
        if (x <= 0 || x > kMaxDim)
            fail(f, "must be from 1 to " + std::to_string(kMaxDim) + ", got " + v.dump());
        return int(x);
    }
    double number(const std::string& f, double fallback, bool allow_zero) const {
        if (!present(f)) return fallback;
        const json& v = j.at(f);
        if (!v.is_number()) fail(f, "must be a number, got " + v.dump());
        const double x = v.get<double>();
        if (!std::isfinite(x) || x < 0 || (!allow_zero && x == 0))
            fail(f, "must be a positive number, got " + v.dump());
        return x;
    }
    bool boolean(const std::string& f, bool fallback) const {
        if (!present(f)) return fallback;
        if (!j.at(f).is_boolean()) fail(f, "must be true or false, got " + j.at(f).dump());
        return j.at(f).get<bool>();
    }
    std::string string(const std::string& f, const std::string& fallback) const {
        if (!present(f)) return fallback;
        if (!j.at(f).is_string()) fail(f, "must be a string, got " + j.at(f).dump());
        return j.at(f).get<std::string>();
    }
};

/// attnviz's own checkpoints (`attnviz train`) say which parts their blocks have: attnviz_norm
/// (layernorm | rmsnorm | none), attnviz_mlp (gelu | swiglu | none), attnviz_positions (learned |
/// sinusoidal | rope), and the older attnviz_attention_only / attnviz_layer_norm booleans.
void read_attnviz_options(const ConfigReader& c, ModelSpec& s) {
    if (c.boolean("attnviz_attention_only", false)) s.mlp = MlpKind::None;
    if (!c.boolean("attnviz_layer_norm", true)) s.norm = NormKind::None;
    auto choice = [&](const char* field, const std::vector<const char*>& names) {
        const std::string v = c.string(field, "");
        for (std::size_t i = 0; i < names.size(); ++i)
            if (v == names[i]) return int(i);
        std::string known;
        for (const char* n : names) known += std::string(known.empty() ? "" : ", ") + n;
        c.fail(field, "'" + v + "' is not supported (" + known + ")");
    };
    if (c.present("attnviz_norm")) {
        const int k = choice("attnviz_norm", {"layernorm", "rmsnorm", "none"});
        s.norm = k == 0 ? NormKind::LayerNorm : k == 1 ? NormKind::RMSNorm : NormKind::None;
    }
    if (c.present("attnviz_mlp")) {
        const int k = choice("attnviz_mlp", {"gelu", "swiglu", "none"});
        s.mlp = k == 0 ? MlpKind::Gelu : k == 1 ? MlpKind::SwiGLU : MlpKind::None;
    }
    if (c.present("attnviz_positions")) {
        const int k = choice("attnviz_positions", {"learned", "sinusoidal", "rope"});
        s.positions = k == 0 ? PositionKind::Learned : k == 1 ? PositionKind::Sinusoidal : PositionKind::Rope;
    }
    if (s.family == ModelFamily::Llama && position_kind(s) == PositionKind::Rope && s.d_head % 2 != 0)
        c.fail("head_dim", "must be even for RoPE, got " + std::to_string(s.d_head));
    if (s.family == ModelFamily::Gpt2) {
        if (mlp_kind(s) == MlpKind::SwiGLU)
            c.fail("attnviz_mlp", "'swiglu' needs the Llama tensor layout (model_type llama)");
        if (position_kind(s) == PositionKind::Rope) {
            s.rope_theta = c.number("rope_theta", 10000.0, false);
            if (s.d_head % 2 != 0) c.fail("n_head", "must leave an even head width for RoPE");
        }
    }
}

}  // namespace

ModelSpec parse_model_config(std::string_view text, const std::string& name) {
    const json j = parse_json_limited(text, name, "the file");
    if (!j.is_object()) throw Error(name + ": expected a JSON object");
    const ConfigReader c{j, name};
    if (!c.present("model_type")) c.fail("model_type", "is missing");
    const std::string type = c.string("model_type", "");
    ModelSpec s;
    s.architecture = type;
    if (type == "gpt2") {
        s.family = ModelFamily::Gpt2;
        s.n_layer = c.positive("n_layer");
        s.n_head = c.positive("n_head");
        s.n_kv_head = s.n_head;
        s.d_model = c.positive("n_embd");
        if (s.d_model % s.n_head != 0)
            c.fail("n_head", "(" + std::to_string(s.n_head) + ") must divide n_embd (" +
                                 std::to_string(s.d_model) + ")");
        s.d_head = s.d_model / s.n_head;
        s.d_ff = c.positive("n_inner", 4 * s.d_model);
        s.vocab_size = c.positive("vocab_size");
        s.max_positions = c.positive("n_positions");
        s.norm_eps = c.number("layer_norm_epsilon", 1e-5, true);
        const std::string act = c.string("activation_function", "gelu_new");
        if (act != "gelu_new" && act != "gelu_pytorch_tanh")
            c.fail("activation_function", "'" + act + "' is not supported (only gelu_new, the tanh form)");
    } else if (type == "llama" || type == "qwen2" || type == "mistral") {
        s.family = ModelFamily::Llama;
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
            const json& rs = j.at("rope_scaling");
            const std::string kind = rs.is_object() && rs.contains("rope_type") && rs["rope_type"].is_string()
                                         ? rs["rope_type"].get<std::string>()
                                     : rs.is_object() && rs.contains("type") && rs["type"].is_string()
                                         ? rs["type"].get<std::string>()
                                         : rs.dump();
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
    } else {
        c.fail("model_type", "'" + type + "' is not supported (gpt2, llama, qwen2 or mistral)");
    }
    read_attnviz_options(c, s);
    return s;
}

namespace {

// The weights of one checkpoint folder (io/safetensors.hpp) and the float32 buffers made from them.
struct Checkpoint {
    SafetensorsTable table;
    std::vector<std::shared_ptr<const void>> storage;
    std::uint64_t converted_bytes = 0;
    std::uint64_t weight_bytes = 0;  // float32 bytes of every tensor used, + stored bytes of converted ones
};

/// The tensors of one checkpoint, checked against the shapes the config implies.
class TensorSource {
  public:
    explicit TensorSource(Checkpoint& ck, std::string prefix_fallback = "")
        : ck_(ck), fallback_(std::move(prefix_fallback)) {}

    bool has(const std::string& name) const { return find(name) != nullptr; }

    /// A 2-D tensor [rows, cols] as float32 (in place for F32).
    WeightRef matrix(const std::string& name, int rows, int cols) {
        return WeightRef{floats(name, {rows, cols}), rows, cols, cols};
    }
    const float* vector(const std::string& name, int n) { return floats(name, {n}); }

  private:
    const SafetensorsTensor* find(const std::string& name) const {
        const auto& tensors = ck_.table.tensors;
        auto it = tensors.find(name);
        if (it == tensors.end() && !fallback_.empty()) it = tensors.find(fallback_ + name);
        return it == tensors.end() ? nullptr : &it->second;
    }

    const float* floats(const std::string& name, const std::vector<std::int64_t>& shape) {
        const SafetensorsTensor* t = find(name);
        if (!t) throw Error("the checkpoint has no tensor '" + name + "'");
        if (t->shape != shape) {
            auto text = [](const std::vector<std::int64_t>& s) {
                std::string r = "[";
                for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
                return r + "]";
            };
            throw Error(t->file + ": tensor '" + name + "' has shape " + text(t->shape) +
                        ", the config implies " + text(shape));
        }
        if (t->dtype != "F32" && t->dtype != "BF16" && t->dtype != "F16")
            throw Error(t->file + ": tensor '" + name + "' is " + t->dtype +
                        " (only F32, BF16 and F16 weights are supported)");
        const std::uint64_t count = t->count();
        ck_.weight_bytes += count * 4;
        if (ck_.weight_bytes > kMaxModelWeightBytes)
            throw Error(t->file + ": the model's weights need more than " +
                        std::to_string(kMaxModelWeightBytes >> 30) + " GiB as float32 (at tensor '" + name +
                        "'); the app's memory limit is 3 GiB");
        // F32 in place from the mapping when aligned (always, for files the Python library writes).
        if (t->dtype == "F32" && reinterpret_cast<std::uintptr_t>(t->data) % alignof(float) == 0)
            return reinterpret_cast<const float*>(t->data);
        ck_.converted_bytes += count * 4;
        if (ck_.converted_bytes > kMaxConvertedWeightBytes)
            throw Error(t->file + ": converting tensor '" + name + "' to float32 would need more than " +
                        std::to_string(kMaxConvertedWeightBytes >> 30) + " GiB");
        // Converting reads every page of the stored tensor: they stay in the mapping (resident) too.
        ck_.weight_bytes += count * safetensors_dtype_size(t->dtype);
        if (ck_.weight_bytes > kMaxModelWeightBytes)
            throw Error(t->file + ": the model's weights need more than " +
                        std::to_string(kMaxModelWeightBytes >> 30) + " GiB (at tensor '" + name +
                        "', stored as " + t->dtype +
                        " and converted to float32); the app's memory limit is 3 GiB");
        auto buf = std::shared_ptr<float[]>(new float[std::size_t(count)]);  // [count]
        to_float32(*t, buf.get());
        ck_.storage.push_back(buf);
        return buf.get();
    }

    Checkpoint& ck_;
    std::string fallback_;
};

ModelWeights load_gpt2(const ModelSpec& s, Checkpoint& ck, bool tied) {
    // GPT2Model checkpoints name tensors "h.0...."; GPT2LMHeadModel ones "transformer.h.0....".
    TensorSource t(ck, "transformer.");
    ModelWeights m;
    m.spec = s;
    const int d = s.d_model, f = s.d_ff;
    const NormKind nk = norm_kind(s);
    const MlpKind mk = mlp_kind(s);
    m.wte = t.matrix("wte.weight", s.vocab_size, d);
    if (position_kind(s) == PositionKind::Learned) m.wpe = t.matrix("wpe.weight", s.max_positions, d);
    m.lm_head = tied ? m.wte : t.matrix("lm_head.weight", s.vocab_size, d);
    auto norm = [&](const std::string& p) {
        if (nk == NormKind::None) return Norm{};
        return Norm{t.vector(p + ".weight", d),
                    nk == NormKind::LayerNorm ? t.vector(p + ".bias", d) : nullptr, d};
    };
    auto conv = [&](const std::string& p, int in, int out) {
        return Linear{t.matrix(p + ".weight", in, out), false, t.vector(p + ".bias", out)};
    };
    m.ln_f = norm("ln_f");
    for (int l = 0; l < s.n_layer; ++l) {
        const std::string p = "h." + std::to_string(l) + ".";
        BlockWeights b;
        b.ln_1 = norm(p + "ln_1");
        if (mk != MlpKind::None) b.ln_2 = norm(p + "ln_2");
        const Linear qkv = conv(p + "attn.c_attn", d, 3 * d);  // [d, 3d]: q | k | v column blocks
        b.q = Linear{qkv.weight.cols_slice(0, d), false, qkv.bias};
        b.k = Linear{qkv.weight.cols_slice(d, d), false, qkv.bias + d};
        b.v = Linear{qkv.weight.cols_slice(2 * d, d), false, qkv.bias + 2 * d};
        b.o = conv(p + "attn.c_proj", d, d);
        if (mk == MlpKind::Gelu) {
            b.fc = conv(p + "mlp.c_fc", d, f);
            b.proj = conv(p + "mlp.c_proj", f, d);
        }
        m.blocks.push_back(b);
    }
    return m;
}

ModelWeights load_llama(const ModelSpec& s, Checkpoint& ck, bool tied, bool attention_bias) {
    TensorSource t(ck);
    ModelWeights m;
    m.spec = s;
    const int d = s.d_model, qd = s.n_head * s.d_head, kvd = s.n_kv_head * s.d_head;
    const NormKind nk = norm_kind(s);
    const MlpKind mk = mlp_kind(s);
    m.wte = t.matrix("model.embed_tokens.weight", s.vocab_size, d);
    if (position_kind(s) == PositionKind::Learned)
        m.wpe = t.matrix("model.embed_positions.weight", s.max_positions, d);
    m.lm_head = tied ? m.wte : t.matrix("lm_head.weight", s.vocab_size, d);
    auto norm = [&](const std::string& p) {
        if (nk == NormKind::None) return Norm{};
        return Norm{t.vector(p + ".weight", d),
                    nk == NormKind::LayerNorm ? t.vector(p + ".bias", d) : nullptr, d};
    };
    m.ln_f = norm("model.norm");
    const bool qwen2 = s.architecture == "qwen2";
    auto linear = [&](const std::string& p, int in, int out, bool bias) {
        Linear L{t.matrix(p + ".weight", out, in), true, nullptr};
        if (bias || t.has(p + ".bias")) L.bias = t.vector(p + ".bias", out);
        return L;
    };
    for (int l = 0; l < s.n_layer; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        BlockWeights b;
        b.ln_1 = norm(p + "input_layernorm");
        if (mk != MlpKind::None) b.ln_2 = norm(p + "post_attention_layernorm");
        b.q = linear(p + "self_attn.q_proj", d, qd, attention_bias || qwen2);
        b.k = linear(p + "self_attn.k_proj", d, kvd, attention_bias || qwen2);
        b.v = linear(p + "self_attn.v_proj", d, kvd, attention_bias || qwen2);
        b.o = linear(p + "self_attn.o_proj", qd, d, attention_bias);
        if (mk == MlpKind::SwiGLU) {
            b.gate = linear(p + "mlp.gate_proj", d, s.d_ff, false);
            b.up = linear(p + "mlp.up_proj", d, s.d_ff, false);
            b.down = linear(p + "mlp.down_proj", s.d_ff, d, false);
        } else if (mk == MlpKind::Gelu) {  // attnviz checkpoints: GELU(x·up_projᵀ)·down_projᵀ
            b.fc = linear(p + "mlp.up_proj", d, s.d_ff, false);
            b.proj = linear(p + "mlp.down_proj", s.d_ff, d, false);
        }
        m.blocks.push_back(b);
    }
    return m;
}

}  // namespace

ModelWeights load_model_dir(const std::string& dir) {
    const std::string config_path = dir + "/config.json";
    const std::string text = read_file(config_path, 4ull << 20);
    const ModelSpec spec = parse_model_config(text, config_path);
    const json j = parse_json_limited(text, config_path, "the file");
    Checkpoint ck;
    ck.table = open_safetensors_dir(dir);
    for (const SafetensorsFile& f : ck.table.files) ck.storage.push_back(f.owner());
    ModelWeights m;
    auto flag = [&](const char* f, bool fallback) {
        return j.contains(f) && j[f].is_boolean() ? j[f].get<bool>() : fallback;
    };
    if (spec.family == ModelFamily::Gpt2)
        m = load_gpt2(spec, ck, flag("tie_word_embeddings", true));
    else
        m = load_llama(spec, ck, flag("tie_word_embeddings", false), flag("attention_bias", false));
    m.storage = std::move(ck.storage);
    m.weight_bytes = ck.weight_bytes;
    validate_model(m);
    return m;
}

}  // namespace attnviz

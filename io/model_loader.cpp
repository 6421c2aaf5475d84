// config.json + safetensors → ModelWeights. See io/model_loader.hpp.
#include "io/model_loader.hpp"

#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "core/architecture.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json_limits.hpp"
#include "io/platform.hpp"
#include "io/safetensors.hpp"

namespace attnviz {

namespace {

using json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// config.json
// ---------------------------------------------------------------------------------------------

constexpr std::int64_t kMaxDim = 1 << 20;  // any one size of the model (layers, widths, vocabulary)

struct ConfigReader final : ConfigFields {
    const json& j;
    std::string name;
    ConfigReader(const json& j_, std::string name_) : j(j_), name(std::move(name_)) {}

    [[noreturn]] void fail(const std::string& field, const std::string& what) const override {
        throw Error(name + ": field '" + field + "' " + what);
    }
    bool present(const std::string& f) const override { return j.contains(f) && !j.at(f).is_null(); }
    int positive(const std::string& f, std::optional<int> fallback = std::nullopt) const override {
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
    int positive_or_zero(const std::string& f, int fallback) const override {
        if (!present(f)) return fallback;
        const json& v = j.at(f);
        if (!v.is_number_integer()) fail(f, "must be an integer, got " + v.dump());
        const std::int64_t x = v.get<std::int64_t>();
        if (x < 0 || x > kMaxDim)
            fail(f, "must be from 0 to " + std::to_string(kMaxDim) + ", got " + v.dump());
        return int(x);
    }
    double number(const std::string& f, double fallback, bool allow_zero) const override {
        if (!present(f)) return fallback;
        const json& v = j.at(f);
        if (!v.is_number()) fail(f, "must be a number, got " + v.dump());
        const double x = v.get<double>();
        if (!std::isfinite(x) || x < 0 || (!allow_zero && x == 0))
            fail(f, "must be a positive number, got " + v.dump());
        return x;
    }
    bool boolean(const std::string& f, bool fallback) const override {
        if (!present(f)) return fallback;
        if (!j.at(f).is_boolean()) fail(f, "must be true or false, got " + j.at(f).dump());
        return j.at(f).get<bool>();
    }
    std::string string(const std::string& f, const std::string& fallback) const override {
        if (!present(f)) return fallback;
        if (!j.at(f).is_string()) fail(f, "must be a string, got " + j.at(f).dump());
        return j.at(f).get<std::string>();
    }
    std::string kind(const std::string& f) const override {
        const json& v = j.at(f);
        return v.is_object() && v.contains("rope_type") && v["rope_type"].is_string()
                   ? v["rope_type"].get<std::string>()
               : v.is_object() && v.contains("type") && v["type"].is_string() ? v["type"].get<std::string>()
                                                                              : v.dump();
    }
};

/// attnviz's own checkpoints (`attnviz train`) say which parts their blocks have: attnviz_norm
/// (layernorm | rmsnorm | none), attnviz_mlp (gelu | swiglu | none), attnviz_positions (learned |
/// sinusoidal | rope), and the older attnviz_attention_only / attnviz_layer_norm booleans.
void read_attnviz_options(const ConfigReader& c, ModelSpec& s) {
    if (c.boolean("attnviz_attention_only", false)) s.mlp = MlpKind::None;
    if (!c.boolean("attnviz_layer_norm", true)) s.norm = NormKind::None;
    // Each field names one kind of core/model.hpp's tables.
    auto choice = [&](const char* field, const auto& allowed, auto* kind) {
        if (!c.present(field)) return;
        const std::string v = c.string(field, "");
        if (!kind_from_name(v, allowed, kind))
            c.fail(field, "'" + v + "' is not supported (" + kind_names(allowed, false) + ")");
    };
    choice("attnviz_norm", std::vector<NormKind>{NormKind::LayerNorm, NormKind::RMSNorm, NormKind::None},
           &s.norm);
    choice("attnviz_mlp", std::vector<MlpKind>{MlpKind::Gelu, MlpKind::SwiGLU, MlpKind::GeGLU, MlpKind::None},
           &s.mlp);
    choice("attnviz_positions",
           std::vector<PositionKind>{PositionKind::Learned, PositionKind::Sinusoidal, PositionKind::Rope},
           &s.positions);
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
    const Architecture* arch = find_architecture(type);
    if (!arch) c.fail("model_type", "'" + type + "' is not supported (" + architecture_names() + ")");
    s.family = arch->family;
    arch->read(c, type, s);
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
    /// A vector plus `offset` in every element, in a buffer of its own (Gemma's norms store γ − 1).
    const float* vector_plus(const std::string& name, int n, float offset) {
        const float* v = floats(name, {n});
        if (offset == 0.0f) return v;
        ck_.converted_bytes += std::uint64_t(n) * 4;
        ck_.weight_bytes += std::uint64_t(n) * 4;
        auto buf = std::shared_ptr<float[]>(new float[std::size_t(n)]);  // [n]
        for (int i = 0; i < n; ++i) buf[std::size_t(i)] = v[i] + offset;
        ck_.storage.push_back(buf);
        return buf.get();
    }

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

/// The weights of any architecture of the table, by its tensor names and layout.
ModelWeights load_weights(const ModelSpec& s, const Architecture& arch, Checkpoint& ck, bool tied,
                          bool attention_bias) {
    const TensorNames& names = arch.tensors;
    const bool qkv_bias = arch.qkv_bias;
    TensorSource t(ck, names.fallback_prefix);
    ModelWeights m;
    m.spec = s;
    const int d = s.d_model, qd = s.n_head * s.d_head, kvd = s.n_kv_head * s.d_head;
    const NormKind nk = norm_kind(s);
    const MlpKind mk = mlp_kind(s);
    m.wte = t.matrix(names.embed + ".weight", s.vocab_size, d);
    if (position_kind(s) == PositionKind::Learned)
        m.wpe = t.matrix(names.positions + ".weight", s.max_positions + s.position_offset, d);
    const bool bare = s.head_transform && !t.has(names.head_dense + ".weight");  // BertModel: no MLM head
    m.lm_head = tied || bare ? m.wte : t.matrix(names.lm_head + ".weight", s.vocab_size, d);
    auto norm = [&](const std::string& p) {
        if (nk == NormKind::None) return Norm{};
        const bool gamma = arch.norm_gamma_beta && !t.has(p + ".weight") && t.has(p + ".gamma");
        return Norm{t.vector_plus(p + (gamma ? ".gamma" : ".weight"), d, arch.norm_weight_offset),
                    nk == NormKind::LayerNorm ? t.vector(p + (gamma ? ".beta" : ".bias"), d) : nullptr, d};
    };
    // Conv1D: [in, out] and a bias, always; nn.Linear: [out, in], a bias when required or present.
    auto linear = [&](const std::string& p, int in, int out, bool bias) {
        if (names.conv1d) return Linear{t.matrix(p + ".weight", in, out), false, t.vector(p + ".bias", out)};
        Linear L{t.matrix(p + ".weight", out, in), true, nullptr};
        if (bias || t.has(p + ".bias")) L.bias = t.vector(p + ".bias", out);
        return L;
    };
    if (s.type_vocab > 0) m.wtt = t.matrix(names.token_types + ".weight", s.type_vocab, d);
    if (s.embed_norm) m.ln_embed = norm(names.embed_norm);
    if (bare) {
        m.spec.head_transform = false;  // a bare encoder (BertModel): no head, no logits
        m.spec.unembeds = false;
    }
    if (m.spec.head_transform) {
        m.head_dense = linear(names.head_dense, d, d, true);
        for (const std::string& b : names.lm_bias)
            if (t.has(b)) {
                m.lm_bias = t.vector(b, s.vocab_size);
                break;
            }
        if (!m.lm_bias) throw Error("the checkpoint has no tensor '" + names.lm_bias.front() + "'");
    }
    if (m.spec.unembeds) m.ln_f = norm(names.final_norm);
    for (int l = 0; l < s.n_layer; ++l) {
        const std::string p = names.block_prefix(l);
        BlockWeights b;
        b.ln_1 = norm(p + names.attn_norm);
        if (mk != MlpKind::None) b.ln_2 = norm(p + names.mlp_norm);
        if (!names.qkv.empty()) {
            const Linear qkv = linear(p + names.qkv, d, 3 * d, true);  // [d, 3d]: q | k | v column blocks
            b.q = Linear{qkv.weight.cols_slice(0, d), false, qkv.bias};
            b.k = Linear{qkv.weight.cols_slice(d, d), false, qkv.bias + d};
            b.v = Linear{qkv.weight.cols_slice(2 * d, d), false, qkv.bias + 2 * d};
        } else {
            b.q = linear(p + names.q, d, qd, attention_bias || qkv_bias);
            b.k = linear(p + names.k, d, kvd, attention_bias || qkv_bias);
            b.v = linear(p + names.v, d, kvd, attention_bias || qkv_bias);
        }
        b.o = linear(p + names.o, qd, d, attention_bias);
        if (gated_mlp(mk)) {
            b.gate = linear(p + names.gate, d, s.d_ff, false);
            b.up = linear(p + names.up, d, s.d_ff, false);
            b.down = linear(p + names.down, s.d_ff, d, false);
        } else if (gelu_mlp(mk)) {
            b.fc = linear(p + names.fc, d, s.d_ff, false);
            b.proj = linear(p + names.proj, s.d_ff, d, false);
        }
        m.blocks.push_back(b);
    }
    return m;
}

/// An encoder–decoder's weights (t5, bart): the shared embedding, each stack by its own names (the
/// decoder's blocks with their cross-attention), the unembedding and BART's final_logits_bias.
ModelWeights load_seq2seq_weights(const ModelSpec& s, const Architecture& arch, Checkpoint& ck, bool tied) {
    const TensorNames& dn = arch.tensors;
    TensorSource t(ck, dn.fallback_prefix);
    ModelWeights m;
    m.spec = s;
    const int d = s.d_model, hd = s.n_head * s.d_head, V = s.vocab_size;
    std::string embed = dn.embed + ".weight";  // the shared embedding, or a stack's copy of it
    std::vector<std::string> alternates = dn.embed_alternates;
    alternates.insert(alternates.end(), arch.encoder_tensors.embed_alternates.begin(),
                      arch.encoder_tensors.embed_alternates.end());
    for (const std::string& alt : alternates)
        if (!t.has(embed) && t.has(alt + ".weight")) embed = alt + ".weight";
    m.wte = t.matrix(embed, V, d);
    m.lm_head = tied ? m.wte : t.matrix(dn.lm_head + ".weight", V, d);
    if (!dn.logits_bias.empty() && t.has(dn.logits_bias)) m.lm_bias = t.matrix(dn.logits_bias, 1, V).data;
    const bool layer_norm = norm_kind(s) == NormKind::LayerNorm;
    auto norm = [&](const std::string& p) {
        return Norm{t.vector(p + ".weight", d), layer_norm ? t.vector(p + ".bias", d) : nullptr, d};
    };
    auto linear = [&](const std::string& p, int in, int out) {
        Linear L{t.matrix(p + ".weight", out, in), true, nullptr};
        if (arch.all_biases || t.has(p + ".bias")) L.bias = t.vector(p + ".bias", out);
        return L;
    };
    const MlpKind mk = mlp_kind(s);
    auto stack = [&](const TensorNames& names, int n_layer, bool cross, std::vector<BlockWeights>& blocks,
                     WeightRef& wpe, Norm& ln_embed, Norm& ln_f, const float*& rel_bias) {
        if (position_kind(s) == PositionKind::Learned)
            wpe = t.matrix(names.positions + ".weight", s.max_positions + s.position_offset, d);
        if (!names.embed_norm.empty()) ln_embed = norm(names.embed_norm);
        if (s.s2s.rel_buckets > 0)
            rel_bias =
                t.matrix(names.block_prefix(0) + names.rel_bias + ".weight", s.s2s.rel_buckets, s.n_head)
                    .data;
        for (int l = 0; l < n_layer; ++l) {
            const std::string p = names.block_prefix(l);
            BlockWeights b;
            b.ln_1 = norm(p + names.attn_norm);
            b.q = linear(p + names.q, d, hd);
            b.k = linear(p + names.k, d, hd);
            b.v = linear(p + names.v, d, hd);
            b.o = linear(p + names.o, hd, d);
            if (cross) {
                b.ln_cross = norm(p + names.cross_norm);
                b.cq = linear(p + names.cross_q, d, hd);
                b.ck = linear(p + names.cross_k, d, hd);
                b.cv = linear(p + names.cross_v, d, hd);
                b.co = linear(p + names.cross_o, hd, d);
            }
            b.ln_2 = norm(p + names.mlp_norm);
            if (gated_mlp(mk)) {
                b.gate = linear(p + names.gate, d, s.d_ff);
                b.up = linear(p + names.up, d, s.d_ff);
                b.down = linear(p + names.down, s.d_ff, d);
            } else {
                b.fc = linear(p + names.fc, d, s.d_ff);
                b.proj = linear(p + names.proj, s.d_ff, d);
            }
            blocks.push_back(b);
        }
        if (s.s2s.final_norm) ln_f = norm(names.final_norm);
    };
    EncoderWeights& e = m.encoder;
    stack(arch.encoder_tensors, s.s2s.n_encoder_layer, false, e.blocks, e.wpe, e.ln_embed, e.ln_f,
          e.rel_bias);
    stack(dn, s.n_layer, true, m.blocks, m.wpe, m.ln_embed, m.ln_f, m.rel_bias);
    return m;
}

}  // namespace

void require_model_folder(const std::string& dir) {
    // The commonest mistake first, in words: a folder that is not a model's (or no folder at all).
    if (!platform::exists(dir)) throw Error(dir + ": no such folder");
    if (!platform::is_directory(dir))
        throw Error(dir +
                    " is a file, not a model folder (a Hugging Face model folder holds config.json, "
                    "model.safetensors and the tokenizer's files)");
    if (!platform::exists(dir + "/config.json"))
        throw Error(dir +
                    " is not a model folder: it has no config.json (a Hugging Face model folder "
                    "holds config.json, model.safetensors and the tokenizer's files)");
}

ModelWeights load_model_dir(const std::string& dir) {
    const std::string config_path = dir + "/config.json";
    require_model_folder(dir);
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
    const Architecture& arch = *find_architecture(spec.architecture);
    if (spec.encoder_decoder)
        m = load_seq2seq_weights(spec, arch, ck, flag("tie_word_embeddings", arch.tied_by_default));
    else
        m = load_weights(spec, arch, ck, flag("tie_word_embeddings", arch.tied_by_default),
                         !arch.tensors.conv1d && flag("attention_bias", false));
    m.storage = std::move(ck.storage);
    m.weight_bytes = ck.weight_bytes;
    validate_model(m);
    return m;
}

}  // namespace attnviz

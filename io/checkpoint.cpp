// Checkpoint folders of the trainable model: see io/checkpoint.hpp.
#include "io/checkpoint.hpp"

#include <nlohmann/json.hpp>

#include "core/architecture.hpp"
#include "core/error.hpp"
#include "io/json_limits.hpp"
#include "io/model_loader.hpp"
#include "io/safetensors.hpp"

namespace attnviz {

namespace {

using ojson = nlohmann::ordered_json;

/// config.json's fields as JSON, in the order set.
struct JsonSink final : ConfigSink {
    ojson& j;
    explicit JsonSink(ojson& j_) : j(j_) {}
    void set(const std::string& f, int v) override { j[f] = v; }
    void set(const std::string& f, double v) override { j[f] = v; }
    void set(const std::string& f, bool v) override { j[f] = v; }
    void set(const std::string& f, const char* v) override { j[f] = v; }
    void set(const std::string& f, const std::vector<std::string>& v) override { j[f] = v; }
};

}  // namespace

/// config.json: the fields of the architecture the config is written in (core/architecture.hpp:
/// GPT-2's n_embd, n_layer, ... or, once a choice is Llama's, Llama's hidden_size, ...), plus attnviz
/// keys saying which norm, MLP and positions the blocks have (io/model_loader reads them).
std::string train_config_json(const TrainConfig& c) {
    ojson j;
    const NormKind norm = train_norm(c);
    JsonSink sink(j);
    train_architecture(c).write(c, sink);
    j["tie_word_embeddings"] = c.tied;
    j["attnviz_attention_only"] = c.mlp == MlpKind::None;
    j["attnviz_layer_norm"] = norm != NormKind::None;
    j["attnviz_norm"] = kind_name(norm);
    j["attnviz_mlp"] = kind_name(c.mlp);
    j["attnviz_positions"] = kind_name(c.positions);
    return j.dump(2) + "\n";
}

std::vector<StagedFile> stage_train_checkpoint(const std::string& dir, const Params<float>& p) {
    std::vector<SafetensorsWriteTensor> tensors;
    for (const ParamView& v : p.layout) {
        SafetensorsWriteTensor t;
        t.name = v.name;
        t.dtype = "F32";
        for (int s : v.shape) t.shape.push_back(s);
        t.data = p.data.data() + v.offset;
        t.count = v.size;
        tensors.push_back(std::move(t));
    }
    check_replaceable(dir + "/model.safetensors");
    check_replaceable(dir + "/config.json");
    std::vector<StagedFile> files;
    files.push_back(stage_safetensors(dir + "/model.safetensors", tensors, {{"format", "pt"}}));
    files.push_back(stage_file(dir + "/config.json", train_config_json(p.config)));
    return files;
}

void save_train_checkpoint(const std::string& dir, const Params<float>& p) {
    std::vector<StagedFile> files = stage_train_checkpoint(dir, p);
    commit_all(files);
}

TrainConfig train_config_from_checkpoint(const std::string& dir) {
    const std::string path = dir + "/config.json";
    const std::string text = read_file(path, 4ull << 20);
    const ModelSpec s = parse_model_config(text, path);
    const nlohmann::json j = parse_json_limited(text, path, "the file");
    auto flag = [&](const char* f, bool fallback) {
        return j.contains(f) && j[f].is_boolean() ? j[f].get<bool>() : fallback;
    };
    auto refuse = [&](const std::string& why) {
        throw Error(path + ": not a model the trainer computes (" + why + ")");
    };
    if (s.n_kv_head != s.n_head) refuse("grouped-query attention");
    if (s.d_head * s.n_head != s.d_model) refuse("head_dim × heads differs from hidden_size");
    if (flag("attention_bias", false)) refuse("attention biases in the Llama layout");
    TrainConfig c;
    c.n_layer = s.n_layer;
    c.n_head = s.n_head;
    c.d_model = s.d_model;
    c.context = s.max_positions;
    c.vocab_size = s.vocab_size;
    c.layer_norm = norm_kind(s) != NormKind::None;
    if (c.layer_norm) c.norm = norm_kind(s);
    c.mlp = mlp_kind(s);
    c.positions = position_kind(s);
    c.d_ff = c.mlp == MlpKind::None ? 0 : s.d_ff;
    c.tied = flag("tie_word_embeddings", s.family == ModelFamily::Gpt2);
    c.norm_eps = s.norm_eps;
    if (c.positions != PositionKind::Learned && s.rope_theta != 10000.0)
        refuse("rope_theta other than 10000");
    if (train_architecture(c).family != s.family)
        refuse(std::string("its norm, MLP and positions need the ") + (llama_layout(c) ? "Llama" : "GPT-2") +
               " tensor layout");
    try {
        validate_train_config(c);
    } catch (const Error& e) {
        throw Error(path + ": " + e.what());
    }
    return c;
}

Params<float> load_train_checkpoint(const std::string& dir) {
    const TrainConfig c = train_config_from_checkpoint(dir);
    Params<float> p = make_params<float>(c);
    const SafetensorsTable table = open_safetensors_dir(dir);
    for (const ParamView& v : p.layout) {
        auto it = table.tensors.find(v.name);
        if (it == table.tensors.end()) throw Error(dir + ": the checkpoint has no tensor '" + v.name + "'");
        const SafetensorsTensor& t = it->second;
        const std::vector<std::int64_t> want(v.shape.begin(), v.shape.end());
        if (t.shape != want) {
            auto text = [](const std::vector<std::int64_t>& sh) {
                std::string r = "[";
                for (std::size_t i = 0; i < sh.size(); ++i) r += (i ? ", " : "") + std::to_string(sh[i]);
                return r + "]";
            };
            throw Error(t.file + ": tensor '" + v.name + "' has shape " + text(t.shape) +
                        ", the config implies " + text(want));
        }
        to_float32(t, p.data.data() + v.offset);
    }
    return p;
}

}  // namespace attnviz

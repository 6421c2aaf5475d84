// Checkpoint folders of the trainable model: see io/checkpoint.hpp.
#include "io/checkpoint.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "core/architecture.hpp"
#include "core/error.hpp"
#include "io/json_limits.hpp"
#include "io/model_loader.hpp"
#include "io/safetensors.hpp"
#include "io/story_grammar.hpp"
#include "io/tokenizer.hpp"

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
    if (c.encoder_layers > 0) {
        // An encoder–decoder: T5 v1.1's config (core/train_seq2seq.hpp), read by transformers'
        // T5ForConditionalGeneration as by attnviz. Token 0 <pad> starts the decoder, 1 </s> ends.
        j["architectures"] = {"T5ForConditionalGeneration"};
        j["model_type"] = "t5";
        j["is_encoder_decoder"] = true;
        j["vocab_size"] = c.vocab_size;
        j["d_model"] = c.d_model;
        j["d_kv"] = c.d_model / c.n_head;
        j["d_ff"] = train_d_ff(c);
        j["num_layers"] = c.encoder_layers;
        j["num_decoder_layers"] = c.n_layer;
        j["num_heads"] = c.n_head;
        j["relative_attention_num_buckets"] = 32;
        j["relative_attention_max_distance"] = 128;
        j["feed_forward_proj"] = "gated-gelu";
        j["dense_act_fn"] = "gelu_new";
        j["is_gated_act"] = true;
        j["layer_norm_epsilon"] = c.norm_eps;
        j["dropout_rate"] = 0.0;
        j["tie_word_embeddings"] = false;
        j["pad_token_id"] = 0;
        j["eos_token_id"] = 1;
        j["decoder_start_token_id"] = 0;
        j["n_positions"] = c.context;
        return j.dump(2) + "\n";
    }
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
    if (s.encoder_decoder) refuse("an encoder-decoder, which the trainer does not continue from a folder");
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

namespace attnviz {

std::string words_tokenizer_json(const std::vector<std::string>& tokens, int first_free_id,
                                 bool prefix_space) {
    // Vocabulary in the byte-level spelling (" cat" -> "Ġcat"), id by id; merges in rank order.
    std::vector<std::pair<std::string, int>> vocab;
    std::unordered_map<std::string, int> id_of;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (tokens[i].empty()) throw Error("tokenizer: token " + std::to_string(i) + " is empty");
        const std::string t = byte_level_token(tokens[i]);
        if (!id_of.emplace(t, int(i)).second)
            throw Error("tokenizer: token " + std::to_string(i) + " ('" + tokens[i] + "') is there twice");
        vocab.emplace_back(t, int(i));
    }
    int next = std::max(first_free_id, int(tokens.size()));
    auto ensure = [&](const std::string& t) {
        if (id_of.emplace(t, next).second) vocab.emplace_back(t, next++);
    };
    for (int b = 0; b < 256; ++b) ensure(byte_level_token(std::string(1, char(b))));
    // Merges build each token from its first byte on, one byte at a time. Tokens that start with a
    // space go first: in " cat" only the leftmost piece can start with a space, so their merges
    // always join the word from its left and no merge of another word can cut in.
    std::vector<std::string> order;
    for (const std::string& t : tokens)
        if (t[0] == ' ') order.push_back(t);
    for (const std::string& t : tokens)
        if (t[0] != ' ') order.push_back(t);
    std::vector<std::pair<std::string, std::string>> merges;
    std::unordered_map<std::string, bool> made;
    for (const std::string& t : order) {
        std::string piece = byte_level_token(t.substr(0, 1));
        for (std::size_t k = 1; k < t.size(); ++k) {
            const std::string c = byte_level_token(t.substr(k, 1));
            const std::string joined = piece + c;
            if (!made[joined]) {
                made[joined] = true;
                ensure(joined);
                merges.emplace_back(piece, c);
            }
            piece = joined;
        }
    }
    ojson model;
    model["type"] = "BPE";
    model["dropout"] = nullptr;
    model["unk_token"] = nullptr;
    model["continuing_subword_prefix"] = nullptr;
    model["end_of_word_suffix"] = nullptr;
    model["fuse_unk"] = false;
    model["byte_fallback"] = false;
    ojson v = ojson::object();
    for (const auto& [t, id] : vocab) v[t] = id;
    model["vocab"] = std::move(v);
    ojson m = ojson::array();
    for (const auto& [a, b] : merges) m.push_back(a + " " + b);
    model["merges"] = std::move(m);
    const ojson byte_level = {{"type", "ByteLevel"},
                              {"add_prefix_space", prefix_space},
                              {"trim_offsets", true},
                              {"use_regex", true}};
    ojson j;
    j["version"] = "1.0";
    j["truncation"] = nullptr;
    j["padding"] = nullptr;
    // A token of the form <name> (translate's <pad>, </s>, <unk>) is special, as in T5's tokenizer: an
    // added token, read whole wherever it stands in a text.
    ojson added = ojson::array();
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const std::string& t = tokens[i];
        if (t.size() < 3 || t.front() != '<' || t.back() != '>' || t.find(' ') != std::string::npos) continue;
        added.push_back({{"id", int(i)},
                         {"content", t},
                         {"single_word", false},
                         {"lstrip", false},
                         {"rstrip", false},
                         {"normalized", false},
                         {"special", true}});
    }
    j["added_tokens"] = std::move(added);
    j["normalizer"] = nullptr;
    j["pre_tokenizer"] = byte_level;
    j["post_processor"] = nullptr;
    j["decoder"] = byte_level;
    j["model"] = std::move(model);
    std::string text = j.dump(1) + "\n";
    // Every word is one token of its own id (the rule above, checked rather than trusted).
    const auto tok = Tokenizer::from_tokenizer_json(text, "tokenizer.json");
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const std::string& t = tokens[i];
        if (prefix_space && t[0] != ' ') continue;  // (read after a word: "forest." gives " forest", ".")
        const std::vector<int> ids = tok->encode(t);
        if (ids.size() != 1 || ids[0] != int(i))
            throw Error("tokenizer: the token '" + t + "' would not read back as one token");
    }
    return text;
}

std::vector<std::pair<std::string, std::string>> checkpoint_task_files(const Task& task, int model_vocab) {
    std::vector<std::pair<std::string, std::string>> files = task.files;
    bool has_tokenizer = false;
    for (const auto& f : files)
        has_tokenizer = has_tokenizer || f.first == "tokenizer.json" || f.first == "vocab.json";
    if (!has_tokenizer) {
        std::vector<std::string> tokens = task.tokens;
        const int named = std::max(task.vocab_size, model_vocab);
        for (int id = int(tokens.size()); id < named; ++id) tokens.push_back(" " + std::to_string(id));
        files.emplace_back("tokenizer.json", words_tokenizer_json(tokens, named, task.tokens_prefix_space));
    }
    if (!task.grammar.empty()) files.emplace_back("story_grammar.json", story_grammar_json(task.grammar));
    return files;
}

}  // namespace attnviz

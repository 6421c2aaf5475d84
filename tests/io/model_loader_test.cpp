// io/model_loader: config.json fields, safetensors checks, F32 in place, BF16/F16 conversion.
#include "io/model_loader.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "common/test_files.hpp"
#include "core/error.hpp"
#include "core/ops.hpp"
#include "io/files.hpp"

namespace attnviz {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

using test::error_of;

json llama_config() {
    return json{{"model_type", "llama"},
                {"num_hidden_layers", 1},
                {"num_attention_heads", 2},
                {"num_key_value_heads", 1},
                {"hidden_size", 8},
                {"intermediate_size", 12},
                {"vocab_size", 10},
                {"rms_norm_eps", 1e-6},
                {"rope_theta", 10000.0},
                {"max_position_embeddings", 32},
                {"tie_word_embeddings", true},
                {"rope_scaling", nullptr}};
}

TEST(ModelConfig, Gpt2Fields) {
    const ModelSpec s = parse_model_config(
        R"({"model_type":"gpt2","n_layer":12,"n_head":12,"n_embd":768,"n_positions":1024,"vocab_size":50257,
            "layer_norm_epsilon":1e-5,"n_inner":null,"activation_function":"gelu_new"})");
    EXPECT_EQ(s.family, ModelFamily::Gpt2);
    EXPECT_EQ(s.d_head, 64);
    EXPECT_EQ(s.d_ff, 3072);
    EXPECT_EQ(s.n_kv_head, 12);
    EXPECT_EQ(s.max_positions, 1024);
}

TEST(ModelConfig, LlamaFamilyFieldsAndRefusals) {
    const ModelSpec s = parse_model_config(llama_config().dump());
    EXPECT_EQ(s.family, ModelFamily::Llama);
    EXPECT_EQ(s.n_kv_head, 1);
    EXPECT_EQ(s.d_head, 4);
    auto refuse = [](json c, const std::string& field) {
        const std::string msg = error_of([&] { parse_model_config(c.dump()); });
        EXPECT_NE(msg.find("'" + field + "'"), std::string::npos) << msg;
    };
    json c = llama_config();
    c["model_type"] = "mamba";
    refuse(c, "model_type");
    c = llama_config();
    c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
    refuse(c, "rope_scaling");
    c = llama_config();
    c["model_type"] = "qwen2";
    c["use_sliding_window"] = true;
    refuse(c, "use_sliding_window");
    c = llama_config();
    c["num_key_value_heads"] = 3;
    refuse(c, "num_key_value_heads");
    c = llama_config();
    c["hidden_size"] = "8";
    refuse(c, "hidden_size");
    c = llama_config();
    c["vocab_size"] = 1e12;
    refuse(c, "vocab_size");
    c = llama_config();
    c["hidden_act"] = "gelu";
    refuse(c, "hidden_act");
    // Mistral's sliding window bounds the accepted length (below it, attention is plain causal).
    c = llama_config();
    c["model_type"] = "mistral";
    c["sliding_window"] = 16;
    EXPECT_EQ(parse_model_config(c.dump()).max_positions, 16);
    EXPECT_NE(error_of([] { parse_model_config("[1,2"); }).find("config.json"), std::string::npos);
}

TEST(ModelConfig, EncoderFieldsAndRefusals) {
    const json bert = {{"model_type", "bert"},
                       {"num_hidden_layers", 2},
                       {"num_attention_heads", 4},
                       {"hidden_size", 16},
                       {"intermediate_size", 32},
                       {"vocab_size", 100},
                       {"max_position_embeddings", 64},
                       {"type_vocab_size", 2},
                       {"layer_norm_eps", 1e-12},
                       {"hidden_act", "gelu"},
                       {"pad_token_id", 0}};
    ModelSpec s = parse_model_config(bert.dump());
    EXPECT_FALSE(s.causal);
    EXPECT_TRUE(is_encoder(s));
    EXPECT_TRUE(s.post_norm && s.embed_norm && s.head_transform);
    EXPECT_EQ(s.mlp, MlpKind::GeluErf);
    EXPECT_EQ(s.type_vocab, 2);
    EXPECT_EQ(s.position_offset, 0);
    EXPECT_EQ(s.max_positions, 64);
    EXPECT_DOUBLE_EQ(s.norm_eps, 1e-12);
    // RoBERTa: positions from row pad + 1, so 2 rows fewer accepted; its head's GELU is always erf.
    json c = bert;
    c["model_type"] = "roberta";
    c["pad_token_id"] = 1;
    c["type_vocab_size"] = 1;
    c["hidden_act"] = "gelu_new";
    s = parse_model_config(c.dump());
    EXPECT_EQ(s.position_offset, 2);
    EXPECT_EQ(s.max_positions, 62);
    EXPECT_EQ(s.mlp, MlpKind::Gelu);
    EXPECT_EQ(s.head_act, MlpKind::GeluErf);
    const json distil = {{"model_type", "distilbert"},
                         {"n_layers", 2},
                         {"n_heads", 2},
                         {"dim", 16},
                         {"hidden_dim", 32},
                         {"vocab_size", 100},
                         {"max_position_embeddings", 64},
                         {"activation", "gelu"},
                         {"sinusoidal_pos_embds", true}};
    s = parse_model_config(distil.dump());
    EXPECT_EQ(s.type_vocab, 0);
    EXPECT_EQ(s.d_ff, 32);
    auto refuse = [](json j, const std::string& field) {
        const std::string msg = error_of([&] { parse_model_config(j.dump()); });
        EXPECT_NE(msg.find("'" + field + "'"), std::string::npos) << msg;
    };
    for (const auto& [field, value] :
         std::vector<std::pair<std::string, json>>{{"hidden_act", "relu"},
                                                   {"position_embedding_type", "relative_key_query"},
                                                   {"is_decoder", true},
                                                   {"add_cross_attention", true}}) {
        c = bert;
        c[field] = value;
        refuse(c, field);
    }
    c = distil;
    c["activation"] = "silu";
    refuse(c, "activation");
    c = bert;
    c["model_type"] = "roberta";
    c["pad_token_id"] = 63;
    refuse(c, "max_position_embeddings");
}

// A safetensors file of the given tensors (all of `dtype`, raw little-endian bytes).
struct StTensor {
    std::string dtype;
    std::vector<int> shape;
    std::string bytes;
};
std::string st_file(const std::map<std::string, StTensor>& tensors) {
    json h = json::object();
    std::string data;
    for (const auto& [name, t] : tensors) {
        h[name] = {{"dtype", t.dtype},
                   {"shape", t.shape},
                   {"data_offsets", {data.size(), data.size() + t.bytes.size()}}};
        data += t.bytes;
    }
    std::string header = h.dump();
    header.append((8 - header.size() % 8) % 8, ' ');
    std::string out(8, '\0');
    const std::uint64_t n = header.size();
    std::memcpy(&out[0], &n, 8);
    return out + header + data;
}

std::string f32_bytes(const Mat& M) {
    return std::string(reinterpret_cast<const char*>(M.data()), std::size_t(M.size()) * 4);
}
std::string bf16_bytes(const Mat& M) {  // truncation (exact for the values used)
    std::string out;
    for (Eigen::Index i = 0; i < M.size(); ++i) {
        std::uint32_t bits;
        std::memcpy(&bits, M.data() + i, 4);
        out.push_back(char((bits >> 16) & 0xff));
        out.push_back(char(bits >> 24));
    }
    return out;
}

using test::TempDir;

std::map<std::string, StTensor> llama_tensors(bool bf16_embedding) {
    std::map<std::string, StTensor> t;
    std::uint64_t seed = 1;
    auto put = [&](const std::string& name, int r, int c) {
        Mat M = random_normal(r, c, 0.5, seed++);
        if (bf16_embedding && name == "model.embed_tokens.weight") {
            M = Mat::Constant(r, c, 0.5f);
            M(3, 2) = -1.5f;
            t[name] = {"BF16", {r, c}, bf16_bytes(M)};
        } else {
            t[name] = {"F32", c == 1 ? std::vector<int>{r} : std::vector<int>{r, c}, f32_bytes(M)};
        }
    };
    put("model.embed_tokens.weight", 10, 8);
    put("model.norm.weight", 8, 1);
    put("model.layers.0.input_layernorm.weight", 8, 1);
    put("model.layers.0.post_attention_layernorm.weight", 8, 1);
    put("model.layers.0.self_attn.q_proj.weight", 8, 8);
    put("model.layers.0.self_attn.k_proj.weight", 4, 8);
    put("model.layers.0.self_attn.v_proj.weight", 4, 8);
    put("model.layers.0.self_attn.o_proj.weight", 8, 8);
    put("model.layers.0.mlp.gate_proj.weight", 12, 8);
    put("model.layers.0.mlp.up_proj.weight", 12, 8);
    put("model.layers.0.mlp.down_proj.weight", 8, 12);
    return t;
}

void write_model(const std::string& dir, const json& config, const std::string& st) {
    write_file_atomic(dir + "/config.json", config.dump());
    write_file_atomic(dir + "/model.safetensors", st);
}

TEST(ModelLoader, LoadsAndRuns) {
    TempDir d;
    write_model(d.path, llama_config(), st_file(llama_tensors(true)));
    const ModelWeights m = load_model_dir(d.path);
    EXPECT_EQ(m.spec.architecture, "llama");
    EXPECT_EQ(m.wte.map()(3, 2), -1.5f);  // BF16 converted
    EXPECT_EQ(m.wte.map()(0, 0), 0.5f);
    EXPECT_EQ(m.lm_head.data, m.wte.data);  // tied
    const ModelForward f = run_model(m, {1, 2, 3});
    EXPECT_EQ(f.logits.rows(), 3);
    EXPECT_TRUE(f.logits.allFinite());
}

TEST(ModelLoader, RefusesBadFilesWithOneClearLine) {
    TempDir d;
    auto expect = [&](const std::string& st, const std::string& needle) {
        write_model(d.path, llama_config(), st);
        const std::string msg = error_of([&] { load_model_dir(d.path); });
        EXPECT_NE(msg.find(needle), std::string::npos) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    };
    const std::string good = st_file(llama_tensors(false));
    expect(good.substr(0, good.size() - 10), "outside");
    expect(good.substr(0, 5), "truncated");
    std::string huge = good;
    const std::uint64_t ten_gb = 10ull << 30;
    std::memcpy(&huge[0], &ten_gb, 8);
    expect(huge, "header length");
    auto t = llama_tensors(false);
    t["model.layers.0.mlp.up_proj.weight"].shape = {8, 12};
    expect(st_file(t), "'model.layers.0.mlp.up_proj.weight' has shape [8, 12], the config implies [12, 8]");
    t = llama_tensors(false);
    t.erase("model.norm.weight");
    expect(st_file(t), "no tensor 'model.norm.weight'");
    t = llama_tensors(false);
    t["model.norm.weight"].shape = {9};
    expect(st_file(t), "bytes for shape");
    t = llama_tensors(false);
    t["model.norm.weight"].dtype = "I32";
    expect(st_file(t), "only F32, BF16 and F16");
    std::string lies = good;
    const std::size_t at = lies.find("\"data_offsets\":[0,");
    ASSERT_NE(at, std::string::npos);
    lies.replace(at, 18, "\"data_offsets\":[9,");
    expect(lies, "tensor 'model.embed_tokens.weight' has 311 bytes");
    // A header nested 100,000 arrays deep is refused before nlohmann-json recurses into it.
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    std::string nested(8, '\0');
    const std::uint64_t deep_len = deep.size();
    std::memcpy(&nested[0], &deep_len, 8);
    expect(nested + deep, "the header nests deeper than 64 levels (at byte 64)");
    // So is a config.json nested as deep.
    write_model(d.path, llama_config(), good);
    { std::ofstream(d.path + "/config.json", std::ios::trunc) << "{\"a\":" << deep << "}"; }
    const std::string cfg_msg = error_of([&] { load_model_dir(d.path); });
    EXPECT_NE(cfg_msg.find("config.json: the file nests deeper than 64 levels"), std::string::npos)
        << cfg_msg;
    // No weights at all.
    write_model(d.path, llama_config(), good);
    fs::remove(d.path + "/model.safetensors");
    EXPECT_NE(error_of([&] { load_model_dir(d.path); }).find("no model.safetensors"), std::string::npos);
    // Not a model folder at all: said in words, not as a missing file.
    EXPECT_EQ(error_of([&] { load_model_dir(d.path + "/nope"); }), d.path + "/nope: no such folder");
    fs::create_directory(d.path + "/empty");
    EXPECT_NE(error_of([&] {
                  load_model_dir(d.path + "/empty");
              }).find("is not a model folder: it has no config.json"),
              std::string::npos);
    EXPECT_NE(
        error_of([&] { load_model_dir(d.path + "/config.json"); }).find("is a file, not a model folder"),
        std::string::npos);
}

TEST(ModelLoader, RefusesWeightsOverTheMemoryLimit) {
    // A sparse 4 GiB embedding: the file is valid, the model would not fit in 3 GiB.
    TempDir d;
    json c = llama_config();
    c["vocab_size"] = 1 << 20;
    c["hidden_size"] = 1024;
    c["num_attention_heads"] = 16;
    c["num_key_value_heads"] = 16;
    json h = {{"model.embed_tokens.weight",
               {{"dtype", "F32"}, {"shape", {1 << 20, 1024}}, {"data_offsets", {0, 4ull << 30}}}}};
    std::string header = h.dump();
    header.append((8 - header.size() % 8) % 8, ' ');
    std::string head(8, '\0');
    const std::uint64_t n = header.size();
    std::memcpy(&head[0], &n, 8);
    write_model(d.path, c, head + header);
    fs::resize_file(d.path + "/model.safetensors", 8 + n + (4ull << 30));
    const std::string msg = error_of([&] { load_model_dir(d.path); });
    EXPECT_NE(msg.find("more than 3 GiB"), std::string::npos) << msg;
}

}  // namespace
}  // namespace attnviz

// What a learner reads about every stage stays the same: for the shipped scenes and a set of configs
// that switch on every branch of the stage texts (masks, linear attention, kernels, additive and
// bilinear scoring, RoPE, ALiBi, LayerNorm, designed heads, cross-attention, several heads), the
// stage list with titles, formulas, explanations, kinds, shapes and FLOPs hashes to the values in
// tests/data/stage_texts.golden, and so do a real model's stage texts for a few model specs.
//
// Numbers are left out of the stored hashes (a float's last bit may differ between builds), but
// with ATTNVIZ_STAGE_GOLDEN_DIR=DIR the test also writes, per scenario, the full dump: every stage's
// matrix as a hash of its bytes, a few cells, and explain_cell's text for five cells of every stage.
// Comparing two such directories (diff -r) proves a refactoring changed nothing a user sees.
// ATTNVIZ_STAGE_GOLDEN_WRITE=1 rewrites the golden file (after a deliberate change of a text).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/explain.hpp"
#include "core/stage_catalogue.hpp"
#include "core/trace.hpp"
#include "io/scene.hpp"

namespace attnviz {
namespace {

const std::string kScenes = std::string(ATTNVIZ_TEST_DATA) + "/../../assets/scenes";
const std::string kGolden = std::string(ATTNVIZ_TEST_DATA) + "/stage_texts.golden";

std::uint64_t fnv1a(const void* data, std::size_t size, std::uint64_t h = 1469598103934665603ull) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t k = 0; k < size; ++k) h = (h ^ p[k]) * 1099511628211ull;
    return h;
}
std::string hex(std::uint64_t h) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}
std::string hash_text(const std::string& s) {
    return hex(fnv1a(s.data(), s.size()));
}
std::string hash_matrix(const Mat& M) {
    std::uint64_t h = 1469598103934665603ull;
    const Eigen::Index r = M.rows(), c = M.cols();
    h = fnv1a(&r, sizeof r, h);
    h = fnv1a(&c, sizeof c, h);
    for (Eigen::Index i = 0; i < r; ++i)
        for (Eigen::Index j = 0; j < c; ++j) {
            const float v = M(i, j);
            h = fnv1a(&v, sizeof v, h);
        }
    return hex(h);
}
std::string num(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

Config with(std::vector<std::pair<const char*, const char*>> keys, Config c = Config{}) {
    for (const auto& [k, v] : keys) set_config_key(c, k, v);
    return c;
}

std::vector<std::pair<std::string, Config>> scenarios() {
    std::vector<std::pair<std::string, Config>> out;
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(kScenes))
        if (e.path().extension() == ".json") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (const std::string& f : files)
        out.emplace_back("scene_" + std::filesystem::path(f).stem().string(), load_scene(f).config);
    const char* text = "the cat sat on the mat and the dog sat too";
    Config custom = with({{"text", text}, {"mask", "custom"}, {"heads", "2"}, {"d_model", "16"}});
    custom.custom_mask.rows = 3, custom.custom_mask.cols = 4;
    custom.custom_mask.blocked = {0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1};
    out.emplace_back("mask_custom", custom);
    out.emplace_back("mask_padding", with({{"text", text}, {"mask", "padding"}, {"valid_length", "7"}}));
    out.emplace_back("mask_window", with({{"text", text}, {"mask", "window"}, {"window", "2"}}));
    out.emplace_back("dot_temperature", with({{"text", text}, {"scoring", "dot"}, {"temperature", "0.5"}}));
    out.emplace_back(
        "additive",
        with({{"text", text}, {"scoring", "additive"}, {"additive_hidden", "6"}, {"mask", "causal"}}));
    out.emplace_back("bilinear_rope",
                     with({{"text", text}, {"scoring", "bilinear"}, {"positional", "rope"}}));
    out.emplace_back(
        "boxcar_alibi",
        with({{"text", text}, {"scoring", "boxcar"}, {"positional", "alibi"}, {"bandwidth", "3"}}));
    out.emplace_back(
        "epanechnikov_padding",
        with({{"text", text}, {"scoring", "epanechnikov"}, {"mask", "padding"}, {"valid_length", "5"}}));
    out.emplace_back("alibi_causal_8heads",
                     with({{"text", text}, {"positional", "alibi"}, {"mask", "causal"}, {"heads", "8"}}));
    out.emplace_back("learned_pre_ln",
                     with({{"text", text}, {"positional", "learned"}, {"layernorm", "pre"}}));
    out.emplace_back(
        "none_post_ln_no_residual",
        with({{"text", text}, {"positional", "none"}, {"layernorm", "post"}, {"residual", "false"}}));
    out.emplace_back("post_ln", with({{"text", text}, {"layernorm", "post"}, {"d_k", "8"}, {"d_v", "4"}}));
    out.emplace_back("cross_pre_ln", with({{"text", text},
                                           {"source_text", "le chat est assis sur le tapis"},
                                           {"layernorm", "pre"},
                                           {"mask", "causal"},
                                           {"heads", "2"}}));
    out.emplace_back("cross_linear", with({{"text", text},
                                           {"source_text", "le chat est assis"},
                                           {"attention", "linear"},
                                           {"phi", "relu"}}));
    out.emplace_back("linear_causal_rope", with({{"text", text},
                                                 {"attention", "linear"},
                                                 {"mask", "causal"},
                                                 {"positional", "rope"},
                                                 {"phi", "softmax"}}));
    out.emplace_back("linear_padding_alibi", with({{"text", text},
                                                   {"attention", "linear"},
                                                   {"mask", "padding"},
                                                   {"valid_length", "6"},
                                                   {"positional", "alibi"}}));
    out.emplace_back("linear_padding_softmax_phi", with({{"text", text},
                                                         {"attention", "linear"},
                                                         {"mask", "padding"},
                                                         {"valid_length", "6"},
                                                         {"phi", "softmax"}}));
    out.emplace_back("linear_window", with({{"text", text}, {"attention", "linear"}, {"mask", "window"}}));
    for (const char* p : {"previous_token", "first_token", "same_token", "adjective_noun"})
        out.emplace_back(std::string("preset_") + p,
                         with({{"text", "a fluffy blue creature roamed the verdant forest"},
                               {"preset", p},
                               {"heads", "2"},
                               {"d_model", "32"}}));
    out.emplace_back("tiled_length", with({{"text", "x y z"},
                                           {"length", "11"},
                                           {"heads", "1"},
                                           {"d_model", "8"},
                                           {"seed", "7"},
                                           {"pe_base", "100"}}));
    return out;
}

struct Dump {
    std::string texts;  // what the stored hash covers: no computed numbers
    std::string full;   // texts plus numbers and hover derivations
};

Dump dump_trace(const Trace& t) {
    Dump d;
    std::ostringstream tx, fu;
    for (std::size_t s = 0; s < t.stages.size(); ++s) {
        const Stage& st = t.stages[s];
        tx << "## " << st.name << " head " << st.head << " phase " << stage_phase_of(st.name) << "\n"
           << "title: " << st.title << "\nformula: " << st.formula << "\nexplanation: " << st.explanation
           << "\nshape: " << st.shape_text() << " rows " << st.rows.name << " cols " << st.cols.name
           << "\nkind: " << int(st.kind) << " flops " << num(st.flops) << " bytes " << num(st.bytes)
           << " stored " << st.stored() << "\n";
        const Mat M = st.matrix();
        fu << "## " << st.name << " head " << st.head << " matrix " << hash_matrix(M) << " display "
           << hash_matrix(display_matrix(t, st)) << "\n";
        const int r = st.n_rows(), c = st.n_cols();
        const std::pair<int, int> cells[] = {{0, 0}, {r - 1, c - 1}, {r / 2, c / 2}, {0, c - 1}, {r - 1, 0}};
        for (const auto& [i, j] : cells) {
            fu << "cell(" << i << "," << j << ") at " << num(st.at(i, j)) << " row "
               << hash_matrix(Mat(st.row(i))) << "\n";
            for (const std::string& line : explain_cell(t, int(s), i, j)) fu << "  " << line << "\n";
        }
        for (const std::string& line : explain_cell(t, int(s), r, 0)) fu << "  " << line << "\n";
    }
    tx << "total flops " << num(t.total_flops()) << " stored bytes " << num(t.stored_bytes()) << "\n";
    // Linear attention too large for its implied weights words head_output differently.
    if (t.config.attention == AttentionKind::Linear) {
        LayerTextContext x;
        x.n = t.n, x.m = t.m, x.V = int(t.vocab->size());
        x.embedding_note = t.weights->embedding_note;
        for (const HeadWeights& hw : t.weights->heads) x.designed.push_back(hw.designed);
        x.implied_weights = false;
        for (const Stage& st : t.stages) {
            if (st.name == "weights") continue;
            const StageText w = layer_stage_text(t.config, x, st.name, st.head);
            tx << "## no implied weights: " << st.name << " " << st.head << "\n"
               << w.title << "\n"
               << w.formula << "\n"
               << w.explanation << "\n";
        }
    }
    d.texts = tx.str();
    d.full = d.texts + fu.str();
    return d;
}

std::vector<std::pair<std::string, ModelSpec>> model_specs() {
    ModelSpec gpt2;
    gpt2.architecture = "gpt2", gpt2.family = ModelFamily::Gpt2;
    gpt2.n_layer = 2, gpt2.n_head = 4, gpt2.n_kv_head = 4, gpt2.d_model = 64, gpt2.d_head = 16;
    gpt2.d_ff = 256, gpt2.vocab_size = 100, gpt2.max_positions = 64;
    ModelSpec llama = gpt2;
    llama.architecture = "llama", llama.family = ModelFamily::Llama;
    llama.n_kv_head = 2, llama.d_ff = 172;
    ModelSpec bare = gpt2;
    bare.norm = NormKind::None, bare.positions = PositionKind::Rope;
    ModelSpec mixed = llama;
    mixed.norm = NormKind::LayerNorm, mixed.mlp = MlpKind::Gelu, mixed.positions = PositionKind::Learned;
    return {{"model_gpt2", gpt2},
            {"model_llama_gqa", llama},
            {"model_no_norm_rope", bare},
            {"model_llama_layernorm_gelu", mixed}};
}

std::string dump_model_texts(const ModelSpec& spec) {
    std::ostringstream o;
    for (const char* name :
         {"ln_1", "Q", "K", "V", "scores", "weights", "head_output", "attn_out", "resid_mid", "ln_2",
          "mlp_out", "resid_post", "residual_stream", "rollout", "no_such_stage"})
        for (int head : {-1, 0, 3}) {
            const StageText w = model_stage_text(spec, name, head);
            o << "## " << name << " " << head << "\n"
              << w.title << "\n"
              << w.formula << "\n"
              << w.explanation << "\n";
        }
    return o.str();
}

std::map<std::string, std::string> read_golden() {
    std::map<std::string, std::string> g;
    std::ifstream in(kGolden);
    std::string name, hash;
    while (in >> name >> hash) g[name] = hash;
    return g;
}

TEST(StageGolden, StageTextsOfEveryScenarioAreUnchanged) {
    const char* dir = std::getenv("ATTNVIZ_STAGE_GOLDEN_DIR");
    const bool write = std::getenv("ATTNVIZ_STAGE_GOLDEN_WRITE") != nullptr;
    if (dir) std::filesystem::create_directories(dir);
    std::vector<std::pair<std::string, std::string>> hashes;  // scenario, hash of its texts
    auto record = [&](const std::string& name, const std::string& texts, const std::string& full) {
        hashes.emplace_back(name, hash_text(texts));
        if (dir) std::ofstream(std::string(dir) + "/" + name + ".txt", std::ios::binary) << full;
    };
    for (const auto& [name, cfg] : scenarios()) {
        SCOPED_TRACE(name);
        const Dump d = dump_trace(compute_trace(cfg));
        record(name, d.texts, d.full);
    }
    for (const auto& [name, spec] : model_specs()) {
        const std::string texts = dump_model_texts(spec);
        record(name, texts, texts);
    }
    if (write) {
        std::ofstream out(kGolden);
        for (const auto& [name, hash] : hashes) out << name << " " << hash << "\n";
        return;
    }
    const std::map<std::string, std::string> golden = read_golden();
    ASSERT_FALSE(golden.empty()) << "cannot read " << kGolden;
    EXPECT_EQ(golden.size(), hashes.size()) << "scenarios added or removed: rewrite the golden file";
    for (const auto& [name, hash] : hashes) {
        const auto it = golden.find(name);
        ASSERT_NE(it, golden.end()) << name << " is not in " << kGolden;
        EXPECT_EQ(hash, it->second) << name << ": the stage texts changed (run with "
                                    << "ATTNVIZ_STAGE_GOLDEN_DIR=DIR before and after, then diff -r)";
    }
}

}  // namespace
}  // namespace attnviz

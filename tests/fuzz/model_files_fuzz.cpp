// Fuzz harness: a model folder. The first byte picks the target: even → the input is config.json
// (parse_model_config, any architecture of the table: decoders, encoders, encoder–decoders);
// 1 (mod 4) → the rest is model.safetensors next to a fixed tiny Llama config.json, 3 (mod 4) → next
// to a fixed tiny T5 config.json, loaded with load_model_dir and, when accepted, run on a few tokens
// (T5: both stacks). Either attnviz::Error or a model whose spec is sane and whose logits are
// finite-shaped.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/architecture.hpp"
#include "core/error.hpp"
#include "core/model.hpp"
#include "core/seq2seq.hpp"
#include "fuzz_check.hpp"
#include "io/files.hpp"
#include "io/model_loader.hpp"

namespace {

// A temporary folder holding `config` (made once, removed at exit).
std::string make_dir(const char* config) {
    std::string t = (std::filesystem::temp_directory_path() / "attnviz-model-fuzz-XXXXXX").string();
    FUZZ_CHECK(::mkdtemp(t.data()) != nullptr);
    attnviz::write_file_atomic(t + "/config.json", config);
    return t;
}

struct Dirs {
    std::string llama = make_dir(
        R"({"model_type":"llama","num_hidden_layers":1,"num_attention_heads":2,"num_key_value_heads":1,)"
        R"("hidden_size":8,"intermediate_size":12,"vocab_size":10,"rms_norm_eps":1e-6,"rope_theta":10000.0,)"
        R"("max_position_embeddings":32,"tie_word_embeddings":true,"rope_scaling":null})");
    // (the config of tests/fuzz/corpus/model_files/t5_*: written by tests/fuzz/make_t5_seed.py)
    std::string t5 = make_dir(
        R"({"model_type":"t5","d_model":8,"d_kv":4,"d_ff":12,"num_layers":1,"num_decoder_layers":1,)"
        R"("num_heads":2,"relative_attention_num_buckets":4,"relative_attention_max_distance":8,)"
        R"("layer_norm_epsilon":1e-6,"feed_forward_proj":"relu","vocab_size":10,"tie_word_embeddings":true,)"
        R"("decoder_start_token_id":0,"pad_token_id":0,"eos_token_id":1,"is_encoder_decoder":true})");
};

const Dirs& dirs() {
    // Never destroyed: the atexit cleanup below runs after static destructors would.
    static const Dirs& d = *[] {
        auto* made = new Dirs;
        std::atexit([] {
            std::error_code ec;
            std::filesystem::remove_all(dirs().llama, ec);
            std::filesystem::remove_all(dirs().t5, ec);
        });
        return made;
    }();
    return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace attnviz;
    if (size == 0) return 0;
    const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    if (data[0] % 2 == 0) {
        try {
            const ModelSpec s = parse_model_config(bytes);
            FUZZ_CHECK(s.n_layer > 0 && s.n_head > 0 && s.n_kv_head > 0 && s.d_head > 0 && s.vocab_size > 0);
            FUZZ_CHECK(s.n_head % s.n_kv_head == 0);
            FUZZ_CHECK(find_architecture(s.architecture) != nullptr);  // one of the table's
            FUZZ_CHECK(!s.encoder_decoder || s.s2s.n_encoder_layer > 0);
        } catch (const Error&) {
        }
        return 0;
    }
    const bool t5 = data[0] % 4 == 3;
    const std::string& dir = t5 ? dirs().t5 : dirs().llama;
    write_file_atomic(dir + "/model.safetensors", bytes);
    try {
        const ModelWeights m = load_model_dir(dir);
        if (t5) {
            const Seq2SeqForward f = run_seq2seq(m, {2, 9, 1}, {0, 5});
            FUZZ_CHECK(f.logits.rows() >= 1 && f.logits.cols() == 10);
        } else {
            const ModelForward f = run_model(m, {0, 9});
            FUZZ_CHECK(f.logits.rows() == 2 && f.logits.cols() == 10);
        }
    } catch (const Error&) {
    }
    return 0;
}

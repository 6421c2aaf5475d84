// Fuzz harness: a model folder. The first byte picks the target: even → the input is config.json
// (parse_model_config), odd → the rest is model.safetensors next to a fixed tiny Llama config.json,
// loaded with load_model_dir and, when accepted, run on two tokens. Either attnviz::Error or a model
// whose spec is sane and whose logits are finite-shaped.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "core/model.hpp"
#include "fuzz_check.hpp"
#include "io/files.hpp"
#include "io/model_loader.hpp"

namespace {

const std::string& model_dir() {
    // Never destroyed: the atexit cleanup below runs after static destructors would.
    static const std::string& dir = *new std::string([] {
        std::string t = (std::filesystem::temp_directory_path() / "attnviz-model-fuzz-XXXXXX").string();
        FUZZ_CHECK(::mkdtemp(t.data()) != nullptr);
        attnviz::write_file_atomic(
            t + "/config.json",
            R"({"model_type":"llama","num_hidden_layers":1,"num_attention_heads":2,"num_key_value_heads":1,)"
            R"("hidden_size":8,"intermediate_size":12,"vocab_size":10,"rms_norm_eps":1e-6,"rope_theta":10000.0,)"
            R"("max_position_embeddings":32,"tie_word_embeddings":true,"rope_scaling":null})");
        std::atexit([] {
            std::error_code ec;
            std::filesystem::remove_all(model_dir(), ec);
        });
        return t;
    }());
    return dir;
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
            FUZZ_CHECK(s.architecture == "gpt2" || s.architecture == "llama" || s.architecture == "qwen2" ||
                       s.architecture == "mistral");
        } catch (const Error&) {
        }
        return 0;
    }
    const std::string& dir = model_dir();
    write_file_atomic(dir + "/model.safetensors", bytes);
    try {
        const ModelWeights m = load_model_dir(dir);
        const ModelForward f = run_model(m, {0, 9});
        FUZZ_CHECK(f.logits.rows() == 2 && f.logits.cols() == 10);
    } catch (const Error&) {
    }
    return 0;
}

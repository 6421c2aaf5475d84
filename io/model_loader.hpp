// Hugging Face model folders → core/model.hpp: config.json (model_type gpt2, llama, qwen2, mistral,
// gemma, bert, roberta, xlm-roberta, distilbert: core/architecture.hpp's table) and
// the weights in model.safetensors (or shards listed by model.safetensors.index.json).
//
// F32 tensors are used in place from a read-only memory mapping (Eigen::Map, no copy); BF16 and F16
// tensors are converted to float32 once, at load. Anything unsupported or inconsistent (unknown
// model_type, rope_scaling, sliding windows, missing tensors, wrong shapes, a header that lies about
// its size or offsets, truncated files) is refused with one attnviz::Error line naming the file and
// the field or tensor.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/model.hpp"
#include "io/safetensors.hpp"

namespace attnviz {

/// The model description from the text of a config.json (`name` is used in error messages).
ModelSpec parse_model_config(std::string_view json_text, const std::string& name = "config.json");

/// Loads DIR/config.json and DIR's safetensors weights. Throws attnviz::Error.
ModelWeights load_model_dir(const std::string& dir);

/// Throws attnviz::Error in words when `dir` is not a model folder at all: no such folder, a file, or a
/// folder without config.json (load_model_dir checks this first; so does the GUI before its progress).
void require_model_folder(const std::string& dir);

/// Largest float32 memory the loader converts BF16/F16 weights into (the app's limit is 3 GiB).
inline constexpr std::uint64_t kMaxConvertedWeightBytes = 2ull << 30;
/// Largest model accepted: its float32 weights (mapped or converted) within the app's 3 GiB.
inline constexpr std::uint64_t kMaxModelWeightBytes = 3ull << 30;

}  // namespace attnviz

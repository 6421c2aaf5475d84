// A trainable model's checkpoint folder (what `attnviz train`, `attnviz grad --adamw-steps` and the
// Training lab's Save checkpoint write, and what --init and Load checkpoint read): DIR/model.safetensors
// (the tensor names of param_layout, F32) and DIR/config.json (the architecture's fields, plus
// attnviz_norm, attnviz_mlp and attnviz_positions saying which parts the blocks have).
#pragma once

#include <string>
#include <vector>

#include "core/train.hpp"

#include "io/files.hpp"

namespace attnviz {

/// Writes DIR/model.safetensors (the checkpoint's tensor names, F32) and DIR/config.json, both or
/// neither (io/files.hpp commit_all).
void save_train_checkpoint(const std::string& dir, const Params<float>& params);
/// The same two files, staged beside their targets, not yet in place: for a folder written together.
std::vector<StagedFile> stage_train_checkpoint(const std::string& dir, const Params<float>& params);
/// The text of config.json for a model of this config.
std::string train_config_json(const TrainConfig& config);
/// The TrainConfig of a checkpoint folder's config.json; throws attnviz::Error (naming the file) for a
/// model the trainer does not compute.
TrainConfig train_config_from_checkpoint(const std::string& dir);
/// Loads a checkpoint `attnviz train` wrote (or any with the same config and tensors) to continue from.
Params<float> load_train_checkpoint(const std::string& dir);

}  // namespace attnviz

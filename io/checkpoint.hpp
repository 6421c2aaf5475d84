// A trainable model's checkpoint folder (what `attnviz train`, `attnviz grad --adamw-steps` and the
// Training lab's Save checkpoint write, and what --init and Load checkpoint read): DIR/model.safetensors
// (the tensor names of param_layout, F32) and DIR/config.json (the architecture's fields, plus
// attnviz_norm, attnviz_mlp and attnviz_positions saying which parts the blocks have).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/tasks.hpp"
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

/// A tokenizer.json (byte-level BPE, as Hugging Face writes it) in which id i is `tokens[i]` (raw
/// UTF-8, distinct, non-empty) and each of them is one token when it is a word of the text (merges
/// build it left to right). The 256 byte tokens and the pieces the merges pass through take the ids
/// from `first_free_id` on (at least tokens.size()), so text outside the words gives ids the model
/// does not have. prefix_space: the text's first word gets a space (Hugging Face's add_prefix_space),
/// so "a fluffy" is " a", " fluffy". A token of the form <name> ("<pad>") is a special added token.
/// Throws attnviz::Error if a token would not be one token.
std::string words_tokenizer_json(const std::vector<std::string>& tokens, int first_free_id,
                                 bool prefix_space);
/// The files a checkpoint of a model trained on `task` holds beside its weights, as (name, content):
/// the task's own (a learned BPE's vocab.json + merges.txt), else a tokenizer.json naming every id
/// of the model's vocabulary (task.tokens, the rest by number: " 17"), so every checkpoint opens in
/// the app; and story_grammar.json when the task has a grammar (io/story_grammar.hpp).
std::vector<std::pair<std::string, std::string>> checkpoint_task_files(const Task& task, int model_vocab);

}  // namespace attnviz

// The `translate` task's model as `attnviz train --task translate` writes it, for tests that open such
// a folder: the Training lab's preset and the task, then the folder (a T5 checkpoint of the given
// parameters, the task's tokenizer and grammar files).
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/task_registry.hpp"
#include "core/train.hpp"
#include "io/checkpoint.hpp"
#include "io/files.hpp"

namespace attnviz::test {

struct TranslateSetup {
    TrainConfig config;  // the lab's preset, sized for the task's vocabulary and context
    TrainOptions options;
    Task task;
};

inline TranslateSetup translate_setup() {
    TranslateSetup s;
    const TaskInfo* info = find_task("translate");
    if (!info) throw std::runtime_error("no translate task");
    info->lab_preset(s.config, s.options);
    s.task = make_task(*info, TaskRequest{});
    s.config.vocab_size = s.task.vocab_size;
    s.config.context = std::max(s.config.context, s.task.context);
    return s;
}

/// Writes the model folder of `params` (trained or freshly initialised) into the existing folder `dir`.
inline void write_translate_folder(const std::string& dir, const TranslateSetup& s,
                                   const Params<float>& params) {
    save_train_checkpoint(dir, params);
    for (const auto& [name, content] : checkpoint_task_files(s.task, s.config.vocab_size))
        write_file_atomic(dir + "/" + name, content);
}

}  // namespace attnviz::test

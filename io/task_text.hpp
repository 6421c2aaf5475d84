// The text a training task reads (a task with a File option in core/task_registry.hpp, e.g. "text"):
// the file's characters, or the tokens of a byte-level BPE learned from it (io/bpe_train.hpp). The
// CLI and the Training lab hand task_text_loader(...) to make_task as TaskRequest::load_text.
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "core/task_registry.hpp"
#include "io/bpe_train.hpp"

namespace attnviz {

struct TaskTextSource {
    std::string path;
    int bpe_vocab = 0;                        // 0: characters; else kMinBpeVocab..kMaxBpeVocab tokens
    LearnedBpe* learned = nullptr;            // receives the BPE (may be null)
    const std::atomic<bool>* stop = nullptr;  // learning the BPE ends with BpeCancelled when true
    BpeProgress progress;
};

/// The BPE vocabulary a text task's request asks for (its "bpe" option: --bpe V, the lab's BPE
/// tokens); 0 = characters.
int task_bpe_vocab(const TaskRequest& request);

/// Reads (and with bpe_vocab learns the BPE of) the text when called with the task's context.
/// Throws Error naming the file (unreadable, binary, not UTF-8, too short).
std::function<TaskText(int context)> task_text_loader(TaskTextSource source);

}  // namespace attnviz

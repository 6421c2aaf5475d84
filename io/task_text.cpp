// A training task's text: see io/task_text.hpp.
#include "io/task_text.hpp"

#include <memory>

#include "io/files.hpp"

namespace attnviz {

static_assert(kMinBpeVocab == 257 && kMaxBpeVocab == 8192,
              "the text task's bpe option (core/task_registry.cpp)");

int task_bpe_vocab(const TaskRequest& request) {
    const auto it = request.values.find("bpe");
    return it == request.values.end() ? 0 : int(it->second);
}

std::function<TaskText(int context)> task_text_loader(TaskTextSource source) {
    return [source](int context) {
        if (source.bpe_vocab > 0)
            return bpe_task_text(source.path, context, source.bpe_vocab, source.learned, source.stop,
                                 source.progress);
        TaskText text;
        text.corpus =
            std::make_shared<const TextCorpus>(text_corpus(read_file(source.path), source.path, context));
        return text;
    };
}

}  // namespace attnviz

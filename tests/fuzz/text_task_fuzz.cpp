// Fuzz harness: a text file given to the text task (`attnviz train --task text --text FILE`, the
// Training lab's text source), through core/tasks' text_corpus and text_task. The first byte picks the
// context (1..64), the rest is the file. Either one Error naming the file, or a corpus whose
// vocabulary is the text's distinct characters, sorted, whose ids decode to exactly the text, and
// whose training and held-out windows hold ids inside the vocabulary with targets one step ahead.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/error.hpp"
#include "core/tasks.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const int context = 1 + data[0] % 64;
    const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
    std::shared_ptr<const attnviz::TextCorpus> corpus;
    try {
        corpus = std::make_shared<const attnviz::TextCorpus>(attnviz::text_corpus(text, "fuzz.txt", context));
    } catch (const attnviz::Error& e) {
        FUZZ_CHECK(std::string(e.what()).rfind("fuzz.txt: ", 0) == 0);  // the one line names the file
        return 0;
    }
    const int V = int(corpus->vocab.size());
    FUZZ_CHECK(V >= 1 && V <= 65536);
    FUZZ_CHECK(std::is_sorted(corpus->vocab.begin(), corpus->vocab.end()));
    FUZZ_CHECK(std::adjacent_find(corpus->vocab.begin(), corpus->vocab.end()) == corpus->vocab.end());
    FUZZ_CHECK(attnviz::decode_text(*corpus, corpus->ids) == text);

    const attnviz::Task task = attnviz::text_task(corpus, context);
    FUZZ_CHECK(task.vocab_size == V && task.context == context);
    for (const attnviz::TaskBatch& tb : {task.train_batch(3, 7), task.heldout_batch(3, 7)}) {
        const attnviz::Batch& b = tb.batch;
        FUZZ_CHECK(b.B == 3 && b.n == context);
        FUZZ_CHECK(b.inputs.size() == std::size_t(3 * context) && b.targets.size() == b.inputs.size());
        for (std::size_t i = 0; i < b.inputs.size(); ++i) {
            FUZZ_CHECK(b.inputs[i] >= 0 && b.inputs[i] < V);
            FUZZ_CHECK(b.targets[i] >= 0 && b.targets[i] < V);
            if ((i + 1) % std::size_t(context) != 0) FUZZ_CHECK(b.targets[i] == b.inputs[i + 1]);
        }
    }
    return 0;
}

// The successor task: every token's target is the token `shift` places further round the
// vocabulary, (x + shift) mod V. No context is needed — the embedding and the unembedding alone
// can learn it — so it is the quickest check that a model trains at all, and attention is free to
// do anything (compare its heads with the induction task's).
//
// Sequences of n tokens drawn uniformly from [0, V); every position is scored (kind 1). Held-out
// data: the same generator with other seeds. Shapes: B sequences, n = context tokens.
#include <random>

#include "core/error.hpp"
#include "core/task_registry.hpp"

namespace attnviz {

namespace {

TaskBatch successor_batch(int vocab, int n, int shift, int B, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    TaskBatch out;
    out.batch.B = B;
    out.batch.n = n;
    out.batch.inputs.resize(std::size_t(B) * std::size_t(n));  // [B, n]
    out.batch.targets.resize(out.batch.inputs.size());         // [B, n]
    out.kind.assign(out.batch.inputs.size(), 1);
    std::uniform_int_distribution<int> token(0, vocab - 1);
    for (std::size_t k = 0; k < out.batch.inputs.size(); ++k) {
        out.batch.inputs[k] = token(rng);
        out.batch.targets[k] = (out.batch.inputs[k] + shift) % vocab;
    }
    return out;
}

}  // namespace

TaskInfo successor_task_info() {
    TaskInfo t;
    t.name = "successor";
    t.label = "the next token up";
    t.description =
        "Every target is the token after the input one, (x + shift) mod V. No context is needed: "
        "the embedding and unembedding alone learn it, so the loss falls to zero within a few hundred "
        "steps while the attention patterns stay whatever they happen to be.";
    t.options = {{"shift", "--shift", "K", "how far up each target is, 1-1000 (default 1)",
                  TaskOption::Kind::Int, 1, 1, 1000, "shift"}};
    t.fits_model = false;  // random tokens of the model's vocabulary, filling its context
    t.make = [](const TaskRequest& r) {
        const int vocab = r.vocab_size, n = r.context, shift = int(r.values.at("shift"));
        if (vocab < 2) throw ConfigError("The successor task needs a vocabulary of at least 2 tokens.");
        Task task;
        task.name = "successor";
        task.vocab_size = vocab;
        task.context = n;
        task.first_label = "tokens";
        task.repeat_label = "";
        task.train_batch = [vocab, n, shift](int B, std::uint64_t seed) {
            return successor_batch(vocab, n, shift, B, seed);
        };
        task.heldout_batch = task.train_batch;
        return task;
    };
    t.lab_preset = [](TrainConfig& c, TrainOptions& o) {
        c.n_layer = 1;
        c.vocab_size = 16;
        c.context = 16;
        o.adam.lr = 1e-2;
        o.steps = 300;
    };
    return t;
}

}  // namespace attnviz

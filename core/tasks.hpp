// Training tasks (generators with a seed), the fixed probe batch and the head scores computed on it.
//
// Every generator returns a Batch of B sequences of n tokens (inputs) and next-token targets, plus a
// per-position class: 0 = not scored, 1 = first occurrence (not predictable from context),
// 2 = repeat (predictable by copying). Shapes: B sequences, n = context tokens.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/train.hpp"

namespace attnviz {

struct InductionTask {
    int vocab_size = 64;
    int context = 48;    // n
    int min_period = 6;  // the repeat period is drawn per sequence from [min_period, max_period]
    int max_period = 23;
};

/// Throws ConfigError when the context cannot hold two copies of the longest period, or the
/// periods are out of order / below 2.
void validate_induction_task(const InductionTask& task);

struct TaskBatch {
    Batch batch;
    std::vector<int> kind;  // [B, n]: 1 first occurrence, 2 repeat
};

/// B sequences: p distinct random tokens (p drawn per sequence) repeated to fill n + 1 tokens;
/// inputs are tokens [0, n), targets [1, n + 1). Deterministic for (task, B, seed).
TaskBatch make_induction_batch(const InductionTask& task, int B, std::uint64_t seed);

/// Mean loss of the positions of each kind, from per-token losses [B, n]: {first, repeat}.
struct SplitLoss {
    double first = 0, repeat = 0;
};
SplitLoss split_loss(const std::vector<double>& per_token_loss, const std::vector<int>& kind);

/// Scores of one head, each in [0, 1], averaged over the probe batch's query positions where the
/// pattern is defined:
///   previous_token: attention from t to t − 1 (t ≥ 1)
///   induction: attention from t to every j ≤ t whose previous token equals token t (j − 1 < t)
///   first_token: attention from t to position 0 (BOS)
///   same_token: attention from t to earlier positions j < t holding the same token
struct HeadScores {
    double previous_token = 0, induction = 0, first_token = 0, same_token = 0;
};

/// [layer][head] scores of the model on the probe batch (rows of ids, each ≤ context tokens).
std::vector<std::vector<HeadScores>> head_scores(const Params<float>& params,
                                                 const std::vector<std::vector<int>>& probe);

/// HeadScores of one attention pattern P [n, n] over ids [n]; `counts` receives how many query
/// positions defined each score (previous, induction, first, same).
HeadScores pattern_scores(const MatT<float>& P, const std::vector<int>& ids, int counts[4]);

struct TrainOptions {
    long steps = 1000;
    int batch = 32;
    std::uint64_t seed = 0;
    int threads = 1;
    AdamWConfig adam;           // lr 1e-3, weight decay 0.01
    long warmup = 20;           // linear warm-up steps
    double min_lr_ratio = 0.1;  // cosine decay to lr·ratio at the last step
    double clip = 1.0;          // global gradient norm limit (0 = off)
    int eval_every = 25;        // held-out loss and head scores every this many steps (and at the end)
    int heldout = 64;           // held-out sequences
    int probe = 16;             // probe sequences for the head scores
    const Params<float>* init = nullptr;  // start from these (a loaded checkpoint) instead of init_params
};

struct EvalPoint {
    long step = 0;          // steps done
    double train_loss = 0;  // loss of the last training batch
    double heldout_loss = 0;
    SplitLoss heldout_split;                      // first occurrences / repeats
    std::vector<std::vector<HeadScores>> scores;  // [layer][head]
};

struct TrainResult {
    Params<float> params;
    std::vector<EvalPoint> evals;
    long cliff_step = -1;  // first evaluated step whose held-out repeat loss < 1.0 (−1: never)
};

/// Trains on the induction task. `progress(step, loss, eval)` is called after every step (eval
/// non-null on evaluation steps). Throws Error when the loss or gradient stops being finite (the
/// run diverged). Deterministic for (config, task, options).
TrainResult train_induction(const TrainConfig& config, const InductionTask& task, const TrainOptions& options,
                            const std::function<void(long, double, const EvalPoint*)>& progress = {});

}  // namespace attnviz

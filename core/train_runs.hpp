// What both trainers' loss_and_grad share (core/train_kernels.hpp for a decoder, core/train_seq2seq.hpp
// for an encoder–decoder): the batch's scored targets, each sequence's loss from the forward's
// probabilities, and the gradient partials of the runs summed in run order (deterministic for a
// thread count).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/nn_ops.hpp"
#include "core/train.hpp"

namespace attnviz::train_runs {

/// How many targets of the batch are scored (≥ 0); throws when none is.
inline long scored_targets(const Batch& batch) {
    long scored = 0;
    for (int t : batch.targets) scored += t >= 0 ? 1 : 0;
    if (scored == 0) throw Error("The training batch has no scored targets.");
    return scored;
}

/// −log p(target) over the scored rows of S sequences of n rows starting at sequence g0 (probs
/// [S·n, V], targets tg [S·n]): each sequence's sum into seq_loss[g0 + s], each row's into
/// per_token_loss[(g0 + s)·n + t] when given.
template <typename T>
void score_sequences(const nn::M<T>& probs, const int* tg, int g0, int S, int n,
                     std::vector<double>& seq_loss, std::vector<double>* per_token_loss) {
    for (int s = 0; s < S; ++s) {
        double sum = 0;
        for (int t = 0; t < n; ++t) {
            const int r = s * n + t;
            if (tg[r] < 0) continue;
            const double l = -std::log(std::max(double(probs(r, tg[r])), 1e-300));
            sum += l;
            if (per_token_loss) (*per_token_loss)[std::size_t(g0) * std::size_t(n) + std::size_t(r)] = l;
        }
        seq_loss[std::size_t(g0 + s)] = sum;
    }
}

/// The runs' gradient partials summed in run order into `grad` (when given); returns the mean loss
/// over the `scored` targets.
template <typename T>
double finish_runs(const Params<T>& params, Params<T>* grad, std::vector<std::vector<T>>& partial,
                   const std::vector<double>& seq_loss, long scored) {
    if (grad) {
        grad->config = params.config;
        grad->layout = params.layout;
        grad->data = std::move(partial[0]);
        for (std::size_t k = 1; k < partial.size(); ++k)
            for (std::size_t i = 0; i < partial[k].size(); ++i) grad->data[i] += partial[k][i];
    }
    double total = 0;
    for (double s : seq_loss) total += s;
    return total / double(scored);
}

}  // namespace attnviz::train_runs

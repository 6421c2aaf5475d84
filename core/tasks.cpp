// Training tasks, probe batch and head scores: see core/tasks.hpp.
#include "core/tasks.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <random>

#include "core/error.hpp"

namespace attnviz {

void validate_induction_task(const InductionTask& t) {
    if (t.min_period < 2 || t.max_period < t.min_period)
        throw ConfigError("The induction task's repeat periods must satisfy 2 <= min <= max (got " +
                          std::to_string(t.min_period) + " to " + std::to_string(t.max_period) + ").");
    if (t.context + 1 < 2 * t.max_period)
        throw ConfigError(
            "The context of " + std::to_string(t.context) +
            " tokens is too short for the induction task: it must hold two copies of the longest "
            "period (" +
            std::to_string(t.max_period) + "), so at least " + std::to_string(2 * t.max_period - 1) +
            " tokens.");
    if (t.vocab_size < 2) throw ConfigError("The induction task needs a vocabulary of at least 2 tokens.");
}

TaskBatch make_induction_batch(const InductionTask& t, int B, std::uint64_t seed) {
    validate_induction_task(t);
    std::mt19937_64 rng(seed);
    const int n = t.context;
    TaskBatch out;
    out.batch.B = B;
    out.batch.n = n;
    out.batch.inputs.resize(std::size_t(B) * std::size_t(n));
    out.batch.targets.resize(out.batch.inputs.size());
    out.kind.resize(out.batch.inputs.size());
    std::vector<int> pool(std::size_t(t.vocab_size));
    std::vector<int> seq(std::size_t(n) + 1);  // [n + 1]
    for (int b = 0; b < B; ++b) {
        const int p = std::uniform_int_distribution<int>(t.min_period, t.max_period)(rng);
        // p distinct tokens when the vocabulary allows it (a repeat inside the first copy would make
        // "first occurrence" ambiguous), else drawn with replacement.
        std::iota(pool.begin(), pool.end(), 0);
        for (int i = 0; i < p; ++i) {
            if (p <= t.vocab_size) {
                const int j = std::uniform_int_distribution<int>(i, t.vocab_size - 1)(rng);
                std::swap(pool[std::size_t(i)], pool[std::size_t(j)]);
                seq[std::size_t(i)] = pool[std::size_t(i)];
            } else {
                seq[std::size_t(i)] = std::uniform_int_distribution<int>(0, t.vocab_size - 1)(rng);
            }
        }
        for (int i = p; i <= n; ++i) seq[std::size_t(i)] = seq[std::size_t(i - p)];
        for (int i = 0; i < n; ++i) {
            const std::size_t k = std::size_t(b) * std::size_t(n) + std::size_t(i);
            out.batch.inputs[k] = seq[std::size_t(i)];
            out.batch.targets[k] = seq[std::size_t(i) + 1];
            out.kind[k] = i + 1 >= p ? 2 : 1;
        }
    }
    return out;
}

SplitLoss split_loss(const std::vector<double>& loss, const std::vector<int>& kind) {
    double sum[3] = {0, 0, 0};
    long count[3] = {0, 0, 0};
    for (std::size_t i = 0; i < loss.size() && i < kind.size(); ++i) {
        if (kind[i] < 1 || kind[i] > 2) continue;
        sum[kind[i]] += loss[i];
        count[kind[i]] += 1;
    }
    SplitLoss s;
    s.first = count[1] ? sum[1] / double(count[1]) : 0.0;
    s.repeat = count[2] ? sum[2] / double(count[2]) : 0.0;
    return s;
}

HeadScores pattern_scores(const MatT<float>& P, const std::vector<int>& ids, int counts[4]) {
    const int n = int(ids.size());
    double sum[4] = {0, 0, 0, 0};
    for (int k = 0; k < 4; ++k) counts[k] = 0;
    for (int t = 0; t < n; ++t) {
        if (t >= 1) {
            sum[0] += P(t, t - 1);
            counts[0] += 1;
        }
        double ind = 0, same = 0;
        bool has_ind = false, has_same = false;
        for (int j = 0; j <= t; ++j) {
            if (j >= 1 && j - 1 < t && ids[std::size_t(j - 1)] == ids[std::size_t(t)]) {
                ind += P(t, j);
                has_ind = true;
            }
            if (j < t && ids[std::size_t(j)] == ids[std::size_t(t)]) {
                same += P(t, j);
                has_same = true;
            }
        }
        if (has_ind) {
            sum[1] += ind;
            counts[1] += 1;
        }
        sum[2] += P(t, 0);
        counts[2] += 1;
        if (has_same) {
            sum[3] += same;
            counts[3] += 1;
        }
    }
    HeadScores s;
    s.previous_token = counts[0] ? sum[0] / counts[0] : 0.0;
    s.induction = counts[1] ? sum[1] / counts[1] : 0.0;
    s.first_token = counts[2] ? sum[2] / counts[2] : 0.0;
    s.same_token = counts[3] ? sum[3] / counts[3] : 0.0;
    return s;
}

std::vector<std::vector<HeadScores>> head_scores(const Params<float>& params,
                                                 const std::vector<std::vector<int>>& probe) {
    const TrainConfig& c = params.config;
    std::vector<std::vector<HeadScores>> sum(std::size_t(c.n_layer),
                                             std::vector<HeadScores>(std::size_t(c.n_head)));
    std::vector<std::vector<std::array<long, 4>>> count(
        std::size_t(c.n_layer), std::vector<std::array<long, 4>>(std::size_t(c.n_head)));
    for (const auto& ids : probe) {
        const auto att = attention_patterns(params, ids);
        for (int l = 0; l < c.n_layer; ++l)
            for (int h = 0; h < c.n_head; ++h) {
                int cnt[4];
                const HeadScores s = pattern_scores(att[std::size_t(l)][std::size_t(h)], ids, cnt);
                HeadScores& acc = sum[std::size_t(l)][std::size_t(h)];
                auto& ac = count[std::size_t(l)][std::size_t(h)];
                acc.previous_token += s.previous_token * cnt[0];
                acc.induction += s.induction * cnt[1];
                acc.first_token += s.first_token * cnt[2];
                acc.same_token += s.same_token * cnt[3];
                for (int k = 0; k < 4; ++k) ac[std::size_t(k)] += cnt[k];
            }
    }
    for (int l = 0; l < c.n_layer; ++l)
        for (int h = 0; h < c.n_head; ++h) {
            HeadScores& s = sum[std::size_t(l)][std::size_t(h)];
            const auto& ac = count[std::size_t(l)][std::size_t(h)];
            s.previous_token = ac[0] ? s.previous_token / double(ac[0]) : 0.0;
            s.induction = ac[1] ? s.induction / double(ac[1]) : 0.0;
            s.first_token = ac[2] ? s.first_token / double(ac[2]) : 0.0;
            s.same_token = ac[3] ? s.same_token / double(ac[3]) : 0.0;
        }
    return sum;
}

namespace {

std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
    std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + stream * 0xBF58476D1CE4E5B9ull + index + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

}  // namespace

TrainResult train_induction(const TrainConfig& config, const InductionTask& task, const TrainOptions& o,
                            const std::function<void(long, double, const EvalPoint*)>& progress) {
    validate_train_config(config);
    validate_induction_task(task);
    if (task.context > config.context)
        throw ConfigError("The task's sequences (" + std::to_string(task.context) +
                          " tokens) are longer than the model's context (" + std::to_string(config.context) +
                          ").");
    if (task.vocab_size > config.vocab_size)
        throw ConfigError("The task's vocabulary is larger than the model's.");
    if (o.steps < 1 || o.batch < 1 || o.eval_every < 1)
        throw ConfigError(
            "Training needs at least one step, a batch of at least one sequence and eval_every >= 1.");
    TrainResult r;
    if (o.init &&
        (o.init->layout.size() != param_layout(config).size() || o.init->data.size() != param_count(config)))
        throw ConfigError("The starting parameters do not fit the model's configuration.");
    r.params = o.init ? *o.init : init_params(config, mix_seed(o.seed, 0, 0));
    const TaskBatch heldout = make_induction_batch(task, o.heldout, mix_seed(o.seed, 1, 0));
    const TaskBatch probe_batch = make_induction_batch(task, o.probe, mix_seed(o.seed, 2, 0));
    std::vector<std::vector<int>> probe;
    for (int b = 0; b < o.probe; ++b)
        probe.emplace_back(probe_batch.batch.inputs.begin() + std::ptrdiff_t(b) * task.context,
                           probe_batch.batch.inputs.begin() + std::ptrdiff_t(b + 1) * task.context);
    AdamWState state;
    Params<float> grad;
    for (long step = 0; step < o.steps; ++step) {
        const TaskBatch tb = make_induction_batch(task, o.batch, mix_seed(o.seed, 3, std::uint64_t(step)));
        const double loss = loss_and_grad(r.params, tb.batch, &grad, o.threads);
        const double norm = clip_grad_norm(grad.data, o.clip);
        if (!std::isfinite(loss) || !std::isfinite(norm))
            throw Error("Training diverged at step " + std::to_string(step + 1) + ": the loss became " +
                        (std::isfinite(loss) ? "finite but the gradient did not" : std::to_string(loss)) +
                        "; lower the learning rate (it was " + std::to_string(o.adam.lr) + ").");
        adamw_step(r.params.data, grad.data, state, o.adam,
                   lr_schedule(step, o.warmup, o.steps, o.adam.lr, o.min_lr_ratio));
        const long done = step + 1;
        if (done % o.eval_every == 0 || done == o.steps) {
            EvalPoint e;
            e.step = done;
            e.train_loss = loss;
            std::vector<double> per_token;
            e.heldout_loss = loss_and_grad<float>(r.params, heldout.batch, nullptr, o.threads, &per_token);
            e.heldout_split = split_loss(per_token, heldout.kind);
            e.scores = head_scores(r.params, probe);
            if (r.cliff_step < 0 && e.heldout_split.repeat < 1.0) r.cliff_step = done;
            r.evals.push_back(std::move(e));
            if (progress) progress(done, loss, &r.evals.back());
        } else if (progress) {
            progress(done, loss, nullptr);
        }
    }
    return r;
}

}  // namespace attnviz

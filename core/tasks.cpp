// Training tasks, probe batch and head scores: see core/tasks.hpp.
#include "core/tasks.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>

#include "core/error.hpp"
#include "core/tokenize.hpp"
#include "core/translate.hpp"
#include "core/utf8.hpp"

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

namespace {

// Mean over the annotated items inside P of the attention summed over each item's targets.
double annotated_score(const MatT<float>& P, const std::vector<std::pair<int, std::vector<int>>>& items,
                       int* count) {
    const int n = int(P.rows());
    double sum = 0;
    int k = 0;
    for (const auto& [q, targets] : items) {
        if (q < 0 || q >= n || targets.empty()) continue;
        double s = 0;
        for (int j : targets)
            if (j >= 0 && j <= q && j < int(P.cols())) s += P(q, j);
        sum += s;
        ++k;
    }
    if (count) *count = k;
    return k ? sum / k : 0.0;
}

}  // namespace

double adjective_noun_score(const MatT<float>& P, const SequenceAnnotations& a, int* count) {
    return annotated_score(P, a.noun_adjectives, count);
}

double pronoun_antecedent_score(const MatT<float>& P, const SequenceAnnotations& a, int* count) {
    return annotated_score(P, a.pronoun_antecedents, count);
}

std::vector<std::vector<HeadScores>> head_scores(const Params<float>& params,
                                                 const std::vector<std::vector<int>>& probe,
                                                 const std::vector<SequenceAnnotations>* annotations) {
    const TrainConfig& c = params.config;
    std::vector<std::vector<HeadScores>> sum(std::size_t(c.n_layer),
                                             std::vector<HeadScores>(std::size_t(c.n_head)));
    std::vector<std::vector<std::array<long, 6>>> count(
        std::size_t(c.n_layer), std::vector<std::array<long, 6>>(std::size_t(c.n_head)));
    for (std::size_t row = 0; row < probe.size(); ++row) {
        const std::vector<int>& ids = probe[row];
        const SequenceAnnotations* notes =
            annotations && row < annotations->size() ? &(*annotations)[row] : nullptr;
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
                if (notes) {
                    int adj = 0, pro = 0;
                    const MatT<float>& P = att[std::size_t(l)][std::size_t(h)];
                    acc.adjective_noun += adjective_noun_score(P, *notes, &adj) * adj;
                    acc.pronoun_antecedent += pronoun_antecedent_score(P, *notes, &pro) * pro;
                    ac[4] += adj;
                    ac[5] += pro;
                }
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
            s.adjective_noun = ac[4] ? s.adjective_noun / double(ac[4]) : 0.0;
            s.pronoun_antecedent = ac[5] ? s.pronoun_antecedent / double(ac[5]) : 0.0;
        }
    return sum;
}

std::vector<std::vector<HeadScores>> cross_head_scores(const Params<float>& params,
                                                       const std::vector<std::vector<int>>& sources,
                                                       const std::vector<std::vector<int>>& targets,
                                                       const std::vector<SequenceAnnotations>& annotations) {
    const TrainConfig& c = params.config;
    std::vector<std::vector<HeadScores>> out(std::size_t(c.n_layer), std::vector<HeadScores>(std::size_t(c.n_head)));
    std::vector<std::vector<long>> count(std::size_t(c.n_layer), std::vector<long>(std::size_t(c.n_head), 0));
    for (std::size_t r = 0; r < sources.size() && r < targets.size() && r < annotations.size(); ++r) {
        const auto att = cross_attention_patterns(params, sources[r], targets[r]);
        for (int l = 0; l < c.n_layer; ++l)
            for (int h = 0; h < c.n_head; ++h) {
                int rows = 0;
                const double s =
                    head_alignment_score(att[std::size_t(l)][std::size_t(h)], annotations[r].alignment, &rows);
                out[std::size_t(l)][std::size_t(h)].alignment += s * rows;
                count[std::size_t(l)][std::size_t(h)] += rows;
            }
    }
    for (int l = 0; l < c.n_layer; ++l)
        for (int h = 0; h < c.n_head; ++h) {
            const long k = count[std::size_t(l)][std::size_t(h)];
            double& a = out[std::size_t(l)][std::size_t(h)].alignment;
            a = k ? a / double(k) : 0.0;
        }
    return out;
}

namespace {

std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
    std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + stream * 0xBF58476D1CE4E5B9ull + index + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

}  // namespace

Task induction_task(const InductionTask& t) {
    validate_induction_task(t);
    Task task;
    task.name = "induction";
    task.vocab_size = t.vocab_size;
    task.context = t.context;
    task.train_batch = [t](int B, std::uint64_t seed) { return make_induction_batch(t, B, seed); };
    task.heldout_batch = task.train_batch;
    task.heldout_note = "fresh random sequences from seeds the training batches never use";
    return task;
}

TaskBatch make_sequence_batch(const SequenceTask& t, int B, std::uint64_t seed) {
    if (t.symbols < 2 || t.symbols > 1000 || t.length < 1 || t.length > 128)
        throw ConfigError("copy/reverse/sort: symbols must be 2-1000 and the length 1-128.");
    std::mt19937_64 rng(seed);
    const int L = t.length, n = 2 * L;
    TaskBatch out;
    out.batch.B = B;
    out.batch.n = n;
    out.batch.inputs.resize(std::size_t(B) * std::size_t(n));
    out.batch.targets.assign(out.batch.inputs.size(), -1);
    out.kind.assign(out.batch.inputs.size(), 0);
    std::vector<int> seq(std::size_t(n) + 1);  // [2L + 1]
    for (int b = 0; b < B; ++b) {
        for (int i = 0; i < L; ++i)
            seq[std::size_t(i)] = std::uniform_int_distribution<int>(0, t.symbols - 1)(rng);
        seq[std::size_t(L)] = t.symbols;  // SEP
        std::vector<int> answer(seq.begin(), seq.begin() + L);
        if (t.op == SequenceOp::Reverse) std::reverse(answer.begin(), answer.end());
        if (t.op == SequenceOp::Sort) std::sort(answer.begin(), answer.end());
        std::copy(answer.begin(), answer.end(), seq.begin() + L + 1);
        for (int i = 0; i < n; ++i) {
            const std::size_t k = std::size_t(b) * std::size_t(n) + std::size_t(i);
            out.batch.inputs[k] = seq[std::size_t(i)];
            if (i >= L) {
                out.batch.targets[k] = seq[std::size_t(i) + 1];
                out.kind[k] = 2;
            }
        }
    }
    return out;
}

Task sequence_task(const SequenceTask& t) {
    make_sequence_batch(t, 0, 0);  // validates
    Task task;
    task.name = t.op == SequenceOp::Copy ? "copy" : t.op == SequenceOp::Reverse ? "reverse" : "sort";
    task.vocab_size = t.symbols + 1;
    task.context = 2 * t.length;
    task.first_label = "";
    task.repeat_label = "answer tokens";
    for (int k = 0; k < t.symbols; ++k) task.tokens.push_back(" " + std::to_string(k));
    task.tokens.push_back(" |");  // SEP
    task.train_batch = [t](int B, std::uint64_t seed) { return make_sequence_batch(t, B, seed); };
    task.heldout_batch = task.train_batch;
    task.heldout_note = "fresh random sequences from seeds the training batches never use";
    for (int i = 0; i < t.symbols; ++i) task.token_names.push_back(std::to_string(i));
    task.token_names.push_back("SEP");
    return task;
}

ModAddSplit modadd_split(const ModAddTask& t) {
    if (t.modulus < 2 || t.modulus > 1000)
        throw ConfigError("modadd: the modulus must be 2-1000 (got " + std::to_string(t.modulus) + ").");
    if (!(t.train_fraction > 0.0 && t.train_fraction < 1.0))
        throw ConfigError("modadd: the training fraction must be strictly between 0 and 1.");
    std::vector<std::pair<int, int>> pairs;  // [p²]
    for (int a = 0; a < t.modulus; ++a)
        for (int b = 0; b < t.modulus; ++b) pairs.emplace_back(a, b);
    std::mt19937_64 rng(t.split_seed);
    for (std::size_t i = pairs.size() - 1; i > 0; --i)  // Fisher–Yates, the same on every platform
        std::swap(pairs[i], pairs[std::uniform_int_distribution<std::size_t>(0, i)(rng)]);
    const std::size_t cut = std::max<std::size_t>(
        1, std::min(pairs.size() - 1, std::size_t(t.train_fraction * double(pairs.size()))));
    ModAddSplit split;
    split.train.assign(pairs.begin(), pairs.begin() + std::ptrdiff_t(cut));
    split.heldout.assign(pairs.begin() + std::ptrdiff_t(cut), pairs.end());
    return split;
}

namespace {

TaskBatch modadd_batch(const std::vector<std::pair<int, int>>& pairs, int p, int B, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    TaskBatch out;
    out.batch.B = B;
    out.batch.n = 4;
    out.batch.inputs.resize(std::size_t(B) * 4);
    out.batch.targets.assign(out.batch.inputs.size(), -1);
    out.kind.assign(out.batch.inputs.size(), 0);
    for (int b = 0; b < B; ++b) {
        const auto [x, y] = pairs[std::uniform_int_distribution<std::size_t>(0, pairs.size() - 1)(rng)];
        int* in = out.batch.inputs.data() + std::ptrdiff_t(b) * 4;
        in[0] = x;
        in[1] = p;  // '+'
        in[2] = y;
        in[3] = p + 1;  // '='
        out.batch.targets[std::size_t(b) * 4 + 3] = (x + y) % p;
        out.kind[std::size_t(b) * 4 + 3] = 2;
    }
    return out;
}

}  // namespace

Task modadd_task(const ModAddTask& t) {
    auto split = std::make_shared<const ModAddSplit>(modadd_split(t));
    const int p = t.modulus;
    Task task;
    task.name = "modadd";
    task.vocab_size = p + 2;
    task.context = 4;
    task.first_label = "";
    task.repeat_label = "answers";
    task.heldout_note = "the " + std::to_string(split->heldout.size()) + " pairs (a, b) of the " +
                        std::to_string(p * p) +
                        " never shown in training: only the general rule predicts them";
    for (int i = 0; i < p; ++i) task.token_names.push_back(std::to_string(i));
    task.token_names.push_back("+");
    task.token_names.push_back("=");
    for (int k = 0; k < p; ++k) task.tokens.push_back(" " + std::to_string(k));
    task.tokens.push_back(" +");
    task.tokens.push_back(" =");
    task.train_batch = [split, p](int B, std::uint64_t seed) {
        return modadd_batch(split->train, p, B, seed);
    };
    task.heldout_batch = [split, p](int B, std::uint64_t seed) {
        return modadd_batch(split->heldout, p, B, seed);
    };
    return task;
}

TextCorpus text_corpus(const std::string& utf8, const std::string& name, int context) {
    if (utf8.find('\0') != std::string::npos)
        throw Error(name + ": not a text file (it contains NUL bytes); pick a UTF-8 text file.");
    std::u32string cps;
    try {
        cps = decode_utf8(utf8);
    } catch (const Error& e) {
        throw Error(name + ": not UTF-8 text (" + e.what() + "); pick a UTF-8 text file.");
    }
    const std::size_t need = 2 * (std::size_t(context) + 1) * 10;  // held-out part: 10 %
    if (cps.size() < need)
        throw Error(name + ": the text has " + std::to_string(cps.size()) +
                    " characters; training on windows of " + std::to_string(context + 1) +
                    " needs at least " + std::to_string(need) + ".");
    std::vector<char32_t> distinct(cps.begin(), cps.end());
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    if (distinct.size() > 65536)
        throw Error(name + ": " + std::to_string(distinct.size()) +
                    " distinct characters; the model's vocabulary holds at most 65536.");
    TextCorpus c;
    c.name = name;
    for (char32_t cp : distinct) c.vocab.push_back(encode_utf8(cp));
    c.tokenizer = "one token per character (" + std::to_string(distinct.size()) + " distinct)";
    c.ids.reserve(cps.size());
    for (char32_t cp : cps)
        c.ids.push_back(int(std::lower_bound(distinct.begin(), distinct.end(), cp) - distinct.begin()));
    return c;
}

TextCorpus token_corpus(std::vector<std::string> vocab, std::vector<int> ids, const std::string& name,
                        int context) {
    const std::size_t need = 2 * (std::size_t(context) + 1) * 10;  // held-out part: 10 %
    if (ids.size() < need)
        throw Error(name + ": the text has " + std::to_string(ids.size()) +
                    " tokens; training on windows of " + std::to_string(context + 1) + " needs at least " +
                    std::to_string(need) + ".");
    if (vocab.size() > 65536)
        throw Error(name + ": " + std::to_string(vocab.size()) +
                    " tokens; the model's vocabulary holds at most 65536.");
    for (int id : ids)
        if (id < 0 || id >= int(vocab.size()))
            throw Error(name + ": token id " + std::to_string(id) + " is outside the vocabulary of " +
                        std::to_string(vocab.size()) + ".");
    TextCorpus c;
    c.name = name;
    c.vocab = std::move(vocab);
    c.ids = std::move(ids);
    c.unit = "tokens";
    c.tokenizer = "tokens made by a tokenizer";
    return c;
}

std::string decode_text(const TextCorpus& corpus, const std::vector<int>& ids) {
    std::string out;
    for (int id : ids) {
        if (id < 0 || id >= int(corpus.vocab.size()))
            throw Error("Token id " + std::to_string(id) + " is outside the text's vocabulary.");
        out += corpus.vocab[std::size_t(id)];
    }
    return out;
}

namespace {

// A token's text as a label: spaces and line breaks made visible (· ⏎), other control bytes and
// bytes that are not UTF-8 (a BPE token may hold part of a character) as \xNN.
std::string visible_token(const std::string& raw) {
    std::string out;
    char hex[8];
    walk_utf8(
        raw,
        [&](std::string_view seq) {
            if (seq == " ")
                out += "\u00b7";
            else if (seq == "\n")
                out += "\u23ce";
            else if (seq.size() == 1 && (unsigned char)seq[0] < 0x20) {
                std::snprintf(hex, sizeof hex, "\\x%02X", unsigned((unsigned char)seq[0]));
                out += hex;
            } else {
                out += seq;
            }
        },
        [&](std::string_view bad) {
            std::snprintf(hex, sizeof hex, "\\x%02X", unsigned((unsigned char)bad[0]));
            out += hex;
            return std::size_t(1);
        });
    return out;
}

// Windows of n + 1 characters starting in [begin, end - n - 1].
TaskBatch text_batch(const TextCorpus& c, std::size_t begin, std::size_t end, int n, int B,
                     std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    TaskBatch out;
    out.batch.B = B;
    out.batch.n = n;
    out.batch.inputs.resize(std::size_t(B) * std::size_t(n));
    out.batch.targets.resize(out.batch.inputs.size());
    out.kind.assign(out.batch.inputs.size(), 1);
    for (int b = 0; b < B; ++b) {
        const std::size_t s =
            std::uniform_int_distribution<std::size_t>(begin, end - std::size_t(n) - 1)(rng);
        for (int i = 0; i < n; ++i) {
            const std::size_t k = std::size_t(b) * std::size_t(n) + std::size_t(i);
            out.batch.inputs[k] = c.ids[s + std::size_t(i)];
            out.batch.targets[k] = c.ids[s + std::size_t(i) + 1];
        }
    }
    return out;
}

}  // namespace

Task text_task(std::shared_ptr<const TextCorpus> corpus, int context) {
    if (!corpus || corpus->ids.size() < 20 * (std::size_t(context) + 1))
        throw ConfigError("The text is too short for windows of " + std::to_string(context + 1) +
                          " characters.");
    const std::size_t cut = corpus->ids.size() * 9 / 10;
    Task task;
    task.name = "text";
    task.vocab_size = int(corpus->vocab.size());
    task.context = context;
    task.first_label = corpus->unit;
    task.tokenizer = corpus->tokenizer;
    task.repeat_label = "";
    task.heldout_note = "the file's last 10 % (" + std::to_string(corpus->ids.size() - cut) + " of " +
                        std::to_string(corpus->ids.size()) + " " + corpus->unit +
                        "), never trained on: the loss on text the model has not seen";
    for (const std::string& v : corpus->vocab) task.token_names.push_back(visible_token(v));
    task.tokens = corpus->vocab;  // a character each (a BPE's tokens come with their own files)
    task.tokens_prefix_space = false;
    task.train_batch = [corpus, cut, context](int B, std::uint64_t seed) {
        return text_batch(*corpus, 0, cut, context, B, seed);
    };
    task.heldout_batch = [corpus, cut, context](int B, std::uint64_t seed) {
        return text_batch(*corpus, cut, corpus->ids.size(), context, B, seed);
    };
    return task;
}

Trainer::Trainer(const TrainConfig& config, Task task, const TrainOptions& o)
    : task_(std::move(task)), options_(o) {
    validate_train_config(config);
    if (!task_.train_batch || !task_.heldout_batch) throw ConfigError("The task has no data generator.");
    if (task_.context > config.context)
        throw ConfigError("The task's sequences (" + std::to_string(task_.context) +
                          " tokens) are longer than the model's context (" + std::to_string(config.context) +
                          ").");
    if (task_.vocab_size > config.vocab_size)
        throw ConfigError("The task's vocabulary (" + std::to_string(task_.vocab_size) +
                          " tokens) is larger than the model's (" + std::to_string(config.vocab_size) + ").");
    if (o.steps < 1 || o.batch < 1 || o.eval_every < 1 || o.heldout < 1 || o.probe < 1)
        throw ConfigError(
            "Training needs at least one step, a batch of at least one sequence, held-out and probe "
            "sequences and eval_every >= 1.");
    params_ = init_params(config, mix_seed(o.seed, 0, 0));
    if (o.init) set_params(*o.init);  // a loaded checkpoint: same tensor names and shapes
    heldout_ = task_.heldout_batch(o.heldout, mix_seed(o.seed, 1, 0));
    const TaskBatch probe_batch = task_.heldout_batch(o.probe, mix_seed(o.seed, 2, 0));
    const int n = probe_batch.batch.n, m = probe_batch.batch.m;
    if ((config.encoder_layers > 0) != (m > 0))
        throw ConfigError(config.encoder_layers > 0
                              ? "An encoder-decoder trains on a task of sentence pairs (translate)."
                              : "The task " + task_.name + " needs an encoder-decoder (encoder layers > 0).");
    for (int b = 0; b < probe_batch.batch.B; ++b) {
        probe_.emplace_back(probe_batch.batch.inputs.begin() + std::ptrdiff_t(b) * n,
                            probe_batch.batch.inputs.begin() + std::ptrdiff_t(b + 1) * n);
        probe_targets_.emplace_back(probe_batch.batch.targets.begin() + std::ptrdiff_t(b) * n,
                                    probe_batch.batch.targets.begin() + std::ptrdiff_t(b + 1) * n);
        if (m > 0)
            probe_source_.emplace_back(probe_batch.batch.source.begin() + std::ptrdiff_t(b) * m,
                                       probe_batch.batch.source.begin() + std::ptrdiff_t(b + 1) * m);
    }
    if (!probe_batch.notes.empty())
        probe_annotations_ = probe_batch.notes;
    else if (task_.annotate)
        for (const auto& row : probe_) probe_annotations_.push_back(task_.annotate(row));
}

void Trainer::set_params(const Params<float>& p) {
    if (state_.step != 0) throw ConfigError("The weights can only be replaced before the first step.");
    bool same = p.data.size() == params_.data.size() && p.layout.size() == params_.layout.size();
    for (std::size_t i = 0; same && i < p.layout.size(); ++i)
        same = p.layout[i].name == params_.layout[i].name && p.layout[i].shape == params_.layout[i].shape;
    if (!same)
        throw ConfigError("The checkpoint's tensors do not match the model being trained (other sizes).");
    params_.data = p.data;
}

double Trainer::step() {
    const long step = state_.step;
    const TaskBatch tb = task_.train_batch(options_.batch, mix_seed(options_.seed, 3, std::uint64_t(step)));
    const double loss = loss_and_grad(params_, tb.batch, &grad_, options_.threads);
    const double norm = clip_grad_norm(grad_.data, options_.clip);
    if (!std::isfinite(loss) || !std::isfinite(norm))
        throw Error("Training diverged at step " + std::to_string(step + 1) + ": the loss became " +
                    (std::isfinite(loss) ? "finite but the gradient did not" : std::to_string(loss)) +
                    "; lower the learning rate (it was " + std::to_string(options_.adam.lr) + ").");
    last_lr_ = lr_schedule(step, options_.warmup, options_.steps, options_.adam.lr, options_.min_lr_ratio);
    adamw_step(params_.data, grad_.data, state_, options_.adam, last_lr_);
    last_loss_ = loss;
    return loss;
}

EvalPoint Trainer::evaluate() const {
    EvalPoint e;
    e.step = state_.step;
    e.train_loss = last_loss_;
    std::vector<double> per_token;
    e.heldout_loss = loss_and_grad<float>(params_, heldout_.batch, nullptr, options_.threads, &per_token);
    e.heldout_split = split_loss(per_token, heldout_.kind);
    if (!probe_source_.empty())
        e.scores = cross_head_scores(params_, probe_source_, probe_, probe_annotations_);
    else
        e.scores = head_scores(params_, probe_, probe_annotations_.empty() ? nullptr : &probe_annotations_);
    if (task_.figures) e.figures = task_.figures(params_);
    return e;
}

std::vector<std::vector<MatT<float>>> Trainer::probe_attention() const {
    if (!probe_source_.empty()) return cross_attention_patterns(params_, probe_source_.front(), probe_.front());
    return attention_patterns(params_, probe_.front());
}

TrainResult train_task(const TrainConfig& config, const Task& task, const TrainOptions& o,
                       const std::function<void(long, double, const EvalPoint*)>& progress) {
    Trainer trainer(config, task, o);
    TrainResult r;
    for (long step = 0; step < o.steps; ++step) {
        const double loss = trainer.step();
        const long done = step + 1;
        if (done % o.eval_every == 0 || done == o.steps) {
            r.evals.push_back(trainer.evaluate());
            const EvalPoint& e = r.evals.back();
            if (r.cliff_step < 0 && !task.repeat_label.empty() && e.heldout_split.repeat < 1.0)
                r.cliff_step = done;
            if (progress) progress(done, loss, &e);
        } else if (progress) {
            progress(done, loss, nullptr);
        }
    }
    r.params = trainer.params();
    return r;
}

TrainResult train_induction(const TrainConfig& config, const InductionTask& task, const TrainOptions& o,
                            const std::function<void(long, double, const EvalPoint*)>& progress) {
    validate_train_config(config);
    return train_task(config, induction_task(task), o, progress);
}

}  // namespace attnviz

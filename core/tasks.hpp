// Training tasks (generators with a seed), the fixed probe batch and the head scores computed on it.
//
// Every generator returns a Batch of B sequences of n tokens (inputs) and next-token targets, plus a
// per-position class: 0 = not scored, 1 = first occurrence (not predictable from context),
// 2 = repeat (predictable by copying). Shapes: B sequences, n = context tokens.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
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

/// What the annotated head scores read of one sequence (positions index it): each noun with its own
/// adjectives (only nouns that have some), each pronoun with the positions of its antecedent.
struct SequenceAnnotations {
    std::vector<std::pair<int, std::vector<int>>> noun_adjectives;      // (noun, its adjectives)
    std::vector<std::pair<int, std::vector<int>>> pronoun_antecedents;  // (pronoun, antecedent words)
    std::vector<int> alignment;  // [n] encoder–decoder: the source position of each row's target word, or −1
};

struct TaskBatch {
    Batch batch;
    std::vector<int> kind;                   // [B, n]: 1 first occurrence, 2 repeat
    std::vector<SequenceAnnotations> notes;  // [B] or empty: annotations made with the data (translate)
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
///   adjective_noun: attention from a noun to its own adjectives (summed), over the nouns that
///     have adjectives (tasks with annotations only: the story task)
///   pronoun_antecedent: attention from a pronoun to the words naming what it refers to (summed)
///   alignment (encoder–decoders: the head's cross-attention): the share of target words whose
///     largest cross-attention weight falls on their own source word (core/translate.hpp)
struct HeadScores {
    double previous_token = 0, induction = 0, first_token = 0, same_token = 0;
    double adjective_noun = 0, pronoun_antecedent = 0;
    double alignment = 0;
};

/// Attention of pattern P [n, n] from each noun to its own adjectives, summed per noun, averaged over
/// the annotated nouns inside P (0 when none); `count` (optional) receives how many there were.
double adjective_noun_score(const MatT<float>& P, const SequenceAnnotations& a, int* count = nullptr);
/// The same from each pronoun to its antecedent's words.
double pronoun_antecedent_score(const MatT<float>& P, const SequenceAnnotations& a, int* count = nullptr);

/// [layer][head] scores of the model on the probe batch (rows of ids, each ≤ context tokens); with
/// `annotations` (one per probe row) also adjective_noun and pronoun_antecedent.
std::vector<std::vector<HeadScores>> head_scores(
    const Params<float>& params, const std::vector<std::vector<int>>& probe,
    const std::vector<SequenceAnnotations>* annotations = nullptr);

/// [decoder layer][head] alignment scores (HeadScores::alignment; the others 0) of an encoder–decoder's
/// cross-attention over probe pairs: sources [probe][m], targets [probe][n] the decoder's inputs,
/// annotations [probe] their gold alignments.
std::vector<std::vector<HeadScores>> cross_head_scores(const Params<float>& params,
                                                       const std::vector<std::vector<int>>& sources,
                                                       const std::vector<std::vector<int>>& targets,
                                                       const std::vector<SequenceAnnotations>& annotations);

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
    std::vector<std::vector<HeadScores>> scores;  // [layer][head] (an encoder–decoder: its decoder's)
    std::vector<std::pair<std::string, double>> figures;  // the task's figures (Task::figures), in order
};

struct TrainResult {
    Params<float> params;
    std::vector<EvalPoint> evals;
    long cliff_step = -1;  // first evaluated step whose held-out repeat loss < 1.0 (−1: never)
};

/// A task the trainer can run: a generator of batches with a seed (the training data, and the
/// held-out data drawn from the same generator with other seeds, or from a held-out split), the
/// vocabulary and sequence length it needs, and what its two scored kinds of position are called.
struct Task {
    std::string name = "induction";
    int vocab_size = 64;
    int context = 48;                                                         // n: tokens per sequence
    std::string first_label = "first occurrences", repeat_label = "repeats";  // kind 1 / kind 2
    std::function<TaskBatch(int B, std::uint64_t seed)> train_batch;          // [B, n]
    std::function<TaskBatch(int B, std::uint64_t seed)> heldout_batch;        // [B, n]
    /// Files that belong beside a checkpoint of a model trained on this task, as (name, content): a
    /// text's learned BPE (vocab.json, merges.txt), so the saved folder reads its tokens as text.
    std::vector<std::pair<std::string, std::string>> files;
    /// How each token id reads on screen ([vocab_size]; empty, or an id past its end: the id's number):
    /// the lab's probe attention maps label their rows and columns with it.
    std::vector<std::string> token_names;
    /// Where the held-out data comes from, in a sentence (the lab explains the held-out loss with it).
    std::string heldout_note;
    /// How a text was cut into tokens (TextCorpus::tokenizer; "" for a task of its own symbols).
    std::string tokenizer;
    /// Each id's text for the tokenizer a checkpoint is saved with (io/checkpoint.hpp
    /// checkpoint_task_files), raw UTF-8 as it appears in text (" fluffy"); ids past its end are
    /// named by their number (" 17"). tokens_prefix_space: a text's first word gets a space first.
    std::vector<std::string> tokens;
    bool tokens_prefix_space = true;
    /// Word classes saved as story_grammar.json beside a checkpoint: ("adjectives", words), ...
    std::vector<std::pair<std::string, std::vector<std::string>>> grammar;
    /// The annotations of one sequence of ids (null: the task has none; no annotated scores).
    std::function<SequenceAnnotations(const std::vector<int>& ids)> annotate;
    /// Figures measured on the trained model at the end of a run ("grammatical_greedy", 0.97), printed
    /// by `attnviz train` and kept in summary.json (null: none).
    std::function<std::vector<std::pair<std::string, double>>(const Params<float>&)> report;
    /// What each reported figure is, in words, by name ("grammatical_greedy" → "share of ..."), for
    /// `attnviz train`'s closing lines (a name without words is printed alone).
    std::vector<std::pair<std::string, std::string>> report_words;
    /// A text to try the trained model on (`attnviz train` ends with the command that does; "" = none).
    std::string example;
    /// Figures measured at every evaluation (translate: "alignment"), named by figure_names in the
    /// order it returns them: metrics.csv's columns after the losses, summary.json, the lab.
    std::vector<std::string> figure_names;
    std::function<std::vector<std::pair<std::string, double>>(const Params<float>&)> figures;
};

/// The induction task as a Task (held-out data: the same generator with other seeds).
Task induction_task(const InductionTask& task);

/// copy, reverse and sort: L random symbols, a separator, then the symbols copied / reversed /
/// sorted. Sequence [a1..aL, SEP, b1..bL]: inputs its first 2L tokens, targets the next ones, scored
/// only where the target is an answer symbol (kind 2). Vocabulary: `symbols` + 1 (SEP = symbols).
enum class SequenceOp { Copy, Reverse, Sort };
struct SequenceTask {
    SequenceOp op = SequenceOp::Copy;
    int symbols = 16;  // 2–1000
    int length = 8;    // L, 1–128
};
TaskBatch make_sequence_batch(const SequenceTask& task, int B, std::uint64_t seed);
Task sequence_task(const SequenceTask& task);

/// Modular addition, the grokking setup: "a + b =" → (a + b) mod p over every pair (a, b) in
/// [0, p)², split once (by split_seed) into a training part (train_fraction of the pairs) and a
/// disjoint held-out part. Tokens 0..p-1 are numbers, p is '+', p + 1 is '='; sequence [a, +, b, =],
/// scored only at '=' (kind 2). Vocabulary p + 2.
struct ModAddTask {
    int modulus = 97;  // p, 2–1000
    double train_fraction = 0.3;
    std::uint64_t split_seed = 0;
};
struct ModAddSplit {
    std::vector<std::pair<int, int>> train, heldout;  // (a, b) pairs
};
ModAddSplit modadd_split(const ModAddTask& task);
Task modadd_task(const ModAddTask& task);

/// Character-level text: the distinct code points of a UTF-8 text (sorted) are the vocabulary;
/// training windows of context + 1 characters come from the first 90 % of the text, held-out
/// windows from the rest. Every position is scored (kind 1).
struct TextCorpus {
    std::string name;                // file name, for messages
    std::vector<std::string> vocab;  // [V] each a UTF-8 character
    std::vector<int> ids;            // [characters] the text as ids
    /// What one id is, plural ("characters", "BPE tokens"): the lab's legend and messages.
    std::string unit = "characters";
    /// How the text was cut into ids, in a phrase ("a byte-level BPE of 512 tokens learned from it").
    std::string tokenizer = "one token per distinct character";
};
/// Throws Error naming `name` when the text is not UTF-8 text (invalid UTF-8 or NUL bytes: a binary
/// file), too short for two windows of `context` + 1 characters, or has more than 65536 characters.
TextCorpus text_corpus(const std::string& utf8, const std::string& name, int context);
/// The same from tokens made elsewhere (a BPE learned from the text, io/bpe_train.hpp): `vocab` holds
/// each token's raw bytes (id = index), `ids` the text. Throws Error like text_corpus when there are
/// too few tokens for two windows of `context` + 1, an id outside the vocabulary, or more than 65536
/// tokens in the vocabulary.
TextCorpus token_corpus(std::vector<std::string> vocab, std::vector<int> ids, const std::string& name,
                        int context);
/// The ids as UTF-8 text again (ids outside the vocabulary throw).
std::string decode_text(const TextCorpus& corpus, const std::vector<int>& ids);
Task text_task(std::shared_ptr<const TextCorpus> corpus, int context);

/// Step-by-step training (what train_task runs, and what the GUI's training session drives one
/// step at a time): the parameters, AdamW state, the fixed held-out and probe batches, the step
/// counter. Deterministic for (config, task, options): every batch's seed is derived from
/// (options.seed, step).
class Trainer {
  public:
    /// Validates the config and options against the task; throws ConfigError naming what is wrong.
    Trainer(const TrainConfig& config, Task task, const TrainOptions& options);

    /// Continues from these weights (a loaded checkpoint) with fresh AdamW moments; before the first
    /// step only. Throws ConfigError when their layout is not this model's.
    void set_params(const Params<float>& params);
    /// One optimizer step on a fresh training batch; returns its loss. Throws Error when the loss
    /// or gradient stops being finite (the run diverged).
    double step();
    /// Held-out loss (split by kind) and head scores on the probe batch, now; train_loss = the last
    /// step's loss.
    EvalPoint evaluate() const;
    /// Attention of the first probe sequence: [layer][head] → [n, n] (an encoder–decoder: its
    /// decoder's cross-attention [n, m], rows the target, columns the source).
    std::vector<std::vector<MatT<float>>> probe_attention() const;

    long steps_done() const { return state_.step; }
    double last_loss() const { return last_loss_; }
    double last_lr() const { return last_lr_; }
    const Params<float>& params() const { return params_; }
    const TrainConfig& config() const { return params_.config; }
    const TrainOptions& options() const { return options_; }
    const Task& task() const { return task_; }
    const std::vector<std::vector<int>>& probe() const { return probe_; }  // [probe][n]
    /// An encoder–decoder's probe sources [probe][m] (empty for a decoder).
    const std::vector<std::vector<int>>& probe_source() const { return probe_source_; }
    /// The probe rows' targets [probe][n] (what each row predicts).
    const std::vector<std::vector<int>>& probe_targets() const { return probe_targets_; }
    /// The probe rows' annotations (empty when the task has none).
    const std::vector<SequenceAnnotations>& probe_annotations() const { return probe_annotations_; }
    double tokens_per_step() const { return double(options_.batch) * double(task_.context); }

  private:
    Task task_;
    TrainOptions options_;
    Params<float> params_;
    Params<float> grad_;
    AdamWState state_;
    TaskBatch heldout_;
    std::vector<std::vector<int>> probe_;
    std::vector<std::vector<int>> probe_source_, probe_targets_;
    std::vector<SequenceAnnotations> probe_annotations_;  // [probe] (the task's annotate)
    double last_loss_ = 0, last_lr_ = 0;
};

/// Trains on `task` for options.steps steps. `progress(step, loss, eval)` is called after every
/// step (eval non-null on evaluation steps). cliff_step: the first evaluated step whose held-out
/// repeat loss < 1.0. Throws Error when the run diverges. Deterministic for (config, task, options).
TrainResult train_task(const TrainConfig& config, const Task& task, const TrainOptions& options,
                       const std::function<void(long, double, const EvalPoint*)>& progress = {});

/// Trains on the induction task. `progress(step, loss, eval)` is called after every step (eval
/// non-null on evaluation steps). Throws Error when the loss or gradient stops being finite (the
/// run diverged). Deterministic for (config, task, options).
TrainResult train_induction(const TrainConfig& config, const InductionTask& task, const TrainOptions& options,
                            const std::function<void(long, double, const EvalPoint*)>& progress = {});

}  // namespace attnviz

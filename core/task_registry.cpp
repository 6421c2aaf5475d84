// The table of training tasks: see core/task_registry.hpp. The generators of the first six live in
// core/tasks.cpp; a task added later brings its generator and its entry in a file of its own.
#include "core/task_registry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"

namespace attnviz {

TaskInfo successor_task_info();  // core/task_successor.cpp
TaskInfo story_task_info();      // core/task_story.cpp
TaskInfo translate_task_info();  // core/task_translate.cpp

namespace {

using OptKind = TaskOption::Kind;

std::string number_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

const char* kSequenceExplanation =
    "Train a small transformer and watch attention heads form. Each sequence is 8 random symbols, "
    "a separator, then the same symbols copied, reversed or sorted; only the answer is scored. "
    "Copying needs a head that looks a fixed 9 tokens back (a shifted diagonal in the grid), "
    "reversing a head whose target moves back 2 tokens per answer symbol (an anti-diagonal), "
    "sorting a head that finds the smallest symbol not yet written.";

TaskInfo induction_info() {
    TaskInfo t;
    t.name = "induction";
    t.label = "induction heads in 2 layers";
    t.description =
        "Train a small transformer and watch attention heads form. On the induction task every sequence "
        "is random tokens repeated once: the first copy cannot be predicted, the repeat can \u2014 by a "
        "two-head circuit: a previous-token head in layer 0 and an induction head in layer 1 (attend to "
        "the token after the earlier occurrence of the current token). The loss on repeats falls "
        "suddenly when the circuit forms: the phase change.";
    t.fits_model = false;  // the sequences fill the model's context with tokens of its vocabulary
    t.make = [](const TaskRequest& r) {
        InductionTask task;
        task.vocab_size = r.vocab_size;
        task.context = r.context;
        return induction_task(task);
    };
    // The check: 2 layers × 4 heads, d_model 64, attention-only, vocab 64, context 48,
    // periods 6–23, batch 32, AdamW lr 1e-3; the phase change comes near step 450 at seed 1.
    t.lab_preset = [](TrainConfig&, TrainOptions& o) { o.steps = 1500; };
    return t;
}

TaskInfo sequence_info(SequenceOp op, const char* name, const char* label) {
    TaskInfo t;
    t.name = name;
    t.label = label;
    t.description = kSequenceExplanation;
    t.options = {{"length", "--length", "L", "symbols per sequence, 1-128 (default 8)", OptKind::Int, 8, 1,
                  128, "length"}};
    t.make = [op](const TaskRequest& r) {
        SequenceTask task;
        task.op = op;
        task.symbols = std::min(1000, std::max(2, r.vocab_size - 1));
        task.length = int(r.values.at("length"));
        return sequence_task(task);
    };
    // 8 symbols of 16, a separator, then the answer (a vocabulary of 17). The same 2-layer
    // attention-only model: copy needs one head that looks 9 tokens back, reverse a head whose
    // offset grows by 2 per answer token, sort a head that finds the smallest symbol not yet written.
    t.lab_preset = [op](TrainConfig& c, TrainOptions& o) {
        c.vocab_size = 17;
        o.steps = op == SequenceOp::Sort ? 3000 : 1500;
    };
    return t;
}

TaskInfo modadd_info() {
    TaskInfo t;
    t.name = "modadd";
    t.label = "grokking mod 97";
    t.description =
        "Grokking: (a + b) mod 97 learned from 30 % of all pairs. The training loss falls within a "
        "few hundred steps (the pairs are memorised); the held-out loss stays high for thousands of "
        "steps and then falls too, once weight decay has pushed the model from memorising to the "
        "general "
        "rule (Power et al. 2022). Watch the two loss curves part and meet again.";
    t.options = {
        {"modulus", "--modulus", "P", "the modulus p, 2-1000 (default 97)", OptKind::Int, 97, 2, 1000,
         "modulus"},
        {"train_fraction", "--train-fraction", "F", "share of the p² pairs used for training (default 0.3)",
         OptKind::Real, 0.3, 0.0, 1.0, "train fraction"},
    };
    // Its four tokens "a + b =" have no previous-token, induction or repeated-token structure to score:
    // the sum is computed by the MLP from what '=' gathers of a and b.
    t.scores = {};
    t.make = [](const TaskRequest& r) {
        ModAddTask task;
        task.modulus = int(r.values.at("modulus"));
        task.train_fraction = r.values.at("train_fraction");
        return modadd_task(task);
    };
    // Grokking (Power et al. 2022): (a + b) mod 97 from 30 % of the pairs. The training loss falls
    // first; the held-out loss stays high until weight decay has pruned the memorised solution.
    // One layer with an MLP, strong weight decay (1.0), large batches.
    t.lab_preset = [](TrainConfig& c, TrainOptions& o) {
        c.n_layer = 1;
        c.d_model = 128;
        c.mlp = MlpKind::Gelu;
        o.batch = 512;
        o.adam.weight_decay = 1.0;
        o.steps = 10000;
        o.eval_every = 50;
    };
    return t;
}

TaskInfo text_info() {
    TaskInfo t;
    t.name = "text";
    t.label = "a text (characters or BPE tokens)";
    t.description =
        "A text (any UTF-8 file, Chinese too), as characters or as BPE tokens learned from it: the model "
        "learns which token comes next. Early heads attend to the previous few tokens; the loss on the "
        "held-out end of the file falls as common words and pairs are learned.";
    // The text is read in io (io/task_text.hpp), which also reads "bpe": 0 = characters, else the
    // tokens of a BPE of that many tokens (io/bpe_train.hpp's kMinBpeVocab..kMaxBpeVocab).
    t.options = {
        {"text", "--text", "FILE", "a UTF-8 text file (character level; Chinese too)", OptKind::File, 0, 0, 0,
         ""},
        {"bpe", "--bpe", "V",
         "tokens of a byte-level BPE of V tokens (257-8192) learned from the text, instead of characters; "
         "its vocab.json and merges.txt are saved with the checkpoint",
         OptKind::Int, 0, 257, 8192, ""},
    };
    t.make = [](const TaskRequest& r) {
        if (!r.load_text) throw ConfigError("The text task needs a text file.");
        TaskText text = r.load_text(r.context);
        Task task = text_task(text.corpus, r.context);
        task.files = std::move(text.files);
        return task;
    };
    // The task (and the vocabulary) come from the file the learner picks, read when Train is pressed.
    t.lab_preset = [](TrainConfig& c, TrainOptions& o) {
        c.context = 64;
        o.steps = 3000;
    };
    return t;
}

}  // namespace

const char* head_score_name(HeadScore s) {
    switch (s) {
        case HeadScore::PreviousToken:
            return "previous_token";
        case HeadScore::Induction:
            return "induction";
        case HeadScore::FirstToken:
            return "first_token";
        case HeadScore::SameToken:
            return "same_token";
        case HeadScore::AdjectiveNoun:
            return "adjective_noun";
        case HeadScore::PronounAntecedent:
            return "pronoun_antecedent";
        case HeadScore::Alignment:
            return "alignment";
    }
    return "";
}

double head_score_value(const HeadScores& s, HeadScore k) {
    switch (k) {
        case HeadScore::PreviousToken:
            return s.previous_token;
        case HeadScore::Induction:
            return s.induction;
        case HeadScore::FirstToken:
            return s.first_token;
        case HeadScore::SameToken:
            return s.same_token;
        case HeadScore::AdjectiveNoun:
            return s.adjective_noun;
        case HeadScore::PronounAntecedent:
            return s.pronoun_antecedent;
        case HeadScore::Alignment:
            return s.alignment;
    }
    return 0;
}

HeadScoreInfo head_score_info(HeadScore score) {
    // By name, so a score added to the enum shows with its own words once it has a row here, and with
    // its name and the common threshold before that.
    struct Row {
        const char* name;
        const char* label;
        const char* explanation;
        double threshold;
    };
    static const Row rows[] = {
        {"previous_token", "previous-token",
         "The mean attention from each token to the token just before it. A head near 1 copies "
         "information one step forward: the first half of an induction circuit.",
         0.4},  // (a layer-0 head of the induction circuit levels off near 0.45; uniform is ≈ 0.1)
        {"induction", "induction",
         "The mean attention from a token to the token right after an earlier occurrence of the same "
         "token (what came next last time). A head near 1 is an induction head: it predicts that a "
         "repeated sequence goes on as before.",
         0.5},
        {"first_token", "first-token (sink)",
         "The mean attention to the first position. A head near 1 parks its attention there when it has "
         "nothing better to do (an attention sink).",
         0.5},
        {"same_token", "same-token",
         "The mean attention from a token to earlier copies of itself (over the positions that have one).",
         0.5},
        {"adjective_noun", "adjective\u2192noun",
         "The mean attention from each noun to its own adjectives (\"creature\" to \"fluffy\" and "
         "\"blue\"). A head near 1 asks: which adjectives describe me?",
         0.5},
        {"pronoun_antecedent", "pronoun\u2192antecedent",
         "The mean attention from a pronoun to the noun or name it refers to, across sentences. A head "
         "near 1 resolves who \"it\" or \"she\" is.",
         0.5},
        {"alignment", "alignment",
         "The share of target words whose largest cross-attention weight (this head's) falls on the source "
         "word they translate. A head near 1 is an alignment head: while writing each word it looks at the "
         "word it translates, wherever the word order put it.",
         0.8},
    };
    const std::string name = head_score_name(score);
    for (const Row& r : rows)
        if (name == r.name) return {r.label, r.explanation, r.threshold};
    std::string label = name;
    std::replace(label.begin(), label.end(), '_', ' ');
    return {label, "The head score " + name + " (see the task's description).", 0.5};
}

const std::vector<HeadScore>& all_head_scores() {
    // Never destroyed (as the table below): a training thread may still read them while the program exits.
    static const std::vector<HeadScore>& all = *new std::vector<HeadScore>{
        HeadScore::PreviousToken, HeadScore::Induction, HeadScore::FirstToken, HeadScore::SameToken};
    return all;
}

const TaskOption* TaskInfo::file_option() const {
    for (const TaskOption& o : options)
        if (o.kind == TaskOption::Kind::File) return &o;
    return nullptr;
}

const TaskOption* TaskInfo::option(const std::string& key) const {
    for (const TaskOption& o : options)
        if (o.key == key) return &o;
    return nullptr;
}

const std::vector<TaskInfo>& task_registry() {
    // Never destroyed: the Training lab's thread, joined when the lab's state goes at exit, may still
    // look tasks up after other statics are gone (a crash the training_tasks GUI test caught).
    static const std::vector<TaskInfo>& table = *new std::vector<TaskInfo>{
        induction_info(),
        sequence_info(SequenceOp::Copy, "copy", "copy a sequence"),
        sequence_info(SequenceOp::Reverse, "reverse", "reverse a sequence"),
        sequence_info(SequenceOp::Sort, "sort", "sort a sequence"),
        modadd_info(),
        text_info(),
        successor_task_info(),
        story_task_info(),
        translate_task_info(),
    };
    return table;
}

const TaskInfo* find_task(const std::string& name) {
    for (const TaskInfo& t : task_registry())
        if (t.name == name) return &t;
    return nullptr;
}

std::string task_names() {
    std::string names;
    for (const TaskInfo& t : task_registry()) names += (names.empty() ? "" : ", ") + t.name;
    return names;
}

double task_value(const TaskRequest& r, const TaskOption& o) {
    auto it = r.values.find(o.key);
    return it == r.values.end() ? o.fallback : it->second;
}

Task make_task(const TaskInfo& info, const TaskRequest& r) {
    for (const auto& [key, value] : r.values) {
        const TaskOption* o = info.option(key);
        if (!o || o->kind == TaskOption::Kind::File)
            throw ConfigError("The task " + info.name + " has no option '" + key + "'.");
        if (value == o->fallback) continue;
        if (!(value >= o->min && value <= o->max) ||
            (o->kind == TaskOption::Kind::Int && value != std::floor(value)))
            throw ConfigError("The " + info.name + " task's option " + key + " must be " +
                              (o->kind == TaskOption::Kind::Int ? "a whole number " : "") + "from " +
                              number_text(o->min) + " to " + number_text(o->max) + ".");
    }
    if (info.file_option() && !r.load_text)
        throw ConfigError("The " + info.name + " task reads a text file: none was given.");
    TaskRequest resolved = r;  // every option has its value: the factory reads values.at(key)
    for (const TaskOption& o : info.options)
        if (o.kind != TaskOption::Kind::File) resolved.values[o.key] = task_value(r, o);
    return info.make(resolved);
}

}  // namespace attnviz

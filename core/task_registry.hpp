// The training tasks, one entry each: its name, what it teaches, the options it takes (each one both
// a flag of `attnviz train` and, with a lab label, a knob of the Training lab), the factory that
// makes its Task, the head scores it reports and the model and optimiser its lab preset trains. The
// CLI (io/train_commands), the lab's presets (app/training_session) and the lab (app/panels/
// lab_training) look tasks up here; adding a task is one line in the table (core/task_registry.cpp)
// and its own file (e.g. core/task_successor.cpp).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/tasks.hpp"

namespace attnviz {

/// The head scores of core/tasks.hpp's HeadScores, by name (metrics.csv, summary.json). Every task
/// reports the first four (all_head_scores); a task with annotations (story) also adjective_noun and
/// pronoun_antecedent; an encoder–decoder task (translate) alignment alone (of its cross-attention).
enum class HeadScore { PreviousToken, Induction, FirstToken, SameToken, AdjectiveNoun, PronounAntecedent, Alignment };
const char* head_score_name(
    HeadScore score);  // "previous_token", ..., "adjective_noun", "pronoun_antecedent", "alignment"
double head_score_value(const HeadScores& scores, HeadScore score);
const std::vector<HeadScore>& all_head_scores();  // the four every task reports

/// How a head score is shown: a label ("previous-token"), what it measures and how it is computed (the
/// lab's tooltip), and the score at which a head counts as one of that type (the Training lab marks
/// the step at which the first head of the run reaches it).
struct HeadScoreInfo {
    std::string label;
    std::string explanation;
    double threshold = 0.5;
};
HeadScoreInfo head_score_info(HeadScore score);

/// One option of a task: a number (Int or Real) or the path of a text file (File).
struct TaskOption {
    enum class Kind { Int, Real, File };
    std::string key;         // "modulus": TaskRequest::values' key
    std::string flag;        // "--modulus"
    std::string value_name;  // "P": the CLI's help
    std::string help;        // "the modulus p, 2-1000 (default 97)"
    Kind kind = Kind::Int;
    double fallback = 0;      // the value when not given (may lie outside [min, max]: "off")
    double min = 0, max = 0;  // a given value's range
    std::string lab_label;    // the Training lab's knob ("" = not a knob)
};

/// The text a task reads (a task with a File option): made in io (io/task_text.hpp: a file's
/// characters, or the tokens of a BPE learned from it) and handed to the factory by TaskRequest.
struct TaskText {
    std::shared_ptr<const TextCorpus> corpus;
    std::vector<std::pair<std::string, std::string>> files;  // (name, content) saved with a checkpoint
};

/// What a task is made from: the model's vocabulary and context (for the tasks that follow the
/// model), the option values by key (a missing key takes the option's fallback), and for a task
/// that reads a text the loader of it (`context` tokens per window).
struct TaskRequest {
    int vocab_size = 64;
    int context = 48;
    std::map<std::string, double> values;
    std::function<TaskText(int context)> load_text;
};

struct TaskInfo {
    std::string name;         // "modadd": --task, summary.json's "task", the lab's preset
    std::string label;        // "grokking mod 97": the lab's preset menu
    std::string description;  // what the task teaches: the lab's explanation line
    std::vector<TaskOption> options;
    /// Makes the task from a request holding every option's value, each in range (make_task sees to it).
    std::function<Task(const TaskRequest&)> make;
    /// The model's vocabulary and context follow the task's (else the task follows the model's).
    bool fits_model = true;
    /// The task trains an encoder–decoder (TrainConfig::encoder_layers > 0): its batches carry sources.
    bool encoder_decoder = false;
    /// The head scores that mean something for the task: metrics.csv's and summary.json's columns, and
    /// the curves (and their marks) of the lab's score plot.
    std::vector<HeadScore> scores = all_head_scores();
    /// The model and optimiser settings the lab's preset trains it with (over the lab's defaults).
    std::function<void(TrainConfig&, TrainOptions&)> lab_preset;

    /// The File option (the text it reads), or null.
    const TaskOption* file_option() const;
    const TaskOption* option(const std::string& key) const;
};

/// Every task, in the order the CLI's help and the lab's preset menu list them.
const std::vector<TaskInfo>& task_registry();
/// The entry named `name`, or null.
const TaskInfo* find_task(const std::string& name);
/// "induction, copy, reverse, sort, modadd, text, successor, story, translate".
std::string task_names();
/// The value of `option` in `request` (its fallback when absent).
double task_value(const TaskRequest& request, const TaskOption& option);
/// Checks the request's values against the options' ranges (ConfigError naming the option), then
/// makes the task; a task with a File option needs request.load_text.
Task make_task(const TaskInfo& info, const TaskRequest& request);

}  // namespace attnviz

// `attnviz train`: see io/train_commands.hpp.
#include "io/train_commands.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "core/tasks.hpp"
#include "core/train.hpp"
#include "io/cli.hpp"
#include "io/files.hpp"
#include "io/safetensors.hpp"

namespace attnviz {

namespace {

using ojson = nlohmann::ordered_json;

const std::vector<CliOption>& train_options() {
    static const std::vector<CliOption> options = {
        {"--task", "NAME", "training task: induction, copy, reverse, sort, modadd, text", false},
        {"--text", "FILE", "text task: a UTF-8 text file (character level; Chinese too)", false},
        {"--modulus", "P", "modadd: the modulus p, 2-1000 (default 97)", false},
        {"--train-fraction", "F", "modadd: share of the p² pairs used for training (default 0.3)", false},
        {"--length", "L", "copy/reverse/sort: symbols per sequence, 1-128 (default 8)", false},
        {"--layers", "L", "blocks, 1-6 (default 2)", false},
        {"--heads", "H", "heads per block, 1-8 (default 4)", false},
        {"--d-model", "D", "residual width, 16-256 (default 64)", false},
        {"--context", "N", "tokens per sequence, 8-256 (default 48)", false},
        {"--vocab", "V", "vocabulary size (default 64)", false},
        {"--steps", "N", "optimizer steps", false},
        {"--seed", "S", "seed of the initialisation and the data (default 0)", false},
        {"--batch", "B", "sequences per step (default 32)", false},
        {"--lr", "LR", "AdamW learning rate (default 1e-3)", false},
        {"--weight-decay", "WD", "AdamW decoupled weight decay (default 0.01)", false},
        {"--eval-every", "K", "held-out loss and head scores every K steps (default 25)", false},
        {"--no-norm", "", "no LayerNorm (default: LayerNorm before each block and at the end)", false},
        {"--tied", "", "unembedding tied to wte (default: its own lm_head.weight)", false},
        {"--threads", "T", "worker threads (default 1)", false},
        {"--out", "DIR", "directory for the checkpoint, metrics.csv and summary.json", false},
    };
    return options;
}

const char* kScoreNames[4] = {"previous_token", "induction", "first_token", "same_token"};

double score_of(const HeadScores& s, int k) {
    return k == 0 ? s.previous_token : k == 1 ? s.induction : k == 2 ? s.first_token : s.same_token;
}

std::string metrics_header(const TrainConfig& c) {
    std::string h = "step,train_loss,heldout_loss,heldout_first_loss,heldout_repeat_loss";
    for (int l = 0; l < c.n_layer; ++l)
        for (int hd = 0; hd < c.n_head; ++hd)
            for (const char* name : kScoreNames)
                h += ",L" + std::to_string(l) + "H" + std::to_string(hd) + "_" + name;
    return h + "\n";
}

std::string metrics_row(const EvalPoint& e) {
    char buf[64];
    std::string r = std::to_string(e.step);
    for (double v : {e.train_loss, e.heldout_loss, e.heldout_split.first, e.heldout_split.repeat}) {
        std::snprintf(buf, sizeof buf, ",%.6g", v);
        r += buf;
    }
    for (const auto& layer : e.scores)
        for (const HeadScores& s : layer)
            for (int k = 0; k < 4; ++k) {
                std::snprintf(buf, sizeof buf, ",%.6g", score_of(s, k));
                r += buf;
            }
    return r + "\n";
}

/// config.json in the GPT-2 layout (n_embd, n_layer, n_head, n_positions, vocab_size) plus attnviz
/// keys saying the blocks have no MLP (and whether they have norms).
std::string config_json(const TrainConfig& c) {
    ojson j;
    j["model_type"] = "gpt2";
    j["architectures"] = {"GPT2LMHeadModel"};
    j["n_layer"] = c.n_layer;
    j["n_head"] = c.n_head;
    j["n_embd"] = c.d_model;
    j["n_positions"] = c.context;
    j["vocab_size"] = c.vocab_size;
    j["layer_norm_epsilon"] = c.norm_eps;
    j["activation_function"] = "gelu_new";
    j["tie_word_embeddings"] = c.tied;
    j["attnviz_attention_only"] = true;
    j["attnviz_layer_norm"] = c.layer_norm;
    return j.dump(2) + "\n";
}

ojson scores_json(const std::vector<std::vector<HeadScores>>& scores) {
    ojson layers = ojson::array();
    for (const auto& layer : scores) {
        ojson heads = ojson::array();
        for (const HeadScores& s : layer) {
            ojson h;
            for (int k = 0; k < 4; ++k) h[kScoreNames[k]] = score_of(s, k);
            heads.push_back(h);
        }
        layers.push_back(heads);
    }
    return layers;
}

int train_main(int argc, char** argv) {
    const auto& options = train_options();
    const CliArgs args = parse_cli(argc, argv, options);
    if (args.has("--help")) {
        std::cout << cli_usage("attnviz train", options, {"--task", "--steps", "--out"});
        return 0;
    }
    require_flag(args, options, "--task");
    require_flag(args, options, "--steps");
    require_flag(args, options, "--out");
    const std::string task_name = *args.get("--task");
    const bool known = task_name == "induction" || task_name == "copy" || task_name == "reverse" ||
                       task_name == "sort" || task_name == "modadd" || task_name == "text";
    if (!known)
        throw UsageError("--task: unknown task '" + task_name +
                         "' (known tasks: induction, copy, reverse, sort, modadd, text)");
    if (task_name == "text") require_flag(args, options, "--text");
    TrainConfig c;
    c.n_layer = cli_int("--layers", args.get_or("--layers", "2"), 1, 6);
    c.n_head = cli_int("--heads", args.get_or("--heads", "4"), 1, 8);
    c.d_model = cli_int("--d-model", args.get_or("--d-model", "64"), 16, 256);
    c.context = cli_int("--context", args.get_or("--context", "48"), 8, 256);
    c.vocab_size = cli_int("--vocab", args.get_or("--vocab", "64"), 2, 65536);
    c.layer_norm = !args.has("--no-norm");
    c.tied = args.has("--tied");
    Task task;
    if (task_name == "induction") {
        InductionTask t;
        t.vocab_size = c.vocab_size;
        t.context = c.context;
        task = induction_task(t);
    } else if (task_name == "modadd") {
        ModAddTask t;
        t.modulus = cli_int("--modulus", args.get_or("--modulus", "97"), 2, 1000);
        t.train_fraction = cli_double("--train-fraction", args.get_or("--train-fraction", "0.3"), 0.0, 1.0);
        task = modadd_task(t);
    } else if (task_name == "text") {
        const std::string path = *args.get("--text");
        auto corpus = std::make_shared<const TextCorpus>(text_corpus(read_file(path), path, c.context));
        task = text_task(corpus, c.context);
    } else {
        SequenceTask t;
        t.op = task_name == "copy"      ? SequenceOp::Copy
               : task_name == "reverse" ? SequenceOp::Reverse
                                        : SequenceOp::Sort;
        t.symbols = std::min(1000, std::max(2, c.vocab_size - 1));
        t.length = cli_int("--length", args.get_or("--length", "8"), 1, 128);
        task = sequence_task(t);
    }
    if (task_name != "induction") {  // the model fits the task's vocabulary and sequences
        c.vocab_size = task.vocab_size;
        c.context = std::max(c.context, task.context);
    }
    validate_train_config(c);
    TrainOptions o;
    o.steps = cli_int("--steps", *args.get("--steps"), 1, 10000000);
    o.seed = std::uint64_t(cli_int("--seed", args.get_or("--seed", "0"), 0, 2147483647));
    o.batch = cli_int("--batch", args.get_or("--batch", "32"), 1, 4096);
    o.adam.lr = cli_double("--lr", args.get_or("--lr", "1e-3"), 0.0, 1e6);
    o.adam.weight_decay = cli_double("--weight-decay", args.get_or("--weight-decay", "0.01"), 0.0, 1e3);
    o.eval_every = cli_int("--eval-every", args.get_or("--eval-every", "25"), 1, 10000000);
    o.threads = cli_int("--threads", args.get_or("--threads", "1"), 1, 256);
    std::string out = *args.get("--out");
    while (out.size() > 1 && out.back() == '/') out.pop_back();
    if (out.empty()) throw UsageError("--out needs a directory name");
    make_dirs(out);

    const bool tty = isatty(2) != 0;
    const auto t0 = std::chrono::steady_clock::now();
    const double tokens_per_step = double(o.batch) * double(c.context);
    std::string csv = metrics_header(c);
    const TrainResult r = train_task(c, task, o, [&](long step, double loss, const EvalPoint* e) {
        if (e) csv += metrics_row(*e);
        if (!tty && !e) return;
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double tps = secs > 0 ? tokens_per_step * double(step) / secs : 0.0;
        const double eta = step > 0 ? secs / double(step) * double(o.steps - step) : 0.0;
        if (tty) {
            const int width = 30, filled = int(double(width) * double(step) / double(o.steps));
            std::fprintf(stderr, "\r[%s%s] step %ld/%ld  loss %.4f  %.0f tok/s  ETA %.0fs ",
                         std::string(std::size_t(filled), '#').c_str(),
                         std::string(std::size_t(width - filled), '.').c_str(), step, o.steps, loss, tps,
                         eta);
            if (step == o.steps) std::fprintf(stderr, "\n");
        } else {
            std::fprintf(stderr, "step %ld/%ld loss %.4f heldout %.4f repeat %.4f %.0f tok/s ETA %.0fs\n",
                         step, o.steps, loss, e->heldout_loss, e->heldout_split.repeat, tps, eta);
        }
    });
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    write_train_checkpoint(out, r.params);
    write_file_atomic(out + "/metrics.csv", csv);
    const EvalPoint& last = r.evals.back();
    ojson s;
    s["task"] = task_name;
    s["steps"] = o.steps;
    s["seed"] = o.seed;
    s["threads"] = o.threads;
    s["params"] = r.params.data.size();
    s["train_loss"] = last.train_loss;
    s["heldout_loss"] = last.heldout_loss;
    s["heldout_first_loss"] = last.heldout_split.first;
    s["heldout_repeat_loss"] = last.heldout_split.repeat;
    s["cliff_step"] = r.cliff_step >= 0 ? ojson(r.cliff_step) : ojson(nullptr);
    s["seconds"] = secs;
    s["tokens_per_second"] = secs > 0 ? tokens_per_step * double(o.steps) / secs : 0.0;
    s["head_scores"] = scores_json(last.scores);
    write_file_atomic(out + "/summary.json", s.dump(2) + "\n");
    std::cout << "trained " << o.steps << " steps in " << secs << " s; held-out loss " << last.heldout_loss
              << " (repeats " << last.heldout_split.repeat << "); wrote " << out << "\n";
    return 0;
}

}  // namespace

void write_train_checkpoint(const std::string& dir, const Params<float>& p) {
    std::vector<SafetensorsWriteTensor> tensors;
    for (const ParamView& v : p.layout) {
        SafetensorsWriteTensor t;
        t.name = v.name;
        t.dtype = "F32";
        for (int s : v.shape) t.shape.push_back(s);
        t.data = p.data.data() + v.offset;
        t.count = v.size;
        tensors.push_back(std::move(t));
    }
    write_safetensors(dir + "/model.safetensors", tensors, {{"format", "pt"}});
    write_file_atomic(dir + "/config.json", config_json(p.config));
}

int run_train_command(int argc, char** argv) {
    return run_cli_command("attnviz train", [&] { return train_main(argc, argv); });
}

}  // namespace attnviz

// `attnviz train`: see io/train_commands.hpp.
#include "io/train_commands.hpp"
#include "io/bpe_train.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "core/error.hpp"
#include "core/task_registry.hpp"
#include "core/tasks.hpp"
#include "core/thread_pool.hpp"
#include "core/train.hpp"
#include "io/cli.hpp"
#include "io/commands.hpp"
#include "io/files.hpp"
#include "io/json_limits.hpp"
#include "io/model_loader.hpp"
#include "io/npy.hpp"
#include "io/platform.hpp"
#include "io/safetensors.hpp"
#include "io/task_text.hpp"

namespace attnviz {

namespace {

using ojson = nlohmann::ordered_json;

/// The names of the tasks that take `flag`: "copy/reverse/sort" (slashes) or "copy, reverse or sort".
std::string tasks_with_flag(const std::string& flag, bool slashes) {
    std::vector<std::string> names;
    for (const TaskInfo& t : task_registry())
        for (const TaskOption& o : t.options)
            if (o.flag == flag) names.push_back(t.name);
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i)
        out += (i == 0 ? "" : slashes ? "/" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return out;
}

const TaskOption* option_with_flag(const TaskInfo& task, const std::string& flag) {
    for (const TaskOption& o : task.options)
        if (o.flag == flag) return &o;
    return nullptr;
}

/// Every task's options (core/task_registry.hpp), each flag once, after --task.
std::vector<CliOption> task_cli_options() {
    std::vector<CliOption> out = {{"--task", "NAME", "training task: " + task_names(), false}};
    for (const TaskInfo& t : task_registry())
        for (const TaskOption& o : t.options) {
            const bool listed =
                std::any_of(out.begin(), out.end(), [&](const CliOption& c) { return c.name == o.flag; });
            if (!listed)
                out.push_back({o.flag, o.value_name, tasks_with_flag(o.flag, true) + ": " + o.help, false});
        }
    return out;
}

const std::vector<CliOption>& train_options() {
    static const std::vector<CliOption> options = [] {
        std::vector<CliOption> all = task_cli_options();
        const std::vector<CliOption> model = {
            {"--layers", "L", "blocks, 1-6 (default 2; an encoder-decoder's: its decoder's)", false},
            {"--encoder-layers", "L",
             "translate: encoder blocks of the encoder-decoder (T5 layout), 1-6 (default 1)", false},
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
            {"--no-norm", "", "no norms (the same as --norm none)", false},
            {"--norm", "KIND",
             "layernorm (default), rmsnorm or none: before attention, the MLP and the unembedding", false},
            {"--mlp", "KIND", "none (default: attention-only), gelu or swiglu", false},
            {"--d-ff", "F", "MLP width, 1-1024 (default 4 x d_model)", false},
            {"--positions", "KIND", "learned (default), sinusoidal or rope", false},
            {"--tied", "", "unembedding tied to wte (default: its own lm_head.weight)", false},
            {"--threads", "T", "worker threads (default 1; at most the machine's cores)", false},
            {"--init", "DIR",
             "continue from this checkpoint (its config.json sets the model; fresh AdamW moments)", false},
            {"--out", "DIR", "directory for the checkpoint, metrics.csv and summary.json", false},
        };
        all.insert(all.end(), model.begin(), model.end());
        return all;
    }();
    return options;
}

std::string metrics_header(const TrainConfig& c, const std::vector<HeadScore>& scores,
                           const std::vector<std::string>& figures) {
    std::string h = "step,train_loss,heldout_loss,heldout_first_loss,heldout_repeat_loss";
    for (const std::string& f : figures) h += "," + f;
    for (int l = 0; l < c.n_layer; ++l)
        for (int hd = 0; hd < c.n_head; ++hd)
            for (HeadScore k : scores)
                h += ",L" + std::to_string(l) + "H" + std::to_string(hd) + "_" + head_score_name(k);
    return h + "\n";
}

std::string metrics_row(const EvalPoint& e, const std::vector<HeadScore>& scores) {
    char buf[64];
    std::string r = std::to_string(e.step);
    for (double v : {e.train_loss, e.heldout_loss, e.heldout_split.first, e.heldout_split.repeat}) {
        std::snprintf(buf, sizeof buf, ",%.6g", v);
        r += buf;
    }
    for (const auto& f : e.figures) {
        std::snprintf(buf, sizeof buf, ",%.6g", f.second);
        r += buf;
    }
    for (const auto& layer : e.scores)
        for (const HeadScores& s : layer)
            for (HeadScore k : scores) {
                std::snprintf(buf, sizeof buf, ",%.6g", head_score_value(s, k));
                r += buf;
            }
    return r + "\n";
}

}  // namespace

namespace {

// ---------------------------------------------------------------------------------------------
// .npy of token ids in, .npy of gradients out
// ---------------------------------------------------------------------------------------------

/// Token ids from a .npy file made with numpy: integer dtype (i1/i2/i4/i8, u1/u2/u4/u8, little-endian),
/// shape [n] or [B, n], C or Fortran order. rows receives B (1 for [n]), cols n.
}  // namespace

std::vector<std::int64_t> parse_token_npy(const std::string& bytes, const std::string& path, int& rows,
                                          int& cols) {
    const std::string prefix = "token file " + path + ": ";
    auto fail = [&](const std::string& why) -> void { throw Error(prefix + why); };
    const NpyHeader h = parse_npy_header(bytes, prefix);
    if (h.kind != 'i' && h.kind != 'u')
        fail("dtype '" + h.descr + "' is not a little-endian integer type (token ids need int32 or int64)");
    if (h.shape.size() != 1 && h.shape.size() != 2)
        fail("shape has " + std::to_string(h.shape.size()) + " dimensions (token ids need [n] or [B, n])");
    const std::uint64_t B = h.shape.size() == 2 ? h.shape[0] : 1, n = h.shape.back();
    if (B < 1 || n < 2)
        fail("needs at least 2 tokens per row (inputs are ids[..., :-1], targets ids[..., 1:])");
    // h.count is B·n, never wrapped (parse_npy_header refuses more than 2^40 elements).
    const std::uint64_t need = h.count * std::uint64_t(h.item), have = bytes.size() - h.data_start;
    if (have != need)
        fail("holds " + std::to_string(have) + " data bytes; shape and dtype need " + std::to_string(need));
    // (have is at most the file's size, so B and n both fit an int from here on.)
    const int width = h.item;
    const bool is_signed = h.kind == 'i';
    std::vector<std::int64_t> ids(std::size_t(h.count));  // [B, n], C order
    for (std::uint64_t r = 0; r < B; ++r)
        for (std::uint64_t t = 0; t < n; ++t) {
            const std::uint64_t src = h.fortran ? t * B + r : r * n + t;
            const unsigned char* b = reinterpret_cast<const unsigned char*>(bytes.data() + h.data_start) +
                                     src * std::uint64_t(width);
            std::uint64_t u = 0;
            for (int k = 0; k < width; ++k) u |= std::uint64_t(b[k]) << (8 * k);
            std::int64_t v;
            if (is_signed && width < 8 && (u >> (8 * width - 1)) & 1) u |= ~std::uint64_t(0) << (8 * width);
            std::memcpy(&v, &u, sizeof v);
            if (!is_signed && width == 8 && (u >> 63)) v = std::numeric_limits<std::int64_t>::max();
            ids[std::size_t(r * n + t)] = v;
        }
    rows = int(B);
    cols = int(n);
    return ids;
}

namespace {

std::vector<std::int64_t> read_token_npy(const std::string& path, int& rows, int& cols) {
    return parse_token_npy(read_file(path, kMaxTokenFileBytes), path, rows, cols);
}

const std::vector<CliOption>& grad_options() {
    static const std::vector<CliOption> options = {
        {"--model", "DIR", "checkpoint folder written by attnviz train (config.json, model.safetensors)",
         false},
        {"--tokens", "FILE.npy",
         "integer token ids, shape [n] or [B, n]: inputs ids[..., :-1], targets ids[..., 1:]", false},
        {"--out", "OUT", "directory for loss.npy and one <tensor name>.npy gradient per parameter", false},
        {"--adamw-steps", "K",
         "also take K torch.optim.AdamW steps on this batch (fresh moments, no clipping, "
         "constant lr) and write the checkpoint after them to OUT/adamw/ (default 0)",
         false},
        {"--lr", "LR", "AdamW learning rate for --adamw-steps (default 1e-3)", false},
        {"--weight-decay", "WD", "AdamW decoupled weight decay for --adamw-steps (default 0.01)", false},
        {"--threads", "T", "worker threads (default 1; at most the machine's cores)", false},
    };
    return options;
}

/// What `attnviz grad` was asked, checked: the checkpoint and the batch read, nothing computed or written.
struct GradSetup {
    bool help = false;
    int threads = 1, adamw_steps = 0, rows = 0, cols = 0;
    AdamWConfig adam;
    std::string out;
    Params<float> params;
    Batch batch;
};

GradSetup setup_grad(int argc, char** argv) {
    GradSetup g;
    const auto& options = grad_options();
    const CliArgs args = parse_cli(argc, argv, options);
    if (args.has("--help")) {
        g.help = true;
        return g;
    }
    require_flag(args, options, "--model");
    require_flag(args, options, "--tokens");
    require_flag(args, options, "--out");
    g.threads = resolve_threads(cli_int("--threads", args.get_or("--threads", "1"), 1, 256));
    g.adamw_steps = cli_int("--adamw-steps", args.get_or("--adamw-steps", "0"), 0, 100000);
    AdamWConfig& adam = g.adam;
    adam.lr = cli_double("--lr", args.get_or("--lr", "1e-3"), 0.0, 1e6);
    adam.weight_decay = cli_double("--weight-decay", args.get_or("--weight-decay", "0.01"), 0.0, 1e3);
    std::string& out = g.out = *args.get("--out");
    while (out.size() > 1 && out.back() == '/') out.pop_back();
    if (out.empty()) throw UsageError("--out needs a directory name");
    check_dump_target(out);

    g.params = load_train_checkpoint(*args.get("--model"));
    const TrainConfig& c = g.params.config;
    const std::string tokens_path = *args.get("--tokens");
    int& rows = g.rows;
    int& cols = g.cols;
    const std::vector<std::int64_t> ids = read_token_npy(tokens_path, rows, cols);
    for (std::int64_t id : ids)
        if (id < 0 || id >= c.vocab_size)
            throw Error("token file " + tokens_path + ": id " + std::to_string(id) +
                        " is outside the model's vocabulary (0.." + std::to_string(c.vocab_size - 1) + ")");
    if (cols - 1 > c.context)
        throw Error("token file " + tokens_path + ": rows of " + std::to_string(cols) + " ids give " +
                    std::to_string(cols - 1) + " inputs, more than the model's context of " +
                    std::to_string(c.context));
    Batch& batch = g.batch;
    batch.B = rows;
    batch.n = cols - 1;
    for (int r = 0; r < rows; ++r)
        for (int t = 0; t < cols - 1; ++t) {
            batch.inputs.push_back(int(ids[std::size_t(r) * std::size_t(cols) + std::size_t(t)]));
            batch.targets.push_back(int(ids[std::size_t(r) * std::size_t(cols) + std::size_t(t) + 1]));
        }
    return g;
}

}  // namespace

void check_grad_arguments(int argc, char** argv) {
    (void)setup_grad(argc, argv);
}

namespace {

int grad_main(int argc, char** argv) {
    GradSetup g = setup_grad(argc, argv);
    if (g.help) {
        std::cout << cli_usage("attnviz grad", grad_options(), {"--model", "--tokens", "--out"});
        return 0;
    }
    const Params<float>& params = g.params;
    const Batch& batch = g.batch;
    const int threads = g.threads, adamw_steps = g.adamw_steps, rows = g.rows, cols = g.cols;
    const AdamWConfig& adam = g.adam;
    const std::string& out = g.out;
    Params<float> grad;
    const double loss = loss_and_grad(params, batch, &grad, threads);
    Params<float> stepped = params;
    if (adamw_steps > 0) {
        AdamWState state;
        Params<float> g = grad;
        for (int k = 0; k < adamw_steps; ++k) {
            if (k > 0) loss_and_grad(stepped, batch, &g, threads);
            adamw_step(stepped.data, g.data, state, adam, adam.lr);
        }
    }
    publish_dump_dir(out, [&](const std::string& tmp) {
        ojson m;
        m["attnviz_dump"] = 1;
        m["command"] = "grad";
        m["loss"] = loss;
        m["tokens"] = {rows, cols};
        ojson files = ojson::array();
        write_file_atomic(tmp + "/loss.npy", npy_f64_scalar_bytes(loss));
        for (const ParamView& v : grad.layout) {
            write_file_atomic(tmp + "/" + v.name + ".npy",
                              npy_f32_bytes(grad.data.data() + v.offset,
                                            std::vector<std::uint64_t>(v.shape.begin(), v.shape.end())));
            files.push_back(v.name + ".npy");
        }
        m["gradients"] = std::move(files);
        if (adamw_steps > 0) {
            make_dirs(tmp + "/adamw");
            save_train_checkpoint(tmp + "/adamw", stepped);
            m["adamw"] = {{"steps", adamw_steps}, {"lr", adam.lr},       {"weight_decay", adam.weight_decay},
                          {"beta1", adam.beta1},  {"beta2", adam.beta2}, {"eps", adam.eps}};
        }
        write_file_atomic(tmp + "/manifest.json", m.dump(2) + "\n");
    });
    std::cout << "loss " << loss << "; wrote " << grad.layout.size() << " gradients to " << out << "/\n";
    return 0;
}

ojson scores_json(const std::vector<std::vector<HeadScores>>& scores, const std::vector<HeadScore>& kinds) {
    ojson layers = ojson::array();
    for (const auto& layer : scores) {
        ojson heads = ojson::array();
        for (const HeadScores& s : layer) {
            ojson h = ojson::object();  // (a task that declares no scores: {})
            for (HeadScore k : kinds) h[head_score_name(k)] = head_score_value(s, k);
            heads.push_back(h);
        }
        layers.push_back(heads);
    }
    return layers;
}

/// What `attnviz train` was asked, checked. With check_only nothing is read but the --init checkpoint,
/// nothing is created, and a text task's data (its file, its BPE) is not made.
struct TrainSetup {
    bool help = false;
    std::string task_name, out;
    const TaskInfo* info = nullptr;
    TrainConfig c;
    Task task;
    std::optional<LearnedBpe> bpe;  // --bpe: the tokenizer learned from the text, saved with the model
    std::optional<Params<float>> init;
    TrainOptions o;  // (o.init is set by the caller: it points into `init`)
    std::vector<std::pair<std::string, std::string>> files;  // written beside the checkpoint
};

TrainSetup setup_train(int argc, char** argv, bool check_only) {
    TrainSetup setup;
    const auto& options = train_options();
    const CliArgs args = parse_cli(argc, argv, options);
    if (args.has("--help")) {
        setup.help = true;
        return setup;
    }
    require_flag(args, options, "--task");
    require_flag(args, options, "--steps");
    require_flag(args, options, "--out");
    const std::string task_name = setup.task_name = *args.get("--task");
    const TaskInfo* info = setup.info = find_task(task_name);
    if (!info)
        throw UsageError("--task: unknown task '" + task_name + "' (known tasks: " + task_names() + ")");
    const TaskOption* file = info->file_option();
    if (file) require_flag(args, options, file->flag);
    TrainConfig& c = setup.c;
    c.n_layer = cli_int("--layers", args.get_or("--layers", "2"), 1, 6);
    c.n_head = cli_int("--heads", args.get_or("--heads", "4"), 1, 8);
    c.d_model = cli_int("--d-model", args.get_or("--d-model", "64"), 16, 256);
    c.context = cli_int("--context", args.get_or("--context", "48"), 8, 256);
    c.vocab_size = cli_int("--vocab", args.get_or("--vocab", "64"), 2, 65536);
    if (info->encoder_decoder) {
        // T5's layout: RMSNorm (its epsilon) and gated-GELU MLPs; --norm, --mlp, --positions and --tied
        // choose among decoders only.
        for (const char* f : {"--no-norm", "--norm", "--mlp", "--positions", "--tied", "--init"})
            if (args.has(f))
                throw UsageError(std::string(f) + " does not go with --task " + task_name +
                                 " (an encoder-decoder in T5's layout)");
        c.encoder_layers = cli_int("--encoder-layers", args.get_or("--encoder-layers", "1"), 1, 6);
        c.norm = NormKind::RMSNorm;
        c.mlp = MlpKind::GeGLU;
        c.norm_eps = 1e-6;
    } else if (args.has("--encoder-layers")) {
        throw UsageError("--encoder-layers goes with --task translate");
    }
    // The kinds the trainer trains, named by core/model.hpp's tables.
    auto kind_flag = [&](const char* flag, const std::string& fallback, const auto& allowed, auto* kind) {
        const std::string v = args.get_or(flag, fallback);
        if (!kind_from_name(v, allowed, kind))
            throw UsageError(std::string(flag) + ": '" + v + "' is not " + kind_names(allowed));
        return v;
    };
    NormKind norm_k = info->encoder_decoder ? NormKind::RMSNorm : NormKind::LayerNorm;
    const std::string norm =
        info->encoder_decoder
            ? std::string("rmsnorm")
            : kind_flag("--norm", args.has("--no-norm") ? "none" : "layernorm",
                        std::vector<NormKind>{NormKind::LayerNorm, NormKind::RMSNorm, NormKind::None},
                        &norm_k);
    if (args.has("--no-norm") && norm != "none") throw UsageError("--no-norm contradicts --norm " + norm);
    c.layer_norm = norm_k != NormKind::None;
    c.norm = norm_k == NormKind::RMSNorm ? NormKind::RMSNorm : NormKind::LayerNorm;
    if (!info->encoder_decoder)
        kind_flag("--mlp", "none", std::vector<MlpKind>{MlpKind::None, MlpKind::Gelu, MlpKind::SwiGLU},
                  &c.mlp);
    if (args.has("--d-ff")) c.d_ff = cli_int("--d-ff", *args.get("--d-ff"), 1, 1024);
    kind_flag("--positions", "learned",
              std::vector<PositionKind>{PositionKind::Learned, PositionKind::Sinusoidal, PositionKind::Rope},
              &c.positions);
    c.tied = args.has("--tied");
    std::optional<Params<float>>& init = setup.init;
    if (args.has("--init")) {
        for (const char* f : {"--layers", "--heads", "--d-model", "--context", "--vocab", "--no-norm",
                              "--norm", "--mlp", "--d-ff", "--positions", "--tied"})
            if (args.has(f))
                throw UsageError(
                    std::string(f) +
                    " cannot be combined with --init (the checkpoint's config.json sets the model)");
        init = load_train_checkpoint(*args.get("--init"));
        c = init->config;
    }
    Task& task = setup.task;
    std::optional<LearnedBpe>& bpe = setup.bpe;
    for (const CliOption& flag : task_cli_options())
        if (flag.name != "--task" && args.has(flag.name) && !option_with_flag(*info, flag.name))
            throw UsageError(flag.name + " goes with --task " + tasks_with_flag(flag.name, false));
    TaskRequest request;  // the model's vocabulary and context, the task's flags
    request.vocab_size = c.vocab_size;
    request.context = c.context;
    for (const TaskOption& o : info->options) {
        if (o.kind == TaskOption::Kind::File || !args.has(o.flag)) continue;
        const std::string value = *args.get(o.flag);
        request.values[o.key] = o.kind == TaskOption::Kind::Int
                                    ? cli_int(o.flag, value, int(o.min), int(o.max))
                                    : cli_double(o.flag, value, o.min, o.max);
    }
    if (file && check_only) {
        task.name = task_name;
        task.vocab_size = c.vocab_size;  // (the text's own vocabulary is known once it is read)
        task.context = c.context;
    } else if (file) {
        TaskTextSource text;
        text.path = *args.get(file->flag);
        text.bpe_vocab = task_bpe_vocab(request);
        if (text.bpe_vocab > 0) {
            bpe.emplace();
            text.learned = &*bpe;
            // Learning merges from a long text without spaces takes a while: say how far it is.
            const bool tty = platform::stderr_is_terminal();
            const auto b0 = std::chrono::steady_clock::now();
            auto last = b0;
            text.progress = [&, path = text.path](int merges, int most) {
                const auto now = std::chrono::steady_clock::now();
                const bool done = merges == most;
                if (!tty && !done && now - last < std::chrono::seconds(5) && merges != 0) return;
                last = now;
                const double secs = std::chrono::duration<double>(now - b0).count();
                std::fprintf(stderr,
                             tty ? "\rlearning BPE tokens from %s: %d/%d merges, %.0f s "
                                 : "learning BPE tokens from %s: %d/%d merges, %.0f s\n",
                             path.c_str(), merges, most, secs);
            };
            request.load_text = task_text_loader(text);
            task = make_task(*info, request);
            if (tty) std::fprintf(stderr, "\n");
        } else {
            request.load_text = task_text_loader(text);
            task = make_task(*info, request);
        }
    } else {
        task = make_task(*info, request);
    }
    if (info->fits_model) {  // the model fits the task's vocabulary and sequences
        c.vocab_size = task.vocab_size;
        if (args.has("--context") &&
            task.context > c.context)  // asked for: never changed behind the user's back
            throw UsageError("--context " + std::to_string(c.context) + " is shorter than the " + task_name +
                             " task's sequences (" + std::to_string(task.context) +
                             " tokens); give --context " + std::to_string(task.context) + " or more" +
                             (option_with_flag(*info, "--length") ? ", or a smaller --length" : ""));
        c.context = std::max(c.context, task.context);
    }
    if (init && (c.vocab_size != init->config.vocab_size || c.context != init->config.context))
        throw UsageError("--init: the checkpoint's vocabulary (" + std::to_string(init->config.vocab_size) +
                         ") and context (" + std::to_string(init->config.context) + ") do not fit task " +
                         task_name + " (vocabulary " + std::to_string(c.vocab_size) + ", context " +
                         std::to_string(c.context) + ")");
    validate_train_config(c);
    TrainOptions& o = setup.o;
    o.steps = cli_int("--steps", *args.get("--steps"), 1, 10000000);
    o.seed = std::uint64_t(cli_int("--seed", args.get_or("--seed", "0"), 0, 2147483647));
    o.batch = cli_int("--batch", args.get_or("--batch", "32"), 1, 4096);
    o.adam.lr = cli_double("--lr", args.get_or("--lr", "1e-3"), 0.0, 1e6);
    o.adam.weight_decay = cli_double("--weight-decay", args.get_or("--weight-decay", "0.01"), 0.0, 1e3);
    o.eval_every = cli_int("--eval-every", args.get_or("--eval-every", "25"), 1, 10000000);
    o.threads = resolve_threads(cli_int("--threads", args.get_or("--threads", "1"), 1, 256));
    std::string& out = setup.out = *args.get("--out");
    while (out.size() > 1 && out.back() == '/') out.pop_back();
    if (out.empty()) throw UsageError("--out needs a directory name");
    if (!check_only) make_dirs(out);
    // Every file this run writes may be replaced (checked again when they are put in place together).
    for (const char* f : {"model.safetensors", "config.json", "metrics.csv", "summary.json"})
        check_replaceable(out + "/" + f);
    // The files beside the checkpoint: the task's, or a tokenizer naming its ids (and its grammar).
    if (!check_only) setup.files = checkpoint_task_files(task, c.vocab_size);
    const auto& files = check_only ? task.files : setup.files;
    for (const auto& file : files) check_replaceable(out + "/" + file.first);
    if (!check_only) check_replaceable(out + "/story_grammar.json");
    // A tokenizer already in the folder that this run does not write would name the new model's ids
    // wrongly (and tokenizer.json is read before vocab.json): refused, never deleted -- unless the run
    // continues the folder's own model (--init into the same folder keeps its tokenizer).
    {
        namespace fs = std::filesystem;
        std::error_code ec;
        const bool same_model = args.has("--init") && fs::equivalent(*args.get("--init"), out, ec);
        // Continuing the folder's own model keeps the tokenizer it has: the ids' names stay its own.
        if (same_model && (fs::exists(fs::symlink_status(out + "/tokenizer.json", ec)) ||
                           fs::exists(fs::symlink_status(out + "/vocab.json", ec)))) {
            setup.files.erase(std::remove_if(setup.files.begin(), setup.files.end(),
                                             [&](const auto& f) {
                                                 return f.first == "tokenizer.json" &&
                                                        task.files.empty();  // (a task's own files stay)
                                             }),
                              setup.files.end());
        }
        for (const char* name : {"tokenizer.json", "vocab.json", "merges.txt"}) {
            bool written = false;
            for (const auto& file : files) written = written || file.first == name;
            // (a task without a tokenizer of its own is saved with a tokenizer.json)
            if (check_only && !info->file_option() && std::string(name) == "tokenizer.json") written = true;
            if (check_only && info->file_option() && !args.has("--bpe") &&
                std::string(name) == "tokenizer.json")
                written = true;
            if (check_only && args.has("--bpe") && std::string(name) != "tokenizer.json") written = true;
            if (!written && !same_model && fs::exists(fs::symlink_status(out + "/" + name, ec)))
                throw Error(out + " holds " + name +
                            " of another model, which would name this model's tokens "
                            "wrongly; choose another --out or move it away");
        }
    }
    return setup;
}

}  // namespace

void check_train_arguments(int argc, char** argv) {
    (void)setup_train(argc, argv, true);
}

namespace {

int train_main(int argc, char** argv) {
    TrainSetup setup = setup_train(argc, argv, false);
    if (setup.help) {
        std::cout << cli_usage("attnviz train", train_options(), {"--task", "--steps", "--out"});
        return 0;
    }
    const std::string& task_name = setup.task_name;
    const std::string& out = setup.out;
    const TrainConfig& c = setup.c;
    const Task& task = setup.task;
    const std::optional<LearnedBpe>& bpe = setup.bpe;
    TrainOptions o = setup.o;
    if (setup.init) o.init = &*setup.init;

    const bool tty = platform::stderr_is_terminal();
    const auto t0 = std::chrono::steady_clock::now();
    const double tokens_per_step = double(o.batch) * double(c.context);
    const std::vector<HeadScore>& scores = setup.info->scores;
    std::string csv = metrics_header(c, scores, task.figure_names);
    // The task's figures (translate: alignment): the first evaluation at which each reached 0.8.
    std::vector<long> figure_step(task.figure_names.size(), -1);
    std::vector<double> figure_secs(task.figure_names.size(), -1);
    const TrainResult r = train_task(c, task, o, [&](long step, double loss, const EvalPoint* e) {
        if (e) csv += metrics_row(*e, scores);
        if (e)
            for (std::size_t k = 0; k < e->figures.size() && k < figure_step.size(); ++k)
                if (figure_step[k] < 0 && e->figures[k].second >= 0.8) {
                    figure_step[k] = step;
                    figure_secs[k] =
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                }
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
        } else if (!e->figures.empty()) {
            std::fprintf(stderr, "step %ld/%ld loss %.4f heldout %.4f %s %.3f %.0f tok/s ETA %.0fs\n", step,
                         o.steps, loss, e->heldout_loss, e->figures[0].first.c_str(), e->figures[0].second,
                         tps, eta);
        } else {
            std::fprintf(stderr, "step %ld/%ld loss %.4f heldout %.4f repeat %.4f %.0f tok/s ETA %.0fs\n",
                         step, o.steps, loss, e->heldout_loss, e->heldout_split.repeat, tps, eta);
        }
    });
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // The checkpoint, the task's files (a BPE's vocab.json and merges.txt: the folder is then a model
    // folder with its tokenizer), the metrics and the summary are put in place together, or none is.
    std::vector<StagedFile> files = stage_train_checkpoint(out, r.params);
    for (const auto& [name, content] : setup.files) files.push_back(stage_file(out + "/" + name, content));
    files.push_back(stage_file(out + "/metrics.csv", csv));
    const EvalPoint& last = r.evals.back();
    ojson s;
    s["task"] = task_name;
    if (setup.info->file_option()) s["tokens"] = bpe ? "bpe" : "characters";
    if (setup.info->file_option()) s["vocab_size"] = c.vocab_size;
    if (bpe) s["bpe_merges"] = bpe->merges;
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
    s["head_scores"] = scores_json(last.scores, scores);
    if (c.encoder_layers > 0) {
        s["encoder_layers"] = c.encoder_layers;
        s["decoder_layers"] = c.n_layer;
    }
    // The task's figures at the last evaluation, and when each first reached 0.8 (null: never).
    for (std::size_t k = 0; k < last.figures.size() && k < figure_step.size(); ++k) {
        const std::string& name = last.figures[k].first;
        s[name] = last.figures[k].second;
        s[name + "_step_0.8"] = figure_step[k] >= 0 ? ojson(figure_step[k]) : ojson(nullptr);
        s[name + "_seconds_0.8"] = figure_step[k] >= 0 ? ojson(figure_secs[k]) : ojson(nullptr);
    }
    // The task's own figures of the trained model (the story task: its grammatical fractions).
    std::vector<std::pair<std::string, double>> figures;
    if (task.report) {
        figures = task.report(r.params);
        ojson f = ojson::object();
        for (const auto& [name, value] : figures) f[name] = value;
        s["figures"] = std::move(f);
    }
    files.push_back(stage_file(out + "/summary.json", s.dump(2) + "\n"));
    commit_all(files);
    std::cout << "trained " << o.steps << " steps in " << secs << " s; held-out loss " << last.heldout_loss;
    if (last.heldout_split.repeat != 0)  // (tasks without repeated tokens have no repeat loss)
        std::cout << " (repeats " << last.heldout_split.repeat << ")";
    std::cout << "; wrote " << out << "\n";
    // The task's figures at every evaluation (translate: alignment), and when each first reached 0.8.
    for (std::size_t k = 0; k < last.figures.size() && k < figure_step.size(); ++k) {
        std::printf("%s %.3f", last.figures[k].first.c_str(), last.figures[k].second);
        if (figure_step[k] >= 0)
            std::printf(" (first >= 0.8 at step %ld, %.1f s)\n", figure_step[k], figure_secs[k]);
        else
            std::printf(" (never >= 0.8 in this run)\n");
    }
    std::fflush(stdout);
    if ((!scores.empty() && scores != all_head_scores()) || task.report) {
        // The best head of each score on the probe stories (pairs), and the task's figures.
        if (c.encoder_layers > 0)
            std::printf(
                "head scores (each decoder head's share of target words whose strongest cross-attention "
                "falls on their source word, 0-1; summary.json \"head_scores\"):\n");
        else
            std::printf(
                "head scores (the mean attention weight where each pattern applies, 0-1; "
                "summary.json \"head_scores\"):\n");
        for (HeadScore k : scores) {
            double best = -1;
            int bl = 0, bh = 0;
            for (std::size_t l = 0; l < last.scores.size(); ++l)
                for (std::size_t h = 0; h < last.scores[l].size(); ++h)
                    if (head_score_value(last.scores[l][h], k) > best) {
                        best = head_score_value(last.scores[l][h], k);
                        bl = int(l);
                        bh = int(h);
                    }
            std::printf("best %s head: layer %d head %d, %.3f\n", head_score_name(k), bl, bh, best);
            // A score still at the level of a head that attends evenly says so: train longer.
            if (k == HeadScore::Induction)
                for (const auto& [name, value] : figures)
                    if (name == "induction_chance" && best < 1.5 * value)
                        std::printf(
                            "  (%.3f is no better than chance, %.3f: no induction head yet; train "
                            "longer)\n",
                            best, value);
        }
        if (!figures.empty())
            std::printf("the %s task's figures, measured on fresh samples (summary.json \"figures\"):\n",
                        task_name.c_str());
        for (const auto& [name, value] : figures) {
            std::string words;
            for (const auto& [n, w] : task.report_words)
                if (n == name) words = w;
            std::printf("%s: %.4g%s\n", name.c_str(), value,
                        words.empty() ? "" : ("  (" + words + ")").c_str());
        }
        std::fflush(stdout);
    }
    // What to do with it next: the trained model opens like any other.
    if (!task.example.empty())
        std::printf(
            "try it: attnviz generate --model %s --text \"%s\" --tokens 12\n"
            "   or see it: attnviz --model %s --text \"%s\"\n",
            out.c_str(), task.example.c_str(), out.c_str(), task.example.c_str());
    else
        std::printf("see it: attnviz --model %s\n", out.c_str());
    return 0;
}

}  // namespace

int run_train_command(int argc, char** argv) {
    return run_cli_command("attnviz train", [&] { return train_main(argc, argv); });
}

int run_grad_command(int argc, char** argv) {
    return run_cli_command("attnviz grad", [&] { return grad_main(argc, argv); });
}

}  // namespace attnviz

// `attnviz ablate`, `attnviz patch`, `attnviz attribute`: see io/intervention_commands.hpp.
#include "io/intervention_commands.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/interventions.hpp"
#include "io/cli.hpp"
#include "io/files.hpp"
#include "io/model_commands.hpp"
#include "io/model_loader.hpp"
#include "io/tokenizer.hpp"

namespace attnviz {

namespace {

using ojson = nlohmann::ordered_json;

constexpr std::uint64_t kInterventionMemoryLimit = 3ull << 30;  // the app's 3.0 GiB

/// A value as written, shortened for a one-line message.
std::string shown(const std::string& text) {
    return "'" + (text.size() > 60 ? text.substr(0, 57) + "..." : text) + "'";
}

/// The folder's tokenizer, loaded once on first use.
struct Tokens {
    explicit Tokens(std::string folder) : dir(std::move(folder)) {}
    std::string dir;
    std::shared_ptr<const Tokenizer> tok;
    bool tried = false;
    const Tokenizer* get(bool required) {
        if (!tried) {
            tried = true;
            try {
                tok = Tokenizer::load_dir(dir);
            } catch (const Error&) {
                if (required) throw;  // a text needs the tokenizer: say why it does not load
            }
        }
        if (required && !tok) tok = Tokenizer::load_dir(dir);
        return tok.get();
    }
    std::string label(int id) {
        const Tokenizer* t = get(false);
        return t ? t->token_label(id) : std::to_string(id);
    }
};

/// A text flag's tokens: refused (usage, exit 2) when empty or when it gives no tokens.
std::vector<int> encode_flag(Tokens& tokens, const std::string& flag, const std::string& text) {
    if (text.empty()) throw UsageError(flag + " is empty: give a text of at least one token");
    const Tokenizer* t = tokens.get(true);
    std::vector<int> ids;
    try {
        ids = t->encode(text);
    } catch (const TextError& e) {
        throw UsageError(flag + " " + shown(text) + ": " + e.what());
    }
    if (ids.empty()) throw UsageError(flag + " " + shown(text) + " gives no tokens");
    return ids;
}

/// --text or --ids (exactly one), checked against the model.
std::vector<int> read_ids(const CliArgs& args, Tokens& tokens, const ModelSpec& s) {
    if (args.has("--text") == args.has("--ids"))
        throw UsageError("give the input with exactly one of --text TEXT or --ids 1,2,3");
    const std::vector<int> ids = args.has("--text") ? encode_flag(tokens, "--text", *args.get("--text"))
                                                    : parse_ids(*args.get("--ids"));
    if (args.has("--text")) {
        try {
            check_ids_in_vocab(*tokens.get(true), ids, s.vocab_size);
        } catch (const TextError& e) {
            throw UsageError(std::string("--text: ") + e.what());
        }
    }
    for (int id : ids)
        if (id >= s.vocab_size)
            throw UsageError("--ids: token id " + std::to_string(id) +
                             " is outside the model's vocabulary (0.." + std::to_string(s.vocab_size - 1) +
                             ")");
    if (int(ids.size()) > s.max_positions)
        throw UsageError("the text is " + std::to_string(ids.size()) + " tokens, more than the model's " +
                         std::to_string(s.max_positions) + " positions");
    return ids;
}

/// A flag that names one token (--answer, --wrong, --target): its text must encode to exactly one.
int one_token(Tokens& tokens, const std::string& flag, const std::string& text, const ModelSpec& s) {
    const std::vector<int> ids = encode_flag(tokens, flag, text);
    if (ids.size() != 1) {
        std::string parts;
        for (int id : ids) parts += (parts.empty() ? "" : " | ") + tokens.get(true)->token_label(id);
        throw UsageError(flag + " " + shown(text) + " is " + std::to_string(ids.size()) + " tokens (" +
                         parts + "), not one");
    }
    if (ids[0] >= s.vocab_size)
        throw UsageError(flag + " " + shown(text) + " is token " + std::to_string(ids[0]) +
                         ", outside the model's vocabulary");
    return ids[0];
}

void check_memory(const ModelWeights& model, int n) {
    const std::uint64_t need = intervention_bytes(model.spec, n) + model.weight_bytes;
    if (need > kInterventionMemoryLimit)
        throw Error(std::to_string(n) + " tokens need " + std::to_string(need >> 20) +
                    " MiB with the weights, over the 3 GiB limit");
}

InterventionOptions options_from(const CliArgs& args) {
    InterventionOptions o;
    o.threads = threads_flag(args);
    return o;
}

std::string out_path(const CliArgs& args) {
    const std::string out = *args.get("--out");
    if (out.empty()) throw UsageError("--out needs a file name");
    check_replaceable(out);  // before the work, not after it
    return out;
}

void write_json(const std::string& out, const ojson& j) {
    write_file_atomic(out, j.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n");
}

/// A double for JSON: NaN (a metric with nothing to divide by) becomes null.
ojson number(double v) {
    return std::isfinite(v) ? ojson(v) : ojson(nullptr);
}

// --- ablate ------------------------------------------------------------------------------------

const std::vector<CliOption>& ablate_options() {
    static const std::vector<CliOption> options = {
        {"--model", "DIR", "Hugging Face model folder", false},
        {"--text", "TEXT", "the text (needs the folder's tokenizer); at least two tokens", false},
        {"--ids", "1,2,3", "token ids instead of --text", false},
        {"--mode", "zero|mean", "zero: z(l, h) set to 0; mean: to its mean over the positions (default zero)",
         false},
        {"--heads", "L.H,...", "ablate these heads together (default: every head alone, one at a time)",
         false},
        {"--out", "OUT.json", "JSON file to write (whole or not at all)", false},
        {"--threads", "N", "worker threads (0 = all cores; default 0)", false},
    };
    return options;
}

int ablate_main(int argc, char** argv) {
    const auto& options = ablate_options();
    const CliArgs args = parse_cli(argc, argv, options);
    if (args.has("--help")) {
        std::cout << cli_usage("attnviz ablate", options, {"--model", "--out"});
        return 0;
    }
    require_flag(args, options, "--model");
    require_flag(args, options, "--out");
    AblationMode mode = AblationMode::Zero;
    if (auto m = args.get("--mode")) {
        if (*m == "mean")
            mode = AblationMode::Mean;
        else if (*m != "zero")
            throw UsageError("--mode: expected zero or mean, got " + shown(*m));
    }
    const InterventionOptions o = options_from(args);
    const std::string out = out_path(args);
    const std::string dir = *args.get("--model");
    const ModelWeights model = load_decoder_only_model(dir, "ablate");
    const ModelSpec& s = model.spec;
    refuse_encoder(s, dir, "predict a next token to ablate heads against");
    Tokens tokens(dir);
    std::vector<HeadRef> heads;
    if (auto list = args.get("--heads")) {
        std::size_t pos = 0;
        while (true) {
            const std::size_t comma = list->find(',', pos);
            std::string item =
                list->substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
            while (!item.empty() && item.front() == ' ') item.erase(item.begin());  // "1.0, 1.3" as typed
            while (!item.empty() && item.back() == ' ') item.pop_back();
            try {
                const HeadRef h = parse_head(item, s);
                if (std::find(heads.begin(), heads.end(), h) == heads.end()) heads.push_back(h);
            } catch (const Error& e) {
                throw UsageError(std::string("--heads: ") + e.what());
            }
            if (comma == std::string::npos) break;
            pos = comma + 1;
        }
    }
    const std::vector<int> ids = read_ids(args, tokens, s);
    if (ids.size() < 2)
        throw UsageError("the text is 1 token: its loss needs at least 2 (token i + 1 predicted from 0..i)");
    check_memory(model, int(ids.size()));
    const CleanRun clean = clean_run(model, ids, o);

    ojson j = ojson::object();
    j["loss"] = clean.loss;
    j["mode"] = ablation_mode_name(mode);
    j["n_tokens"] = ids.size();
    ojson list = ojson::array();
    if (heads.empty()) {
        const Eigen::MatrixXd loss = ablation_sweep(model, clean, mode, o);
        for (int l = 0; l < s.n_layer; ++l)
            for (int h = 0; h < s.n_head; ++h)
                list.push_back({{"layer", l},
                                {"head", h},
                                {"loss", loss(l, h)},
                                {"delta_loss", loss(l, h) - clean.loss}});
    } else {
        const InterventionResult r = run_ablated(model, clean, heads, mode, o);
        ojson names = ojson::array();
        for (const HeadRef& h : heads) names.push_back(head_name(h));
        ojson e = {{"heads_ablated", names}, {"loss", r.loss}, {"delta_loss", r.loss - clean.loss}};
        if (heads.size() == 1) {  // one head listed: also named as the sweep's entries are
            e["layer"] = heads[0].layer;
            e["head"] = heads[0].head;
        }
        list.push_back(std::move(e));
    }
    j["heads"] = std::move(list);
    write_json(out, j);
    std::cout << "wrote " << out << " (loss " << clean.loss << ", "
              << (heads.empty() ? s.n_layer * s.n_head : 1)
              << (heads.empty() ? " heads ablated one at a time" : " run with the heads together") << ")\n";
    return 0;
}

// --- patch -------------------------------------------------------------------------------------

const std::vector<CliOption>& patch_options() {
    static const std::vector<CliOption> options = {
        {"--model", "DIR", "Hugging Face model folder (with its tokenizer)", false},
        {"--clean", "TEXT", "the clean text", false},
        {"--corrupt", "TEXT", "the corrupt text (the same number of tokens)", false},
        {"--answer", "A", "the clean text's answer: one token (m = logit(A) - logit(B) at the last position)",
         false},
        {"--wrong", "B", "the corrupt text's answer: one token", false},
        {"--out", "OUT.json", "JSON file to write (whole or not at all)", false},
        {"--threads", "N", "worker threads (0 = all cores; default 0)", false},
    };
    return options;
}

int patch_main(int argc, char** argv) {
    const auto& options = patch_options();
    const CliArgs args = parse_cli(argc, argv, options);
    const std::vector<std::string> required = {"--model",  "--clean", "--corrupt",
                                               "--answer", "--wrong", "--out"};
    if (args.has("--help")) {
        std::cout << cli_usage("attnviz patch", options, required);
        return 0;
    }
    for (const std::string& r : required) require_flag(args, options, r);
    const InterventionOptions o = options_from(args);
    const std::string out = out_path(args);
    const std::string dir = *args.get("--model");
    const ModelWeights model = load_decoder_only_model(dir, "patch");
    const ModelSpec& s = model.spec;
    refuse_encoder(s, dir, "predict a next token to patch");
    Tokens tokens(dir);
    const std::vector<int> clean_ids = encode_flag(tokens, "--clean", *args.get("--clean"));
    const std::vector<int> corrupt_ids = encode_flag(tokens, "--corrupt", *args.get("--corrupt"));
    if (clean_ids.size() != corrupt_ids.size())
        throw UsageError("--clean is " + std::to_string(clean_ids.size()) + " tokens and --corrupt is " +
                         std::to_string(corrupt_ids.size()) + ": patching needs the same number of tokens");
    if (int(clean_ids.size()) > s.max_positions)
        throw UsageError("the texts are " + std::to_string(clean_ids.size()) +
                         " tokens, more than the model's " + std::to_string(s.max_positions) + " positions");
    const int answer = one_token(tokens, "--answer", *args.get("--answer"), s);
    const int wrong = one_token(tokens, "--wrong", *args.get("--wrong"), s);
    if (answer == wrong)
        throw UsageError("--answer and --wrong are the same token (" + tokens.label(answer) +
                         "): their logit difference is always 0");
    check_memory(model, int(clean_ids.size()));
    const CleanRun clean = clean_run(model, clean_ids, o);
    const CleanRun corrupt = clean_run(model, corrupt_ids, o);
    const PatchSweep p = patch_sweep(model, clean, corrupt, answer, wrong, o);

    ojson j = ojson::object();
    j["answer"] = tokens.label(answer);
    j["answer_id"] = answer;
    j["wrong"] = tokens.label(wrong);
    j["wrong_id"] = wrong;
    j["m_clean"] = p.m_clean;
    j["m_corrupt"] = p.m_corrupt;
    ojson list = ojson::array();
    for (int l = 0; l < s.n_layer; ++l)
        for (int h = 0; h < s.n_head; ++h)
            list.push_back({{"layer", l},
                            {"head", h},
                            {"m_patched", p.m_patched(l, h)},
                            {"patched_fraction", number(p.patched_fraction(l, h))}});
    j["heads"] = std::move(list);
    write_json(out, j);
    std::cout << "wrote " << out << " (m_clean " << p.m_clean << ", m_corrupt " << p.m_corrupt << ")\n";
    return 0;
}

// --- attribute ---------------------------------------------------------------------------------

const std::vector<CliOption>& attribute_options() {
    static const std::vector<CliOption> options = {
        {"--model", "DIR", "Hugging Face model folder", false},
        {"--text", "TEXT", "the text (needs the folder's tokenizer)", false},
        {"--ids", "1,2,3", "token ids instead of --text", false},
        {"--target", "TOKEN", "the next token to attribute: one token (default: the most likely)", false},
        {"--out", "OUT.json", "JSON file to write (whole or not at all)", false},
        {"--threads", "N", "worker threads (0 = all cores; default 0)", false},
    };
    return options;
}

int attribute_main(int argc, char** argv) {
    const auto& options = attribute_options();
    const CliArgs args = parse_cli(argc, argv, options);
    if (args.has("--help")) {
        std::cout << cli_usage("attnviz attribute", options, {"--model", "--out"});
        return 0;
    }
    require_flag(args, options, "--model");
    require_flag(args, options, "--out");
    const InterventionOptions o = options_from(args);
    const std::string out = out_path(args);
    const std::string dir = *args.get("--model");
    const ModelWeights model = load_decoder_only_model(dir, "attribute");
    const ModelSpec& s = model.spec;
    refuse_encoder(s, dir, "predict a next token to attribute");
    Tokens tokens(dir);
    const std::vector<int> ids = read_ids(args, tokens, s);
    const int chosen = args.has("--target") ? one_token(tokens, "--target", *args.get("--target"), s) : -1;
    check_memory(model, int(ids.size()));
    const CleanRun run = clean_run(model, ids, o);
    Eigen::Index best = 0;
    run.last_logits.maxCoeff(&best);
    const int target = chosen >= 0 ? chosen : int(best);
    const Attribution a = direct_logit_attribution(model, run, target);
    const std::vector<LensRow> lens = logit_lens(model, run, 5);

    ojson j = ojson::object();
    j["target"] = tokens.label(target);
    j["target_id"] = target;
    j["logit"] = a.logit;
    j["parts_sum"] = a.parts_sum;
    ojson parts = ojson::array();
    for (const AttributionPart& p : a.parts) parts.push_back({{"name", p.name}, {"value", p.value}});
    j["parts"] = std::move(parts);
    ojson rows = ojson::array();
    for (const LensRow& r : lens) {
        ojson top = ojson::array();
        for (std::size_t i = 0; i < r.ids.size(); ++i)
            top.push_back({{"token", tokens.label(r.ids[i])}, {"id", r.ids[i]}, {"prob", r.probs[i]}});
        rows.push_back({{"layer", r.layer < 0 ? ojson("embed") : ojson(r.layer)}, {"top", std::move(top)}});
    }
    j["logit_lens"] = std::move(rows);
    write_json(out, j);
    std::cout << "wrote " << out << " (target " << tokens.label(target) << ", logit " << a.logit << ")\n";
    return 0;
}

}  // namespace

int run_ablate_command(int argc, char** argv) {
    return run_cli_command("attnviz ablate", [&] { return ablate_main(argc, argv); });
}

int run_patch_command(int argc, char** argv) {
    return run_cli_command("attnviz patch", [&] { return patch_main(argc, argv); });
}

int run_attribute_command(int argc, char** argv) {
    return run_cli_command("attnviz attribute", [&] { return attribute_main(argc, argv); });
}

}  // namespace attnviz

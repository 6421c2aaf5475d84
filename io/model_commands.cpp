// `attnviz dump --model` and `attnviz generate`: see io/model_commands.hpp.
#include "io/model_commands.hpp"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/model.hpp"
#include "core/model_trace.hpp"
#include "core/ops.hpp"
#include "core/seq2seq.hpp"
#include "core/thread_pool.hpp"
#include "io/cli.hpp"
#include "io/commands.hpp"
#include "io/figure.hpp"
#include "io/files.hpp"
#include "io/model_loader.hpp"
#include "io/npy.hpp"
#include "io/tokenizer.hpp"

namespace attnviz {

void refuse_encoder(const ModelSpec& s, const std::string& dir, const std::string& what) {
    if (!is_encoder(s)) return;
    throw UsageError(dir + " is an encoder (" + s.architecture + "): it fills masks, it does not " + what +
                     "; see its guesses for a [MASK] with attnviz dump --model " + dir +
                     " --text '... [MASK] ...'");
}

int threads_flag(const CliArgs& args) {
    return resolve_threads(args.has("--threads") ? cli_int("--threads", *args.get("--threads"), 0, 256) : 0);
}

std::vector<int> parse_ids(const std::string& text, const char* flag) {
    std::vector<int> ids;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const std::size_t comma = text.find(',', pos);
        const std::string item =
            text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        ids.push_back(cli_int(flag, item, 0, (1 << 30)));
        if (ids.size() > (1u << 20)) throw UsageError(std::string(flag) + ": too many ids");
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return ids;
}

namespace {

using ojson = nlohmann::ordered_json;

constexpr std::uint64_t kMemoryLimit = 3ull << 30;  // the app's 3.0 GiB

/// The input tokens: --ids, or --text (and --text-b, a sentence pair) through the folder's tokenizer.
/// The tokenizer (when it loads) also names the tokens.
struct Input {
    std::vector<int> ids;
    std::vector<int> types;  // [ids] segment of each token for a model with token types, else empty
    std::shared_ptr<const Tokenizer> tokenizer;
};

Input read_input(const CliArgs& args, const std::string& dir, const ModelSpec& spec) {
    if (args.has("--text") == args.has("--ids"))
        throw UsageError("give the input with exactly one of --text TEXT or --ids 1,2,3");
    if (args.has("--text-b") && !args.has("--text"))
        throw UsageError("--text-b is the second text of a pair: give the first with --text");
    Input in;
    if (args.has("--text")) {
        in.tokenizer = Tokenizer::load_dir(dir);
        // with [CLS] ... [SEP] (<s> ... </s>) as the model wants; a pair as its post-processor joins it
        const Tokenizer::ModelInput mi =
            args.has("--text-b")
                ? in.tokenizer->encode_pair_for_model(*args.get("--text"), *args.get("--text-b"))
                : in.tokenizer->encode_for_model(*args.get("--text"));
        in.ids = mi.ids;
        if (in.ids.empty()) throw TextError("--text gives no tokens: give it some text");
        check_ids_in_vocab(*in.tokenizer, in.ids, spec.vocab_size);
        // Segments only for a model with more than one (RoBERTa's single row reads every token as 0).
        if (spec.type_vocab > 1) {
            in.types = mi.type_ids;
            for (int& t : in.types) t = std::min(t, spec.type_vocab - 1);
        }
    } else {
        in.ids = parse_ids(*args.get("--ids"));
        try {
            in.tokenizer = Tokenizer::load_dir(dir);
        } catch (const Error&) {
            in.tokenizer = nullptr;  // ids alone need no tokenizer; tokens are then named by their ids
        }
    }
    return in;
}

std::string token_label(const Input& in, int id) {
    if (in.tokenizer && in.tokenizer->has_id(id)) return in.tokenizer->token_text(id);
    return std::to_string(id);  // ids alone need no tokenizer, and a model may have ids it lacks
}

const std::vector<CliOption>& model_dump_options() {
    static const std::vector<CliOption> options = {
        {"--model", "DIR", "Hugging Face model folder (config.json, model.safetensors, tokenizer files)",
         false},
        {"--text", "TEXT", "input text (needs the folder's tokenizer)", false},
        {"--text-b", "TEXT", "second text of a sentence pair: [CLS] A [SEP] B [SEP] with segments 0 and 1",
         false},
        {"--ids", "1,2,3", "input token ids instead of --text", false},
        {"--target", "TEXT",
         "encoder–decoders (t5, bart): the decoder's input after its start token (--text is the encoder's)",
         false},
        {"--target-ids", "I,J", "the decoder's input ids after its start token, instead of --target", false},
        {"--out", "DIR", "directory to write the .npy stages and manifest.json into", false},
        {"--layer", "L", "write the per-head stages of this layer only (repeatable; default every layer)",
         true},
        {"--set", "temperature=T", "temperature of probs (default 1)", true},
        {"--threads", "N", "worker threads (0 = all cores; default 0)", false},
    };
    return options;
}

ojson stage_entry(const std::string& name, int layer, int head, const Mat& M, const std::string& file) {
    ojson e = ojson::object();
    e["name"] = name;
    e["layer"] = layer >= 0 ? ojson(layer) : ojson(nullptr);
    e["head"] = head >= 0 ? ojson(head) : ojson(nullptr);
    e["shape"] = {M.rows(), M.cols()};
    e["file"] = file;
    return e;
}

/// The decoder's input of an encoder–decoder: its start token, then --target's tokens (the text alone,
/// no special tokens) or --target-ids.
std::vector<int> read_target(const CliArgs& args, const Input& source, const std::string& dir,
                             const ModelSpec& s) {
    if (args.has("--target") && args.has("--target-ids"))
        throw UsageError("give the target with at most one of --target TEXT or --target-ids I,J");
    std::vector<int> ids{s.s2s.decoder_start};
    if (auto t = args.get("--target")) {
        const std::shared_ptr<const Tokenizer> tok =
            source.tokenizer ? source.tokenizer : Tokenizer::load_dir(dir);
        const std::vector<int> more = tok->encode(*t);
        check_ids_in_vocab(*tok, more, s.vocab_size);
        ids.insert(ids.end(), more.begin(), more.end());
    } else if (auto t = args.get("--target-ids")) {
        const std::vector<int> more = parse_ids(*t, "--target-ids");
        ids.insert(ids.end(), more.begin(), more.end());
    }
    return ids;
}

/// `dump --model` of an encoder–decoder: both stacks' stages, each entry with its "stack", file names
/// encoder_… / decoder_…; the decoder's cross-attention as cross_* (rows = target, columns = source).
int seq2seq_dump(const CliArgs& args, const ModelWeights& model, const Input& in, const std::string& dir,
                 const std::string& out, double temperature, int threads) {
    const ModelSpec& s = model.spec;
    const std::vector<int> target = read_target(args, in, dir, s);
    const int layers = std::max(s.n_layer, s.s2s.n_encoder_layer);
    std::vector<bool> keep_layer(std::size_t(layers), !args.has("--layer"));
    for (const std::string& l : args.all("--layer"))
        keep_layer[std::size_t(cli_int("--layer", l, 0, layers - 1))] = true;
    Seq2SeqRunOptions run;
    run.threads = threads;
    const int m = int(in.ids.size()), n = int(target.size());
    const std::uint64_t need = seq2seq_forward_bytes(s, m, n, run) + model.weight_bytes;
    if (need > kMemoryLimit)
        throw Error(std::to_string(m) + " source and " + std::to_string(n) + " target tokens need " +
                    std::to_string(need >> 20) + " MiB with the weights, over the 3 GiB limit");
    const Seq2SeqForward f = run_seq2seq(model, in.ids, target, run);

    ojson mj = ojson::object();
    mj["attnviz_dump"] = 1;
    mj["model"] = {{"architecture", s.architecture},
                   {"encoder_decoder", true},
                   {"n_layer", s.n_layer},
                   {"n_encoder_layer", s.s2s.n_encoder_layer},
                   {"n_head", s.n_head},
                   {"n_kv_head", s.n_kv_head},
                   {"d_model", s.d_model},
                   {"vocab_size", s.vocab_size},
                   {"decoder_start_token_id", s.s2s.decoder_start}};
    auto token_list = [&](const std::vector<int>& ids) {
        ojson t = ojson::array();
        for (int id : ids) t.push_back({{"id", id}, {"text", token_label(in, id)}});
        return t;
    };
    mj["source_tokens"] = token_list(in.ids);
    mj["tokens"] = token_list(target);
    mj["temperature"] = temperature;
    publish_dump_dir(out, [&](const std::string& tmp) {
        ojson stages = ojson::array();
        auto put = [&](const char* stack, const std::string& name, int layer, int head, const Mat& M) {
            if (M.size() == 0) return;  // a stage this model does not have (BART: no final norm)
            std::string file =
                std::string(stack) + "_" + (layer >= 0 ? "layer" + std::to_string(layer) + "_" + name : name);
            if (head >= 0) file += "_h" + std::to_string(head);
            file += ".npy";
            write_npy(tmp + "/" + file, M);
            ojson e = stage_entry(name, layer, head, M, file);
            e["stack"] = stack;
            stages.push_back(std::move(e));
        };
        auto put_heads = [&](const char* stack, const std::string& prefix, int l,
                             const std::vector<HeadStages>& hs) {
            const char* names[] = {"Q", "K", "V", "scores", "weights", "head_output"};
            for (const char* name : names)
                for (std::size_t h = 0; h < hs.size(); ++h) {
                    const HeadStages& x = hs[h];
                    const std::string nm = name;
                    const Mat& M = nm == "Q"         ? x.Q
                                   : nm == "K"       ? x.K
                                   : nm == "V"       ? x.V
                                   : nm == "scores"  ? x.scores
                                   : nm == "weights" ? x.weights
                                                     : x.head_output;
                    put(stack, prefix + nm, l, int(h), M);
                }
        };
        for (int which = 0; which < 2; ++which) {
            const char* stack = which == 0 ? "encoder" : "decoder";
            const StackStages& st = which == 0 ? f.encoder : f.decoder;
            for (std::size_t h = 0; h < st.position_bias.size(); ++h)
                put(stack, "position_bias", -1, int(h), st.position_bias[h]);
            for (std::size_t l = 0; l < st.layers.size(); ++l) {
                const LayerStages& L = st.layers[l];
                const int li = int(l);
                put(stack, "ln_1", li, -1, L.ln_1);
                if (keep_layer[l]) put_heads(stack, "", li, L.heads);
                put(stack, "attn_out", li, -1, L.attn_out);
                put(stack, "resid_mid", li, -1, L.resid_mid);
                if (keep_layer[l]) put_heads(stack, "cross_", li, L.cross_heads);
                put(stack, "cross_attn_out", li, -1, L.cross_attn_out);
                put(stack, "ln_2", li, -1, L.ln_2);
                put(stack, "mlp_out", li, -1, L.mlp_out);
                put(stack, "resid_post", li, -1, L.resid_post);
            }
            if (s.s2s.final_norm) put(stack, "ln_f", -1, -1, st.ln_f);  // (BART has none)
            if (which == 1) {
                put(stack, "logits", -1, -1, f.logits);
                const Vec probs = next_token_probs(f.logits.row(f.logits.rows() - 1), temperature);  // [V]
                write_file_atomic(tmp + "/decoder_probs.npy",
                                  npy_f32_bytes(probs.data(), {std::uint64_t(probs.size())}));
                ojson pe = stage_entry("probs", -1, -1, Mat(), "decoder_probs.npy");
                pe["shape"] = {probs.size()};
                pe["stack"] = "decoder";
                stages.push_back(std::move(pe));
            }
            put(stack, "rollout", -1, -1, st.rollout);
        }
        mj["stages"] = std::move(stages);
        write_file_atomic(tmp + "/manifest.json",
                          mj.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n");
    });
    std::cout << "wrote " << s.architecture << " (" << s.s2s.n_encoder_layer << " + " << s.n_layer
              << " layers, source n=" << m << ", target n=" << n << ") to " << out << "/\n";
    return 0;
}

/// The generated tokens on one line: as text through the tokenizer, else their ids "5,17,3".
void print_generated(const Input& in, const std::vector<int>& generated) {
    if (in.tokenizer) {
        std::cout << in.tokenizer->decode_labelled(generated) << "\n";
        return;
    }
    std::string line;
    for (std::size_t i = 0; i < generated.size(); ++i) line += (i ? "," : "") + std::to_string(generated[i]);
    std::cout << line << "\n";
}

/// `generate` on an encoder–decoder: the encoder once over the input, then the decoder one token at a
/// time from its start token until `count` tokens or the end-of-sequence token.
int seq2seq_generate(const ModelWeights& model, const Input& in, int count, const SamplingOptions& sampling,
                     int seed, int threads) {
    const ModelSpec& s = model.spec;
    if (int(in.ids.size()) > s.max_positions || count + 1 > s.max_positions)
        throw Error("at most " + std::to_string(s.max_positions) + " source tokens and " +
                    std::to_string(s.max_positions - 1) + " new ones");
    Seq2SeqRunOptions est;
    est.keep = false;
    est.all_logits = false;
    const std::uint64_t need =
        seq2seq_forward_bytes(s, int(in.ids.size()), count + 1, est) + model.weight_bytes;
    if (need > kMemoryLimit)
        throw Error(std::to_string(in.ids.size()) + " source tokens and " + std::to_string(count) +
                    " new ones need " + std::to_string(need >> 20) +
                    " MiB with the weights, over the 3 GiB limit");
    for (int id : in.ids)
        if (id < 0 || id >= s.vocab_size)
            throw Error("token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                        std::to_string(s.vocab_size - 1) + ")");
    const Seq2SeqWeights<float> w = seq2seq_weights(model);
    ForwardOptions<float> fo;
    fo.keep_layers = false;
    fo.threads = threads;
    SeqActs<float> E, D;
    const int m = int(in.ids.size());
    seq2seq_encode(w, in.ids.data(), 1, m, E, fo);
    fo.last_logits = true;
    Rng rng{std::uint64_t(seed)};
    std::vector<int> ids{s.s2s.decoder_start}, generated;
    for (int t = 0; t < count; ++t) {
        seq2seq_decode(w, E.f, m, ids.data(), 1, int(ids.size()), D, fo);
        const int next = sample_next_token(D.logits.row(0), sampling, rng.uniform());
        ids.push_back(next);
        generated.push_back(next);
        if (next == s.s2s.eos) break;
    }
    print_generated(in, generated);
    return 0;
}

int model_dump_main(int argc, char** argv) {
    const auto& options = model_dump_options();
    const CliArgs args = parse_cli(argc, argv, options);
    if (args.has("--help")) {
        std::cout << cli_usage("attnviz dump", options, {"--model", "--out"});
        return 0;
    }
    require_flag(args, options, "--model");
    require_flag(args, options, "--out");
    std::string out = *args.get("--out");
    while (out.size() > 1 && out.back() == '/') out.pop_back();
    if (out.empty()) throw UsageError("--out needs a directory name");
    double temperature = 1.0;
    for (const std::string& kv : args.all("--set")) {
        const auto [key, value] = split_key_value(kv);
        if (key != "temperature")
            throw UsageError("--set: only temperature=T applies to --model, got '" + key + "'");
        temperature = cli_double("--set temperature", value, 1e-6, 1e6);
    }
    ModelRunOptions run;
    run.threads = threads_flag(args);
    const std::string dir = *args.get("--model");
    check_dump_target(out);

    const ModelWeights model = load_model_dir(dir);
    const ModelSpec& s = model.spec;
    const Input in = read_input(args, dir, model.spec);
    if (s.encoder_decoder) return seq2seq_dump(args, model, in, dir, out, temperature, run.threads);
    if (args.has("--target") || args.has("--target-ids"))
        throw UsageError("--target applies to encoder–decoders (t5, bart); " + s.architecture +
                         " is not one");
    if (args.has("--layer")) {
        run.keep_heads.assign(std::size_t(s.n_layer), false);
        for (const std::string& l : args.all("--layer"))
            run.keep_heads[std::size_t(cli_int("--layer", l, 0, s.n_layer - 1))] = true;
    }
    const int n = int(in.ids.size());
    if (n > s.max_positions)
        throw Error(std::to_string(n) + " tokens are more than the model's " +
                    std::to_string(s.max_positions) + " positions");
    const std::uint64_t need = model_forward_bytes(s, n, run) + model.weight_bytes;
    if (need > kMemoryLimit)
        throw Error(
            std::to_string(n) + " tokens with these layers need " + std::to_string(need >> 20) +
            " MiB with the weights, over the 3 GiB limit; pass --layer L to keep fewer layers' attention");
    const ModelForward f = run_model(model, in.ids, in.types, run);

    ojson m = ojson::object();
    m["attnviz_dump"] = 1;
    m["model"] = {{"architecture", s.architecture}, {"n_layer", s.n_layer}, {"n_head", s.n_head},
                  {"n_kv_head", s.n_kv_head},       {"d_model", s.d_model}, {"vocab_size", s.vocab_size}};
    ojson tokens = ojson::array();
    for (std::size_t i = 0; i < in.ids.size(); ++i) {
        ojson t = {{"id", in.ids[i]}, {"text", token_label(in, in.ids[i])}};
        if (s.type_vocab > 0) t["token_type"] = in.types.empty() ? 0 : in.types[i];
        tokens.push_back(std::move(t));
    }
    m["tokens"] = std::move(tokens);
    m["temperature"] = temperature;
    publish_dump_dir(out, [&](const std::string& tmp) {
        ojson stages = ojson::array();
        auto put = [&](const std::string& name, int layer, int head, const Mat& M) {
            if (M.size() == 0) return;  // a stage this model does not have (no MLP: ln_2, mlp_out)
            std::string file = layer >= 0 ? "layer" + std::to_string(layer) + "_" + name : name;
            if (head >= 0) file += "_h" + std::to_string(head);
            file += ".npy";
            write_npy(tmp + "/" + file, M);
            stages.push_back(stage_entry(name, layer, head, M, file));
        };
        put("token_type", -1, -1, f.token_type);  // [n, d] the segment embeddings added (token types only)
        for (int l = 0; l < s.n_layer; ++l) {
            const LayerStages& st = f.layers[std::size_t(l)];
            put("ln_1", l, -1, st.ln_1);
            const char* head_names[] = {"Q", "K", "V", "scores", "weights", "head_output"};
            for (const char* name : head_names) {
                for (std::size_t h = 0; h < st.heads.size(); ++h) {
                    const HeadStages& hs = st.heads[h];
                    const Mat* M = std::strcmp(name, "Q") == 0         ? &hs.Q
                                   : std::strcmp(name, "K") == 0       ? &hs.K
                                   : std::strcmp(name, "V") == 0       ? &hs.V
                                   : std::strcmp(name, "scores") == 0  ? &hs.scores
                                   : std::strcmp(name, "weights") == 0 ? &hs.weights
                                                                       : &hs.head_output;
                    put(name, l, int(h), *M);
                }
            }
            put("attn_out", l, -1, st.attn_out);
            put("resid_mid", l, -1, st.resid_mid);
            put("ln_2", l, -1, st.ln_2);
            put("mlp_out", l, -1, st.mlp_out);
            put("resid_post", l, -1, st.resid_post);
        }
        put("ln_f", -1, -1, f.ln_f);
        put("logits", -1, -1, f.logits);
        if (is_encoder(s) && f.logits.size() > 0) {
            // an encoder's masked-LM guesses at every position: probs [n, V]
            Mat probs(f.logits.rows(), f.logits.cols());
            for (Eigen::Index i = 0; i < f.logits.rows(); ++i)
                probs.row(i) = next_token_probs(f.logits.row(i), temperature).transpose();
            put("probs", -1, -1, probs);
        } else if (f.logits.size() > 0) {
            const Vec probs = next_token_probs(f.logits.row(f.logits.rows() - 1), temperature);  // [V]
            write_file_atomic(tmp + "/probs.npy", npy_f32_bytes(probs.data(), {std::uint64_t(probs.size())}));
            ojson pe = stage_entry("probs", -1, -1, Mat(), "probs.npy");
            pe["shape"] = {probs.size()};
            stages.push_back(std::move(pe));
        }
        put("rollout", -1, -1, f.rollout);
        m["stages"] = std::move(stages);
        write_file_atomic(tmp + "/manifest.json",
                          m.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n");
    });
    std::cout << "wrote " << s.architecture << " (" << s.n_layer << " layers, n=" << n << ") to " << out
              << "/\n";
    return 0;
}

const std::vector<CliOption>& generate_options() {
    static const std::vector<CliOption> options = {
        {"--model", "DIR", "Hugging Face model folder", false},
        {"--text", "TEXT", "prompt text (needs the folder's tokenizer)", false},
        {"--ids", "1,2,3", "prompt token ids instead of --text", false},
        {"--tokens", "N", "how many tokens to generate (1..4096)", false},
        {"--temperature", "T", "sampling temperature; 0 = greedy, the most likely token (default 0)", false},
        {"--top-k", "K", "sample among the K most likely tokens (0 = all; default 0)", false},
        {"--top-p", "P", "sample among the smallest set of tokens reaching probability P (default 1)", false},
        {"--seed", "S", "random seed (default 0)", false},
        {"--threads", "N", "worker threads (0 = all cores; default 0)", false},
    };
    return options;
}

int generate_main(int argc, char** argv) {
    const auto& options = generate_options();
    const CliArgs args = parse_cli(argc, argv, options);
    if (args.has("--help")) {
        std::cout << cli_usage("attnviz generate", options, {"--model", "--tokens"});
        return 0;
    }
    require_flag(args, options, "--model");
    require_flag(args, options, "--tokens");
    const int count = cli_int("--tokens", *args.get("--tokens"), 1, 4096);
    SamplingOptions sampling;
    sampling.temperature = 0;  // greedy unless asked: the same continuation every time
    if (auto t = args.get("--temperature")) sampling.temperature = cli_double("--temperature", *t, 0, 1e6);
    if (auto k = args.get("--top-k")) sampling.top_k = cli_int("--top-k", *k, 0, 1 << 30);
    if (auto p = args.get("--top-p")) sampling.top_p = cli_double("--top-p", *p, 1e-9, 1);
    const int seed = args.has("--seed") ? cli_int("--seed", *args.get("--seed"), 0, 2147483647) : 0;
    ModelRunOptions run;
    run.threads = threads_flag(args);
    run.keep_heads.clear();
    run.keep_layers = false;
    run.all_logits = false;
    run.rollout = false;
    const std::string dir = *args.get("--model");
    const ModelWeights model = load_model_dir(dir);
    refuse_encoder(model.spec, dir, "generate");
    run.keep_heads.assign(std::size_t(model.spec.n_layer), false);
    Input in = read_input(args, dir, model.spec);
    if (model.spec.encoder_decoder) return seq2seq_generate(model, in, count, sampling, seed, run.threads);
    if (in.ids.size() + std::size_t(count) > std::size_t(model.spec.max_positions))
        throw Error(std::to_string(in.ids.size()) + " prompt tokens + " + std::to_string(count) +
                    " new ones are more than the model's " + std::to_string(model.spec.max_positions) +
                    " positions");
    const std::uint64_t need =
        model_forward_bytes(model.spec, int(in.ids.size()) + count, run) + model.weight_bytes;
    if (need > kMemoryLimit)
        throw Error(std::to_string(in.ids.size() + std::size_t(count)) + " tokens need " +
                    std::to_string(need >> 20) + " MiB with the weights, over the 3 GiB limit");
    Rng rng{std::uint64_t(seed)};
    std::vector<int> ids = in.ids, generated;
    for (int t = 0; t < count; ++t) {
        const ModelForward f = run_model(model, ids, run);
        const int next = sample_next_token(f.logits.row(0), sampling, rng.uniform());
        ids.push_back(next);
        generated.push_back(next);
    }
    print_generated(in, generated);
    return 0;
}

const std::vector<CliOption>& model_render_options() {
    static const std::vector<CliOption> options = {
        {"--model", "DIR", "Hugging Face model folder", false},
        {"--text", "TEXT", "input text (needs the folder's tokenizer)", false},
        {"--text-b", "TEXT", "second text of a sentence pair (an encoder's [CLS] A [SEP] B [SEP])", false},
        {"--ids", "1,2,3", "input token ids instead of --text", false},
        {"--layer", "L", "layer to draw (default 0)", false},
        {"--stage", "NAME",
         "ln_1, Q, K, V, scores, weights, head_output, attn_out, resid_mid, ln_2, mlp_out, "
         "resid_post, residual_stream or rollout",
         false},
        {"--head", "H", "head for per-head stages (default 0)", false},
        {"--out", "FIG.png",
         "figure to write: PNG, or SVG when the name ends in .svg (written whole or not at all)", false},
        {"--scale", "S", "1, 2 or 4 (default 1)", false},
        {"--grid", "", "every head of the stage side by side", false},
        {"--threads", "N", "worker threads (0 = all cores; default 0)", false},
        {"--scale-mode", "MODE",
         "colours of weights: auto, fixed, max, row or log (see attnviz render --help)"},
    };
    return options;
}

int model_render_main(int argc, char** argv) {
    const auto& options = model_render_options();
    const CliArgs args = parse_cli(argc, argv, options);
    if (args.has("--help")) {
        std::cout << cli_usage("attnviz render", options, {"--model", "--stage", "--out"});
        return 0;
    }
    require_flag(args, options, "--model");
    require_flag(args, options, "--stage");
    require_flag(args, options, "--out");
    FigureOptions figure;
    read_figure_flags(args, figure);
    const int head = args.has("--head") ? cli_int("--head", *args.get("--head"), 0, 1 << 20) : 0;
    const std::string dir = *args.get("--model");
    const ModelWeights model = load_model_dir(dir);
    const ModelSpec& s = model.spec;
    if (s.encoder_decoder)  // (its figures need both stacks: the GUI draws and exports them)
        throw UsageError(
            "render draws decoder-only and encoder models; " + s.architecture +
            " is an encoder–decoder: open it in the window (attnviz --model " + dir +
            " --family cross) and export a PNG there, or take its numbers with attnviz dump --model");
    const int layer = args.has("--layer") ? cli_int("--layer", *args.get("--layer"), 0, s.n_layer - 1) : 0;
    const Input in = read_input(args, dir, model.spec);
    const int n = int(in.ids.size());
    if (n > s.max_positions)
        throw Error(std::to_string(n) + " tokens are more than the model's " +
                    std::to_string(s.max_positions) + " positions");
    ModelRunOptions run;
    run.threads = threads_flag(args);
    run.keep_heads.assign(std::size_t(s.n_layer), false);
    run.keep_heads[std::size_t(layer)] = true;
    run.all_logits = is_encoder(s);  // an encoder's logits stage shows its first [MASK]
    const std::uint64_t need = model_forward_bytes(s, n, run) + model.weight_bytes;
    if (need > kMemoryLimit)
        throw Error(std::to_string(n) + " tokens need " + std::to_string(need >> 20) +
                    " MiB with the weights, over the 3 GiB limit");
    auto fwd = std::make_shared<const ModelForward>(run_model(model, in.ids, in.types, run));
    auto tokens = std::make_shared<std::vector<std::string>>();
    for (int id : in.ids) tokens->push_back(token_label(in, id));
    int mask_row = -1;
    if (is_encoder(s) && in.tokenizer)
        for (const char* mask : {"[MASK]", "<mask>"})
            if (const std::optional<int> id = in.tokenizer->token_id(mask); id && mask_row < 0)
                for (int i = 0; i < n && mask_row < 0; ++i)
                    if (in.ids[std::size_t(i)] == *id) mask_row = i;
    const Trace trace = model_layer_trace(s, fwd, layer, std::move(tokens), nullptr, nullptr,
                                          mask_row);  // figures need no weights
    const std::string stage_name = *args.get("--stage");
    if (trace.find(stage_name) < 0) {
        std::string names;
        for (const std::string& nm : trace.stage_names()) names += (names.empty() ? "" : ", ") + nm;
        throw UsageError("--stage: no stage named '" + stage_name + "' in a model layer (stages: " + names +
                         ")");
    }
    const Stage* stage = nullptr;
    if (!args.has("--grid")) {
        stage = trace.get(stage_name, head);
        if (!stage || (stage->head >= 0 && stage->head != head))
            throw UsageError("--head: expected a head from 0 to " + std::to_string(s.n_head - 1) + ", got " +
                             std::to_string(head));
    }
    const std::string out = *args.get("--out");
    if (is_svg_path(out)) {  // vector text, the same layout as the PNG (as `render` of the single layer)
        write_file_atomic(out, stage ? render_stage_figure_svg(trace, *stage, figure)
                                     : render_heads_grid_figure_svg(trace, stage_name, figure));
        std::cout << "wrote " << out << " (SVG)\n";
        return 0;
    }
    const Image image = stage ? render_stage_figure(trace, *stage, figure)
                              : render_heads_grid_figure(trace, stage_name, figure);
    write_png(out, image);
    std::cout << "wrote " << out << " (" << image.width << "×" << image.height << ")\n";
    return 0;
}

}  // namespace

int run_model_render_command(int argc, char** argv) {
    return run_cli_command("attnviz render", [&] { return model_render_main(argc, argv); });
}

ModelWeights load_decoder_only_model(const std::string& dir, const char* command) {
    ModelWeights model = load_model_dir(dir);
    if (model.spec.encoder_decoder)
        throw UsageError(std::string(command) + " works on decoder-only models; " + model.spec.architecture +
                         " is an encoder–decoder (dump and generate read it)");
    return model;
}

bool has_model_flag(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--model") == 0 || std::strncmp(argv[i], "--model=", 8) == 0) return true;
    return false;
}

int run_model_dump_command(int argc, char** argv) {
    return run_cli_command("attnviz dump", [&] { return model_dump_main(argc, argv); });
}

int run_generate_command(int argc, char** argv) {
    return run_cli_command("attnviz generate", [&] { return generate_main(argc, argv); });
}

}  // namespace attnviz

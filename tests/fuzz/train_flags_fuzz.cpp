// Fuzz harness: the flags of `attnviz train`, `grad`, `tokenize` and `generate`. The input is split into
// argv entries on newlines or NUL bytes; the first entry picks the command ("grad", "tokenize",
// "generate", anything else is train). Nothing is trained, computed or written.
//
// 1. parse_cli (io/cli.hpp) against the syntax it documents, on a table with the command's flag names
//    (value flags, switches): `--flag VALUE` (VALUE may be empty or start with '-', but is not one of
//    the command's flags), `--flag=VALUE`, switches without a value, `--help` / `-h`, a non-repeatable
//    flag at most once, no positional arguments. The parse must succeed exactly when this reference
//    accepts and give the same values (`--text "" --pieces` is text "" plus the switch --pieces).
//    Forms the reference does not pin down (a lone "--", single-dash words, odd characters in a flag
//    name) are skipped.
// 2. The whole command line goes through check_train_arguments / check_grad_arguments (the
//    validation of `attnviz train` / `grad` without training or writing): UsageError / attnviz::Error on one
//    line, or an accepted command whose memory estimate passed (-rss_limit_mb catches a check that allocates
//    the run).
//    "@MODEL" and "@TOKENS" in an argument stand for a tiny checkpoint and token file made once.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "fuzz_argv.hpp"
#include "fuzz_check.hpp"
#include "io/cli.hpp"
#include "io/train_commands.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "io/files.hpp"

namespace {

using attnviz::CliOption;

const std::vector<CliOption>& table(const std::string& command) {
    static const std::vector<CliOption> train = {{"--task", "NAME", ""},
                                                 {"--text", "FILE", ""},
                                                 {"--bpe", "V", ""},
                                                 {"--modulus", "P", ""},
                                                 {"--train-fraction", "F", ""},
                                                 {"--length", "L", ""},
                                                 {"--layers", "L", ""},
                                                 {"--heads", "H", ""},
                                                 {"--d-model", "D", ""},
                                                 {"--context", "N", ""},
                                                 {"--vocab", "V", ""},
                                                 {"--steps", "N", ""},
                                                 {"--seed", "S", ""},
                                                 {"--batch", "B", ""},
                                                 {"--lr", "LR", ""},
                                                 {"--weight-decay", "WD", ""},
                                                 {"--eval-every", "K", ""},
                                                 {"--no-norm", "", ""},
                                                 {"--norm", "KIND", ""},
                                                 {"--mlp", "KIND", ""},
                                                 {"--d-ff", "F", ""},
                                                 {"--positions", "KIND", ""},
                                                 {"--tied", "", ""},
                                                 {"--threads", "T", ""},
                                                 {"--init", "DIR", ""},
                                                 {"--out", "DIR", ""}};
    static const std::vector<CliOption> grad = {{"--model", "DIR", ""}, {"--tokens", "FILE.npy", ""},
                                                {"--out", "OUT", ""},   {"--adamw-steps", "K", ""},
                                                {"--lr", "LR", ""},     {"--weight-decay", "WD", ""},
                                                {"--threads", "T", ""}};
    static const std::vector<CliOption> tokenize = {{"--model", "DIR", ""},
                                                    {"--text", "TEXT", ""},
                                                    {"--text-file", "FILE", ""},
                                                    {"--texts-json", "FILE", ""},
                                                    {"--pieces", "", ""}};
    static const std::vector<CliOption> generate = {
        {"--model", "DIR", ""}, {"--text", "TEXT", ""},     {"--ids", "IDS", ""},
        {"--tokens", "N", ""},  {"--temperature", "T", ""}, {"--top-k", "K", ""},
        {"--top-p", "P", ""},   {"--seed", "S", ""},        {"--set", "KEY=VALUE", "", true}};
    return command == "grad"       ? grad
           : command == "tokenize" ? tokenize
           : command == "generate" ? generate
                                   : train;
}

const CliOption* find(const std::vector<CliOption>& options, const std::string& name) {
    for (const CliOption& o : options)
        if (o.name == name) return &o;
    return nullptr;
}

enum class Expect { Accept, Refuse, Skip };

/// The documented parse of args[1..]; values as parse_cli gives them.
Expect reference(const std::vector<std::string>& args, const std::vector<CliOption>& options,
                 std::map<std::string, std::vector<std::string>>& values) {
    bool refuse = false;
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--help" || a == "-h") {
            values["--help"].push_back("");
            continue;
        }
        if (a == "--" || a == "-") return Expect::Skip;
        if (a.size() >= 2 && a[0] == '-' && a[1] != '-') return Expect::Skip;
        if (a.compare(0, 2, "--") != 0) {
            refuse = true;  // positional
            continue;
        }
        const std::size_t eq = a.find('=');
        const std::string name = a.substr(0, eq);
        for (char c : name.substr(2))
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return Expect::Skip;
        if (name == "--help" || name == "-h") return Expect::Skip;  // --help=x
        const CliOption* o = find(options, name);
        if (!o) {
            refuse = true;
            continue;
        }
        if (o->value_name.empty()) {
            if (eq != std::string::npos)
                refuse = true;  // a switch given a value
            else
                values[name].push_back("");
            continue;
        }
        if (eq != std::string::npos) {
            values[name].push_back(a.substr(eq + 1));
            continue;
        }
        if (i + 1 >= args.size()) {
            refuse = true;  // missing value
            continue;
        }
        const std::string& next = args[i + 1];
        const std::string next_name = next.substr(0, next.find('='));
        if (find(options, next_name) || next_name == "--help") {
            // "--out --set x": the value was forgotten. --help is every command's flag too (io/cli.hpp:
            // always accepted as a switch), so "--bpe --help" is a forgotten value; "-h" is not a
            // "--" flag and is taken as the value.
            refuse = true;
            continue;
        }
        values[name].push_back(next);
        ++i;
    }
    for (const auto& [name, v] : values) {
        const CliOption* o = find(options, name);
        if (o && !o->repeatable && v.size() > 1) refuse = true;
    }
    return refuse ? Expect::Refuse : Expect::Accept;
}

/// A checkpoint folder and a token file, made once (removed at exit).
const std::string& fixture_dir() {
    static const std::string& dir = *new std::string([] {
        std::string t = (std::filesystem::temp_directory_path() / "attnviz-train-flags-fuzz-XXXXXX").string();
        FUZZ_CHECK(::mkdtemp(t.data()) != nullptr);
        attnviz::TrainConfig c;
        c.n_layer = 1;
        c.n_head = 1;
        c.d_model = 16;
        c.context = 8;
        c.vocab_size = 8;
        attnviz::make_dirs(t + "/model");
        attnviz::save_train_checkpoint(t + "/model", attnviz::init_params(c, 0));
        // int64 ids [1, 4]
        std::string npy = "\x93NUMPY\x01";
        npy += '\0';
        std::string h = "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 4), }";
        while ((10 + h.size() + 1) % 64) h += ' ';
        h += '\n';
        npy += char(h.size() & 0xff);
        npy += char(h.size() >> 8);
        npy += h;
        for (int id = 0; id < 4; ++id) npy += std::string("\x01\0\0\0\0\0\0\0", 8);
        attnviz::write_file_atomic(t + "/tokens.npy", npy);
        std::atexit([] {
            std::error_code ec;
            std::filesystem::remove_all(fixture_dir(), ec);
        });
        return t;
    }());
    return dir;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
    for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
        s.replace(p, from.size(), to);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::vector<std::string> args = fuzz_argv(data, size);
    if (args.size() > 256) return 0;  // a real command line is short; keep each run fast
    const std::string command =
        args[0] == "grad" || args[0] == "tokenize" || args[0] == "generate" ? args[0] : "train";
    args[0] = command;

    // 1. parse_cli against the documented syntax.
    const std::vector<CliOption>& options = table(command);
    std::map<std::string, std::vector<std::string>> expected;
    const Expect expect = reference(args, options, expected);
    {
        std::vector<std::string> copy = args;
        std::vector<char*> argv;
        for (std::string& a : copy) argv.push_back(a.data());
        argv.push_back(nullptr);
        try {
            const attnviz::CliArgs got = attnviz::parse_cli(int(copy.size()), argv.data(), options);
            if (expect == Expect::Refuse) {
                std::fprintf(stderr, "parse_cli accepted a command line the documented syntax refuses\n");
                FUZZ_CHECK(false);
            }
            if (expect == Expect::Accept && got.values != expected) {
                for (const auto& [k, v] : got.values)
                    for (const auto& x : v)
                        std::fprintf(stderr, "parse_cli: %s = '%s'\n", k.c_str(), x.c_str());
                for (const auto& [k, v] : expected)
                    for (const auto& x : v)
                        std::fprintf(stderr, "documented: %s = '%s'\n", k.c_str(), x.c_str());
                FUZZ_CHECK(got.values == expected);
            }
            FUZZ_CHECK(got.positional.empty());
        } catch (const attnviz::UsageError& e) {
            const std::string line = attnviz::one_line(e.what());
            FUZZ_CHECK(!line.empty() && line.find('\n') == std::string::npos);
            if (expect == Expect::Accept) std::fprintf(stderr, "parse_cli refused: %s\n", line.c_str());
            FUZZ_CHECK(expect != Expect::Accept);
        }
    }

    // 2. The commands' own checks (train / grad only).
    if (command == "train" || command == "grad") {
        for (std::string& a : args) {
            replace_all(a, "@MODEL", fixture_dir() + "/model");
            replace_all(a, "@TOKENS", fixture_dir() + "/tokens.npy");
        }
        std::vector<char*> argv;
        for (std::string& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        try {
            if (command == "train")
                attnviz::check_train_arguments(int(args.size()), argv.data());
            else
                attnviz::check_grad_arguments(int(args.size()), argv.data());
        } catch (const attnviz::Error& e) {
            const std::string line = attnviz::one_line(e.what());
            FUZZ_CHECK(!line.empty() && line.find('\n') == std::string::npos);
        }
    }
    return 0;
}

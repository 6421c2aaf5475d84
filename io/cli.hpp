// The argument parser shared by the headless commands (`attnviz dump`, `render`, `tokenize`,
// `generate`, `train`) and the GUI's own flags (app/cli_options.cpp): a table of options per command,
// and one linear pass over argv.
//
// Accepted forms: `--flag value`, `--flag=value`, switches without a value (`--help`), and
// repeatable flags (`--set heads=4 --set mask=causal`). A value is taken as written, an empty one
// included (`--text ""` is the empty text, never the next flag); a value that is itself one of the
// command's flags (`--out --set x=1`) means the value was forgotten. Anything wrong becomes a UsageError with
// a one-sentence message ("unknown option --hedas (known options: --scene, --set, --out, --threads)"), which
// run_cli_command() prints as "attnviz dump: ..." on one line of stderr.
//
// Typical use (see io/dump_command.cpp):
//
//   const std::vector<CliOption> options = {
//       {"--scene", "FILE", "scene to load (default: the built-in example)"},
//       {"--set", "KEY=VALUE", "change one config key; repeatable", true},
//       {"--out", "DIR", "output directory"},
//   };
//   return run_cli_command("attnviz dump", [&] {
//       CliArgs args = parse_cli(argc, argv, options);     // argv[0] is the command name
//       if (args.has("--help")) { print usage; return 0; }
//       Scene scene = scene_from_cli(args);                // --scene, then every --set in order
//       ...
//       return 0;
//   });
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "io/scene.hpp"

namespace attnviz {

/// Bad command-line usage (unknown flag, missing value, value that does not parse). Commands exit
/// with status 2 for these and 1 for every other error.
class UsageError : public Error {
  public:
    using Error::Error;
};

struct CliOption {
    std::string name;         // "--out"
    std::string value_name;   // "DIR"; empty = a switch that takes no value
    std::string help;         // one line for the usage text
    bool repeatable = false;  // may be given several times (all values kept, in order)
};

/// The parsed command line. Flags map to their values in the order given; a switch maps to one
/// empty string per occurrence.
struct CliArgs {
    std::map<std::string, std::vector<std::string>> values;
    std::vector<std::string> positional;  // arguments not starting with "--" (commands may refuse)

    bool has(const std::string& name) const { return values.count(name) != 0; }
    /// The value of a non-repeatable flag, or nullopt when absent.
    std::optional<std::string> get(const std::string& name) const;
    /// The value of a flag, or `fallback` when absent.
    std::string get_or(const std::string& name, const std::string& fallback) const;
    /// Every value of a repeatable flag, in order (empty when absent).
    std::vector<std::string> all(const std::string& name) const;
};

/// Parses argv[1..argc) (argv[0] is the command name, e.g. "dump"). `--help` and `-h` are always
/// accepted as switches. Throws UsageError on unknown flags, a missing value, or a non-repeatable
/// flag given twice. Positional arguments are refused unless `allow_positional`.
CliArgs parse_cli(int argc, char** argv, const std::vector<CliOption>& options,
                  bool allow_positional = false);

/// Multi-line usage text: "usage: attnviz dump --out DIR [--scene FILE] ...", then one line per flag.
std::string cli_usage(const std::string& command, const std::vector<CliOption>& options,
                      const std::vector<std::string>& required = {});

/// Throws UsageError("missing --out DIR") when a required flag is absent.
void require_flag(const CliArgs& args, const std::vector<CliOption>& options, const std::string& name);

/// Integer value of a flag in [min_value, max_value]; UsageError naming the flag otherwise
/// ("--threads: expected an integer from 0 to 256, got 'x'").
int cli_int(const std::string& flag, const std::string& text, int min_value, int max_value);
/// Finite floating-point value of a flag in [min_value, max_value].
double cli_double(const std::string& flag, const std::string& text, double min_value, double max_value);

/// Splits "key=value" at the first '='. Throws UsageError("--set expects KEY=VALUE, got 'heads'").
std::pair<std::string, std::string> split_key_value(const std::string& text,
                                                    const std::string& flag = "--set");

/// The scene a headless command works on: --scene FILE (or the built-in default scene), then every
/// --set KEY=VALUE applied in order through set_config_key. Does not validate the config (callers
/// get that from compute_trace / require_valid). Throws attnviz::Error.
Scene scene_from_cli(const CliArgs& args);

/// Collapses a multi-line message onto one line ("a\nb" -> "a; b") for stderr.
std::string one_line(const std::string& message);

/// Runs `body`, turning exceptions into "COMMAND: message" on one line of stderr and an exit code:
/// UsageError -> 2, any other std::exception -> 1. Returns body's own result otherwise.
int run_cli_command(const std::string& command, const std::function<int()>& body);

}  // namespace attnviz

#include "io/cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>

namespace attnviz {

namespace {

const CliOption* find_option(const std::vector<CliOption>& options, const std::string& name) {
    for (const CliOption& o : options)
        if (o.name == name) return &o;
    return nullptr;
}

std::string known_options(const std::vector<CliOption>& options) {
    std::string out;
    for (const CliOption& o : options) {
        if (!out.empty()) out += ", ";
        out += o.name;
    }
    if (!out.empty()) out += ", ";
    out += "--help";
    return out;
}

}  // namespace

std::optional<std::string> CliArgs::get(const std::string& name) const {
    auto it = values.find(name);
    if (it == values.end() || it->second.empty()) return std::nullopt;
    return it->second.back();
}

std::string CliArgs::get_or(const std::string& name, const std::string& fallback) const {
    auto v = get(name);
    return v ? *v : fallback;
}

std::vector<std::string> CliArgs::all(const std::string& name) const {
    auto it = values.find(name);
    return it == values.end() ? std::vector<std::string>{} : it->second;
}

namespace {

/// CLI11 reads a value that starts with '-' ("--out -x", "--set valid_length=-1" is fine) as an
/// option. Every "--flag VALUE" of a flag that takes a value is therefore handed over as
/// "--flag=VALUE" (unless VALUE is itself one of the command's flags: "--out --set x=1" forgot the
/// value of --out, which is refused here, as CLI11 would take "--set" as the value). Nothing else is
/// interpreted here.
std::vector<std::string> joined_values(int argc, char** argv, const std::vector<CliOption>& options) {
    std::vector<std::string> out;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i] ? argv[i] : "";
        const CliOption* opt = find_option(options, arg);
        if (opt && !opt->value_name.empty()) {
            const std::string next = i + 1 < argc && argv[i + 1] != nullptr ? argv[i + 1] : "";
            if (i + 1 >= argc || argv[i + 1] == nullptr ||
                find_option(options, next.substr(0, next.find('='))))
                throw UsageError(arg + " needs a value (" + arg + " " + opt->value_name + ")");
            out.push_back(arg + "=" + next);
            ++i;
            continue;
        }
        out.push_back(arg);
    }
    return out;
}

/// CLI11's own message for a flag without its value or a switch given one, in our words.
std::string mismatch_message(const CLI::ArgumentMismatch& e, const std::vector<CliOption>& options) {
    const std::string what = e.what();
    for (const CliOption& o : options) {
        if (what.rfind(o.name + ":", 0) == 0)
            return o.name + " needs a value (" + o.name + " " + o.value_name + ")";
        if (what.rfind(o.name.substr(2) + " was given a disallowed flag override", 0) == 0)
            return o.name + " takes no value";
    }
    return one_line(what);
}

}  // namespace

CliArgs parse_cli(int argc, char** argv, const std::vector<CliOption>& options, bool allow_positional) {
    CLI::App app;
    app.set_help_flag();     // --help / -h is a switch of CliArgs, answered by each command
    app.allow_extras(true);  // unknown arguments come back from remaining(), refused below by name
    CLI::Option* help = app.add_flag("-h,--help")->disable_flag_override();
    std::vector<std::pair<const CliOption*, CLI::Option*>> added;
    for (const CliOption& o : options) {
        CLI::Option* opt = o.value_name.empty() ? app.add_flag(o.name)->disable_flag_override()
                                                : app.add_option(o.name)
                                                      ->expected(1)
                                                      ->type_name(o.value_name)
                                                      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
        added.emplace_back(&o, opt);
    }
    std::vector<std::string> args = joined_values(argc, argv, options);
    std::reverse(args.begin(), args.end());  // CLI11 takes its arguments last-first
    try {
        app.parse(args);
    } catch (const CLI::ArgumentMismatch& e) {
        throw UsageError(mismatch_message(e, options));
    } catch (const CLI::Error& e) {
        throw UsageError(one_line(e.what()));
    }

    CliArgs out;
    for (const std::string& extra : app.remaining()) {
        if (extra.size() > 2 && extra.compare(0, 2, "--") == 0)
            throw UsageError("unknown option " + extra.substr(0, extra.find('=')) +
                             " (known options: " + known_options(options) + ")");
        if (!allow_positional || (extra.size() > 1 && extra[0] == '-'))
            throw UsageError("unexpected argument '" + extra + "' (known options: " + known_options(options) +
                             ")");
        out.positional.push_back(extra);
    }
    if (help->count() > 0) out.values["--help"].assign(help->count(), "");
    for (const auto& [o, opt] : added) {
        if (opt->count() == 0) continue;
        std::vector<std::string> values =
            o->value_name.empty() ? std::vector<std::string>(opt->count(), "") : opt->results();
        if (values.size() > 1 && !o->repeatable) throw UsageError(o->name + " was given more than once");
        out.values[o->name] = std::move(values);
    }
    return out;
}

std::string cli_usage(const std::string& command, const std::vector<CliOption>& options,
                      const std::vector<std::string>& required) {
    std::ostringstream out;
    out << "usage: " << command;
    auto is_required = [&](const std::string& n) {
        for (const auto& r : required)
            if (r == n) return true;
        return false;
    };
    for (const CliOption& o : options) {
        std::string part = o.name + (o.value_name.empty() ? "" : " " + o.value_name);
        if (o.repeatable) part += " ...";
        out << ' ' << (is_required(o.name) ? part : "[" + part + "]");
    }
    out << "\n";
    std::size_t width = 0;
    for (const CliOption& o : options)
        width = std::max(width, o.name.size() + (o.value_name.empty() ? 0 : 1 + o.value_name.size()));
    for (const CliOption& o : options) {
        std::string left = o.name + (o.value_name.empty() ? "" : " " + o.value_name);
        out << "  " << left << std::string(width - left.size() + 2, ' ') << o.help << "\n";
    }
    return out.str();
}

void require_flag(const CliArgs& args, const std::vector<CliOption>& options, const std::string& name) {
    if (args.has(name)) return;
    const CliOption* opt = find_option(options, name);
    throw UsageError("missing " + name + (opt && !opt->value_name.empty() ? " " + opt->value_name : ""));
}

int cli_int(const std::string& flag, const std::string& text, int min_value, int max_value) {
    const std::string expected = flag + ": expected an integer from " + std::to_string(min_value) + " to " +
                                 std::to_string(max_value) + ", got '" + text + "'";
    if (text.empty()) throw UsageError(expected);
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || end != text.c_str() + text.size() || v < min_value || v > max_value)
        throw UsageError(expected);
    return int(v);
}

double cli_double(const std::string& flag, const std::string& text, double min_value, double max_value) {
    std::ostringstream expected;
    expected << flag << ": expected a number from " << min_value << " to " << max_value << ", got '" << text
             << "'";
    if (text.empty()) throw UsageError(expected.str());
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v) || v < min_value ||
        v > max_value)
        throw UsageError(expected.str());
    return v;
}

std::pair<std::string, std::string> split_key_value(const std::string& text, const std::string& flag) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError(flag + " expects KEY=VALUE, got '" + text + "'");
    return {text.substr(0, eq), text.substr(eq + 1)};
}

Scene scene_from_cli(const CliArgs& args) {
    Scene scene = args.has("--scene") ? load_scene(args.get_or("--scene", "")) : default_scene();
    for (const std::string& kv : args.all("--set")) {
        auto [key, value] = split_key_value(kv, "--set");
        set_config_key(scene.config, key, value);
    }
    return scene;
}

std::string one_line(const std::string& message) {
    std::string out;
    out.reserve(message.size());
    for (std::size_t i = 0; i < message.size(); ++i) {
        const char c = message[i];
        if (c == '\n' || c == '\r') {
            // Collapse runs of line breaks (and a trailing one) into a single "; ".
            while (i + 1 < message.size() && (message[i + 1] == '\n' || message[i + 1] == '\r')) ++i;
            if (i + 1 < message.size() && !out.empty()) out += "; ";
        } else {
            out += c;
        }
    }
    return out;
}

int run_cli_command(const std::string& command, const std::function<int()>& body) {
    try {
        return body();
    } catch (const UsageError& e) {
        std::cerr << command << ": " << one_line(e.what()) << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << command << ": " << one_line(e.what()) << "\n";
        return 1;
    }
}

}  // namespace attnviz

#include "io/cli.hpp"

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

CliArgs parse_cli(int argc, char** argv, const std::vector<CliOption>& options, bool allow_positional) {
    static const CliOption kHelp{"--help", "", "", true};
    auto lookup = [&](const std::string& name) -> const CliOption* {
        if (name == "--help" || name == "-h") return &kHelp;
        return find_option(options, name);
    };
    CliArgs out;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i] ? argv[i] : "";
        const std::size_t eq = arg.compare(0, 2, "--") == 0 ? arg.find('=') : std::string::npos;
        const std::string name = arg.substr(0, eq);
        const CliOption* opt = lookup(name);
        if (!opt) {
            if (arg.size() > 2 && arg.compare(0, 2, "--") == 0)
                throw UsageError("unknown option " + name + " (known options: " + known_options(options) +
                                 ")");
            if (!allow_positional || (arg.size() > 1 && arg[0] == '-'))
                throw UsageError("unexpected argument '" + arg +
                                 "' (known options: " + known_options(options) + ")");
            out.positional.push_back(arg);
            continue;
        }
        std::string value;
        if (opt->value_name.empty()) {
            if (eq != std::string::npos) throw UsageError(opt->name + " takes no value");
        } else if (eq != std::string::npos) {
            value = arg.substr(eq + 1);  // "--flag=VALUE": VALUE as written, even empty
        } else {
            // "--flag VALUE": the next argument, whatever it holds (an empty one included), unless it
            // is one of the command's flags -- then the value was forgotten.
            const std::string next = i + 1 < argc && argv[i + 1] ? argv[i + 1] : "";
            if (i + 1 >= argc || !argv[i + 1] ||
                (next.compare(0, 2, "--") == 0 && lookup(next.substr(0, next.find('=')))))
                throw UsageError(opt->name + " needs a value (" + opt->name + " " + opt->value_name + ")");
            value = next;
            ++i;
        }
        std::vector<std::string>& values = out.values[opt->name];
        if (!values.empty() && !opt->repeatable) throw UsageError(opt->name + " was given more than once");
        values.push_back(std::move(value));
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
    // What the flag is for, from its help line: "missing --tokens N: how many tokens to generate".
    throw UsageError("missing " + name + (opt && !opt->value_name.empty() ? " " + opt->value_name : "") +
                     (opt && !opt->help.empty() ? ": " + opt->help : ""));
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

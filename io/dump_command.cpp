// `attnviz dump`: every stage of one attention layer as .npy files plus a manifest, for checking the
// app's numbers in NumPy/PyTorch or for making one's own plots.
//
// The output directory appears whole or not at all: everything is written into a temporary sibling
// directory that is renamed into place at the end. An earlier dump in the same place is replaced;
// any other existing directory or file is left alone.

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/trace.hpp"
#include "io/cli.hpp"
#include "io/commands.hpp"
#include "io/files.hpp"
#include "io/model_commands.hpp"
#include "io/npy.hpp"
#include "io/platform.hpp"
#include "io/scene.hpp"

namespace attnviz {

namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

const std::vector<CliOption>& dump_options() {
    static const std::vector<CliOption> options = {
        {"--scene", "FILE", "scene to compute (default: the built-in example sentence)", false},
        {"--set", "KEY=VALUE",
         "change one config key after loading the scene (repeatable), e.g. --set heads=2", true},
        {"--out", "DIR", "directory to write NAME[_hHEAD].npy and manifest.json into", false},
        {"--threads", "N", "worker threads for the heads (0 = all cores; default 0)", false},
    };
    return options;
}

std::string kind_name(ValueKind k) {
    switch (k) {
        case ValueKind::Signed:
            return "signed";
        case ValueKind::Probability:
            return "probability";
        case ValueKind::NonNegative:
            return "non_negative";
        case ValueKind::Indicator:
            return "indicator";
    }
    return "signed";
}

std::string stage_file_name(const Stage& s) {
    return slug(s.name) + (s.head >= 0 ? "_h" + std::to_string(s.head) : std::string()) + ".npy";
}

/// What is at `dir` now, and may we put a dump there?
enum class Target { Missing, EmptyDir, EarlierDump };

Target inspect_target(const std::string& dir) {
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(dir, ec);
    if (ec || st.type() == fs::file_type::not_found) return Target::Missing;
    if (st.type() == fs::file_type::symlink)
        throw Error(dir + " is a symbolic link; give the folder itself (or a new name) as --out");
    if (st.type() != fs::file_type::directory)
        throw Error(dir + " exists and is not a directory; choose another --out");
    if (fs::is_empty(dir, ec) && !ec) return Target::EmptyDir;
    // Replace only what we wrote ourselves: a directory whose manifest says it is an attnviz dump.
    const std::string manifest = dir + "/manifest.json";
    bool ours = false;
    try {
        const ojson m = ojson::parse(read_file(manifest, 64u << 20));  // manifests are KiBs
        ours = m.is_object() && m.contains("attnviz_dump");
    } catch (const std::exception&) {
        ours = false;
    }
    if (!ours)
        throw Error(dir + " exists and is not an earlier attnviz dump; choose another --out or remove it");
    // It is replaced whole: it may hold only what a dump or grad writes (regular .npy files, the
    // manifest, grad's adamw/ checkpoint), nothing a user put there.
    auto foreign = [&](const fs::directory_entry& e, bool in_adamw) {
        const fs::file_status s = e.symlink_status();
        const std::string name = e.path().filename().string();
        if (!in_adamw && s.type() == fs::file_type::directory && name == "adamw") return false;
        if (s.type() != fs::file_type::regular) return true;
        if (in_adamw) return name != "model.safetensors" && name != "config.json";
        return name != "manifest.json" && (name.size() < 5 || name.compare(name.size() - 4, 4, ".npy") != 0);
    };
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
        if (foreign(e, false))
            throw Error(dir + " holds " + e.path().filename().string() +
                        ", which attnviz did not write there; choose another --out or move it away");
        if (e.path().filename() == "adamw")
            for (const fs::directory_entry& a : fs::directory_iterator(e.path(), ec))
                if (foreign(a, true))
                    throw Error(dir + " holds adamw/" + a.path().filename().string() +
                                ", which attnviz did not write there; choose another --out or move it away");
    }
    if (ec) throw Error("cannot read " + dir + ": " + ec.message());
    return Target::EarlierDump;
}

std::string without_trailing_slashes(std::string s) {
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    return s;
}

ojson manifest_json(const Trace& trace) {
    ojson m = ojson::object();
    m["attnviz_dump"] = 1;
    m["config"] = config_to_json(trace.config);
    m["query_tokens"] = trace.query_tokens ? *trace.query_tokens : std::vector<std::string>{};
    m["key_tokens"] = trace.key_tokens ? *trace.key_tokens : std::vector<std::string>{};
    m["n"] = trace.n;
    m["m"] = trace.m;
    m["d_model"] = trace.d_model;
    m["heads"] = trace.heads;
    m["d_k"] = trace.d_k;
    m["d_v"] = trace.d_v;
    ojson stages = ojson::array();
    for (const Stage& s : trace.stages) {
        ojson e = ojson::object();
        e["name"] = s.name;
        e["head"] = s.head >= 0 ? ojson(s.head) : ojson(nullptr);
        e["shape"] = {s.n_rows(), s.n_cols()};
        e["file"] = stage_file_name(s);
        e["formula"] = s.formula;
        e["title"] = s.title;
        e["kind"] = kind_name(s.kind);
        e["rows"] = s.rows.name;
        e["cols"] = s.cols.name;
        stages.push_back(std::move(e));
    }
    m["stages"] = std::move(stages);
    return m;
}

/// A dump request, checked: flags, values and the scene (validated).
struct DumpRequest {
    bool help = false;
    std::string out;
    ComputeOptions compute;
    Scene scene;
};

DumpRequest parse_dump_request(int argc, char** argv) {
    const auto& options = dump_options();
    const CliArgs args = parse_cli(argc, argv, options);
    DumpRequest r;
    if (args.has("--help")) {
        r.help = true;
        return r;
    }
    require_flag(args, options, "--out");
    r.out = without_trailing_slashes(*args.get("--out"));
    if (r.out.empty()) throw UsageError("--out needs a directory name");
    if (auto t = args.get("--threads")) r.compute.threads = cli_int("--threads", *t, 0, 256);
    r.scene = scene_from_cli(args);
    require_valid(r.scene.config);
    return r;
}

int dump_main(int argc, char** argv) {
    // Everything that can be wrong with the request is found before anything touches the disk.
    const DumpRequest request = parse_dump_request(argc, argv);
    if (request.help) {
        std::cout << cli_usage("attnviz dump", dump_options(), {"--out"})
                  << "Writes every stage of the attention layer as a float32 .npy file (per-head stages as "
                     "NAME_hHEAD.npy) and manifest.json.\n"
                     "Every stage of every layer of a real model: attnviz dump --model DIR --help\n";
        return 0;
    }
    const std::string& out = request.out;
    const ComputeOptions& compute = request.compute;
    const Scene& scene = request.scene;
    inspect_target(out);
    const Trace trace = compute_trace(scene.config, compute);

    publish_dump_dir(out, [&](const std::string& tmp) {
        // Stored stages are written straight from the trace (streamed, no copy); a derived stage
        // (scaled, masked) is materialised one at a time -- the one extra n×m matrix the memory
        // estimate of validate() allows for.
        for (const Stage& s : trace.stages) {
            if (const Mat* stored = s.stored_matrix()) {
                write_npy(tmp + "/" + stage_file_name(s), *stored);  // n_rows x n_cols
            } else {
                const Mat M = s.matrix();  // n_rows x n_cols
                write_npy(tmp + "/" + stage_file_name(s), M);
            }
        }
        write_file_atomic(tmp + "/manifest.json", manifest_json(trace).dump(2) + "\n");
    });
    std::cout << "wrote " << trace.stages.size() << " stages (n=" << trace.n << ", m=" << trace.m
              << ", heads=" << trace.heads << ") to " << out << "/\n";
    return 0;
}

}  // namespace

void check_dump_target(const std::string& out) {
    (void)inspect_target(out);
}

void publish_dump_dir(const std::string& out, const std::function<void(const std::string& tmp)>& fill) {
    // Parent directories are created on demand, as `mkdir -p` would.
    const auto slash = out.find_last_of('/');
    if (slash != std::string::npos && slash > 0) make_dirs(out.substr(0, slash));

    const std::string tmp = platform::make_unique_dir(out + ".tmp-");
    try {
        fill(tmp);

        // Check again: something may have appeared at `out` while we computed.
        const Target target = inspect_target(out);
        if (target == Target::EarlierDump) {
            // rename() cannot replace a non-empty directory, so move the old dump aside first
            // (onto a fresh empty directory, which rename may replace), then move the new one in.
            const std::string old = platform::make_unique_dir(out + ".old-");
            if (const std::string err = platform::rename_path(out, old); !err.empty()) {
                platform::remove_empty_dir(old);
                throw Error("cannot replace " + out + ": " + err);
            }
            if (const std::string err = platform::rename_path(tmp, out); !err.empty()) {
                (void)platform::rename_path(old, out);  // put the earlier dump back
                throw Error("cannot write " + out + ": " + err);
            }
            std::error_code ec;
            fs::remove_all(old, ec);
        } else if (const std::string err = platform::rename_path(tmp, out); !err.empty()) {
            throw Error("cannot write " + out + ": " + err);  // (an empty directory is replaced)
        }
    } catch (...) {
        std::error_code ec;
        fs::remove_all(tmp, ec);
        throw;
    }
}

void check_dump_arguments(int argc, char** argv) {
    (void)parse_dump_request(argc, argv);
}

int run_dump_command(int argc, char** argv) {
    if (has_model_flag(argc, argv)) return run_model_dump_command(argc, argv);
    return run_cli_command("attnviz dump", [&] { return dump_main(argc, argv); });
}

}  // namespace attnviz

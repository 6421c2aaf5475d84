// Fuzz harness: the command line of `attnviz dump` / `attnviz render`. The input is split into argv
// entries on newlines or NUL bytes; the first entry picks the command ("render", anything else is
// dump). Only the checks run (flags, values, scene, --set, validate, the grid's memory): nothing is
// computed or written.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "fuzz_argv.hpp"
#include "fuzz_check.hpp"
#include "io/cli.hpp"
#include "io/commands.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::vector<std::string> args = fuzz_argv(data, size);
    if (args.size() > 256) return 0;  // a real command line is short; keep each run fast
    const bool render = args[0] == "render";
    args[0] = render ? "render" : "dump";
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    try {
        if (render)
            attnviz::check_render_arguments(int(args.size()), argv.data());
        else
            attnviz::check_dump_arguments(int(args.size()), argv.data());
    } catch (const attnviz::Error& e) {
        // One clear line, as run_cli_command prints it.
        const std::string line = attnviz::one_line(e.what());
        FUZZ_CHECK(!line.empty() && line.find('\n') == std::string::npos);
    }
    return 0;
}

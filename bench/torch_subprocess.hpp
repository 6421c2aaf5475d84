// The PyTorch side of the benchmarks that compare with PyTorch: a bench/torch_*_reference.py script run
// by this binary with /usr/bin/python3, on the same threads, in the same run.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

namespace attnviz::bench {

struct TorchTime {
    double ms = -1;      // the script's best wall time of a run
    double cpu_ms = -1;  // its CPU time, all threads (-1 when it does not say)
};

/// Runs `/usr/bin/python3 bench/<script> <args>` once. The script prints its time in ms as the number
/// first on its last line (a second number there, or a line "cpu_ms X", is the CPU time). On failure
/// (no python3, no torch, the script failed) the benchmark is skipped with an error and ms is -1.
inline TorchTime run_torch_reference(benchmark::State& state, const char* script, const std::string& args) {
    const std::string cmd = "/usr/bin/python3 " ATTNVIZ_BENCH_DIR "/" + std::string(script) + " " + args;
    TorchTime t;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) {
        state.SkipWithError("cannot run python3");
        return t;
    }
    char line[256];
    while (std::fgets(line, sizeof line, p))
        if (std::sscanf(line, "cpu_ms %lf", &t.cpu_ms) != 1) std::sscanf(line, "%lf %lf", &t.ms, &t.cpu_ms);
    if (::pclose(p) != 0 || t.ms <= 0) {
        state.SkipWithError((std::string(script) + " failed (python3-torch installed?)").c_str());
        t.ms = -1;
    }
    return t;
}

/// The body of a BM_Torch* benchmark: each iteration's time is the script's (manual time) and, when the
/// script says it, process_cpu_ms its CPU time.
inline void time_torch_reference(benchmark::State& state, const char* script, const std::string& args) {
    for (auto _ : state) {
        const TorchTime t = run_torch_reference(state, script, args);
        if (t.ms <= 0) return;
        state.SetIterationTime(t.ms / 1e3);
        if (t.cpu_ms >= 0) state.counters["process_cpu_ms"] = t.cpu_ms;
    }
}

}  // namespace attnviz::bench

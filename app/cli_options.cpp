#include "app/cli_options.hpp"

#include <cerrno>
#include <cstdlib>

#include "io/files.hpp"

namespace attnviz::app {

namespace {

int parse_int(const std::string& flag, const std::string& v, int lo, int hi) {
    char* end = nullptr;
    errno = 0;
    const long x = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno != 0 || x < lo || x > hi)
        throw UsageError{flag + ": expected an integer from " + std::to_string(lo) + " to " +
                         std::to_string(hi) + ", got '" + v + "'"};
    return int(x);
}

/// The widest vector instruction set this translation unit was compiled for (the whole binary is
/// compiled with the same flags: attnviz_flags in CMakeLists.txt).
const char* instruction_set() {
#if defined(__AVX512F__)
    return "AVX-512 (built for this machine's CPU: -march=native)";
#elif defined(__AVX2__)
    return "AVX2 (built for this machine's CPU: -march=native)";
#elif defined(__AVX__)
    return "AVX";
#elif defined(__x86_64__)
    return "x86-64 baseline (SSE2: runs on any x86-64)";
#elif defined(__aarch64__)
    return "arm64";
#else
    return "generic";
#endif
}

}  // namespace

std::string version_text() {
    const ResourceDir assets = find_asset_dir(), shaders = find_shader_dir();
    return std::string("attnviz ") + ATTNVIZ_VERSION + "\n" + "cpu: " + instruction_set() + "\n" +
           "assets: " + assets.path + " (" + assets.how + ")\n" + "shaders: " + shaders.path + " (" +
           shaders.how + ")\n";
}

const char* const kUsage =
    "usage: attnviz [--scene FILE] [--screenshot OUT.png [--stage NAME] [--head H] [--frames N]]\n"
    "               [--set KEY=VALUE ...] [--view stage|heads|compare] [--lab NAME]\n"
    "               [--state-log FILE] [--frame-log FILE] [--script FILE] [--fresh]\n"
    "               [--ui-scale S] [--size WxH] [--model DIR [--layer L] [--text TEXT]]\n"
    "       attnviz dump [--scene FILE] [--set KEY=VALUE ...] --out DIR\n"
    "       attnviz render [--scene FILE] [--set KEY=VALUE ...] --stage NAME [--head H] --out FIG.png\n"
    "       attnviz tokenize --model DIR --text TEXT [--pieces]   (token ids of a real tokenizer, as JSON)\n"
    "       attnviz train --task induction [--layers 2 --heads 4 --d-model 64 --context 48] --steps N\n"
    "                     [--seed S] [--threads T] --out DIR   (train a small model; attnviz train --help)\n"
    "\n"
    "Opens a window that computes one attention layer live and shows every stage as a heatmap.\n"
    "\n"
    "  --scene FILE        scene (JSON) to open; default: the built-in example sentence\n"
    "  --set KEY=VALUE     change one setting (repeatable), e.g. --set heads=2 --set mask=causal\n"
    "  --screenshot FILE   wait for the trace, draw --frames frames, save the window as PNG, exit\n"
    "  --stage NAME        start on this stage (e.g. weights, scores, Q)\n"
    "  --head H            start on this head\n"
    "  --pin ROW           start with this query row pinned (its bar chart and Q/Kᵀ views)\n"
    "  --frames N          frames to draw before the screenshot (default 5)\n"
    "  --view V            main view: stage, heads (all heads' weights), compare (softmax vs linear)\n"
    "                      or model (with --model: every layer × head)\n"
    "  --lab NAME          open a teaching lab at start-up\n"
    "  --model DIR         open a real model (Hugging Face folder: config.json, safetensors, tokenizer)\n"
    "  --layer L           with --model: start on this layer\n"
    "  --text TEXT         with --model: the text the model reads\n"
    "  --state-log FILE    append one JSON line describing the screen each time it changes (tests)\n"
    "  --frame-log FILE    one line per frame: times, whether a trace was updating, T (measurements)\n"
    "  --script FILE       run scripted input frame by frame, then exit (tests; see app/script.hpp)\n"
    "  --fresh             start without restoring the last session's workspace\n"
    "  --ui-scale S        UI scale, 0.5 to 3 (also in View > UI scale; remembered)\n"
    "  --size WxH          window size in pixels (default 1600x1000)\n"
    "  --version           print the version\n"
    "\n"
    "Keys: ←/→ stage, ↑/↓ head, Home/End, Space play, Ctrl+E export PNG, Ctrl+O open, Ctrl+S save.\n"
    "No display? Use `attnviz dump` / `attnviz render`, or run under xvfb-run.\n";

Options parse_args(int argc, char** argv, bool* help, bool* version) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        std::string value;
        bool has_inline = false;
        if (arg.rfind("--", 0) == 0) {
            const auto eq = arg.find('=');
            if (eq != std::string::npos) {
                value = arg.substr(eq + 1);
                arg = arg.substr(0, eq);
                has_inline = true;
            }
        }
        auto need = [&]() -> std::string {
            if (has_inline) return value;
            if (i + 1 >= argc) throw UsageError{arg + " needs a value"};
            return argv[++i];
        };
        if (arg == "--help" || arg == "-h")
            *help = true;
        else if (arg == "--version")
            *version = true;
        else if (arg == "--scene")
            o.scene = need();
        else if (arg == "--screenshot")
            o.screenshot = need();
        else if (arg == "--stage")
            o.stage = need();
        else if (arg == "--head")
            o.head = parse_int("--head", need(), 0, 1 << 20);
        else if (arg == "--pin")
            o.pin = parse_int("--pin", need(), 0, 1 << 24);
        else if (arg == "--frames")
            o.frames = parse_int("--frames", need(), 1, 100000);
        else if (arg == "--set") {
            const std::string kv = need();
            if (kv.find('=') == std::string::npos)
                throw UsageError{"--set expects KEY=VALUE, got '" + kv + "'"};
            o.sets.push_back(kv);
        } else if (arg == "--view") {
            const std::string v = need();
            if (v == "stage")
                o.view = MainView::Stage;
            else if (v == "heads")
                o.view = MainView::HeadsGrid;
            else if (v == "compare")
                o.view = MainView::Compare;
            else if (v == "model")
                o.view = MainView::Model;
            else
                throw UsageError{"--view: expected stage, heads, compare or model, got '" + v + "'"};
        } else if (arg == "--lab")
            o.lab = need();
        else if (arg == "--model")
            o.model = need();
        else if (arg == "--layer")
            o.layer = parse_int("--layer", need(), 0, 1 << 20);
        else if (arg == "--text")
            o.text = need();
        else if (arg == "--state-log")
            o.state_log = need();
        else if (arg == "--frame-log")
            o.frame_log = need();
        else if (arg == "--script")
            o.script = need();
        else if (arg == "--fresh")
            o.restore_workspace = false;
        else if (arg == "--ui-scale") {
            const std::string v = need();
            char* end = nullptr;
            const double s = std::strtod(v.c_str(), &end);
            if (v.empty() || *end != '\0' || !(s >= 0.5 && s <= 3.0))
                throw UsageError{"--ui-scale: expected a number from 0.5 to 3, got '" + v + "'"};
            o.ui_scale = float(s);
        } else if (arg == "--size") {
            const std::string v = need();
            const auto x = v.find('x');
            if (x == std::string::npos)
                throw UsageError{"--size: expected WxH such as 1600x1000, got '" + v + "'"};
            o.width = parse_int("--size", v.substr(0, x), 320, 16384);
            o.height = parse_int("--size", v.substr(x + 1), 240, 16384);
        } else if (arg.rfind("-", 0) == 0) {
            throw UsageError{"unknown option " + arg + " (see attnviz --help)"};
        } else {
            throw UsageError{"unexpected argument '" + arg +
                             "' (commands are dump, render and tokenize; see attnviz --help)"};
        }
    }
    if (!o.screenshot.empty() && o.screenshot.size() < 5)
        throw UsageError{"--screenshot: expected a file name ending in .png"};
    if (o.model.empty() && (o.layer || o.text))
        throw UsageError{std::string(o.layer ? "--layer" : "--text") + " needs --model DIR"};
    if (o.view == MainView::Model && o.model.empty()) throw UsageError{"--view model needs --model DIR"};
    return o;
}

}  // namespace attnviz::app

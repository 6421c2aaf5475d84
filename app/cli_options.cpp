#include "app/cli_options.hpp"

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "io/cli.hpp"
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
    "usage: attnviz [SCENE.json | MODEL_DIR]\n"
    "               [--scene FILE] [--screenshot OUT.png [--frames N] [--hover ROW,COL]]\n"
    "               [--stage NAME] [--head H] [--pin ROW] [--set KEY=VALUE ...]\n"
    "               [--view stage|heads|compare|model|lines|interventions] [--lab NAME]\n"
    "               [--state-log FILE] [--frame-log FILE] [--script FILE] [--fresh]\n"
    "               [--ui-scale S] [--size WxH] [--model DIR [--layer L] [--text TEXT] [--text-b TEXT]\n"
    "                            [--target TEXT] [--family encoder|decoder|cross]]\n"
    "               [--tour FILE [--step K]]\n"
    "       attnviz dump [--scene FILE] [--set KEY=VALUE ...] --out DIR\n"
    "       attnviz dump --model DIR --text TEXT --out DIR   (every stage of every layer of a real model)\n"
    "       attnviz render [--scene FILE] [--set KEY=VALUE ...] --stage NAME [--head H] --out FIG.png\n"
    "       attnviz render --model DIR --text TEXT --layer L --stage NAME --out FIG.png|FIG.svg\n"
    "       attnviz generate --model DIR --text TEXT --tokens N   (continue a text; translate with t5)\n"
    "       attnviz tokenize --model DIR --text TEXT [--pieces]   (token ids of a real tokenizer, as JSON)\n"
    "       attnviz train --task induction [--layers 2 --heads 4 --d-model 64 --context 48] --steps N\n"
    "                     [--seed S] [--threads T] --out DIR   (train a small model; attnviz train --help)\n"
    "       attnviz grad --model DIR --tokens FILE.npy --out OUT   (loss and every parameter's gradient as "
    ".npy)\n"
    "       attnviz ablate|patch|attribute --model DIR ... --out OUT.json   (knock out or patch heads, "
    "attribute the next token; attnviz ablate --help)\n"
    "\n"
    "Opens a window that computes one attention layer live and shows every stage as a heatmap.\n"
    "\n"
    "  --scene FILE        scene (JSON) to open; default: the built-in example sentence\n"
    "  --set KEY=VALUE     change one setting (repeatable), e.g. --set heads=2 --set mask=causal\n"
    "  --screenshot FILE   wait for the trace, draw --frames frames, save the window as PNG, exit\n"
    "  --stage NAME        start on this stage (e.g. weights, scores, Q)\n"
    "  --head H            start on this head\n"
    "  --pin ROW           start with this query row pinned (its bar chart and Q/Kᵀ views)\n"
    "  --hover ROW,COL     with --screenshot: hover this cell of the heatmap (its tooltip); without it\n"
    "                      a screenshot shows no hover, wherever the pointer is\n"
    "  --frames N          frames to draw before the screenshot (default 5)\n"
    "  --view V            main view: stage, heads (all heads' weights), compare (softmax vs linear)\n"
    "                      or model (with --model: every layer × head), lines (queries joined to keys by\n"
    "                      lines as thick as their weight) or interventions (with --model: ablate,\n"
    "                      patch, attribute)\n"
    "  --lab NAME          open a teaching lab at start-up\n"
    "  --model DIR         open a real model (Hugging Face folder: config.json, safetensors, tokenizer)\n"
    "  --layer L           with --model: start on this layer\n"
    "  --text TEXT         with --model: the text the model reads (an encoder–decoder's source)\n"
    "  --target TEXT       with a t5 / bart model: the decoder's input after its start token\n"
    "  --family F          with a t5 / bart model: the attention shown: encoder, decoder or cross\n"
    "  --state-log FILE    append one JSON line describing the screen each time it changes (tests)\n"
    "  --frame-log FILE    one line per frame: times, whether a trace was updating, T (measurements)\n"
    "  --script FILE       run scripted input frame by frame, then exit (tests; see app/script.hpp)\n"
    "  --fresh             start without restoring the last session's workspace\n"
    "  --tour FILE         start a guided tour (JSON; the shipped one is assets/tours/first-hour.json,\n"
    "                      the format is in docs/tours.md); a first launch opens it by itself\n"
    "  --step K            with --tour: start on step K (1-based); with --screenshot, render that step\n"
    "  --ui-scale S        UI scale, 0.5 to 3 (also in View > UI scale; remembered)\n"
    "  --size WxH          window size in pixels (default 1600x1000)\n"
    "  --version           print the version\n"
    "\n"
    "Keys: ←/→ stage, ↑/↓ head, Home/End, Space play, Ctrl+E export PNG, Ctrl+O open, Ctrl+S save.\n"
    "No display? Use `attnviz dump` / `attnviz render`, or run under xvfb-run.\n";

namespace {

/// The GUI's flags, parsed by the same parser as the subcommands (io/cli.hpp).
const std::vector<CliOption>& gui_options() {
    static const std::vector<CliOption> options = {
        {"--version", "", "print the version", false},
        {"--scene", "FILE", "scene (JSON) to open", false},
        {"--screenshot", "FILE", "save the window as PNG, exit", false},
        {"--stage", "NAME", "start on this stage", false},
        {"--head", "H", "start on this head", false},
        {"--pin", "ROW", "start with this query row pinned", false},
        {"--hover", "ROW,COL", "with --screenshot: hover this cell", false},
        {"--frames", "N", "frames before the screenshot", false},
        {"--set", "KEY=VALUE", "change one setting", true},
        {"--view", "V", "stage, heads, compare, model, lines or interventions", false},
        {"--lab", "NAME", "open a lab at start-up", false},
        {"--model", "DIR", "open a real model", false},
        {"--layer", "L", "with --model: start on this layer", false},
        {"--text", "TEXT", "with --model: the text", false},
        {"--target", "TEXT", "with --model (t5, bart): the decoder's input", false},
        {"--family", "F", "with --model (t5, bart): encoder, decoder or cross", false},
        {"--text-b", "TEXT", "with --model (an encoder such as BERT): the second text of a sentence pair",
         false},
        {"--state-log", "FILE", "state log (tests)", false},
        {"--frame-log", "FILE", "frame log (measurements)", false},
        {"--script", "FILE", "scripted input (tests)", false},
        {"--fresh", "", "start without the saved workspace", false},
        {"--tour", "FILE", "start a guided tour", false},
        {"--step", "K", "with --tour: start on step K", false},
        {"--ui-scale", "S", "UI scale, 0.5 to 3", false},
        {"--size", "WxH", "window size", false},
    };
    return options;
}

Options options_from(const CliArgs& args) {
    Options o;
    o.scene = args.get_or("--scene", "");
    o.screenshot = args.get_or("--screenshot", "");
    o.stage = args.get_or("--stage", "");
    if (auto v = args.get("--head")) o.head = parse_int("--head", *v, 0, 1 << 20);
    if (auto v = args.get("--pin")) o.pin = parse_int("--pin", *v, 0, 1 << 24);
    if (auto v = args.get("--hover")) {
        const auto comma = v->find(',');
        if (comma == std::string::npos)
            throw UsageError{"--hover: expected ROW,COL such as 3,5, got '" + *v + "'"};
        o.hover = std::make_pair(parse_int("--hover", v->substr(0, comma), 0, 1 << 24),
                                 parse_int("--hover", v->substr(comma + 1), 0, 1 << 24));
    }
    if (auto v = args.get("--frames")) o.frames = parse_int("--frames", *v, 1, 100000);
    for (const std::string& kv : args.all("--set")) {
        if (kv.find('=') == std::string::npos) throw UsageError{"--set expects KEY=VALUE, got '" + kv + "'"};
        o.sets.push_back(kv);
    }
    if (auto v = args.get("--view")) {
        if (*v == "stage")
            o.view = MainView::Stage;
        else if (*v == "heads")
            o.view = MainView::HeadsGrid;
        else if (*v == "compare")
            o.view = MainView::Compare;
        else if (*v == "model")
            o.view = MainView::Model;
        else if (*v == "lines")
            o.view = MainView::Lines;
        else if (*v == "interventions")
            o.view = MainView::Interventions;
        else
            throw UsageError{"--view: expected stage, heads, compare, model, lines or interventions, got '" +
                             *v + "'"};
    }
    o.lab = args.get_or("--lab", "");
    o.model = args.get_or("--model", "");
    if (auto v = args.get("--layer")) o.layer = parse_int("--layer", *v, 0, 1 << 20);
    if (auto v = args.get("--text")) o.text = *v;
    if (auto v = args.get("--target")) o.target = *v;
    if (auto v = args.get("--family")) {
        if (*v == "encoder")
            o.family = AttnFamily::Encoder;
        else if (*v == "decoder")
            o.family = AttnFamily::Decoder;
        else if (*v == "cross")
            o.family = AttnFamily::Cross;
        else
            throw UsageError{"--family: expected encoder, decoder or cross, got '" + *v + "'"};
    }
    if (auto v = args.get("--text-b")) o.text_b = *v;
    o.state_log = args.get_or("--state-log", "");
    o.frame_log = args.get_or("--frame-log", "");
    o.script = args.get_or("--script", "");
    o.restore_workspace = !args.has("--fresh");
    o.tour = args.get_or("--tour", "");
    if (auto v = args.get("--step")) o.step = parse_int("--step", *v, 1, 100000);
    if (auto v = args.get("--ui-scale")) {
        char* end = nullptr;
        const double s = std::strtod(v->c_str(), &end);
        if (v->empty() || *end != '\0' || !(s >= 0.5 && s <= 3.0))
            throw UsageError{"--ui-scale: expected a number from 0.5 to 3, got '" + *v + "'"};
        o.ui_scale = float(s);
    }
    if (auto v = args.get("--size")) {
        const auto x = v->find('x');
        if (x == std::string::npos)
            throw UsageError{"--size: expected WxH such as 1600x1000, got '" + *v + "'"};
        o.width = parse_int("--size", v->substr(0, x), 320, 16384);
        o.height = parse_int("--size", v->substr(x + 1), 240, 16384);
    }
    return o;
}

}  // namespace

Options parse_args(int argc, char** argv, bool* help, bool* version) {
    CliArgs args;
    try {
        args = parse_cli(argc, argv, gui_options(), /*allow_positional=*/true);
    } catch (const attnviz::UsageError& e) {
        std::string message = e.what();  // the subcommands list the known options; here --help does
        message = message.substr(0, message.find(" (known options:"));
        throw UsageError{message + " (see attnviz --help)"};
    }
    *help = args.has("--help");
    *version = args.has("--version");
    Options o = options_from(args);
    // One file to open, as a desktop passes it (attnviz.desktop: Exec=attnviz %f): a scene (.json) or
    // a model folder. Anything else is a mistyped command.
    for (const std::string& p : args.positional) {
        std::error_code ec;
        const bool is_json = p.size() > 5 && p.compare(p.size() - 5, 5, ".json") == 0;
        const bool is_dir = std::filesystem::is_directory(p, ec);
        if (args.positional.size() > 1 || (!is_json && !is_dir))
            throw UsageError{"unexpected argument '" + p +
                             "' (open a scene .json or a model folder; commands are dump, render, tokenize, "
                             "generate, train, grad, ablate, patch and attribute; see attnviz --help)"};
        if (is_json && !o.scene.empty()) throw UsageError{"a scene was given twice: --scene and '" + p + "'"};
        if (is_dir && !o.model.empty()) throw UsageError{"a model was given twice: --model and '" + p + "'"};
        (is_json ? o.scene : o.model) = p;
    }
    if (o.hover && o.screenshot.empty()) throw UsageError{"--hover needs --screenshot OUT.png"};
    if (!o.screenshot.empty() && o.screenshot.size() < 5)
        throw UsageError{"--screenshot: expected a file name ending in .png"};
    if (o.model.empty() && (o.layer || o.text || o.text_b || o.target || o.family))
        throw UsageError{std::string(o.layer    ? "--layer"
                                     : o.text   ? "--text"
                                     : o.text_b ? "--text-b"
                                     : o.target ? "--target"
                                                : "--family") +
                         " needs --model DIR"};
    if (o.view == MainView::Model && o.model.empty()) throw UsageError{"--view model needs --model DIR"};
    if (o.step && o.tour.empty()) throw UsageError{"--step needs --tour FILE"};
    if (!o.tour.empty() && (!o.scene.empty() || !o.model.empty()))
        throw UsageError{"--tour decides the scene and the model itself; drop --scene / --model"};
    if (o.view == MainView::Interventions && o.model.empty())
        throw UsageError{"--view interventions needs --model DIR"};
    return o;
}

bool is_first_launch(const Options& o, bool workspace_exists) {
    return !workspace_exists && o.restore_workspace && o.scene.empty() && o.model.empty() && o.tour.empty() &&
           o.screenshot.empty() && o.script.empty();
}

}  // namespace attnviz::app

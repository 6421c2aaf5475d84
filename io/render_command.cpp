// `attnviz render`: one stage as a publication figure (PNG), on the CPU, without a display. It is the
// same picture as the app's "Export PNG" (both call render_stage_figure).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "core/trace.hpp"
#include "io/cli.hpp"
#include "io/commands.hpp"
#include "io/figure.hpp"
#include "io/files.hpp"
#include "io/model_commands.hpp"
#include "io/scene.hpp"

namespace attnviz {
namespace {

const std::vector<CliOption>& render_options() {
    static const std::vector<CliOption> options = {
        {"--scene", "FILE", "scene to load (default: the built-in example sentence)"},
        {"--set", "KEY=VALUE", "change one config key, e.g. --set heads=4; repeatable", true},
        {"--stage", "NAME", "stage to draw: weights, scores, Q, ... (see `attnviz dump` names)"},
        {"--head", "H", "head for per-head stages (default 0)"},
        {"--out", "FIG.png",
         "figure to write: PNG, or SVG (vector text) when the name ends in .svg; written whole or not at "
         "all"},
        {"--scale", "S", "1, 2 or 4: resolution multiplier for slides and print (default 1)"},
        {"--grid", "", "draw every head of the stage side by side instead of one head"},
        {"--scale-mode", "MODE",
         "colours of weights: auto (default: fixed for rows of at most 64 keys, row beyond), fixed (0-1), "
         "max (0-max), row (each row scaled to its own max) or log (4 decades below the max)"},
        {"--values", "", "print each value in its cell when the cells are large enough"},
        {"--threads", "N", "threads for the computation (default: all cores)"},
    };
    return options;
}

std::string joined_stage_names(const Trace& trace) {
    std::string out;
    for (const std::string& name : trace.stage_names()) out += (out.empty() ? "" : ", ") + name;
    return out;
}

/// A heads grid holds every head's display copy (n×m floats) at once, on top of what validate()
/// allows for (the trace and one copy). Refuse, before computing, a grid that would pass the limit.
void check_grid_memory(const Config& cfg) {
    require_valid(cfg);
    const Tokenized t = tokenize_config(cfg);
    const double n = double(t.query_tokens.size());
    const double m = double(cfg.cross_attention() ? t.key_tokens.size() : t.query_tokens.size());
    const double extra = double(std::max(cfg.heads - 1, 0)) * n * m * 4.0;
    const double total = estimate_trace_bytes(cfg, int(n), int(m), int(t.vocab.size())) + extra;
    if (total > kMaxTraceBytes) {
        char buf[320];
        std::snprintf(buf, sizeof buf,
                      "--grid: drawing all %d heads at %d×%d needs about %.1f GiB, more than the %.1f GiB "
                      "limit; draw one head (without --grid), or use fewer tokens or heads",
                      cfg.heads, int(n), int(m), total / double(1 << 30), kMaxTraceBytes / double(1 << 30));
        throw Error(buf);
    }
}

/// A render request, checked: flags, values, the scene (validated) and the grid's memory.
struct RenderRequest {
    bool help = false;
    std::string stage_name, out;
    int head = 0;
    bool grid = false;
    FigureOptions figure;
    ComputeOptions compute;
    Scene scene;
};

RenderRequest parse_render_request(int argc, char** argv) {
    const auto& options = render_options();
    const CliArgs args = parse_cli(argc, argv, options);
    RenderRequest r;
    if (args.has("--help")) {
        r.help = true;
        return r;
    }
    require_flag(args, options, "--stage");
    require_flag(args, options, "--out");
    r.stage_name = *args.get("--stage");
    r.out = *args.get("--out");
    r.head = args.has("--head") ? cli_int("--head", *args.get("--head"), 0, 1 << 20) : 0;
    read_figure_flags(args, r.figure);
    r.figure.cell_values = args.has("--values");
    if (auto t = args.get("--threads")) r.compute.threads = cli_int("--threads", *t, 0, 256);
    r.grid = args.has("--grid");
    r.scene = scene_from_cli(args);
    require_valid(r.scene.config);
    if (r.grid) check_grid_memory(r.scene.config);
    return r;
}

int render_main(int argc, char** argv) {
    const RenderRequest request = parse_render_request(argc, argv);
    if (request.help) {
        std::cout << cli_usage("attnviz render", render_options(), {"--stage", "--out"})
                  << "Draws one stage of the attention layer as a figure: title, formula, token labels and "
                     "a colour bar.\n"
                     "A real model's stages: attnviz render --model DIR --help\n";
        return 0;
    }
    const std::string& stage_name = request.stage_name;
    const std::string& out = request.out;
    const int head = request.head;
    const FigureOptions& figure = request.figure;
    const ComputeOptions& compute = request.compute;
    const Scene& scene = request.scene;
    const Trace trace = compute_trace(scene.config, compute);
    if (trace.find(stage_name, 0) < 0 && trace.find(stage_name) < 0) {
        throw UsageError("--stage: no stage named '" + stage_name +
                         "' in this configuration (stages: " + joined_stage_names(trace) + ")");
    }
    const Stage* stage = nullptr;
    if (!request.grid) {
        stage = trace.get(stage_name, head);
        if (!stage || (stage->head >= 0 && stage->head != head)) {
            throw UsageError("--head: expected a head from 0 to " + std::to_string(trace.heads - 1) +
                             ", got " + std::to_string(head));
        }
    }
    if (is_svg_path(out)) {  // vector text for papers, same layout as the PNG
        write_file_atomic(out, request.grid ? render_heads_grid_figure_svg(trace, stage_name, figure)
                                            : render_stage_figure_svg(trace, *stage, figure));
        std::cout << "wrote " << out << " (SVG)\n";
        return 0;
    }
    const Image image = request.grid ? render_heads_grid_figure(trace, stage_name, figure)
                                     : render_stage_figure(trace, *stage, figure);
    write_png(out, image);
    std::cout << "wrote " << out << " (" << image.width << "×" << image.height << ")\n";
    return 0;
}

}  // namespace

void read_figure_flags(const CliArgs& args, FigureOptions& figure) {
    if (auto s = args.get("--scale")) {
        figure.scale = cli_int("--scale", *s, 1, 4);
        if (figure.scale == 3) throw UsageError("--scale: expected 1, 2 or 4, got '3'");
    }
    if (auto m = args.get("--scale-mode")) {
        try {
            figure.scale_mode = parse_scale_mode(*m);
        } catch (const Error& e) {
            throw UsageError(e.what());
        }
    }
}

void check_render_arguments(int argc, char** argv) {
    (void)parse_render_request(argc, argv);
}

namespace {

/// A scene that opens a model (its "model" key, e.g. assets/scenes/story.json) renders that model's
/// stage, as the app shows it: the arguments of `render --model` for the scene's folder, text, layer
/// and head (an explicit --head wins). Empty when the scene opens no model.
std::vector<std::string> model_scene_arguments(int argc, char** argv) {
    const auto& options = render_options();
    const CliArgs args = parse_cli(argc, argv, options);
    if (args.has("--help") || !args.has("--scene")) return {};
    const Scene scene = load_scene(*args.get("--scene"));
    if (scene.model.empty()) return {};
    for (const char* single_layer : {"--set", "--values"})
        if (args.has(single_layer))
            throw UsageError(std::string(single_layer) + " applies to the single layer; the scene " +
                             *args.get("--scene") + " opens the model " + scene.model);
    std::vector<std::string> out = {argv[0], "--model", scene.model};
    if (!scene.model_text.empty()) out.insert(out.end(), {"--text", scene.model_text});
    if (scene.focus.layer) out.insert(out.end(), {"--layer", std::to_string(*scene.focus.layer)});
    if (!args.has("--head") && scene.focus.head)
        out.insert(out.end(), {"--head", std::to_string(*scene.focus.head)});
    for (const char* flag : {"--stage", "--head", "--out", "--scale", "--scale-mode", "--threads"})
        if (auto v = args.get(flag)) out.insert(out.end(), {flag, *v});
    if (args.has("--grid")) out.emplace_back("--grid");
    return out;
}

}  // namespace

int run_render_command(int argc, char** argv) {
    if (has_model_flag(argc, argv)) return run_model_render_command(argc, argv);
    std::vector<std::string> model_args;
    const int rc = run_cli_command("attnviz render", [&] {
        model_args = model_scene_arguments(argc, argv);
        return model_args.empty() ? render_main(argc, argv) : 0;
    });
    if (model_args.empty()) return rc;
    std::vector<char*> model_argv;
    for (std::string& a : model_args) model_argv.push_back(a.data());
    return run_model_render_command(int(model_argv.size()), model_argv.data());
}

}  // namespace attnviz

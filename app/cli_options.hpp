// The GUI's command line: `attnviz [--scene FILE] [--screenshot OUT.png] ...` (the headless
// subcommands dump/render/... have their own parsers in io/). Parsed into Options; a bad flag is one
// line on stderr and exit code 2 (app/main.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <utility>

#include "app/app_state.hpp"

namespace attnviz::app {

struct Options {
    std::string scene;
    std::string screenshot;
    std::string stage;
    std::optional<int> head;
    std::optional<int> pin;                    // query row to pin at start (a figure for slides, the README)
    std::optional<std::pair<int, int>> hover;  // --hover ROW,COL: the cell a --screenshot hovers
    int frames = 5;
    std::vector<std::string> sets;
    std::optional<MainView> view;
    std::string lab;
    std::string model;                // --model DIR: open a real model
    std::optional<int> layer;         // --layer L (with --model)
    std::optional<std::string> text;  // --text TEXT (with --model)
    /// An encoder–decoder (t5, bart): --target TEXT, the decoder's input after its start token, and
    /// --family encoder|decoder|cross, the attention the views show.
    std::optional<std::string> target;
    std::optional<AttnFamily> family;
    std::string state_log;
    std::string frame_log;
    std::string script;             // --script FILE: scripted input (GUI tests), see app/script.hpp
    bool restore_workspace = true;  // --fresh: start without the saved workspace
    std::string tour;               // --tour FILE: start a guided tour (io/tour.hpp)
    std::optional<int> step;        // --step K: on its step K (1-based; with --tour)
    std::optional<float> ui_scale;
    int width = 1600, height = 1000;
};

struct UsageError {
    std::string message;
};

/// The --help text.
extern const char* const kUsage;

/// `attnviz --version`: "attnviz 0.1.0", the instruction set the binary was built for (a package is
/// built for the x86-64 baseline, a local build for this CPU), and where assets and shaders are read
/// from ("assets: /usr/share/attnviz/assets (next to the executable)").
std::string version_text();

/// A first launch opens the guided tour: no saved workspace, nothing asked for on the command line (a
/// scene, a model, --fresh, --tour), and not a batch or test run (--screenshot, --script).
bool is_first_launch(const Options& options, bool workspace_exists);

/// Parses argv; throws UsageError with a one-line message.
Options parse_args(int argc, char** argv, bool* help, bool* version);

}  // namespace attnviz::app

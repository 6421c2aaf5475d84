// What each view remembers between frames (zoom and pan, choices, the last hovered cell), one object
// per view instead of function-local statics. AppState owns them (state.views); load_scene_into()
// drops them, so a newly opened scene starts with fresh views and nothing of the previous scene's
// view leaks into it. Caches of computed results (textures, hover derivations) are not view state:
// they are keyed by the trace generation and live with their views' code.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "app/app_state.hpp"
#include "app/head_labels.hpp"
#include "app/panels/heatmap_widget.hpp"
#include "core/config.hpp"
#include "core/sampling.hpp"

namespace attnviz::app {

struct ControlsView {
    std::string stashed_source = "le chat noir dort sur le tapis";  // the second text while unticked
    bool cross = false;                                             // the cross-attention box is open
    std::string mask_path = "mask.npy";                             // the custom mask's .npy field
    std::map<std::string, std::string> refused;  // key -> the core's message for a value typed and refused
};

struct StageView {
    std::map<std::string, HeatmapViewState> zoom;  // zoom/pan per stage name
    HeatmapViewState q_zoom, k_zoom;               // the pinned row's Q row and Kᵀ column
    int chart_hover = -1;                          // last frame's bar under the mouse
};

struct HeadsGridView {
    std::string stage_name = "weights";
    std::string followed;  // the stage view's stage when the grid last followed it (see heads_grid.cpp)
    std::map<int, HeatmapViewState> zoom;  // per head
};

struct CompareView {
    bool phi_chosen = false;  // until the user picks one, φ follows the trace's config
    PhiKind phi = PhiKind::Elu1;
    HeatmapViewState zoom;  // one zoom for the three pictures: they show the same cells
    int hover_r = -1, hover_c = -1;
    bool images_hovered = false;  // the mouse is over a picture this frame (the wheel zooms, not scrolls)
};

struct PipelineView {
    int last_scrolled_cursor = -1;
    std::uint64_t last_scrolled_generation = 0;
};

struct LinesViewState {
    bool all_heads = true;  // every head in its own colour, else only the selected head
    int hover_side = 0;     // last frame's hovered token: 0 none, 1 query (left), 2 key (right)
    int hover_token = -1;
};

struct NextTokenViewState {
    // The distribution drawn last (recomputed when the trace or a knob changes).
    std::uint64_t generation = ~0ull;
    float temperature = -1, top_p = -1;
    int top_k = -1;
    SamplingDistribution dist;
    double kept_mass = 0;  // Σ softmax(logits / T) over the tokens sampling can draw
};

/// The right column's panels: how tall each had to be last frame to show all it drew without
/// scrolling (0: not drawn yet). The shell splits the column by them (explanation_panel_height).
struct SidePanelsView {
    float explain_need = 0;          // the Explanation panel (kept within a few lines: see the shell)
    float export_need = 0;           // the Export panel below it
    float tour_need = 0;             // the Start here panel, which takes the Export panel's place
    float presenting_tour_need = 0;  // the Start here panel over the picture in presentation mode
};

/// The Explanation panel's height in a right column `total` px tall, above a panel (Export, or the
/// tour's Start here) that needs `lower_need` px. When both fit, the lower panel gets what it needs
/// and the Explanation the rest; when they do not, the lower panel keeps at least `lower_share` of
/// the column (or its need, if less) and the Explanation gets what it needs of the rest, so neither
/// panel hides its text behind empty room in the other. A need of 0 (not measured yet) counts as
/// the lower panel's share.
float explanation_panel_height(float total, float explain_need, float lower_need, float lower_share);

struct ViewStates {
    ControlsView controls;
    StageView stage;
    HeadsGridView heads_grid;
    CompareView compare;
    PipelineView pipeline;
    HeadLabelCache head_labels;  // (a cache of results per trace, not view state; dropped with the views)
    LinesViewState lines;
    NextTokenViewState next_token;
    SidePanelsView side;
};

/// The views' state of `state`, created on first use (and after a scene load dropped it).
ViewStates& views(const AppState& state);
/// Fresh per-view memory for the document now in `state` (a scene or workspace was loaded): zooms and
/// choices start over, and what follows from the document is set at once -- the cross-attention box
/// is open exactly when the loaded config has a second text -- not a frame later when a panel draws.
void reset_views(AppState& state);

}  // namespace attnviz::app

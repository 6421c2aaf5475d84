// Shared between the heatmap engineer's view files (heatmap_panel.cpp, heads_grid.cpp,
// compare_view.cpp, export_panel.cpp); not part of the panels contract.
#pragma once

#include <string>

#include "app/app_state.hpp"

namespace attnviz::app {

void draw_heads_grid(AppState& state);    // heads_grid.cpp
void draw_compare_view(AppState& state);  // compare_view.cpp
void draw_model_view(AppState& state);    // model_view.cpp: every layer × head of a real model
void draw_lines_view(AppState& state);
/// A model's `probs` stage: the next-token distribution with T, top-k and top-p drawn on it.
void draw_next_token_view(AppState& state);  // next_token_view.cpp    // lines_view.cpp: queries joined to
                                             // keys, BertViz's head view
void draw_interventions_panel(AppState& state);  // interventions_panel.cpp: ablate, patch, attribute
void shutdown_compare_view();                    // compare_view.cpp: drops cached results

/// Index into state.trace->stages of the stage under the cursor, or -1.
int current_stage_index(const AppState& state);

/// Moves the cursor to stage `name` (by its position in trace->stage_names()); false if absent.
bool go_to_stage(AppState& state, const std::string& name);

}  // namespace attnviz::app

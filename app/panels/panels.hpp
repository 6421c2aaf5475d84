// One panel per file; each draws itself from AppState and edits it, and carries its own help text
// (a "(?)" marker with a tooltip, see help_marker()). Panels never compute traces: they edit
// state.config and the compute worker notices.
//
// Windows: the shell (app/main.cpp) owns the layout. It creates one fixed, positioned ImGui window per
// region (controls, pipeline strip, main view, formula panel + export panel below it, status bar)
// and calls the draw_* function INSIDE it, so these functions draw widgets into the current window
// (ImGui::GetContentRegionAvail() is their space) and never call Begin() for the region itself. Only
// draw_labs() creates its own floating windows. Fonts for emphasis: app_font() in app/fonts.hpp.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "app/app_state.hpp"

namespace attnviz::app {

/// A small "(?)" that shows `text` as a tooltip on hover (the panels' help).
void help_marker(const char* text);
/// Short usage hints ("wheel: zoom", ...) dimmed on one line, wrapped between hints when narrow;
/// each hint's box is a layout record "ID.k".
void hint_line(const std::string& id, std::initializer_list<const char*> hints);
/// Instead of ImGui::SameLine() before an item `width` wide: stays on the line if the item fits
/// before the window's right edge, else starts a new line.
void same_line_if_fits(float width);
/// Reports the last item's box as a layout record (checked by tests/gui/layout_test.sh).
void record_item_layout(const std::string& id);
/// Records the last item's screen rectangle as state.widget_rects[name] (the GUI tests click there).
void remember_item_rect(AppState& state, const std::string& name);
/// In a view opened with ImGuiWindowFlags_NoScrollWithMouse: the mouse wheel scrolls it, except over
/// a picture that zooms with the wheel. Call before EndChild.
void scroll_with_wheel(bool over_zoomable_picture);
/// Records the current window's screen rectangle as state.widget_rects[name] (the GUI tests).
void remember_window_rect(AppState& state, const std::string& name);
/// At the end of a window's content: how tall the window must be to show everything drawn in it
/// without scrolling (title bar and padding included).
float window_content_need();
/// At the end of a scrolling window's content: while more lies below what is in view, its bottom
/// edge fades out under "▼ more below" (a click there scrolls a page on), so a panel whose end is
/// out of sight does not look finished. The cue's rectangle is state.widget_rects[name] while it
/// shows (erased when it does not). Draws no item: the content's size is left alone.
void more_below_cue(AppState& state, const std::string& name);

// --- shell (app engineer) ------------------------------------------------------------------
void draw_controls_panel(AppState& state);  // panels/controls_panel.cpp: every Config knob
void draw_pipeline_strip(AppState& state);  // panels/pipeline_strip.cpp: stages, cursor, shapes
void draw_formula_panel(AppState& state);   // panels/formula_panel.cpp: formula + explanation
/// The Explanation panel's own words (headings, lines, hints) in a language, for the font atlas.
std::vector<const char*> formula_panel_words(TextLanguage language);
void draw_status_bar(AppState& state);  // panels/status_bar.cpp
/// A real model's next-token ranking, sampling knobs and append buttons (inside the controls panel).
void draw_next_token_panel(AppState& state);  // panels/next_token_panel.cpp
/// An encoder–decoder's target text box (the decoder's input), under the source text.
void draw_seq2seq_target(AppState& state);  // panels/seq2seq_controls.cpp
/// An encoder–decoder's attention family chooser: encoder, decoder or cross (one line of radio buttons).
void draw_attention_family(AppState& state);  // panels/seq2seq_controls.cpp

// --- views (heatmap engineer) --------------------------------------------------------------
/// The main area: the current stage as a heatmap (zoom/pan, hover derivation, pinned row with its
/// bar chart and the matching Q row / Kᵀ column highlighted, custom-mask editing), or the heads grid,
/// or the softmax-vs-linear compare view, depending on state.view.
void draw_main_view(AppState& state);  // panels/heatmap_panel.cpp (+ heads_grid.cpp, compare_view.cpp)
/// Export buttons (PNG ×1/×2/×4, CSV, .npy, heads grid) and folder field.
void draw_export_panel(AppState& state);  // panels/export_panel.cpp
/// Export the current stage's figure now (the Ctrl+E / F12 shortcuts call these).
void export_current_png(AppState& state);
/// Releases GPU resources held by the views (called before the GL context goes away).
void shutdown_views();

// --- labs (labs engineer) -------------------------------------------------------------------
/// Draws every open lab window; the Labs menu toggles them.
void draw_labs(AppState& state);
/// Ends every lab's state and background work (at shutdown, before the window goes).
void release_labs();
void draw_labs_menu(AppState& state);
/// The names --lab and tour steps accept: every lab's canonical name, then the aliases.
std::vector<std::string> lab_names();
/// The Start here panel of the guided tour (panels/tour_panel.cpp), when state.tour.open, in the
/// window (x, y, w, h). Returns the height it needs to show its step without scrolling (0: none drawn).
float draw_tour_panel(AppState& state, float x, float y, float w, float h);

}  // namespace attnviz::app

// Export panel: folder, scale and the four export buttons; export_current_png for Ctrl+E; and
// shutdown_views, which releases the views' GPU textures before the GL context goes away.
// GCC 12 false positive inside its AVX-512 intrinsics when Eigen multiplies (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <exception>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app/panels/export_actions.hpp"
#include "app/panels/heatmap_widget.hpp"
#include "app/panels/panels.hpp"
#include "app/panels/views_internal.hpp"

namespace attnviz::app {

namespace {

bool g_export_values = false;  // "values in cells" for figures (slides)

// Runs one export and reports the written path or the error in the status bar. Never throws: an
// unwritable folder is a message, not a crash.
void run_export(AppState& state, ExportKind kind) {
    if (!state.trace) {
        state.set_status("Nothing to export yet: the trace is still being computed.", true);
        return;
    }
    try {
        const std::string path =
            export_stage(*state.trace, current_stage_index(state), kind, state.export_dir, state.export_scale,
                         "", view_scale().mode, g_export_values);
        state.last_export_path = path;
        state.set_status("Exported " + path, false);
    } catch (const std::exception& e) {
        state.set_status(std::string("Export failed: ") + e.what(), true);
    }
}

}  // namespace

void export_current_png(AppState& state) {
    run_export(state, ExportKind::Png);
}

void draw_export_panel(AppState& state) {
    ImGui::TextUnformatted("Folder");
    ImGui::SameLine();
    help_marker(
        "Saves what the main view shows.\n"
        "  Export PNG: the current stage as a figure (title, formula, token labels, colour bar) -- the same "
        "picture `attnviz render` makes. Ctrl+E does this too.\n"
        "  Heads grid PNG: every head's matrix of this stage side by side.\n"
        "  CSV / .npy: the raw numbers of the current stage (masked cells are -inf); the CSV has a header "
        "row "
        "of key tokens and a first column of query tokens. Load a .npy with "
        "numpy.load().\n"
        "File names carry the stage, the head and the time, e.g. weights_h2_20261121-053012.png; nothing is "
        "ever overwritten. The folder is created if needed.");

    ImGui::SetNextItemWidth(-1);
    ImGui::InputTextWithHint("##export_dir", "folder (e.g. attnviz-exports)", &state.export_dir);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Folder for exported files (relative to where attnviz was started)");

    ImGui::TextUnformatted("Scale");
    for (int s : {1, 2, 4}) {
        ImGui::SameLine();
        const std::string label = "\u00d7" + std::to_string(s);
        if (ImGui::RadioButton(label.c_str(), state.export_scale == s)) state.export_scale = s;
    }
    ImGui::SameLine();
    help_marker("Figure size multiplier for PNG exports: ×2 and ×4 give sharper text for slides and print.");
    ImGui::Checkbox("values in cells", &g_export_values);
    ImGui::SameLine();
    help_marker(
        "Figures print each number in its cell when the cells are large enough to read it (small "
        "matrices, as on screen). Figures use the colour scale chosen above the heatmap.");

    ImGui::BeginDisabled(!state.trace);
    const float bw = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) * 0.5f;
    if (ImGui::Button("Export PNG", ImVec2(bw, 0))) run_export(state, ExportKind::Png);
    ImGui::SameLine();
    if (ImGui::Button("Heads grid PNG", ImVec2(bw, 0))) run_export(state, ExportKind::HeadsGridPng);
    if (ImGui::Button("CSV", ImVec2(bw, 0))) run_export(state, ExportKind::Csv);
    ImGui::SameLine();
    if (ImGui::Button(".npy", ImVec2(bw, 0))) run_export(state, ExportKind::Npy);
    if (ImGui::Button("SVG (vector text)", ImVec2(bw, 0))) run_export(state, ExportKind::Svg);
    ImGui::EndDisabled();

    if (!state.last_export_path.empty()) {
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextDisabled("last: %s", state.last_export_path.c_str());
        ImGui::PopTextWrapPos();
    }
}

void shutdown_views() {
    shutdown_compare_view();
    view_cache().clear();
}

}  // namespace attnviz::app

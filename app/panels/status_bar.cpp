// The status bar: the last error or export path on the left; on the right whether a newer trace is
// being computed, how long the last computation took, and the frame time.
#include <imgui.h>

#include <cmath>
#include <string>

#include "app/fonts.hpp"
#include "app/panels/panels.hpp"

namespace attnviz::app {

void draw_status_bar(AppState& state) {
    // Right-hand side first measured, so a long message on the left is clipped, not overlapped.
    char right[192];
    const double fps = state.frame_ms > 0 ? 1000.0 / state.frame_ms : 0.0;
    std::snprintf(right, sizeof right, "compute %.1f ms   frame %.1f ms (%.0f fps)", state.compute_ms,
                  state.frame_ms, fps);
    const char* updating = "updating…";
    const float spacing = ImGui::GetStyle().ItemSpacing.x;
    ImGui::PushFont(app_font(FontRole::Mono));
    const float right_text_w = ImGui::CalcTextSize(right).x;
    ImGui::PopFont();
    const float right_w = right_text_w + ImGui::CalcTextSize(updating).x + spacing * 3.0f;
    const float avail = ImGui::GetContentRegionAvail().x;

    ImGui::AlignTextToFramePadding();
    const float left_w = std::max(10.0f, avail - right_w - spacing);
    const ImVec2 start = ImGui::GetCursorScreenPos();
    ImGui::PushClipRect(start, ImVec2(start.x + left_w, start.y + ImGui::GetFrameHeight()), true);
    if (state.model.loading) {  // File ▸ Open model…: the phase and how far it is
        const std::string label = "loading model: " + state.model.load_phase;
        ImGui::ProgressBar(state.model.load_fraction,
                           ImVec2(std::min(left_w * 0.45f, ImGui::GetFontSize() * 22), 0), label.c_str());
        ImGui::SameLine();
    }
    if (!state.status.empty()) {
        if (state.status_is_error) ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.40f, 1.0f));
        ImGui::TextUnformatted(state.status.c_str());
        if (state.status_is_error) ImGui::PopStyleColor();
        if (ImGui::IsItemHovered() && ImGui::CalcTextSize(state.status.c_str()).x > left_w)
            ImGui::SetTooltip("%s", state.status.c_str());
    } else if (state.model.active) {
        ImGui::TextDisabled("%s%s%s", state.model.name.c_str(), state.model.note.empty() ? "" : "  —  ",
                            state.model.note.c_str());
    } else {
        const std::string where =
            state.scene_path.empty() ? state.scene_title : state.scene_title + "  (" + state.scene_path + ")";
        ImGui::TextDisabled("%s", where.c_str());
    }
    ImGui::PopClipRect();

    ImGui::SameLine(std::max(0.0f, avail - right_w + ImGui::GetStyle().WindowPadding.x));
    if (state.updating) {
        // A gently pulsing label so the user sees work in progress without a jumping spinner.
        const float a = 0.55f + 0.45f * float(std::sin(ImGui::GetTime() * 5.0));
        ImGui::TextColored(ImVec4(1.0f, 0.8f, 0.3f, a), "%s", updating);
    } else {
        ImGui::TextColored(ImVec4(0, 0, 0, 0), "%s", updating);  // keeps the layout still
    }
    ImGui::SameLine();
    ImGui::PushFont(app_font(FontRole::Mono));
    ImGui::TextDisabled("%s", right);
    ImGui::PopFont();
}

}  // namespace attnviz::app

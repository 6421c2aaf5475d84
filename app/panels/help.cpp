// help_marker: the "(?)" every control group carries. Hovering shows a short lesson, wrapped to a
// readable width.
#include <imgui.h>

#include "app/panels/panels.hpp"

namespace attnviz::app {

void help_marker(const char* text) {
    ImGui::SameLine();
    ImGui::TextDisabled("(?)");
    if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32.0f);
        ImGui::TextUnformatted(text);
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
    }
}

}  // namespace attnviz::app

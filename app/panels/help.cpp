// help_marker: the "(?)" every control group carries. Hovering shows a short lesson, wrapped to a
// readable width. hint_line: a dimmed row of short usage hints that wraps between hints, never inside.
// same_line_if_fits / record_item_layout: header rows that wrap instead of running past the region's
// edge at small windows or large UI scales, and report their boxes to the layout test.
#include <algorithm>
#include <string>

#include <imgui.h>

#include "app/panels/heatmap_widget.hpp"
#include "app/panels/panels.hpp"

namespace attnviz::app {

namespace {
float content_right() {
    return ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
}
}  // namespace

void same_line_if_fits(float width) {
    ImGui::SameLine();
    if (ImGui::GetCursorScreenPos().x + width > content_right()) ImGui::NewLine();
}

void record_item_layout(const std::string& id) {
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    layout_record(id, a.x, a.y, b.x - a.x, b.y - a.y,
                  ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMin().x, content_right());
}

void remember_item_rect(AppState& state, const std::string& name) {
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    state.widget_rects[name] = {a.x, a.y, b.x - a.x, b.y - a.y};
}

void scroll_with_wheel(bool over_zoomable_picture) {
    const float wheel = ImGui::GetIO().MouseWheel;
    if (wheel != 0.0f && !over_zoomable_picture && ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows))
        ImGui::SetScrollY(ImGui::GetScrollY() - wheel * 3.0f * ImGui::GetTextLineHeightWithSpacing());
}

void remember_window_rect(AppState& state, const std::string& name) {
    const ImVec2 a = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
    state.widget_rects[name] = {a.x, a.y, size.x, size.y};
}

float window_content_need() {
    // (the cursor, in window coordinates with the scroll added back, is one item spacing below the
    // last item)
    return ImGui::GetCursorPosY() - ImGui::GetStyle().ItemSpacing.y + ImGui::GetStyle().WindowPadding.y;
}

void more_below_cue(AppState& state, const std::string& name) {
    const float hidden = ImGui::GetScrollMaxY() - ImGui::GetScrollY();
    if (hidden < 1.0f) {
        state.widget_rects.erase(name);
        return;
    }
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const ImVec2 pos = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
    const float x0 = pos.x, x1 = pos.x + size.x - ImGui::GetStyle().ScrollbarSize;  // (left of the scrollbar)
    const float y1 = pos.y + size.y, y_solid = y1 - line * 1.1f, y0 = y_solid - line * 0.7f;
    ImVec4 bg = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
    bg.w = 1.0f;
    const ImU32 solid = ImGui::GetColorU32(bg), clear = ImGui::GetColorU32(ImVec4(bg.x, bg.y, bg.z, 0.0f));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->PushClipRect(ImVec2(x0, y0), ImVec2(x1, y1), true);
    dl->AddRectFilledMultiColor(ImVec2(x0, y0), ImVec2(x1, y_solid), clear, clear, solid, solid);
    dl->AddRectFilled(ImVec2(x0, y_solid), ImVec2(x1, y1), solid);
    const char* text = "▼ more below";
    const ImVec2 ts = ImGui::CalcTextSize(text);
    const ImVec2 at(pos.x + ImGui::GetWindowContentRegionMin().x, y1 - line * 0.55f - ts.y * 0.5f);
    // (over a button half hidden by the fade, the click stays the button's)
    const bool hot = ImGui::IsWindowHovered() && !ImGui::IsAnyItemHovered() &&
                     ImGui::IsMouseHoveringRect(ImVec2(x0, y_solid), ImVec2(x1, y1));
    dl->AddText(at, ImGui::GetColorU32(hot ? ImGuiCol_Text : ImGuiCol_TextDisabled), text);
    dl->PopClipRect();
    state.widget_rects[name] = {x0, y_solid, x1 - x0, y1 - y_solid};
    if (hot) {
        ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
        if (ImGui::IsMouseClicked(ImGuiMouseButton_Left))
            ImGui::SetScrollY(ImGui::GetScrollY() + std::max(line, size.y - 3.0f * line));
    }
}

void help_marker(const char* text) {
    same_line_if_fits(ImGui::CalcTextSize("(?)").x);
    ImGui::TextDisabled("(?)");
    if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32.0f);
        ImGui::TextUnformatted(text);
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
    }
}

void hint_line(const std::string& id, std::initializer_list<const char*> hints) {
    const char* sep = " \u00b7 ";
    const float sep_w = ImGui::CalcTextSize(sep).x;
    const float right = content_right();
    bool first = true;
    int k = 0;
    for (const char* hint : hints) {
        const float w = ImGui::CalcTextSize(hint).x;
        if (!first) {
            ImGui::SameLine(0.0f, 0.0f);
            // the next hint goes on a new line when it would cross the right edge
            if (ImGui::GetCursorScreenPos().x + sep_w + w > right) {
                ImGui::NewLine();
            } else {
                ImGui::TextDisabled("%s", sep);
                ImGui::SameLine(0.0f, 0.0f);
            }
        }
        ImGui::TextDisabled("%s", hint);
        record_item_layout(id + "." + std::to_string(k++));
        first = false;
    }
}

}  // namespace attnviz::app

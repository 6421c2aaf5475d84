// The Start here panel: the guided tour's current step (its title and what to notice), Back / Next,
// and, once the learner has wandered off to explore, a button that puts the step back on screen. The
// step is remembered while exploring and while the panel is closed (Help ▸ Tour reopens it there).
#include <imgui.h>
#include <imgui_internal.h>  // BringWindowToDisplayFront

#include <algorithm>
#include <string>

#include "app/fonts.hpp"
#include "app/panels/panels.hpp"
#include "app/text_wrap.hpp"
#include "app/tour_player.hpp"
#include "io/tour.hpp"

namespace attnviz::app {

float draw_tour_panel(AppState& state, float x, float y, float w, float h) {
    const Tour* tour = state.tour.tour.get();
    if (!tour || tour->steps.empty()) {
        state.tour.open = false;
        return 0.0f;
    }
    float need = 0.0f;
    const int n = int(tour->steps.size());
    const int k = std::max(0, std::min(state.tour.step, n - 1));
    const TourStep& step = tour->steps[std::size_t(k)];
    ImGui::SetNextWindowPos(ImVec2(x, y));
    ImGui::SetNextWindowSize(ImVec2(std::max(w, 1.0f), std::max(h, 1.0f)));
    bool open = true;
    const ImGuiWindowFlags flags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                   ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings;
    const TourWords& words = tour_words(tour->language);
    const std::string title = tour_fill(words.heading, k + 1, n) + "###tour";
    if (ImGui::Begin(title.c_str(), &open, flags)) {
        // Above a lab window the step opened (the Training lab covers most of the window), without
        // taking the keyboard from it; an open menu or combo stays on top.
        if (!ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId))
            ImGui::BringWindowToDisplayFront(ImGui::GetCurrentWindow());
        // The buttons stay in view at the bottom; the step's words scroll above them when the window
        // is small (a projector at a large UI scale).
        const ImGuiStyle& style = ImGui::GetStyle();
        const int footer_lines = tour->problems.empty() ? 1 : 2;
        const float footer_h = ImGui::GetFrameHeightWithSpacing() + style.ItemSpacing.y +
                               footer_lines * ImGui::GetTextLineHeightWithSpacing();
        const float text_top = ImGui::GetCursorPosY();
        ImGui::BeginChild("##tour_text", ImVec2(0, -footer_h));
        ImGui::PushFont(app_font(FontRole::Large));
        text_wrapped(step.title);  // (breaks between CJK characters too: the Chinese tour)
        ImGui::PopFont();
        ImGui::Spacing();
        text_wrapped(step.text);
        ImGui::Spacing();
        const bool on_screen = tour_step_on_screen(state);
        const bool loading =
            state.model.loading || !state.model.open_request.empty() || !state.model.resume.dir.empty();
        if (loading) {
            ImGui::TextDisabled("%s", words.opening);
        } else if (!on_screen) {
            // Exploring is welcome: the step waits here.
            ImGui::TextDisabled("%s", words.exploring);
            if (ImGui::Button(words.show_again)) apply_tour_step(state, k);
            remember_item_rect(state, "tour_show_again");
        }
        // What shows everything without scrolling: the words' height (the child has no padding), the
        // footer and the window's padding below it.
        need = text_top + (ImGui::GetCursorPosY() - style.ItemSpacing.y) + footer_h + style.WindowPadding.y;
        more_below_cue(state, "tour_more");
        ImGui::EndChild();
        ImGui::Separator();
        ImGui::BeginDisabled(k == 0);
        if (ImGui::Button(words.back)) tour_back(state);
        ImGui::EndDisabled();
        remember_item_rect(state, "tour_back");
        ImGui::SameLine();
        if (k + 1 < n) {
            if (ImGui::Button(words.next)) tour_next(state);
        } else if (ImGui::Button(words.finish)) {
            open = false;
        }
        remember_item_rect(state, "tour_next");
        ImGui::SameLine();
        if (ImGui::SmallButton(words.start_over)) apply_tour_step(state, 0);
        remember_item_rect(state, "tour_start_over");
        if (!tour->problems.empty())
            ImGui::TextDisabled("%s", tour_fill(words.skipped, int(tour->problems.size())).c_str());
        ImGui::TextDisabled("%s", words.close_hint);
        remember_window_rect(state, "tour_panel");
    }
    ImGui::End();
    if (!open) state.tour.open = false;
    return need;
}

}  // namespace attnviz::app

// The Labs menu and the lab windows: one floating window per lab, toggled from the menu or opened at
// start-up with `attnviz --lab NAME` (NAME:TAB selects a tab, e.g. `--lab temperature:2`).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/panels/heatmap_widget.hpp"
#include "app/panels/lab_common.hpp"
#include "app/panels/panels.hpp"

namespace attnviz::app {

namespace {

struct LabEntry {
    const char* name;     // what --lab accepts (canonical)
    const char* alias;    // a short alternative
    const char* title;    // window title and menu item
    const char* tooltip;  // menu item's hint
    void (*draw)(AppState&, LabContext&);
    bool open = false;
    LabContext ctx;
    // The app window's work area and UI scale the lab window was last placed for (0: never).
    float fitted_w = 0, fitted_h = 0, fitted_scale = 0;
};

LabEntry* labs_table(int* count) {
    static LabEntry labs[] = {
        {"positional_encoding",
         "pe",
         "Lab: Positional encoding",
         "Sinusoidal codes, similarity of positions, shift = rotation, RoPE",
         draw_lab_positional,
         false,
         {}},
        {"scoring",
         "nadaraya_watson",
         "Lab: Scoring (Nadaraya–Watson)",
         "Kernel regression is attention; additive vs dot-product scores",
         draw_lab_scoring,
         false,
         {}},
        {"temperature",
         "scaling",
         "Lab: Temperature & 1/√d scaling",
         "How T and 1/√d_k shape the weights; entropy; saturation",
         draw_lab_temperature,
         false,
         {}},
        {"softmax_vs_linear",
         "linear",
         "Lab: Softmax vs linear attention",
         "Implied weights of linear attention and the measured O(n²) vs O(n) cost",
         draw_lab_linear,
         false,
         {}},
        {"size",
         "params",
         "Lab: How big is attention?",
         "Parameter counts (4·d_model²), GPT-3's numbers, the quadratic memory wall",
         draw_lab_size,
         false,
         {}},
        {"masks",
         "mask",
         "Lab: Masks",
         "Causal, bidirectional, sliding-window, padding and prefix masks on the same scores",
         draw_lab_masks,
         false,
         {}},
        {"designed_heads",
         "heads",
         "Lab: Designed heads",
         "Hand-built W_Q, W_K that attend to the previous token, the first token, ...",
         draw_lab_heads,
         false,
         {}},
        {"training",
         "train",
         "Lab: Training",
         "Train a small transformer live and watch a previous-token and an induction head form",
         draw_lab_training,
         false,
         {}},
    };
    *count = int(sizeof labs / sizeof labs[0]);
    return labs;
}

// Opens the lab named `request` ("name" or "name:tab"), or closes it ("-name"); reports an unknown
// name.
void open_requested_lab(AppState& state, std::string name) {
    const bool close = !name.empty() && name[0] == '-';
    if (close) name = name.substr(1);
    int tab = -1;
    const auto colon = name.find(':');
    if (colon != std::string::npos) {
        tab = std::atoi(name.c_str() + colon + 1);
        name = name.substr(0, colon);
    }
    int count = 0;
    LabEntry* labs = labs_table(&count);
    std::string names;
    for (int i = 0; i < count; ++i) {
        if (name == labs[i].name || name == labs[i].alias) {
            if (close) {
                if (labs[i].open) labs[i].ctx.closing = true;
                labs[i].open = false;
                return;
            }
            labs[i].open = true;
            labs[i].ctx.requested_tab = tab;
            ImGui::SetWindowFocus(labs[i].title);
            return;
        }
        names += std::string(i ? ", " : "") + labs[i].name;
    }
    state.set_status("there is no lab '" + name + "'; the labs are " + names, true);
}

// Opens (or, for "-name", closes) the labs named in state.requested_lab (comma-separated) and clears
// the request.
void handle_request(AppState& state) {
    if (state.requested_lab.empty()) return;
    const std::string request = state.requested_lab;
    state.requested_lab.clear();
    std::size_t start = 0;
    while (start <= request.size()) {
        const auto comma = request.find(',', start);
        const std::string one =
            request.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!one.empty()) open_requested_lab(state, one);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
}

}  // namespace

std::vector<std::string> lab_names() {
    int count = 0;
    const LabEntry* labs = labs_table(&count);
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) names.push_back(labs[i].name);
    for (int i = 0; i < count; ++i) names.push_back(labs[i].alias);
    return names;
}

namespace {

/// Canonical names of the open labs.
std::vector<std::string> open_lab_names() {
    int count = 0;
    LabEntry* labs = labs_table(&count);
    std::vector<std::string> out;
    for (int i = 0; i < count; ++i)
        if (labs[i].open) out.push_back(labs[i].name);
    return out;
}

}  // namespace

void draw_labs_menu(AppState& state) {
    handle_request(state);
    int count = 0;
    LabEntry* labs = labs_table(&count);
    for (int i = 0; i < count; ++i) {
        if (ImGui::MenuItem(labs[i].title + 5 /* without "Lab: " */, nullptr, labs[i].open)) {
            labs[i].open = !labs[i].open;
            if (!labs[i].open) labs[i].ctx.closing = true;
        }
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", labs[i].tooltip);
    }
}

void release_labs() {
    // Each lab's state goes now, while the window and every other part of the program are alive: a
    // lab's background work (the Training lab's thread) ends here, not during static destruction.
    int count = 0;
    LabEntry* labs = labs_table(&count);
    for (int i = 0; i < count; ++i) labs[i].ctx = LabContext{};
}

void draw_labs(AppState& state) {
    handle_request(state);
    int count = 0;
    LabEntry* labs = labs_table(&count);
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    int shown = 0;
    for (int i = 0; i < count; ++i) {
        LabEntry& lab = labs[i];
        if (!lab.open) {
            if (lab.ctx.closing) {
                // Give the lab one call to stop its background work (the cost sweep).
                lab.draw(state, lab.ctx);
                lab.ctx.closing = false;
            }
            continue;
        }
        // A large window over the main view, staggered so several labs do not hide each other
        // completely, and never past the right edge (on a 1280-wide screen the stagger alone would
        // push every lab after the first partly off screen). Placed like this when it first appears and
        // again whenever the app's window or UI scale changes (a lab must not be left hanging off a
        // smaller window); in between the learner may move and resize it.
        const float w = std::min(vp->WorkSize.x - 40.0f, 1240.0f * state.ui_scale);
        const float h = vp->WorkSize.y - 24.0f - 18.0f * i;
        const float x = std::min(std::max(10.0f, (vp->WorkSize.x - w) * 0.5f) + 24.0f * i,
                                 std::max(10.0f, vp->WorkSize.x - w - 10.0f));
        const bool refit = lab.fitted_w != vp->WorkSize.x || lab.fitted_h != vp->WorkSize.y ||
                           lab.fitted_scale != state.ui_scale;
        lab.fitted_w = vp->WorkSize.x;
        lab.fitted_h = vp->WorkSize.y;
        lab.fitted_scale = state.ui_scale;
        const ImGuiCond cond = refit ? ImGuiCond_Always : ImGuiCond_FirstUseEver;
        ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + x, vp->WorkPos.y + 12.0f + 18.0f * i), cond);
        ImGui::SetNextWindowSize(ImVec2(w, h), cond);
        bool open = true;
        const std::size_t first_record = layout_records().size();
        if (ImGui::Begin(lab.title, &open, ImGuiWindowFlags_NoSavedSettings)) {
            // The window itself, which must lie inside the app's window (the layout test).
            const ImVec2 wp = ImGui::GetWindowPos(), ws = ImGui::GetWindowSize();
            layout_record(std::string(lab.name) + ".window", wp.x, wp.y, ws.x, ws.y, vp->WorkPos.x,
                          vp->WorkPos.x + vp->WorkSize.x);
            ImGui::PushID(lab.name);
            lab.draw(state, lab.ctx);
            ImGui::PopID();
        }
        ImGui::End();
        // (the boxes this lab drew belong to its window, not to the main view under it)
        for (std::size_t k = first_record; k < layout_records().size(); ++k)
            layout_records()[k].group = lab.name;
        if (!open) {
            lab.open = false;
            lab.ctx.closing = true;
        }
        ++shown;
    }
    (void)shown;
    state.open_labs = open_lab_names();  // (the workspace saves them)
}

}  // namespace attnviz::app

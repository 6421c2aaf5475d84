// The pipeline strip: the trace's stages as a row of chips grouped by phase
// (embed → project → score → normalise → combine), the current one highlighted, each showing its
// shape. Step through with Prev/Next (← →), Home/End, Play/Pause (Space) and pick the head (↑ ↓).
#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <string>
#include <vector>

#include "app/fonts.hpp"
#include "app/panels/panels.hpp"
#include "app/panels/view_state.hpp"

namespace attnviz::app {

namespace {

// Splits "n×d_k = 8×16" into its symbolic and numeric halves.
void split_shape(const std::string& shape, std::string* symbolic, std::string* numeric) {
    const auto eq = shape.find(" = ");
    if (eq == std::string::npos) {
        *symbolic = "";
        *numeric = shape;
    } else {
        *symbolic = shape.substr(0, eq);
        *numeric = shape.substr(eq + 3);
    }
}

ImU32 phase_colour(const std::string& phase, float alpha) {
    ImVec4 c(0.45f, 0.45f, 0.5f, alpha);
    if (phase == "embed") c = ImVec4(0.36f, 0.55f, 0.80f, alpha);
    if (phase == "project") c = ImVec4(0.42f, 0.68f, 0.45f, alpha);
    if (phase == "score") c = ImVec4(0.85f, 0.60f, 0.25f, alpha);
    if (phase == "normalise") c = ImVec4(0.80f, 0.38f, 0.38f, alpha);
    if (phase == "combine") c = ImVec4(0.62f, 0.45f, 0.78f, alpha);
    if (phase == "output") c = ImVec4(0.25f, 0.66f, 0.66f, alpha);
    return ImGui::GetColorU32(c);
}

// A real model's strip runs end to end: the embeddings, the blocks (the one on screen with every stage,
// the others as chips that open them), the final norm, logits and probabilities, then the summaries.
// A stage's group is its phase for the single layer, and its place in the model for a model.
std::string strip_group(const AppState& state, const std::string& name) {
    const std::string phase = stage_phase(name);
    if (!state.model.active) return phase;
    if (name == "embed") return "embeddings";
    if (phase == "output") return state.model.encoder ? "masked word" : "next token";
    if (name == "residual_stream" || name == "rollout") return "whole model";
    return "block " + std::to_string(state.model.layer);
}

const char* group_phase(const std::string& group) {
    if (group == "embeddings") return "embed";
    if (group == "next token" || group == "masked word") return "output";
    if (group.rfind("block ", 0) == 0 || group == "whole model") return "";
    return nullptr;  // the group is a phase
}

void advance_play(AppState& state) {
    if (!state.playing) return;
    const double now = ImGui::GetTime();
    if (now - state.play_last_advance < state.play_seconds) return;
    state.play_last_advance = now;
    if (stage_index(state) + 1 >= stage_count(state)) {
        state.playing = false;  // stop on the last stage rather than jump back silently
        return;
    }
    step_stage(state, +1);
}

}  // namespace

void draw_pipeline_strip(AppState& state) {
    advance_play(state);

    // --- transport row --------------------------------------------------------------------------
    const int count = stage_count(state);
    const int at = stage_index(state);
    ImGui::BeginDisabled(count == 0 || at <= 0);
    if (ImGui::Button("◀ Prev")) step_stage(state, -1);
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(count == 0 || at >= count - 1);
    if (ImGui::Button("Next ▶")) step_stage(state, +1);
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::Button(state.playing ? "❚❚ Pause" : "▶ Play", ImVec2(ImGui::GetFontSize() * 5.5f, 0))) {
        state.playing = !state.playing;
        if (state.playing && at >= count - 1) set_stage_index(state, 0);  // replay
        state.play_last_advance = ImGui::GetTime();
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7.0f);
    ImGui::SliderFloat("##speed", &state.play_seconds, 0.2f, 5.0f, "%.1f s / stage");
    help_marker(
        "Step through the computation one stage at a time.\n"
        "← / →  previous / next stage\nHome / End  first / last stage\nSpace  play / pause\n"
        "↑ / ↓  previous / next head (for per-head stages)\n"
        "Keys work whenever no text field is being edited.");

    // Head selector: one small button per head while they fit, a slider beyond that.
    const bool per_head = current_stage_is_per_head(state);
    if (state.trace && state.model.active) {
        // A real model: the layer first (PgUp / PgDn), then its heads.
        const int L = state.model.n_layer;
        ImGui::SameLine(0, ImGui::GetFontSize() * 1.5f);
        ImGui::AlignTextToFramePadding();
        ImGui::TextUnformatted("layer");
        ImGui::SameLine();
        if (L <= 12) {
            for (int i = 0; i < L; ++i) {
                if (i > 0) ImGui::SameLine(0, 2);
                const bool active = i == state.model.layer;
                if (active)
                    ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
                const std::string label = std::to_string(i) + "##layer";
                if (ImGui::Button(label.c_str(), ImVec2(ImGui::GetFrameHeight() * 1.2f, 0)))
                    state.model.layer = i;
                if (active) ImGui::PopStyleColor();
            }
        } else {
            ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8.0f);
            ImGui::SliderInt("##layer", &state.model.layer, 0, L - 1);
        }
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("layer of the model (PgUp / PgDn)");
    }
    if (state.trace) {
        const int h = state.trace->heads;
        ImGui::SameLine(0, ImGui::GetFontSize() * 1.5f);
        ImGui::AlignTextToFramePadding();
        ImGui::TextUnformatted("head");
        ImGui::SameLine();
        ImGui::BeginDisabled(!per_head);
        if (h <= 12) {
            for (int i = 0; i < h; ++i) {
                if (i > 0) ImGui::SameLine(0, 2);
                const bool active = i == state.head;
                if (active)
                    ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
                const std::string label = std::to_string(i);
                if (ImGui::Button(label.c_str(), ImVec2(ImGui::GetFrameHeight() * 1.2f, 0))) state.head = i;
                if (active) ImGui::PopStyleColor();
            }
        } else {
            ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10.0f);
            ImGui::SliderInt("##head", &state.head, 0, h - 1);
        }
        ImGui::EndDisabled();
        if (!per_head) {
            ImGui::SameLine();
            ImGui::TextDisabled("(this stage is shared by all heads)");
        }
        ImGui::SameLine(0, ImGui::GetFontSize() * 1.5f);
        ImGui::TextDisabled("stage %d of %d", stage_index(state) + 1, count);
    }

    // --- the chips ------------------------------------------------------------------------------
    if (!state.trace) {
        const bool failed = state.model.active && state.model.run_failed && state.status_is_error;
        ImGui::TextDisabled(!state.issues.empty()
                                ? "Nothing to show yet: fix the settings marked in red on the left."
                            : failed ? "Nothing to show yet: the model cannot read the text (below)."
                                     : "Computing the first trace…");
        return;
    }
    const std::vector<std::string> names = state.trace->stage_names();
    int at_chip = stage_index(state);
    ImFont* bold = app_font(FontRole::Bold);
    ImFont* small = app_font(FontRole::Small);
    ImFont* regular = app_font(FontRole::Regular);
    float pad = 5.0f;
    const float line = ImGui::GetTextLineHeight();
    const float small_line = small->FontSize + 1.0f;
    const float chip_h = line + small_line * 2.0f + pad * 1.5f;
    const float phase_label_h = line + 2.0f;

    // Chip widths; when the strip would not fit, names drop to the small font and padding shrinks
    // (a scrollbar remains the last resort for very long pipelines).
    ImFont* name_font = bold;
    auto natural_width = [&](ImFont* nf, float p) {
        float total = 0;
        std::string prev_phase;
        for (const std::string& name : names) {
            const Stage* s = state.trace->get(name, 0);
            if (!s) s = state.trace->get(name, -1);
            std::string sym, num;
            if (s) split_shape(s->shape_text(), &sym, &num);
            const float wn = nf->CalcTextSizeA(nf->FontSize, FLT_MAX, 0, name.c_str()).x;
            const float ws = small->CalcTextSizeA(small->FontSize, FLT_MAX, 0, sym.c_str()).x;
            const float wv = small->CalcTextSizeA(small->FontSize, FLT_MAX, 0, num.c_str()).x;
            total += std::max({wn, ws, wv, line * 2.0f}) + p * 3.0f;
            const std::string ph = strip_group(state, name);
            if (!prev_phase.empty() && ph != prev_phase) total += line + p;
            prev_phase = ph;
        }
        return total;
    };
    if (natural_width(bold, pad) > ImGui::GetContentRegionAvail().x) {
        pad = 3.0f;
        name_font = small;
    }

    ImGui::BeginChild("##chips", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    float x = origin.x;
    std::string phase_prev;
    float phase_start_x = x;
    int& last_scrolled_cursor = views(state).pipeline.last_scrolled_cursor;
    std::uint64_t& last_scrolled_generation = views(state).pipeline.last_scrolled_generation;

    auto close_phase = [&](float end_x) {
        if (phase_prev.empty()) return;
        // Phase label and a coloured rule spanning its chips; a phase of one narrow chip gets an
        // abbreviated label so neighbours never run together.
        const char* gp = group_phase(phase_prev);
        dl->AddRectFilled(ImVec2(phase_start_x, origin.y + phase_label_h - 3),
                          ImVec2(end_x, origin.y + phase_label_h - 1),
                          phase_colour(gp ? std::string(gp) : phase_prev, 1.0f));
        std::string label = phase_prev;
        const float span = end_x - phase_start_x;
        if (small->CalcTextSizeA(small->FontSize, FLT_MAX, 0, label.c_str()).x > span - 2)
            label = label.substr(0, 4) + ".";
        ImFont* lf = regular->CalcTextSizeA(regular->FontSize, FLT_MAX, 0, label.c_str()).x <= span - 2
                         ? regular
                         : small;
        dl->PushClipRect(ImVec2(phase_start_x, origin.y), ImVec2(end_x + 2, origin.y + phase_label_h), true);
        dl->AddText(lf, lf->FontSize,
                    ImVec2(phase_start_x + 2, origin.y + (regular->FontSize - lf->FontSize)),
                    ImGui::GetColorU32(ImGuiCol_TextDisabled), label.c_str());
        dl->PopClipRect();
    };

    // The blocks not on screen, as chips that open them: one per block while there are at most 8,
    // else one for all those before and one for all those after the block on screen.
    const int L = state.model.n_layer, current_layer = state.model.layer;
    auto block_chips = [&](int from, int to) {  // blocks [from, to)
        if (!state.model.active || from >= to) return;
        const bool each = L <= 8;
        for (int k = from; k < to; k = each ? k + 1 : to) {
            const std::string label = each || to - from == 1
                                          ? "block " + std::to_string(k)
                                          : "blocks " + std::to_string(from) + "–" + std::to_string(to - 1);
            const int target = each ? k : (to <= current_layer ? current_layer - 1 : current_layer + 1);
            ImGui::PushFont(small);
            const float w = ImGui::CalcTextSize(label.c_str()).x + pad * 2.0f;
            ImGui::PopFont();
            const ImVec2 p0(x, origin.y + phase_label_h), p1(x + w, p0.y + chip_h);
            ImGui::SetCursorScreenPos(p0);
            const std::string id = "##block" + std::to_string(k);
            if (ImGui::InvisibleButton(id.c_str(), ImVec2(w, chip_h))) state.model.layer = target;
            const bool hovered = ImGui::IsItemHovered();
            if (hovered)
                ImGui::SetTooltip("%s: click to open block %d with every stage", label.c_str(), target);
            state.widget_rects["strip_block_" + std::to_string(k)] = {p0.x, p0.y, w, chip_h};
            dl->AddRect(p0, p1, ImGui::GetColorU32(hovered ? ImGuiCol_Text : ImGuiCol_TextDisabled), 4.0f);
            dl->AddText(small, small->FontSize, ImVec2(x + pad, p0.y + (chip_h - small->FontSize) * 0.5f),
                        ImGui::GetColorU32(ImGuiCol_TextDisabled), label.c_str());
            x += w + pad;
            dl->AddText(regular, regular->FontSize, ImVec2(x, p0.y + chip_h * 0.5f - line * 0.5f),
                        ImGui::GetColorU32(ImGuiCol_TextDisabled), "→");
            x += ImGui::CalcTextSize("→").x + pad;
        }
    };
    bool blocks_before_done = false, blocks_after_done = false;

    for (int i = 0; i < int(names.size()); ++i) {
        const std::string& name = names[std::size_t(i)];
        const std::string phase = stage_phase(name);
        const std::string group = strip_group(state, name);
        if (group != phase_prev) {
            if (!phase_prev.empty()) {
                close_phase(x - pad);
                // An arrow between phases: data flows left to right.
                dl->AddText(regular, regular->FontSize,
                            ImVec2(x, origin.y + phase_label_h + chip_h * 0.5f - line * 0.5f),
                            ImGui::GetColorU32(ImGuiCol_TextDisabled), "→");
                x += ImGui::CalcTextSize("→").x + pad;
            }
            // Entering the block on screen: the blocks before it; leaving it: the blocks after it.
            if (state.model.active && group.rfind("block ", 0) == 0 && !blocks_before_done) {
                block_chips(0, current_layer);
                blocks_before_done = true;
            } else if (state.model.active && blocks_before_done && !blocks_after_done &&
                       group.rfind("block ", 0) != 0) {
                block_chips(current_layer + 1, L);
                blocks_after_done = true;
            }
            phase_prev = group;
            phase_start_x = x;
        }
        const Stage* s =
            state.trace->get(name, std::clamp(state.head, 0, std::max(0, state.trace->heads - 1)));
        if (!s) s = state.trace->get(name, -1);
        std::string symbolic, numeric;
        if (s) split_shape(s->shape_text(), &symbolic, &numeric);
        ImGui::PushFont(name_font);
        const float w_name = ImGui::CalcTextSize(name.c_str()).x;
        ImGui::PopFont();
        ImGui::PushFont(small);
        const float w_num = ImGui::CalcTextSize(numeric.c_str()).x;
        const float w_sym = ImGui::CalcTextSize(symbolic.c_str()).x;
        ImGui::PopFont();
        const float w = std::max({w_name, w_num, w_sym, line * 2.0f}) + pad * 2.0f;

        const ImVec2 p0(x, origin.y + phase_label_h);
        const ImVec2 p1(x + w, p0.y + chip_h);
        ImGui::SetCursorScreenPos(p0);
        ImGui::PushID(i);
        const bool clicked = ImGui::InvisibleButton("##chip", ImVec2(w, chip_h));
        const bool hovered = ImGui::IsItemHovered();
        ImGui::PopID();
        state.widget_rects["strip_chip_" + name] = {p0.x, p0.y, w, chip_h};
        if (clicked) {
            set_stage_index(state, i);
            at_chip = i;
        }
        const bool current = i == at_chip;

        dl->AddRectFilled(p0, p1, phase_colour(phase, current ? 0.95f : hovered ? 0.45f : 0.22f), 4.0f);
        if (current) dl->AddRect(p0, p1, IM_COL32(255, 255, 255, 230), 4.0f, 0, 2.0f);
        const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
        const ImU32 dim = current ? IM_COL32(235, 235, 235, 255) : ImGui::GetColorU32(ImGuiCol_TextDisabled);
        dl->AddText(name_font, name_font->FontSize, ImVec2(x + (w - w_name) * 0.5f, p0.y + pad * 0.5f), text,
                    name.c_str());
        dl->AddText(small, small->FontSize, ImVec2(x + (w - w_sym) * 0.5f, p0.y + pad * 0.5f + line), dim,
                    symbolic.c_str());
        dl->AddText(small, small->FontSize,
                    ImVec2(x + (w - w_num) * 0.5f, p0.y + pad * 0.5f + line + small_line), text,
                    numeric.c_str());
        if (hovered && s) {
            ImGui::BeginTooltip();
            ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28.0f);
            ImGui::TextUnformatted(s->title.c_str());
            ImGui::TextDisabled("%s   %s", s->shape_text().c_str(), s->head >= 0 ? "(one per head)" : "");
            ImGui::PopTextWrapPos();
            ImGui::EndTooltip();
        }
        // Keep the current chip in view when stepping moves it off-screen.
        if (current && (last_scrolled_cursor != i || last_scrolled_generation != state.trace_generation)) {
            const float left = p0.x - ImGui::GetWindowPos().x, right = p1.x - ImGui::GetWindowPos().x;
            if (left < 0 || right > ImGui::GetWindowWidth()) ImGui::SetScrollHereX(0.5f);
            last_scrolled_cursor = i;
            last_scrolled_generation = state.trace_generation;
        }
        x += w + pad;
    }
    close_phase(x - pad);
    ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + phase_label_h + chip_h));
    ImGui::Dummy(ImVec2(x - origin.x, 1));
    ImGui::EndChild();
}

}  // namespace attnviz::app

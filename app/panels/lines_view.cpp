// The lines view (BertViz's head view): the query tokens on the left, the key tokens on the right, a
// line from each query to each key as wide and as opaque as the weight, one colour per head; every
// head at once or the selected one; hovering a token keeps only its lines. The geometry is
// io/lines_figure.hpp's plan_lines(), the same the PNG and SVG exports draw.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>

#include "app/fonts.hpp"
#include "app/panels/export_actions.hpp"
#include "app/panels/panels.hpp"
#include "app/panels/view_state.hpp"
#include "app/panels/views_internal.hpp"
#include "io/lines_figure.hpp"

namespace attnviz::app {

namespace {

constexpr const char* kLinesHelp =
    "Each token on the left (a query) is joined to each token on the right (a key) by a line whose "
    "width and opacity are the attention weight: a thick, solid line means the query takes much of its "
    "output from that key. Colours are heads; with all heads, the head chosen above is drawn on top. "
    "Hover a token to keep only its lines: on the left, where "
    "it looks; on the right, who looks at it. Weights below 1 % are not drawn. An encoder–decoder's "
    "cross-attention joins the target tokens (left) to the source tokens (right).";

ImU32 line_colour(const LineSegment& l) {
    return IM_COL32(l.colour.r, l.colour.g, l.colour.b,
                    int(std::lround(255.0f * std::clamp(l.opacity, 0.0f, 1.0f))));
}

std::string lines_title(const AppState& state, const LinesOptions& o) {
    std::string t = state.model.active ? "layer " + std::to_string(state.model.layer) + " · " : std::string();
    if (state.model.active && state.model.seq2seq)
        t = std::string(state.model.family == AttnFamily::Encoder   ? "encoder "
                        : state.model.family == AttnFamily::Decoder ? "decoder "
                                                                    : "cross (target → source) ") +
            t;
    t += o.head < 0 ? "every head" : "head " + std::to_string(o.head);
    return "attention lines · " + t;
}

void export_lines_now(AppState& state, const LinesOptions& o, ExportKind kind) {
    try {
        const LinesInput in = lines_input(*state.trace, lines_title(state, o), attention_stage(state));
        LinesOptions export_o;  // the figure's own sizes, with the view's choices
        export_o.head = o.head;
        export_o.hover_side = o.hover_side;
        export_o.hover_token = o.hover_token;
        const std::string path = export_lines(in, export_o, kind, state.export_dir, state.export_scale);
        state.last_export_path = path;
        state.set_status("Exported " + path, false);
    } catch (const std::exception& e) {
        state.set_status(std::string("Export failed: ") + e.what(), true);
    }
}

}  // namespace

void draw_lines_view(AppState& state) {
    LinesViewState& v = views(state).lines;
    const Trace& t = *state.trace;
    const char* stage = attention_stage(state);  // "cross_weights": an encoder–decoder's cross-attention
    const bool cross = std::string(stage) == "cross_weights";
    draw_attention_family(state);
    if (!t.get(stage, 0)) {
        ImGui::TextDisabled(
            "This trace has no attention weights to draw (at this length the layer's heads "
            "are summarised: pick the layer again to compute them).");
        return;
    }
    // --- the row of choices --------------------------------------------------------------------------
    ImGui::Checkbox("all heads", &v.all_heads);
    remember_item_rect(state, "lines_all_heads");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Every head at once, one colour each; untick to see only head %d (↑/↓ change it)",
                          state.head);
    ImGui::SameLine();
    help_marker(kLinesHelp);
    ImGui::SameLine();
    LinesOptions o;
    o.head = v.all_heads ? -1 : std::clamp(state.head, 0, t.heads - 1);
    o.front_head = std::clamp(state.head, 0, t.heads - 1);  // (all heads: the chosen one on top)
    if (v.hover_side != 0) {
        o.hover_side = v.hover_side == 1 ? LinesSide::Query : LinesSide::Key;
        o.hover_token = v.hover_token;
    } else if (state.model.active && state.model.seq2seq && state.pinned_row >= 0 &&
               state.pinned_row < t.get(stage, 0)->n_rows()) {
        // the pinned row (the one that wrote the appended token): its lines only
        o.hover_side = LinesSide::Query;
        o.hover_token = state.pinned_row;
    }
    if (ImGui::SmallButton("PNG")) export_lines_now(state, o, ExportKind::Png);
    remember_item_rect(state, "lines_export_png");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Export this picture as PNG (export scale, folder: Export panel)");
    ImGui::SameLine();
    if (ImGui::SmallButton("SVG")) export_lines_now(state, o, ExportKind::Svg);
    remember_item_rect(state, "lines_export_svg");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Export this picture as SVG: every line a vector line");
    // The heads' colours, a legend that is also the head selector.
    for (int h = 0; h < t.heads; ++h) {
        ImGui::SameLine();
        const Rgb8 c = head_colour(h);
        const bool shown = v.all_heads || h == o.head;
        ImGui::PushStyleColor(ImGuiCol_Button,
                              ImVec4(c.r / 255.0f, c.g / 255.0f, c.b / 255.0f, shown ? 0.85f : 0.25f));
        const std::string label = std::to_string(h) + "##lines_head";
        if (ImGui::SmallButton(label.c_str())) {
            state.head = h;
            v.all_heads = false;
        }
        ImGui::PopStyleColor();
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("head %d: show it alone", h);
    }

    // --- the picture ---------------------------------------------------------------------------------
    LinesInput in;
    try {
        in = lines_input(t, "", stage);
    } catch (const std::exception& e) {
        ImGui::TextDisabled("%s", e.what());
        return;
    }
    ImGui::BeginChild("##lines", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollWithMouse);
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImFont* mono = app_font(FontRole::Mono);
    float label_w = ImGui::GetFontSize() * 3.0f;
    for (const auto* list : {&in.queries, &in.keys})
        for (const std::string& s : *list)
            label_w = std::max(label_w, mono->CalcTextSizeA(mono->FontSize, 1e9f, 0, s.c_str()).x + 12.0f);
    label_w = std::min(label_w, avail.x * 0.25f);
    const int rows = int(std::max(in.queries.size(), in.keys.size()));
    o.label_width = label_w;
    o.gap = std::clamp(avail.x - 2 * label_w - 16.0f, 120.0f, 900.0f);
    o.row_height = std::clamp(avail.y / float(std::max(1, rows)), ImGui::GetTextLineHeight() + 2.0f,
                              ImGui::GetTextLineHeight() * 2.0f);
    o.max_width = std::clamp(o.row_height * 0.35f, 2.0f, 7.0f);
    const float x0 = origin.x + std::max(0.0f, (avail.x - (2 * label_w + o.gap)) * 0.5f);
    LinesLayout L;
    try {
        L = plan_lines(in, o);
    } catch (const std::exception& e) {
        ImGui::TextDisabled("%s", e.what());
        ImGui::EndChild();
        return;
    }
    ImDrawList* dl = ImGui::GetWindowDrawList();
    for (const LineSegment& l : L.lines)
        dl->AddLine(ImVec2(x0 + l.x0, origin.y + l.y0), ImVec2(x0 + l.x1, origin.y + l.y1), line_colour(l),
                    l.width);

    // Token labels, each a hover target; the hovered one is lit and the others dimmed.
    int hover_side = 0, hover_token = -1;
    // A hovered token, else an encoder–decoder's pinned row (the one that wrote the appended token), is lit.
    const int lit_side = o.hover_side == LinesSide::Query ? 1 : o.hover_side == LinesSide::Key ? 2 : 0;
    const bool hovering = lit_side != 0;
    auto label = [&](const std::string& text, int side, int index, float y) {
        const float w = mono->CalcTextSizeA(mono->FontSize, 1e9f, 0, text.c_str()).x;
        const float right_edge = x0 + L.left_x - 6.0f;
        const float left_edge = x0 + L.right_x + 6.0f;
        const ImVec2 box0(side == 1 ? x0 : left_edge - 2.0f, origin.y + y - o.row_height * 0.5f);
        const ImVec2 box1(side == 1 ? right_edge + 2.0f : left_edge + label_w,
                          origin.y + y + o.row_height * 0.5f);
        ImGui::SetCursorScreenPos(box0);
        const std::string id = (side == 1 ? "##q" : "##k") + std::to_string(index);
        ImGui::InvisibleButton(id.c_str(),
                               ImVec2(std::max(1.0f, box1.x - box0.x), std::max(1.0f, box1.y - box0.y)));
        if (index < 64)
            remember_item_rect(
                state, std::string(side == 1 ? "lines_query_" : "lines_key_") + std::to_string(index));
        const bool lit = hovering && lit_side == side && o.hover_token == index;
        if (ImGui::IsItemHovered()) {
            hover_side = side;
            hover_token = index;
        }
        if (lit) dl->AddRectFilled(box0, box1, IM_COL32(255, 255, 255, 40), 3.0f);
        const ImU32 col = ImGui::GetColorU32(hovering && !lit ? ImGuiCol_TextDisabled : ImGuiCol_Text);
        const float ty = origin.y + y - mono->FontSize * 0.5f;
        dl->AddText(mono, mono->FontSize, ImVec2(side == 1 ? right_edge - w : left_edge, ty), col,
                    text.c_str());
    };
    for (std::size_t i = 0; i < in.queries.size(); ++i) label(in.queries[i], 1, int(i), L.query_y[i]);
    for (std::size_t j = 0; j < in.keys.size(); ++j) label(in.keys[j], 2, int(j), L.key_y[j]);
    if (hover_side != v.hover_side || hover_token != v.hover_token) state.redraw_soon = true;
    v.hover_side = hover_side;
    v.hover_token = hover_token;
    // Column titles.
    dl->AddText(ImVec2(x0, origin.y + L.height + 4.0f), ImGui::GetColorU32(ImGuiCol_TextDisabled),
                cross ? "target (queries)" : "queries");
    const char* keys = cross ? "source (keys)" : "keys";
    const float keys_x = std::min(x0 + L.right_x + 6.0f, origin.x + avail.x - ImGui::CalcTextSize(keys).x);
    dl->AddText(ImVec2(keys_x, origin.y + L.height + 4.0f), ImGui::GetColorU32(ImGuiCol_TextDisabled), keys);
    ImGui::SetCursorScreenPos(
        ImVec2(origin.x, origin.y + L.height + ImGui::GetTextLineHeightWithSpacing() + 4.0f));
    ImGui::Dummy(ImVec2(1, 1));
    scroll_with_wheel(false);
    ImGui::EndChild();
}

}  // namespace attnviz::app

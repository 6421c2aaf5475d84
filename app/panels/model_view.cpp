// The model view (BertViz's model view, with every stage behind each cell): every layer × head of a
// real model as a grid of small attention-weight maps on the fixed 0..1 scale. Click one to open that
// layer and head in the stage view, where every stage of it can be stepped through and hovered.
// Layers whose per-head stages were not kept at this length are shown as summarised, and say so.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "app/fonts.hpp"
#include "app/head_labels.hpp"
#include "app/panels/heatmap_widget.hpp"
#include "app/panels/panels.hpp"
#include "app/panels/views_internal.hpp"
#include "io/colormap.hpp"

namespace attnviz::app {

namespace {

constexpr const char* kHelp =
    "Every layer (rows) and head (columns) of the model, each cell one head's attention weights: row = "
    "query token, column = key token, bright = attends strongly, dark grey = the future (causal mask; an "
    "encoder such as BERT has none: every token sees every token). "
    "Early layers often attend to the previous token or to themselves; later ones to the first token "
    "(an 'attention sink') or to words that matter for the next one. Click a cell to open that head in "
    "the stage view with every stage behind it (Q, K, V, scores, weights, output). Under each cell: the "
    "head's type on this text (prev = previous-token, induct = induction, noun→adj = a noun looks at its "
    "adjectives, pron→noun = a pronoun at the nouns and names before it, first = first-token "
    "sink, self, broad = none stands out) and its score; hover a cell for what it means. PgUp/PgDn change "
    "the layer, ↑/↓ the head. An encoder–decoder (T5, BART) has three attentions, chosen above the grid: "
    "the encoder's self-attention over the source (no mask), the decoder's causal self-attention over the "
    "target, and cross-attention, where rows are target tokens and columns source tokens.";

ImU32 to_u32(Rgb8 c) {
    return IM_COL32(c.r, c.g, c.b, 255);
}

// One thumbnail: weights [n, m] pooled to blocks (at most res a side). A block shows the attention mass
// its queries give its keys: Σ over the block's keys, averaged over its queries — rows of blocks still
// sum to 1, and with n, m <= res every block is one cell of the weights. Causal: keys after every query
// of a block are the masked future (dark grey).
void draw_thumbnail(ImDrawList* dl, ImVec2 p0, float size, const Mat& A, int res, bool causal) {
    const int n = int(A.rows()), m = int(A.cols());
    const int rows = std::min(n, res), cols = std::min(m, res);
    const float py = size / float(rows), px = size / float(cols);
    const ColorRange range{ColorMap::Sequential, 0.0f, 1.0f};
    for (int bi = 0; bi < rows; ++bi) {
        const int i0 = bi * n / rows, i1 = std::max(i0 + 1, (bi + 1) * n / rows);
        for (int bj = 0; bj < cols; ++bj) {
            const int j0 = bj * m / cols, j1 = std::max(j0 + 1, (bj + 1) * m / cols);
            const ImVec2 a(p0.x + bj * px, p0.y + bi * py), b(p0.x + (bj + 1) * px, p0.y + (bi + 1) * py);
            if (causal && j0 > i1 - 1) {  // every key in the block is in the future of every query
                dl->AddRectFilled(a, b, IM_COL32(58, 60, 68, 255));
                continue;
            }
            double mass = 0;
            for (int i = i0; i < i1; ++i)
                for (int j = j0; j < j1 && (!causal || j <= i); ++j) mass += A(i, j);
            dl->AddRectFilled(a, b, to_u32(value_rgb(range, float(mass / (i1 - i0)))));
        }
    }
}

}  // namespace

void draw_model_view(AppState& state) {
    const ModelUi& m = state.model;
    if (!m.active) {
        ImGui::TextDisabled("Open a model (File ▸ Open model…) to see every layer and head.");
        return;
    }
    ImGui::PushFont(app_font(FontRole::Bold));
    ImGui::PushTextWrapPos(0.0f);  // (wraps at the view's edge on a narrow window or a large UI scale)
    ImGui::TextUnformatted("Model view: every layer × head");
    ImGui::PopTextWrapPos();
    ImGui::PopFont();
    record_item_layout("model.title");
    help_marker(kHelp);
    // An encoder–decoder: which of its three attentions the grid shows, and over which tokens.
    const bool cross = m.seq2seq && m.family == AttnFamily::Cross;
    const bool causal = !m.encoder && (!m.seq2seq || m.family == AttnFamily::Decoder);  // else no future
    const char* weights_stage = attention_stage(state);
    draw_attention_family(state);
    const std::string what = !m.seq2seq ? "attention weights, n = " + std::to_string(m.n) + " tokens"
                             : m.family == AttnFamily::Encoder
                                 ? "encoder self-attention, " + std::to_string(m.n_source) + " source tokens"
                             : m.family == AttnFamily::Decoder
                                 ? "decoder self-attention, " + std::to_string(m.n) + " target tokens"
                                 : "cross-attention: rows " + std::to_string(m.n) +
                                       " target tokens, columns " + std::to_string(m.n_source) +
                                       " source tokens";
    hint_line("model.hint", {what.c_str(), "click a cell to open it"});
    if (!m.note.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.8f, 0.35f, 1.0f));
        ImGui::TextWrapped("%s", m.note.c_str());
        ImGui::PopStyleColor();
    }
    const int L = m.n_layer, H = m.n_head;
    if (L <= 0 || H <= 0) return;
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float label_w = ImGui::CalcTextSize("layer 00 ").x;
    const float head_h = ImGui::GetTextLineHeightWithSpacing();
    const float gap = 3.0f;
    // Each cell's head type ("prev 0.93") on a line under it, when cells are wide enough to hold it.
    ImGui::PushFont(app_font(FontRole::Small));
    const float type_w = ImGui::CalcTextSize("pron→noun 0.00").x;
    const float type_h = ImGui::GetTextLineHeight() + 2.0f;
    ImGui::PopFont();
    float cell = std::min((avail.x - label_w) / float(H) - gap, (avail.y - head_h) / float(L) - gap - type_h);
    const bool show_types = cell >= type_w * 0.75f;
    if (!show_types)
        cell = std::min((avail.x - label_w) / float(H) - gap, (avail.y - head_h) / float(L) - gap);
    // (never shorter than a line of text: the layer labels sit one per row; the grid scrolls instead)
    cell = std::clamp(cell, std::max(18.0f, ImGui::GetTextLineHeight()), 220.0f);
    const float pitch = cell + gap + (show_types ? type_h : 0.0f);  // one layer's row
    // Resolution of each thumbnail: at most 48 cells a side and ~80k rectangles in all.
    int res = std::clamp(int(cell / 3.0f), 4, 48);
    while (res > 4 && double(L) * H * res * res > 80000.0) --res;

    const std::vector<HeadLabel> no_types;  // (the head types read self-attention only, not cross)
    ImGui::BeginChild("##model_grid", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    for (int h = 0; h < H; ++h) {
        const std::string label = "head " + std::to_string(h);
        const float tw = ImGui::CalcTextSize(label.c_str()).x;
        if (tw <= cell + gap) {
            const float x = origin.x + label_w + h * (cell + gap) + (cell - tw) * 0.5f;
            dl->AddText(ImVec2(x, origin.y), ImGui::GetColorU32(ImGuiCol_TextDisabled), label.c_str());
            layout_record("model.head" + std::to_string(h), x, origin.y, tw, ImGui::GetTextLineHeight(),
                          origin.x, origin.x + label_w + H * (cell + gap));
        }
    }
    for (int l = 0; l < L; ++l) {
        const float y = origin.y + head_h + float(l) * pitch;
        const std::string row = "layer " + std::to_string(l);
        const float row_y = y + cell * 0.5f - ImGui::GetTextLineHeight() * 0.5f;
        dl->AddText(ImVec2(origin.x, row_y),
                    ImGui::GetColorU32(l == m.layer ? ImGuiCol_Text : ImGuiCol_TextDisabled), row.c_str());
        layout_record("model.layer" + std::to_string(l), origin.x, row_y, ImGui::CalcTextSize(row.c_str()).x,
                      ImGui::GetTextLineHeight(), origin.x, origin.x + label_w);
        const std::shared_ptr<const Trace> tr =
            std::size_t(l) < state.model_layers.size() ? state.model_layers[std::size_t(l)] : nullptr;
        const std::vector<HeadLabel>& types = cross ? no_types : head_labels_of(state, tr);
        for (int h = 0; h < H; ++h) {
            const ImVec2 p0(origin.x + label_w + h * (cell + gap), y);
            const ImVec2 p1(p0.x + cell, p0.y + cell);
            const Stage* st = tr ? tr->get(weights_stage, h) : nullptr;
            if (st && st->stored_matrix()) {
                draw_thumbnail(dl, p0, cell, *st->stored_matrix(), res, causal);
            } else {
                dl->AddRectFilled(p0, p1, IM_COL32(45, 47, 54, 255));
                if (cell > 40)
                    dl->AddText(ImVec2(p0.x + 4, p0.y + 4), ImGui::GetColorU32(ImGuiCol_TextDisabled), "…");
            }
            const bool current = l == m.layer && h == state.head;
            ImGui::SetCursorScreenPos(p0);
            const std::string id = "##cell" + std::to_string(l) + "_" + std::to_string(h);
            if (ImGui::InvisibleButton(id.c_str(), ImVec2(cell, cell))) {
                state.model.layer = l;
                state.head = h;
                state.view = MainView::Stage;
                state.pinned_row = -1;
                state.requested_stage = weights_stage;
            }
            const bool hovered = ImGui::IsItemHovered();
            state.widget_rects["model_cell_" + std::to_string(l) + "_" + std::to_string(h)] = {p0.x, p0.y,
                                                                                               cell, cell};
            if (current || hovered)
                dl->AddRect(ImVec2(p0.x - 1, p0.y - 1), ImVec2(p1.x + 1, p1.y + 1),
                            current ? IM_COL32(255, 210, 80, 255) : IM_COL32(230, 230, 230, 255), 0, 0,
                            current ? 2.0f : 1.0f);
            const HeadLabel* type = h < int(types.size()) ? &types[std::size_t(h)] : nullptr;
            if (type && show_types) {
                ImGui::PushFont(app_font(FontRole::Small));
                const std::string t = head_label_text(*type);
                const float tw = std::min(ImGui::CalcTextSize(t.c_str()).x, cell);
                dl->PushClipRect(ImVec2(p0.x, p1.y), ImVec2(p1.x, p1.y + type_h), true);
                dl->AddText(
                    ImVec2(p0.x + (cell - tw) * 0.5f, p1.y + 1.0f),
                    ImGui::GetColorU32(type->type == HeadType::Broad ? ImGuiCol_TextDisabled : ImGuiCol_Text),
                    t.c_str());
                dl->PopClipRect();
                ImGui::PopFont();
            }
            if (hovered && type)
                ImGui::SetTooltip("layer %d, head %d: %s\nclick to open its stages", l, h,
                                  head_label_tooltip(*type).c_str());
            else if (hovered)
                ImGui::SetTooltip(
                    st ? "layer %d, head %d: click to open its stages"
                       : "layer %d, head %d: summarised at this length (its heads are not kept); "
                         "click to compute and open it",
                    l, h);
        }
    }
    ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + head_h + float(L) * pitch));
    ImGui::Dummy(ImVec2(label_w + H * (cell + gap), 1));
    ImGui::EndChild();
}

}  // namespace attnviz::app

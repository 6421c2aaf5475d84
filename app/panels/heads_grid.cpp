// Heads grid: every head's attention weights side by side, on one shared colour scale, so a learner
// can see that different heads attend in different ways. Clicking a head focuses it in the stage view.
// GCC 12 false positive inside its AVX-512 intrinsics when Eigen multiplies (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/head_labels.hpp"
#include "app/panels/heatmap_widget.hpp"
#include "app/panels/panels.hpp"
#include "app/panels/view_state.hpp"
#include "app/panels/views_internal.hpp"

namespace attnviz::app {

namespace {

// Per-head stages a grid can show (n x m ones first: that is what "attention pattern" means).
std::vector<std::string> grid_stage_choices(const Trace& tr) {
    std::vector<std::string> out;
    // (an encoder–decoder's decoder layer adds its cross-attention's, T5 its position bias)
    for (const char* name :
         {"weights", "scores", "scaled", "masked", "position_bias", "cross_weights", "cross_scores", "Q", "K",
          "V", "head_output", "cross_Q", "cross_K", "cross_V", "cross_head_output"}) {
        if (tr.find(name, 0) >= 0) out.push_back(name);
    }
    return out;
}

// One colour scale for all heads: fixed 0..1 for probabilities, symmetric about 0 for signed values.
ColorRange shared_range(const std::vector<const CachedMatrix*>& tiles) {
    ColorRange r = tiles.front()->range;
    if (tiles.front()->kind == ValueKind::Probability) return r;
    for (const CachedMatrix* t : tiles) {
        if (r.map == ColorMap::Diverging) {
            const float a =
                std::max({std::abs(r.lo), std::abs(r.hi), std::abs(t->range.lo), std::abs(t->range.hi)});
            r.lo = -a;
            r.hi = a;
        } else {
            r.lo = std::min(r.lo, t->range.lo);
            r.hi = std::max(r.hi, t->range.hi);
        }
    }
    return r;
}

}  // namespace

void draw_heads_grid(AppState& state) {
    const Trace& tr = *state.trace;
    HeadsGridView& hv = views(state).heads_grid;
    std::string& stage_name = hv.stage_name;
    const std::vector<std::string> choices = grid_stage_choices(tr);
    if (choices.empty()) {
        ImGui::TextDisabled("This trace has no per-head stages.");
        return;
    }
    // The grid follows the stage the learner is on (cross_weights for an encoder–decoder's cross-
    // attention, scores after stepping to them) whenever that stage changes; the combo's own pick
    // holds until then.
    const std::string current = current_stage_name(state);
    const bool pattern = current == "weights" || current == "scores" || current == "scaled" ||
                         current == "masked" || current == "position_bias" || current == "cross_weights" ||
                         current == "cross_scores";  // (n × m attention patterns, not Q, K, V)
    if (current != hv.followed && pattern &&
        std::find(choices.begin(), choices.end(), current) != choices.end())
        stage_name = current;
    hv.followed = current;
    if (std::find(choices.begin(), choices.end(), stage_name) == choices.end()) stage_name = choices.front();

    // The grid scrolls when the window is too small for readable tiles (a projector at UI scale 2).
    ImGui::BeginChild("##heads_scroll", ImVec2(0, 0), false);
    const float fs = ImGui::GetFontSize(), line = ImGui::GetTextLineHeight();
    ImGui::TextUnformatted("All heads:");
    record_item_layout("heads.label");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::CalcTextSize("head_output").x + 40);
    if (ImGui::BeginCombo("##grid_stage", stage_name.c_str())) {
        for (const std::string& c : choices)
            if (ImGui::Selectable(c.c_str(), c == stage_name)) stage_name = c;
        ImGui::EndCombo();
    }
    record_item_layout("heads.stage");
    help_marker(
        "Each head has its own W_Q, W_K, W_V, so each head scores the same tokens differently: one may look "
        "at the previous token, another at the first one, another spread evenly. All tiles share one colour "
        "scale. \"entropy\" is the mean entropy of the head's weight rows in nats: low = sharp (each query "
        "looks "
        "at few keys), high = diffuse (ln m is uniform). Beside each head: its type on this text "
        "(prev = previous-token, induct = induction, noun→adj, pron→noun, first = first-token sink, self, "
        "sep = an encoder's [SEP] head, "
        "broad = none "
        "stands out) and its score, the same scores the Training lab reports; hover a title for more. "
        "Click a head to open it in the stage view.");
    same_line_if_fits(ImGui::CalcTextSize("click a head to focus it").x);
    ImGui::TextDisabled("click a head to focus it");
    record_item_layout("heads.hint");

    const int heads = tr.heads;
    std::vector<int> idx(std::size_t(heads), -1);
    std::vector<const CachedMatrix*> tiles;
    for (int h = 0; h < heads; ++h) {
        idx[std::size_t(h)] = tr.find(stage_name, h);
        if (idx[std::size_t(h)] < 0) {
            ImGui::EndChild();
            return;
        }
        // Thumbnails: matrices above 512 per side are block-downsampled before upload.
        tiles.push_back(&cached_stage(tr, state.trace_generation, idx[std::size_t(h)], false, 512));
    }
    const ColorRange range = shared_range(tiles);
    const bool any_masked =
        std::any_of(tiles.begin(), tiles.end(), [](const CachedMatrix* t) { return t->has_masked; });

    // Layout: pick the number of columns that makes tiles largest. A tile is never shorter than 9 text
    // heights (its title and a picture one can read): below that the grid scrolls instead.
    const ImVec2 avail(
        ImGui::GetContentRegionAvail().x,
        std::max(ImGui::GetContentRegionAvail().y, 9.0f * fs + ImGui::GetTextLineHeightWithSpacing()));
    const float colorbar_w = ImGui::CalcTextSize("masked (\u2212\u221e)").x + 40;
    const float gap = 12, title_h = ImGui::GetTextLineHeightWithSpacing();
    const Stage& s0 = tr.stages[std::size_t(idx[0])];
    const float aspect = float(s0.n_cols()) / float(std::max(1, s0.n_rows()));  // tile width / height
    int best_k = 1;
    float best_side = 0;
    for (int k = 1; k <= heads; ++k) {
        const int rows = (heads + k - 1) / k;
        const float tw = (avail.x - colorbar_w - gap * float(k - 1)) / float(k);
        const float th = (avail.y - gap * float(rows - 1)) / float(rows) - title_h;
        const float side = std::min(tw / std::max(aspect, 1e-3f), th);  // tile height that fits
        if (side > best_side) best_side = side, best_k = k;
    }
    // With tiles that small even in one row, fewer columns and more rows (scrolled) read better.
    int k = best_k;
    while (k > 1 && (avail.x - colorbar_w - gap * float(k - 1)) / float(k) < 9.0f * fs) --k;
    const int grid_rows = (heads + k - 1) / k;
    const float tile_w = (avail.x - colorbar_w - gap * float(k - 1)) / float(k);
    const float tile_h =
        std::max(9.0f * fs + title_h, (avail.y - gap * float(grid_rows - 1)) / float(grid_rows));
    const bool labels = tile_w >= 18.75f * fs && tile_h >= 15.0f * fs;  // 300 x 240 px at UI scale 1

    std::map<int, HeatmapViewState>& zoom = hv.zoom;
    // What each head does on this text (core/head_types.hpp), in its title; the sentence on hover.
    // (they describe the self-attention weights: not shown over an encoder–decoder's cross-attention)
    static const std::vector<HeadLabel> none;
    const std::vector<HeadLabel>& head_labels =
        stage_name.rfind("cross_", 0) == 0 ? none : head_labels_of(state, state.trace);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    for (int h = 0; h < heads; ++h) {
        const Stage& st = tr.stages[std::size_t(idx[std::size_t(h)])];
        const ImVec2 pos(origin.x + float(h % k) * (tile_w + gap), origin.y + float(h / k) * (tile_h + gap));
        ImGui::SetCursorScreenPos(pos);
        char title[128];
        const std::string type =
            h < int(head_labels.size()) ? "  · " + head_label_text(head_labels[std::size_t(h)]) : "";
        if (stage_name == "weights" && h < int(tr.row_entropy.size()) &&
            tr.row_entropy[std::size_t(h)].size() > 0) {
            std::snprintf(title, sizeof title, "head %d%s  · entropy %.2f", h, type.c_str(),
                          double(tr.row_entropy[std::size_t(h)].mean()));
        } else {
            std::snprintf(title, sizeof title, "head %d%s", h, type.c_str());
        }
        HeatmapOptions o;
        o.width = tile_w;
        o.height = tile_h;
        o.labels = labels;
        o.axis_titles = false;
        o.colorbar = false;
        o.numbers = labels;
        o.interactive = false;
        o.row_label_click = false;
        o.min_fill = 0.5f;
        o.title = title;
        const std::string id = "head" + std::to_string(h);
        const HeatmapResult r = heatmap_widget(
            id.c_str(), zoom[h], HeatmapInput{tiles[std::size_t(h)], &st.rows, &st.cols, false, &range}, o);
        state.widget_rects["head_tile_" + std::to_string(h)] =
            AppState::WidgetRect{r.img_x, r.img_y, r.img_w, r.img_h};
        state.label_stats["head_tile_" + std::to_string(h)] = {r.labels_shown, r.labels_cut, r.label_stride,
                                                               r.labels_upright, r.labels_upright_small};
        // The title band: the head's type in a sentence, with every type's score.
        if (h < int(head_labels.size()) &&
            ImGui::IsMouseHoveringRect(pos, ImVec2(pos.x + tile_w, pos.y + title_h)) &&
            ImGui::IsWindowHovered())
            ImGui::SetTooltip("head %d: %s", h, head_label_tooltip(head_labels[std::size_t(h)]).c_str());
        if (h == state.head) {
            dl->AddRect(ImVec2(r.img_x - 4, r.img_y - 4),
                        ImVec2(r.img_x + r.img_w + 4, r.img_y + r.img_h + 4),
                        ImGui::GetColorU32(ImGuiCol_PlotHistogramHovered), 3.0f, 0, 2.0f);
        }
        if (r.image_hovered) {
            ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
            const Mat& M = *tiles[std::size_t(h)]->M;
            const bool exact = M.rows() == st.n_rows() && M.cols() == st.n_cols();
            if (r.hovered && exact) {
                const float v = M(r.row, r.col);
                const std::string val =
                    (std::isinf(v) && v < 0) ? std::string("masked (\u2212\u221e)") : format_value(v);
                ImGui::SetTooltip("head %d: %s \u2192 %s = %s\n%s\nclick to open this head", h,
                                  st.rows.label(r.row).c_str(), st.cols.label(r.col).c_str(), val.c_str(),
                                  h < int(head_labels.size())
                                      ? head_type_explanation(head_labels[std::size_t(h)].type)
                                      : "");
            } else {
                ImGui::SetTooltip("head %d\nclick to open this head", h);
            }
        }
        if (r.clicked) {
            state.head = h;
            state.view = MainView::Stage;
            go_to_stage(state, stage_name);
        }
    }

    // The shared colour bar.
    ImGui::SetCursorScreenPos(ImVec2(origin.x + avail.x - colorbar_w + 12, origin.y + title_h));
    draw_colorbar(
        range, colorbar_w - 12,
        std::max(3.5f * line + (any_masked ? 1.6f * line : 0.0f), std::min(tile_h - title_h, 16.0f * fs)),
        any_masked, "heads.colorbar");
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(ImVec2(avail.x, float(grid_rows) * tile_h + gap * float(grid_rows - 1)));
    ImGui::EndChild();
}

}  // namespace attnviz::app

// The formula panel: what the stage under the cursor is, how it is computed and what it costs. For
// attention weights it also shows the entropy of the pinned (or hovered) query's row: how spread
// out that token's attention is.
#include <imgui.h>

#include <cstdarg>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "app/fonts.hpp"
#include "app/panels/panels.hpp"

namespace attnviz::app {

namespace {

std::string human(double v, const char* unit) {
    const char* prefixes[] = {"", " k", " M", " G", " T", " P"};
    int p = 0;
    while (std::fabs(v) >= 1000.0 && p < 5) {
        v /= 1000.0;
        ++p;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, p == 0 ? "%.0f%s%s" : "%.3g%s%s", v, prefixes[p], unit);
    return buf;
}

std::string human_bytes(double v) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        ++u;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.3g %s", v, units[u]);
    return buf;
}

void heading(const char* text) {
    ImGui::Spacing();
    ImGui::PushFont(app_font(FontRole::Bold));
    ImGui::PushTextWrapPos(0.0f);  // (a scene's title is a sentence: wrapped, never cut at the edge)
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::PopFont();
}

void wrapped(const std::string& text) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(text.c_str());
    ImGui::PopTextWrapPos();
}

// printf-style lines that wrap at the panel's right edge instead of being cut there.
std::string formatv(const char* fmt, va_list args) {
    char buf[512];
    std::vsnprintf(buf, sizeof buf, fmt, args);
    return buf;
}

void wrappedf(const char* fmt, ...) IM_FMTARGS(1);
void wrappedf(const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    const std::string text = formatv(fmt, args);
    va_end(args);
    wrapped(text);
}

void wrapped_disabled(const std::string& text);
void wrapped_disabledf(const char* fmt, ...) IM_FMTARGS(1);
void wrapped_disabledf(const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    const std::string text = formatv(fmt, args);
    va_end(args);
    wrapped_disabled(text);
}

void wrapped_disabled(const std::string& text) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    wrapped(text);
    ImGui::PopStyleColor();
}

void draw_entropy(const AppState& state, const Stage& stage) {
    const Trace& t = *state.trace;
    const int head = std::clamp(state.head, 0, std::max(0, t.heads - 1));
    if (head >= int(t.row_entropy.size())) return;
    const Vec& H = t.row_entropy[std::size_t(head)];  // n entropies (nats)
    const int row = state.pinned_row >= 0 ? state.pinned_row : state.hover_row;
    const double h_max = std::log(double(std::max(1, stage.n_cols())));  // uniform over m keys
    heading("Row entropy");
    help_marker(
        "H = −Σ_j a_ij ln a_ij measures how spread out query i's attention is: 0 nats when it "
        "looks at a single key, ln m when it spreads evenly over all m keys. Raise T to flatten "
        "rows (H grows), lower it to sharpen them.");
    if (row >= 0 && row < H.size()) {
        const std::string token = stage.rows.label(row);
        ImGui::Text("%s row %d  \"%s\"", state.pinned_row >= 0 ? "pinned" : "hovered", row, token.c_str());
        const float h = H[row];
        char overlay[64];
        std::snprintf(overlay, sizeof overlay, "H = %.3f of %.3f nats", double(h), h_max);
        ImGui::ProgressBar(h_max > 0 ? float(h / h_max) : 0.0f, ImVec2(-1, 0), overlay);
    } else {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        wrapped("Hover or click a row of the heatmap to see its entropy.");
        ImGui::PopStyleColor();
    }
    if (H.size() > 0) {
        const double mean = double(H.mean());
        // (two lines: a wrap inside "3.761" would split the number)
        wrappedf("mean over rows: %.3f nats", mean);
        wrapped_disabledf("uniform over the %d keys: ln %d = %.3f", stage.n_cols(), stage.n_cols(), h_max);
    }
}

}  // namespace

void draw_formula_panel(AppState& state) {
    if (!state.trace) {
        const bool failed = state.model.active && state.model.run_failed && state.status_is_error;
        wrapped_disabledf(!state.issues.empty() ? "Waiting for valid settings."
                          : failed              ? "Waiting for a text the model can read."
                                                : "Computing…");
        return;
    }
    const Stage* stage = current_stage(state);
    if (!stage) {
        wrapped_disabledf("No stage selected.");
        return;
    }
    const Trace& t = *state.trace;

    ImGui::PushFont(app_font(FontRole::Bold));
    wrapped(stage->title);
    ImGui::PopFont();
    if (stage->head >= 0)
        wrapped_disabledf("head %d of %d  (↑ ↓ to change)", stage->head, t.heads);
    else
        wrapped_disabledf("shared by all heads");

    // The formula, large: the one thing to remember from this stage.
    ImGui::Spacing();
    ImGui::PushFont(app_font(FontRole::Large));
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.86f, 0.55f, 1.0f));
    wrapped(stage->formula);
    ImGui::PopStyleColor();
    ImGui::PopFont();
    ImGui::Spacing();
    // The note of the scene that opened this model says what to look at in it: first, in view.
    if (state.model.active && !state.scene_note.empty() && state.model.dir == state.scene_model) {
        heading(state.scene_title.c_str());
        wrapped(state.scene_note);
    }

    heading("Shape");
    ImGui::PushFont(app_font(FontRole::Mono));
    ImGui::TextUnformatted(stage->shape_text().c_str());
    ImGui::PopFont();
    wrapped_disabledf("rows: %s (%d)   columns: %s (%d)", stage->rows.name.c_str(), stage->n_rows(),
                      stage->cols.name.c_str(), stage->n_cols());

    heading("What happens");
    wrapped(stage->explanation);

    if (stage->name == "weights") draw_entropy(state, *stage);

    heading("Cost");
    help_marker(
        "FLOPs: floating-point operations to compute this stage from the previous ones (a "
        "multiply-add counts 2). Memory: this matrix at 4 bytes per value. Attention weights "
        "grow with n·m: double the text and they take four times the memory.");
    wrappedf("%s FLOPs,  %s", human(stage->flops, "").c_str(), human_bytes(stage->bytes).c_str());
    if (!stage->stored()) wrapped_disabled("(derived on demand from the stage before, not stored)");
    wrapped_disabled("whole layer: " + human(t.total_flops(), "") + " FLOPs, " +
                     human_bytes(t.stored_bytes()) + " stored");

    if (state.model.active) {  // a real model's layer: its place in the model
        heading("Layer");
        wrapped_disabledf("layer %d of %d   n = %d  d_model = %d", state.model.layer, state.model.n_layer,
                          t.n, t.d_model);
        wrapped_disabledf("h = %d  d_head = %d  K/V heads = %d", t.heads, t.d_k, state.model.n_kv_head);
        return;
    }
    heading("Layer");
    wrapped_disabledf("n = %d  m = %d  d_model = %d", t.n, t.m, t.d_model);
    wrapped_disabledf("h = %d  d_k = %d  d_v = %d", t.heads, t.d_k, t.d_v);
    if (!state.scene_note.empty()) {
        heading(state.scene_title.c_str());
        wrapped(state.scene_note);
    }
}

}  // namespace attnviz::app

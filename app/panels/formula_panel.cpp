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
#include "app/text_wrap.hpp"

namespace attnviz::app {

namespace {

// The panel's own words (headings, lines, hints) in English and in Chinese (View ▸ Language).
struct FormulaWords {
    const char* waiting_settings;
    const char* waiting_model;
    const char* computing;
    const char* no_stage;
    const char* head_of;  // printf: head, heads
    const char* shared;
    const char* shape;
    const char* rows_cols;  // printf: rows' name, rows, columns' name, columns
    const char* what_happens;
    const char* cost;
    const char* cost_help;
    const char* flops;  // printf: FLOPs, bytes
    const char* derived;
    const char* whole_layer;  // printf: FLOPs, bytes
    const char* layer;
    const char* model_layer;  // printf: layer, layers, n, d_model
    const char* model_heads;  // printf: h, d_head, K/V heads
    const char* entropy;
    const char* entropy_help;
    const char* pinned_row;   // printf: row, token
    const char* hovered_row;  // printf: row, token
    const char* entropy_bar;  // printf: H, H max
    const char* entropy_hint;
    const char* entropy_mean;     // printf: mean
    const char* entropy_uniform;  // printf: m, m, ln m
};

const FormulaWords kFormulaWordsEn = {
    "Waiting for valid settings.",
    "Waiting for a text the model can read.",
    "Computing…",
    "No stage selected.",
    "head %d of %d  (↑ ↓ to change)",
    "shared by all heads",
    "Shape",
    "rows: %s (%d)   columns: %s (%d)",
    "What happens",
    "Cost",
    "FLOPs: floating-point operations to compute this stage from the previous ones (a "
    "multiply-add counts 2). Memory: this matrix at 4 bytes per value. Attention weights "
    "grow with n·m: double the text and they take four times the memory.",
    "%s FLOPs,  %s",
    "(derived on demand from the stage before, not stored)",
    "whole layer: %s FLOPs, %s stored",
    "Layer",
    "layer %d of %d   n = %d  d_model = %d",
    "h = %d  d_head = %d  K/V heads = %d",
    "Row entropy",
    "H = −Σ_j a_ij ln a_ij measures how spread out query i's attention is: 0 nats when it "
    "looks at a single key, ln m when it spreads evenly over all m keys. Raise T to flatten "
    "rows (H grows), lower it to sharpen them.",
    "pinned row %d  \"%s\"",
    "hovered row %d  \"%s\"",
    "H = %.3f of %.3f nats",
    "Hover or click a row of the heatmap to see its entropy.",
    "mean over rows: %.3f nats",
    "uniform over the %d keys: ln %d = %.3f",
};

const FormulaWords kFormulaWordsZh = {
    "等待有效的设置。",
    "等待模型能读取的文本。",
    "计算中…",
    "未选择阶段。",
    "头 %d，共 %d 个（↑ ↓ 切换）",
    "所有头共用",
    "形状",
    "行：%s（%d）   列：%s（%d）",
    "这一步做什么",
    "开销",
    "FLOPs：由前面的阶段算出这一阶段所需的浮点运算次数（一次乘加算 2 次）。内存：这个矩阵每个值占 4 "
    "字节。注意力权重随 n·m 增长：文本长度加倍，所占内存变为四倍。",
    "%s 次浮点运算，%s",
    "（需要时由前一阶段推出，不存储）",
    "整层：%s 次浮点运算，存储 %s",
    "层",
    "第 %d 层，共 %d 层   n = %d  d_model = %d",
    "h = %d  d_head = %d  K/V 头 = %d",
    "行熵",
    "H = −Σ_j a_ij ln a_ij 衡量查询 i 的注意力有多分散：只看一个键时为 0 奈特，在全部 m 个键上均匀分布时为 "
    "ln m。升高温度 T 使各行更平（H 变大），降低 T 使其更尖锐。",
    "钉住的行 %d “%s”",
    "悬停的行 %d “%s”",
    "H = %.3f / %.3f 奈特",
    "把鼠标移到热图的某一行上或单击它，即可看到该行的熵。",
    "各行平均：%.3f 奈特",
    "在 %d 个键上均匀分布：ln %d = %.3f",
};

// The language the panel draws in this frame: Chinese paragraphs wrap between characters (text_wrapped),
// English ones as ImGui wraps them.
TextLanguage g_formula_language = TextLanguage::English;

const FormulaWords& formula_words() {
    return g_formula_language == TextLanguage::Chinese ? kFormulaWordsZh : kFormulaWordsEn;
}

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
    if (g_formula_language == TextLanguage::Chinese) {
        text_wrapped(text);
    } else {
        ImGui::PushTextWrapPos(0.0f);  // (a scene's title is a sentence: wrapped, never cut at the edge)
        ImGui::TextUnformatted(text);
        ImGui::PopTextWrapPos();
    }
    ImGui::PopFont();
}

void wrapped(const std::string& text) {
    if (g_formula_language == TextLanguage::Chinese) return text_wrapped(text);
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
    const FormulaWords& w = formula_words();
    heading(w.entropy);
    help_marker(w.entropy_help);
    if (row >= 0 && row < H.size()) {
        const std::string token = stage.rows.label(row);
        ImGui::Text(state.pinned_row >= 0 ? w.pinned_row : w.hovered_row, row, token.c_str());
        const float h = H[row];
        char overlay[64];
        std::snprintf(overlay, sizeof overlay, w.entropy_bar, double(h), h_max);
        ImGui::ProgressBar(h_max > 0 ? float(h / h_max) : 0.0f, ImVec2(-1, 0), overlay);
    } else {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        wrapped(w.entropy_hint);
        ImGui::PopStyleColor();
    }
    if (H.size() > 0) {
        const double mean = double(H.mean());
        // (two lines: a wrap inside "3.761" would split the number)
        wrappedf(w.entropy_mean, mean);
        wrapped_disabledf(w.entropy_uniform, stage.n_cols(), stage.n_cols(), h_max);
    }
}

}  // namespace

std::vector<const char*> formula_panel_words(TextLanguage language) {
    const FormulaWords& w = language == TextLanguage::Chinese ? kFormulaWordsZh : kFormulaWordsEn;
    return {w.waiting_settings, w.waiting_model, w.computing,    w.no_stage,     w.head_of,
            w.shared,           w.shape,         w.rows_cols,    w.what_happens, w.cost,
            w.cost_help,        w.flops,         w.derived,      w.whole_layer,  w.layer,
            w.model_layer,      w.model_heads,   w.entropy,      w.entropy_help, w.pinned_row,
            w.hovered_row,      w.entropy_bar,   w.entropy_hint, w.entropy_mean, w.entropy_uniform};
}

void draw_formula_panel(AppState& state) {
    g_formula_language = state.language;
    const FormulaWords& w = formula_words();
    if (!state.trace) {
        const bool failed = state.model.active && state.model.run_failed && state.status_is_error;
        wrapped_disabled(!state.issues.empty() ? w.waiting_settings : failed ? w.waiting_model : w.computing);
        return;
    }
    const Stage* stage = current_stage(state);
    if (!stage) {
        wrapped_disabled(w.no_stage);
        return;
    }
    const Trace& t = *state.trace;

    ImGui::PushFont(app_font(FontRole::Bold));
    wrapped(stage->title_for(state.language));
    ImGui::PopFont();
    if (stage->head >= 0)
        wrapped_disabledf(w.head_of, stage->head, t.heads);
    else
        wrapped_disabled(w.shared);

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

    heading(w.shape);
    ImGui::PushFont(app_font(FontRole::Mono));
    ImGui::TextUnformatted(stage->shape_text().c_str());
    ImGui::PopFont();
    wrapped_disabledf(w.rows_cols, stage->rows.name.c_str(), stage->n_rows(), stage->cols.name.c_str(),
                      stage->n_cols());

    heading(w.what_happens);
    wrapped(stage->explanation_for(state.language));

    if (stage->name == "weights") draw_entropy(state, *stage);

    heading(w.cost);
    help_marker(w.cost_help);
    wrappedf(w.flops, human(stage->flops, "").c_str(), human_bytes(stage->bytes).c_str());
    if (!stage->stored()) wrapped_disabled(w.derived);
    wrapped_disabledf(w.whole_layer, human(t.total_flops(), "").c_str(),
                      human_bytes(t.stored_bytes()).c_str());

    if (state.model.active) {  // a real model's layer: its place in the model
        heading(w.layer);
        wrapped_disabledf(w.model_layer, state.model.layer, state.model.n_layer, t.n, t.d_model);
        wrapped_disabledf(w.model_heads, t.heads, t.d_k, state.model.n_kv_head);
        return;
    }
    heading(w.layer);
    wrapped_disabledf("n = %d  m = %d  d_model = %d", t.n, t.m, t.d_model);
    wrapped_disabledf("h = %d  d_k = %d  d_v = %d", t.heads, t.d_k, t.d_v);
    if (!state.scene_note.empty()) {
        heading(state.scene_title.c_str());
        wrapped(state.scene_note);
    }
}

}  // namespace attnviz::app

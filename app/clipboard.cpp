#include "app/clipboard.hpp"

#include <GLFW/glfw3.h>

#include <cmath>
#include <cstdio>

#include "core/error.hpp"

namespace attnviz::app {

namespace {

std::string tsv_cell_text(std::string s) {
    for (char& c : s)
        if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    return s;
}

std::string number_text(float v) {
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    if (std::isnan(v)) return "nan";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", double(v));
    return buf;
}

}  // namespace

std::string stage_tsv(const Stage& stage) {
    const int rows = stage.n_rows(), cols = stage.n_cols();
    if (std::int64_t(rows) * cols > kMaxClipboardCells)
        throw Error(stage.name + " has " + std::to_string(rows) + "×" + std::to_string(cols) +
                    " cells, more than the " + std::to_string(kMaxClipboardCells) +
                    " that can be copied; use File ▸ Export (CSV or .npy) instead");
    std::string out = tsv_cell_text(stage.rows.name + " \\ " + stage.cols.name);
    for (int j = 0; j < cols; ++j) out += "\t" + tsv_cell_text(stage.cols.label(j));
    out += "\n";
    for (int i = 0; i < rows; ++i) {
        out += tsv_cell_text(stage.rows.label(i));
        const RowVec row = stage.row(i);  // [1, cols]
        for (int j = 0; j < cols; ++j) out += "\t" + number_text(row(j));
        out += "\n";
    }
    return out;
}

void copy_current_matrix(AppState& state) {
    const Stage* stage = current_stage(state);
    if (!stage) {
        state.set_status("Nothing to copy yet: the trace is still being computed.", true);
        return;
    }
    try {
        const std::string tsv = stage_tsv(*stage);
        glfwSetClipboardString(glfwGetCurrentContext(), tsv.c_str());
        state.set_status("Copied " + stage->name + " (" + std::to_string(stage->n_rows()) + "×" +
                             std::to_string(stage->n_cols()) + ") to the clipboard as tab-separated text",
                         false);
    } catch (const std::exception& e) {
        state.set_status(e.what(), true);
    }
}

}  // namespace attnviz::app

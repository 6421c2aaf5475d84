// Copy the current matrix to the clipboard as tab-separated text with token labels, so it pastes into
// a spreadsheet as a table: the first row names the columns (keys, dimensions), the first column the
// rows (queries), the corner says which is which ("query \ key").
#pragma once

#include <cstdint>
#include <string>

#include "app/app_state.hpp"
#include "core/trace.hpp"

namespace attnviz::app {

/// Most cells copied at once (a 1024×1024 matrix); a larger stage is refused with a message pointing
/// at File ▸ Export (CSV / .npy), which streams to a file instead of building the text in memory.
constexpr std::int64_t kMaxClipboardCells = 1 << 20;

/// The stage as TSV: "rows \ cols" TAB col labels, then one line per row: label TAB values (%.9g: a float
/// read back is the same float; masked cells "-inf"). Tabs and line breaks inside labels become spaces so the
/// table stays rectangular. Throws attnviz::Error above kMaxClipboardCells.
std::string stage_tsv(const Stage& stage);

/// Puts the current stage's TSV on the system clipboard (GLFW) and reports in the status line;
/// errors are a status message, never a throw.
void copy_current_matrix(AppState& state);

}  // namespace attnviz::app

// explain_cell(): the arithmetic behind one cell, with the trace's own numbers. Each stage's
// derivation is its entry's explain function (core/stages/*.cpp); every final value there is
// recomputed in double precision from the inputs the text shows (not copied from the stage), so the
// explanation and the matrix check each other.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positive in Eigen's AVX-512 code
#endif
#include "core/explain.hpp"

#include "core/cell_text.hpp"
#include "core/ops.hpp"
#include "core/stage_catalogue.hpp"

namespace attnviz {

std::vector<std::string> explain_cell(const Trace& t, int stage_index, int i, int j) {
    if (stage_index < 0 || stage_index >= int(t.stages.size())) return {"No such stage."};
    const Stage& st = t.stages[std::size_t(stage_index)];
    if (i < 0 || j < 0 || i >= st.n_rows() || j >= st.n_cols())
        return {"Cell (" + std::to_string(i) + ", " + std::to_string(j) + ") is outside this " +
                st.shape_text() + " matrix."};
    if (t.explain_hook) return t.explain_hook(t, stage_index, i, j);
    const std::string ri = st.rows.label(i), cj = st.cols.label(j);
    const CellQuery q{
        t, st, t.config, st.head, i, j, ri, cj, "[" + ri + ", " + cj + "]", make_mask(t.config, t.n, t.m)};
    std::vector<std::string> lines;
    const StageEntry* e = find_stage_entry(st.name);
    if (e && e->explain) {
        e->explain(q, lines);
    } else {
        lines.push_back(st.name + q.cell);
        lines.push_back(cell_text::final_line(st.matrix()(i, j)));
    }
    return lines;
}

}  // namespace attnviz

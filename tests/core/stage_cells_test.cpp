// Stage::at / Stage::row read one cell or row without copying the whole matrix; they must give
// exactly matrix()'s numbers, for stored and derived stages (scaled, masked, alibi) alike.
#include <gtest/gtest.h>

#include <cstring>

#include "core/trace.hpp"

namespace attnviz {
namespace {

bool same_bits(float a, float b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

TEST(StageCells, AtAndRowEqualTheMatrixBitForBit) {
    std::vector<Config> configs;
    Config base;
    base.text = "the cat sat on the mat";
    for (MaskKind mk : {MaskKind::None, MaskKind::Causal, MaskKind::Window}) {
        for (Positional p : {Positional::None, Positional::Alibi, Positional::Rope}) {
            for (Scoring s : {Scoring::ScaledDot, Scoring::Dot, Scoring::Gaussian}) {
                Config c = base;
                c.mask = mk;
                c.window = 2;
                c.positional = p;
                c.scoring = s;
                configs.push_back(c);
            }
        }
    }
    Config lin = base;
    lin.attention = AttentionKind::Linear;
    configs.push_back(lin);
    int derived_cells = 0;
    for (const Config& c : configs) {
        const Trace t = compute_trace(c);
        for (const Stage& st : t.stages) {
            const Mat M = st.matrix();  // [rows, cols]
            ASSERT_EQ(M.rows(), st.n_rows()) << st.name;
            for (int i = 0; i < M.rows(); ++i) {
                const RowVec r = st.row(i);  // [1, cols]
                ASSERT_EQ(r.cols(), M.cols()) << st.name << " row " << i;
                for (int j = 0; j < M.cols(); ++j) {
                    ASSERT_TRUE(same_bits(st.at(i, j), M(i, j)))
                        << st.name << " head " << st.head << " (" << i << ", " << j << "): at " << st.at(i, j)
                        << " vs matrix " << M(i, j);
                    ASSERT_TRUE(same_bits(r(j), M(i, j))) << st.name << " row " << i << " col " << j;
                }
            }
            if (st.derive_cell) derived_cells += int(M.size());
        }
    }
    EXPECT_GT(derived_cells, 0);  // the cell rules were exercised, not only stored data
}

}  // namespace
}  // namespace attnviz

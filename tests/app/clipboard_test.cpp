// Copy matrix as TSV: the text a spreadsheet receives — a header row of column labels, one line per
// row with its label, every value read back as the same float, masked cells as -inf, and a refusal
// (one line) above the size limit.
#include "app/clipboard.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/trace.hpp"

using namespace attnviz;
using namespace attnviz::app;

namespace {

std::vector<std::vector<std::string>> split_tsv(const std::string& text) {
    std::vector<std::vector<std::string>> rows;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        std::vector<std::string> fields;
        std::size_t pos = 0;
        while (true) {
            const auto tab = line.find('\t', pos);
            fields.push_back(line.substr(pos, tab == std::string::npos ? std::string::npos : tab - pos));
            if (tab == std::string::npos) break;
            pos = tab + 1;
        }
        rows.push_back(fields);
    }
    return rows;
}

TEST(Clipboard, MaskedScoresAsTsvWithTokenLabels) {
    Config cfg;
    cfg.text = "the cat sat down";
    cfg.d_model = 8;
    cfg.heads = 2;
    cfg.mask = MaskKind::Causal;
    const Trace trace = compute_trace(cfg);
    const Stage* s = trace.get("masked", 1);  // derived on demand, per head, with -inf above the diagonal
    ASSERT_NE(s, nullptr);
    const std::string text = stage_tsv(*s);
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.back(), '\n');
    const auto rows = split_tsv(text);
    ASSERT_EQ(int(rows.size()), s->n_rows() + 1);
    EXPECT_EQ(rows[0][0], s->rows.name + " \\ " + s->cols.name);
    ASSERT_EQ(int(rows[0].size()), s->n_cols() + 1);
    for (int j = 0; j < s->n_cols(); ++j) EXPECT_EQ(rows[0][std::size_t(j) + 1], s->cols.label(j)) << j;
    EXPECT_EQ(rows[1][0], "the");
    EXPECT_EQ(rows[0][2], "cat");
    for (int i = 0; i < s->n_rows(); ++i) {
        const auto& r = rows[std::size_t(i) + 1];
        ASSERT_EQ(int(r.size()), s->n_cols() + 1) << "row " << i;
        EXPECT_EQ(r[0], s->rows.label(i));
        for (int j = 0; j < s->n_cols(); ++j) {
            const std::string& cell = r[std::size_t(j) + 1];
            const float want = s->at(i, j);
            if (j > i) {
                EXPECT_EQ(cell, "-inf") << "masked(" << i << ", " << j << ")";
            } else {
                EXPECT_EQ(std::strtof(cell.c_str(), nullptr), want)
                    << "masked(" << i << ", " << j << "): " << cell << " vs " << want;
            }
        }
    }
}

TEST(Clipboard, LabelsWithTabsStayInOneCellAndBigMatricesAreRefused) {
    Stage s;
    s.name = "weights";
    s.rows.kind = Axis::Kind::QueryTokens;
    s.rows.name = "queries";
    s.rows.size = 2;
    s.rows.tokens = std::make_shared<std::vector<std::string>>(std::vector<std::string>{"a\tb", "c\nd"});
    s.cols = s.rows;
    s.cols.name = "keys";
    Mat m(2, 2);  // [2, 2]
    m << 0.25f, 0.75f, 1.0f, -0.5f;
    s.data = std::make_shared<const Mat>(m);
    EXPECT_EQ(stage_tsv(s), "queries \\ keys\ta b\tc d\na b\t0.25\t0.75\nc d\t1\t-0.5\n");

    Stage big;
    big.name = "scores";
    big.rows.size = 2048;
    big.cols.size = 1024;
    big.data = std::make_shared<const Mat>(Mat::Zero(2048, 1024));  // [2048, 1024]
    try {
        stage_tsv(big);
        ADD_FAILURE() << "a 2048×1024 matrix was copied";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("scores has 2048×1024 cells"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
}

}  // namespace

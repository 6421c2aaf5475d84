// Export: file names, files that really are what they claim (PNG decodes, .npy parses to the stage's
// matrix), never overwriting, and a clear error -- with no file left behind -- for unwritable folders.
// GCC 12 false positive inside its AVX-512 intrinsics when Eigen multiplies (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "app/panels/export_actions.hpp"
#include "common/matrix_expect.hpp"
#include "core/error.hpp"
#include "core/trace.hpp"
#include "io/figure.hpp"
#include "io/files.hpp"
#include "io/npy.hpp"

namespace fs = std::filesystem;
using namespace attnviz;
using namespace attnviz::app;

namespace {

Trace small_trace() {
    Config cfg;
    cfg.text = "the cat sat";
    cfg.d_model = 8;
    cfg.heads = 2;
    cfg.mask = MaskKind::Causal;
    return compute_trace(cfg);
}

// A fresh empty directory under the system temp dir, removed at the end of the test.
struct ExportDir {
    fs::path path;
    ExportDir() {
        path = fs::temp_directory_path() /
               ("attnviz-export-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~ExportDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    int file_count() const {
        int n = 0;
        for (auto it = fs::recursive_directory_iterator(path); it != fs::recursive_directory_iterator(); ++it)
            if (it->is_regular_file()) ++n;
        return n;
    }
};

}  // namespace

TEST(ExportNames, CarryStageHeadAndTimestamp) {
    EXPECT_EQ(export_file_name("weights", 2, "20261121-053012", ExportKind::Png),
              "weights_h2_20261121-053012.png");
    EXPECT_EQ(export_file_name("embedding", -1, "20261121-053012", ExportKind::Csv),
              "embedding_20261121-053012.csv");
    EXPECT_EQ(export_file_name("W_Q", 0, "20261121-053012", ExportKind::Npy), "W_Q_h0_20261121-053012.npy");
    EXPECT_EQ(export_file_name("weights", 3, "20261121-053012", ExportKind::HeadsGridPng),
              "weights_heads_20261121-053012.png");
    // Whatever the stage is called, the name is file-name safe.
    const std::string odd = export_file_name("a/b c", 1, "t", ExportKind::Png);
    EXPECT_EQ(odd.find('/'), std::string::npos);
    EXPECT_EQ(odd.find(' '), std::string::npos);
}

TEST(ExportNames, FolderNormalisation) {
    EXPECT_EQ(normalize_export_dir(""), ".");
    EXPECT_EQ(normalize_export_dir("out///"), "out");
    EXPECT_EQ(normalize_export_dir("/"), "/");
    if (const char* home = std::getenv("HOME"); home && *home) {
        EXPECT_EQ(normalize_export_dir("~/x"), std::string(home) + "/x");
    }
}

TEST(Export, PngCsvNpyAreWrittenIntoANewFolder) {
    const Trace tr = small_trace();
    ExportDir tmp;
    const std::string dir = (tmp.path / "nested" / "exports").string();  // does not exist yet
    const int wi = tr.find("weights", 1);
    ASSERT_GE(wi, 0);

    const std::string png = export_stage(tr, wi, ExportKind::Png, dir, 2, "20261121-053012");
    EXPECT_EQ(png, dir + "/weights_h1_20261121-053012.png");
    const Image img = read_png(png);
    EXPECT_GT(img.width, 0);
    EXPECT_GT(img.height, 0);

    const std::string npy = export_stage(tr, wi, ExportKind::Npy, dir, 1, "20261121-053012");
    EXPECT_MATRIX_NEAR(read_npy(npy), tr.stages[std::size_t(wi)].matrix(), 0.0);

    const std::string csv = export_stage(tr, wi, ExportKind::Csv, dir, 1, "20261121-053012");
    const std::string text = read_file(csv);
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), tr.n + 1);  // header + one line per query
    EXPECT_EQ(text.rfind("query tokens \\ key tokens,", 0), 0u) << text.substr(0, 80);

    const std::string grid = export_stage(tr, wi, ExportKind::HeadsGridPng, dir, 1, "20261121-053012");
    EXPECT_EQ(fs::path(grid).filename().string(), "weights_heads_20261121-053012.png");
    EXPECT_GT(read_png(grid).width, 0);
}

TEST(Export, MaskedStageCsvSaysMinusInf) {
    const Trace tr = small_trace();
    ExportDir tmp;
    const int mi = tr.find("masked", 0);
    ASSERT_GE(mi, 0);
    const std::string csv = export_stage(tr, mi, ExportKind::Csv, tmp.path.string(), 1, "t");
    EXPECT_NE(read_file(csv).find("-inf"), std::string::npos);  // causal mask: key 1 hidden from query 0
}

TEST(Export, NeverOverwritesAnEarlierExport) {
    const Trace tr = small_trace();
    ExportDir tmp;
    const int wi = tr.find("weights", 0);
    const std::string a = export_stage(tr, wi, ExportKind::Npy, tmp.path.string(), 1, "same");
    const std::string b = export_stage(tr, wi, ExportKind::Npy, tmp.path.string(), 1, "same");
    EXPECT_NE(a, b);
    EXPECT_EQ(fs::path(b).filename().string(), "weights_h0_same-2.npy");
    EXPECT_EQ(tmp.file_count(), 2);
}

TEST(Export, UnwritableFolderGivesAClearErrorAndNoFile) {
    const Trace tr = small_trace();
    ExportDir tmp;
    // A regular file where the folder should be: creating the folder must fail (even as root).
    const fs::path blocker = tmp.path / "not-a-folder";
    write_file_atomic(blocker.string(), "x");
    const int wi = tr.find("weights", 0);
    for (ExportKind kind : {ExportKind::Png, ExportKind::Csv, ExportKind::Npy, ExportKind::HeadsGridPng}) {
        try {
            export_stage(tr, wi, kind, (blocker / "sub").string(), 1, "t");
            ADD_FAILURE() << "export into a path below a file did not fail";
        } catch (const Error& e) {
            const std::string msg = e.what();
            EXPECT_NE(msg.find("not-a-folder"), std::string::npos) << msg;  // names the path
            EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;            // one sentence
        }
    }
    EXPECT_EQ(tmp.file_count(), 1);  // only the blocker itself
    // /proc refuses new entries even for root.
    EXPECT_THROW(export_stage(tr, wi, ExportKind::Png, "/proc/attnviz-export-test", 1, "t"), Error);
    EXPECT_FALSE(fs::exists("/proc/attnviz-export-test"));
}

TEST(Export, BadStageIndexIsAnError) {
    const Trace tr = small_trace();
    ExportDir tmp;
    EXPECT_THROW(export_stage(tr, -1, ExportKind::Png, tmp.path.string(), 1, "t"), Error);
    EXPECT_THROW(export_stage(tr, int(tr.stages.size()), ExportKind::Png, tmp.path.string(), 1, "t"), Error);
    EXPECT_EQ(tmp.file_count(), 0);
}

// The lines view exports as the heatmaps do: a PNG that decodes, an SVG of vector lines, named
// lines[_hH]_<time>, never overwriting; other kinds refused in one line, leaving nothing behind.
TEST(ExportLines, PngAndSvgAreWrittenWhole) {
    ExportDir dir;
    const Trace t = small_trace();
    const LinesInput in = lines_input(t, "attention lines");
    ASSERT_EQ(in.weights.size(), 2u);
    EXPECT_EQ(in.queries.size(), 3u);
    LinesOptions o;
    const std::string png = export_lines(in, o, ExportKind::Png, dir.path.string(), 2, "20261126-140000");
    EXPECT_EQ(fs::path(png).filename(), "lines_20261126-140000.png");
    const Image img = read_png(png);
    EXPECT_GT(img.width, 200);
    o.head = 1;
    const std::string svg = export_lines(in, o, ExportKind::Svg, dir.path.string(), 1, "20261126-140000");
    EXPECT_EQ(fs::path(svg).filename(), "lines_h1_20261126-140000.svg");
    std::FILE* f = std::fopen(svg.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    std::string text(1 << 16, '\0');
    text.resize(std::fread(text.data(), 1, text.size(), f));
    std::fclose(f);
    EXPECT_NE(text.find("<line "), std::string::npos);
    EXPECT_NE(text.find("</svg>"), std::string::npos);
    const std::string again = export_lines(in, o, ExportKind::Svg, dir.path.string(), 1, "20261126-140000");
    EXPECT_NE(again, svg);  // never overwritten
    EXPECT_THROW(export_lines(in, o, ExportKind::Csv, dir.path.string(), 1, "x"), Error);
    EXPECT_EQ(dir.file_count(), 3);
}

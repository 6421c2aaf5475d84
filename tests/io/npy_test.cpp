// .npy files: we write exactly what numpy writes, read what numpy writes (float32/float64, C and
// Fortran order, 1-D and 2-D), and refuse broken files with a reason.
#include "io/npy.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>

#include "common/matrix_expect.hpp"
#include "common/test_files.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/train_commands.hpp"

namespace attnviz {
namespace {

namespace fs = std::filesystem;
using test::error_of;

using test::TempDir;

/// A version 1.0 .npy file with the given header dict and data bytes.
std::string make_npy(const std::string& dict, const std::string& data) {
    std::string header = dict + "\n";
    const std::size_t len = header.size();
    return std::string("\x93NUMPY\x01\x00", 8) + char(len & 0xff) + char(len >> 8) + header + data;
}

bool have_numpy() {
    return ::access("/usr/bin/python3", X_OK) == 0 &&
           std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
}

std::string npy_error(const std::string& bytes) {
    try {
        parse_npy(bytes, "x.npy");
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

Mat sample(int rows, int cols) {
    Mat M(rows, cols);  // rows x cols
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) M(i, j) = float(i) * 1.25f - float(j) / 3.0f;
    return M;
}

TEST(Npy, HeaderIsWhatNumpyWrites) {
    const std::string b = npy_bytes(sample(3, 4));
    // Magic, version 1.0, header length 118, the dict, spaces up to a 64-byte boundary, newline.
    const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
    const std::string expected_header = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict +
                                        std::string(128 - 10 - dict.size() - 1, ' ') + "\n";
    ASSERT_EQ(b.size(), 128u + 12 * 4);
    EXPECT_EQ(b.substr(0, 128), expected_header);
    // Data is aligned to 64 bytes for every shape.
    for (int r : {0, 1, 7, 40, 12345})
        for (int c : {0, 1, 33}) {
            const std::string h = npy_bytes(Mat::Zero(r, c));
            const std::size_t header_total = h.size() - std::size_t(r) * std::size_t(c) * 4;
            EXPECT_EQ(header_total % 64, 0u) << r << "x" << c;
            EXPECT_EQ(h[header_total - 1], '\n');
            EXPECT_NE(h.find("'shape': (" + std::to_string(r) + ", " + std::to_string(c) + "), }"),
                      std::string::npos);
        }
}

TEST(Npy, RoundTripKeepsEveryBitIncludingInfinities) {
    Mat M = sample(5, 7);  // 5 x 7
    M(1, 2) = -std::numeric_limits<float>::infinity();
    M(3, 4) = std::numeric_limits<float>::denorm_min();
    M(0, 0) = -0.0f;
    const Mat R = parse_npy(npy_bytes(M));
    ASSERT_EQ(R.rows(), 5);
    ASSERT_EQ(R.cols(), 7);
    EXPECT_EQ(std::memcmp(R.data(), M.data(), sizeof(float) * 35), 0);
    EXPECT_TRUE(std::signbit(R(0, 0)));
}

TEST(Npy, WriteAndReadFile) {
    TempDir d;
    const Mat M = sample(2, 3);
    write_npy(d.path + "/m.npy", M);
    EXPECT_MATRIX_NEAR(read_npy(d.path + "/m.npy"), M, 0.0);
    EXPECT_THROW(read_npy(d.path + "/missing.npy"), Error);
}

TEST(Npy, ReadsCommittedNumpyFiles) {
    const std::string dir = ATTNVIZ_TEST_DATA;
    Mat expected(3, 4);  // 3 x 4, np.arange(12, dtype=float32).reshape(3, 4) / 7 - 0.5
    for (int k = 0; k < 12; ++k) expected(k / 4, k % 4) = float(k) / 7.0f - 0.5f;
    expected(1, 2) = -std::numeric_limits<float>::infinity();
    EXPECT_MATRIX_NEAR(read_npy(dir + "/numpy_f4_3x4.npy"), expected, 0.0);
    EXPECT_TRUE((read_npy(dir + "/numpy_f4_3x4.npy").array() == expected.array()).all());
    // The file we write for the same matrix is byte-identical to numpy's.
    EXPECT_EQ(npy_bytes(expected), read_file(dir + "/numpy_f4_3x4.npy"));

    Mat f(2, 3);  // 2 x 3, stored in Fortran order as float64
    f << 1.5f, -2.25f, 3.0f, 4.0f, float(5e-8), -6.125f;
    EXPECT_MATRIX_NEAR(read_npy(dir + "/numpy_f8_fortran_2x3.npy"), f, 0.0);
    EXPECT_TRUE((read_npy(dir + "/numpy_f8_fortran_2x3.npy").array() == f.array()).all());

    Mat v(5, 1);  // a 1-D array becomes one column
    v << 1, 2, 3, 4, 5;
    EXPECT_MATRIX_NEAR(read_npy(dir + "/numpy_f4_1d_5.npy"), v, 0.0);
}

TEST(Npy, AgreesWithNumpyBothWays) {
    if (!have_numpy())
        GTEST_SKIP() << "/usr/bin/python3 with numpy not available (the committed files are checked above)";
    TempDir d;
    const Mat M = sample(4, 6);
    write_npy(d.path + "/ours.npy", M);
    // numpy reads our file with the right dtype, order and values, and writes the same bytes back.
    const std::string script =
        "import numpy as np, sys\n"
        "d = sys.argv[1]\n"
        "a = np.load(d + '/ours.npy')\n"
        "assert a.dtype == np.dtype('<f4') and a.shape == (4, 6) and a.flags['C_CONTIGUOUS'], (a.dtype, "
        "a.shape)\n"
        "i, j = np.meshgrid(np.arange(4), np.arange(6), indexing='ij')\n"
        "exp = i.astype(np.float32) * np.float32(1.25) - j.astype(np.float32) / np.float32(3.0)\n"
        "assert np.array_equal(a, exp), (a, exp)\n"
        "np.save(d + '/again.npy', a)\n"
        "np.save(d + '/f8_fortran.npy', np.asfortranarray(exp.astype(np.float64)))\n"
        "np.save(d + '/big.npy', np.ones((1234, 3), dtype=np.float32))\n";
    write_file_atomic(d.path + "/check.py", script);
    ASSERT_EQ(std::system(("/usr/bin/python3 " + d.path + "/check.py " + d.path).c_str()), 0);
    EXPECT_EQ(read_file(d.path + "/again.npy"), read_file(d.path + "/ours.npy"));
    EXPECT_MATRIX_NEAR(read_npy(d.path + "/f8_fortran.npy"), M, 1e-7);
    EXPECT_EQ(read_file(d.path + "/big.npy"), npy_bytes(Mat::Ones(1234, 3)));
}

TEST(Npy, BrokenFilesGetAReason) {
    const std::string good = npy_bytes(sample(2, 2));
    EXPECT_EQ(npy_error(""), "broken .npy file x.npy: bad magic (not a NumPy .npy file)");
    EXPECT_EQ(npy_error("PK\x03\x04 zip file"), "broken .npy file x.npy: bad magic (not a NumPy .npy file)");
    EXPECT_EQ(npy_error(good.substr(0, 8)), "broken .npy file x.npy: truncated header");
    EXPECT_EQ(npy_error(good.substr(0, 50)), "broken .npy file x.npy: truncated header");
    EXPECT_EQ(npy_error(good.substr(0, good.size() - 3)),
              "broken .npy file x.npy: truncated data (expected 16 bytes for shape 2 x 2, found 13)");
    EXPECT_EQ(npy_error(good + "xx"), "broken .npy file x.npy: 2 unexpected bytes after the data");

    auto with_header = [&](std::string from, std::string to) {
        std::string b = good;
        const auto p = b.find(from);
        EXPECT_NE(p, std::string::npos);
        b.replace(p, from.size(), to);  // same length keeps the header length valid
        return b;
    };
    EXPECT_EQ(npy_error(with_header("'<f4'", "'>f4'")),
              "broken .npy file x.npy: unsupported dtype '>f4' (attnviz reads little-endian float32 '<f4' or "
              "float64 '<f8')");
    EXPECT_NE(npy_error(with_header("'<f4'", "'<i4'")).find("unsupported dtype '<i4'"), std::string::npos);
    EXPECT_EQ(npy_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1), }", "abcd")),
              "broken .npy file x.npy: expected a 1-D or 2-D array, got 3-D");
    // A hand-made minimal file (no padding, double quotes) is fine.
    EXPECT_EQ(parse_npy(make_npy("{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (1,)}",
                                 std::string("\x00\x00\x80\x3f", 4)))(0, 0),
              1.0f);
    EXPECT_EQ(npy_error(with_header("(2, 2)", "()    ")),
              "broken .npy file x.npy: expected a 1-D or 2-D array, got 0-D");
    EXPECT_NE(npy_error(with_header("(2, 2)", "(a, b)")).find("bad header"), std::string::npos);
    EXPECT_NE(npy_error(with_header("False", "Maybe")).find("fortran_order"), std::string::npos);
    EXPECT_NE(npy_error(with_header("'shape'", "'shope'")).find("no 'shape'"), std::string::npos);
    EXPECT_NE(npy_error(with_header("\x01\x00", "\x07\x00")).find("unsupported format version 7.0"),
              std::string::npos);
    // Absurd sizes are refused, not allocated.
    EXPECT_EQ(
        npy_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999), }", "")),
        "broken .npy file x.npy: array too large (99999999999 x 99999)");
    // No data but two billion empty rows (found by tests/fuzz/npy: writing it back walked every row).
    EXPECT_EQ(npy_error(make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1779508901, 0), }", "")),
              "broken .npy file x.npy: array too large (1779508901 x 0)");
    EXPECT_NE(npy_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2)", ""))
                  .find("bad header"),
              std::string::npos);
}

// Sizes are multiplied without ever wrapping (issue 22: a token file of shape (2^32, 2^32) gave B·n = 0,
// passed the size check and crashed `attnviz grad`).
TEST(Npy, ShapesWhoseProductWouldWrapAreRefused) {
    auto header = [](const std::string& descr, const std::string& shape) {
        std::string h = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
        h += std::string((64 - (10 + h.size() + 1) % 64) % 64, ' ') + "\n";
        std::string out = "\x93NUMPY";
        out += char(1);
        out += char(0);
        out += char(h.size() & 0xff);
        out += char(h.size() >> 8);
        return out + h;
    };
    const std::string wrap = header("<i8", "(4294967296, 4294967296)");
    EXPECT_EQ(error_of([&] { parse_npy_header(wrap, "t.npy: "); }),
              "t.npy: array too large (4294967296 x 4294967296)");
    int rows = 0, cols = 0;
    EXPECT_EQ(error_of([&] { parse_token_npy(wrap, "t.npy", rows, cols); }),
              "token file t.npy: array too large (4294967296 x 4294967296)");
    EXPECT_NE(error_of([&] {
                  parse_token_npy(header("<i8", "(9223372036854775808, 2)"), "t.npy", rows, cols);
              }).find("array too large"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  parse_token_npy(header("<i8", "(18446744073709551616, 2)"), "t.npy", rows, cols);
              }).find("shape is not a tuple of sizes"),
              std::string::npos);
    EXPECT_NE(
        error_of([&] { parse_npy(header("<f4", "(4294967296, 4294967296)"), "x.npy"); }).find("too large"),
        std::string::npos);
    // A product that fits but does not match the data is a size error, with the right byte count.
    EXPECT_EQ(error_of([&] { parse_token_npy(header("<i4", "(3, 5)"), "t.npy", rows, cols); }),
              "token file t.npy: holds 0 data bytes; shape and dtype need 60");
}

TEST(Npy, OneWriterForEveryShapeAndDtype) {
    const float v[3] = {1.0f, -2.5f, 0.0f};
    const std::string one = npy_f32_bytes(v, {3});
    EXPECT_EQ(one.size() % 64, 12u);  // header padded to 64 bytes, then 12 data bytes
    const Mat M = parse_npy(one, "one.npy");
    ASSERT_EQ(M.rows(), 3);
    EXPECT_EQ(M(1, 0), -2.5f);
    const std::string scalar = npy_f64_scalar_bytes(0.25);
    const NpyHeader h = parse_npy_header(scalar, "s: ");
    EXPECT_EQ(h.descr, "<f8");
    EXPECT_TRUE(h.shape.empty());
    EXPECT_EQ(h.count, 1u);
    EXPECT_EQ(h.data_start % 64, 0u);
    EXPECT_EQ(scalar.size(), h.data_start + 8);
}

TEST(Npy, CsvUsesShortestExactTextAndMinusInf) {
    Mat M(2, 3);  // 2 x 3
    M << 0.1f, -2.0f, 1e-8f, -std::numeric_limits<float>::infinity(), 3.0f, 0.0f;
    EXPECT_EQ(csv_text(M), "0.1,-2,1e-08\n-inf,3,0\n");
    // Every value reads back exactly.
    const Mat S = sample(3, 3) / 7.0f;
    const std::string csv = csv_text(S);
    std::size_t pos = 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            const auto end = csv.find_first_of(",\n", pos);
            EXPECT_EQ(std::strtof(csv.substr(pos, end - pos).c_str(), nullptr), S(i, j));
            pos = end + 1;
        }
    TempDir d;
    write_csv(d.path + "/m.csv", M);
    EXPECT_EQ(read_file(d.path + "/m.csv"), csv_text(M));
}

TEST(Csv, LabelledHasAHeaderOfKeyTokensAndAColumnOfQueryTokensExactly) {
    Mat M(2, 3);  // [2, 3]
    M << 0.5f, 0.25f, 0.25f, -std::numeric_limits<float>::infinity(), 1.0f, 0.0f;
    Axis rows;
    rows.kind = Axis::Kind::QueryTokens;
    rows.name = "query tokens";
    rows.size = 2;
    rows.tokens = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"the", "cat"});
    Axis cols = rows;
    cols.kind = Axis::Kind::KeyTokens;
    cols.name = "key tokens";
    cols.size = 3;
    cols.tokens =
        std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"a,b", "say \"hi\"", " x"});
    EXPECT_EQ(csv_text_labelled(M, rows, cols),
              "query tokens \\ key tokens,\"a,b\",\"say \"\"hi\"\"\",\" x\"\n"
              "the,0.5,0.25,0.25\n"
              "cat,-inf,1,0\n");
    Axis dims;  // a dimension axis is labelled by index
    dims.kind = Axis::Kind::Dimension;
    dims.name = "d_k";
    dims.size = 3;
    EXPECT_EQ(csv_text_labelled(M, rows, dims),
              "query tokens \\ d_k,0,1,2\nthe,0.5,0.25,0.25\ncat,-inf,1,0\n");
}

}  // namespace
}  // namespace attnviz

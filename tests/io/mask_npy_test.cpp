// Custom masks imported from numpy: nonzero = hidden; broken files give a message, not a crash.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "core/ops.hpp"
#include "io/files.hpp"
#include "io/npy.hpp"

namespace attnviz {
namespace {

std::string temp_path(const std::string& name) {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/attnviz_mask_test_" + std::to_string(::getpid()) +
           "_" + name;
}

TEST(MaskNpy, NonzeroCellsAreHiddenAndTheMaskMatchesCausal) {
    const int n = 5;
    Mat M = Mat::Zero(n, n);  // n x n: the causal mask as numpy's np.triu(np.ones((n, n)), 1)
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j) M(i, j) = (i + j) % 2 ? 1.0f : 2.5f;  // any nonzero hides
    const std::string path = temp_path("causal.npy");
    write_npy(path, M);
    const MaskGrid grid = read_mask_npy(path);
    std::remove(path.c_str());
    ASSERT_EQ(grid.rows, n);
    ASSERT_EQ(grid.cols, n);
    const BoolMat causal = causal_mask(n, n);  // allowed = j <= i
    const BoolMat from_file = custom_mask(n, n, grid);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            EXPECT_EQ(from_file(i, j), causal(i, j)) << "cell (" << i << ", " << j << ")";
}

TEST(MaskNpy, BrokenFilesAreClearErrors) {
    const std::string junk = temp_path("junk.npy");
    write_file_atomic(junk, "not a numpy file at all");
    try {
        read_mask_npy(junk);
        ADD_FAILURE() << "a broken file was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("junk.npy"), std::string::npos) << e.what();
    }
    std::remove(junk.c_str());
    EXPECT_THROW(read_mask_npy(temp_path("does_not_exist.npy")), Error);

    Mat M = Mat::Zero(2, 2);
    M(1, 0) = std::nanf("");
    const std::string nan_path = temp_path("nan.npy");
    write_npy(nan_path, M);
    try {
        read_mask_npy(nan_path);
        ADD_FAILURE() << "NaN was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("(1, 0)"), std::string::npos) << e.what();
    }
    std::remove(nan_path.c_str());
}

// Oversize and Fortran-order masks: the size is refused from the header alone (a 2 GiB sparse file
// costs nothing to make), and Fortran order lands on the right cells.
TEST(MaskNpy, OversizeHeaderIsRefusedBeforeReadingTheData) {
    const std::string big = temp_path("big.npy");
    // A '<f4' 20000 x 20000 header followed by no data.
    std::string header("\x93NUMPY\x01\x00", 8);
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (20000, 20000), }";
    while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
    dict += '\n';
    header += char(dict.size() & 0xff);
    header += char(dict.size() >> 8);
    header += dict;
    write_file_atomic(big, header);
    try {
        read_mask_npy(big);
        ADD_FAILURE() << "a 20000×20000 mask was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("at most 16384×16384"), std::string::npos) << e.what();
    }
    std::remove(big.c_str());
    EXPECT_THROW(read_mask_npy("/dev/zero"), Error);  // not a regular file: refused, never read
}

TEST(MaskNpy, FortranOrderAndFloat64) {
    const std::string path = std::string(ATTNVIZ_TEST_DATA) + "/numpy_f8_fortran_2x3.npy";
    const Mat M = read_npy(path);  // 2 x 3
    const MaskGrid grid = read_mask_npy(path);
    ASSERT_EQ(grid.rows, 2);
    ASSERT_EQ(grid.cols, 3);
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            EXPECT_EQ(grid.is_blocked(i, j), M(i, j) != 0.0f) << "cell (" << i << ", " << j << ")";
}

}  // namespace
}  // namespace attnviz

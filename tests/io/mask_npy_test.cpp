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

}  // namespace
}  // namespace attnviz

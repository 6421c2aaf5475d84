// Fuzz harness: .npy bytes through parse_npy (what read_npy reads) and, through a memory file, the
// streamed mask loader read_mask_npy. Either attnviz::Error or an array that writes back and reads
// back to the same shape and values; the mask agrees with the array cell by cell.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "fuzz_check.hpp"
#include "io/npy.hpp"
#include "memory_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace attnviz;
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    bool parsed = false;
    Mat M;
    try {
        M = parse_npy(bytes, "fuzz.npy");
        parsed = true;
        const Mat again = parse_npy(npy_bytes(M), "again.npy");
        FUZZ_CHECK(again.rows() == M.rows() && again.cols() == M.cols());
        for (Eigen::Index i = 0; i < M.rows(); ++i)
            for (Eigen::Index j = 0; j < M.cols(); ++j)
                FUZZ_CHECK((std::isnan(M(i, j)) && std::isnan(again(i, j))) || M(i, j) == again(i, j));
    } catch (const Error&) {
    }
    try {
        const MaskGrid grid = read_mask_npy(fuzz_memory_file(data, size));
        FUZZ_CHECK(parsed);  // the streamed loader accepts nothing parse_npy refuses
        FUZZ_CHECK(grid.rows == M.rows() && grid.cols == M.cols());
        for (int i = 0; i < grid.rows; ++i)
            for (int j = 0; j < grid.cols; ++j) FUZZ_CHECK(grid.is_blocked(i, j) == (M(i, j) != 0.0f));
    } catch (const Error&) {
    }
    return 0;
}

// Fuzz harness: .npy bytes through parse_npy (what read_npy reads) and, through a memory file, the
// streamed mask loader read_mask_npy. Either attnviz::Error or an array that writes back and reads
// back to the same shape and values; the mask agrees with the array cell by cell.
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "fuzz_check.hpp"
#include "io/npy.hpp"

namespace {

/// A memory-backed regular file holding the current input, opened by path as a user's file would be.
const std::string& memory_file(const uint8_t* data, size_t size) {
    static const int fd = ::memfd_create("attnviz-npy-fuzz", MFD_CLOEXEC);
    static const std::string path = "/proc/self/fd/" + std::to_string(fd);
    FUZZ_CHECK(fd >= 0);
    FUZZ_CHECK(::ftruncate(fd, 0) == 0);
    std::size_t done = 0;
    while (done < size) {
        const ssize_t w = ::pwrite(fd, data + done, size - done, off_t(done));
        FUZZ_CHECK(w > 0);
        done += std::size_t(w);
    }
    return path;
}

}  // namespace

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
        const MaskGrid grid = read_mask_npy(memory_file(data, size));
        FUZZ_CHECK(parsed);  // the streamed loader accepts nothing parse_npy refuses
        FUZZ_CHECK(grid.rows == M.rows() && grid.cols == M.cols());
        for (int i = 0; i < grid.rows; ++i)
            for (int j = 0; j < grid.cols; ++j) FUZZ_CHECK(grid.is_blocked(i, j) == (M(i, j) != 0.0f));
    } catch (const Error&) {
    }
    return 0;
}

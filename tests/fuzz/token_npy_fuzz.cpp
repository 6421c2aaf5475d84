// Fuzz harness: .npy bytes through parse_token_npy (the token ids `attnviz grad --tokens` reads). Either
// attnviz::Error or [rows, cols] ids with rows >= 1, cols >= 2, within the file's size.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "fuzz_check.hpp"
#include "io/train_commands.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace attnviz;
    if (size > kMaxTokenFileBytes) return 0;  // read_file refuses these before parsing
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    try {
        int rows = 0, cols = 0;
        const std::vector<std::int64_t> ids = parse_token_npy(bytes, "fuzz.npy", rows, cols);
        FUZZ_CHECK(rows >= 1 && cols >= 2);
        FUZZ_CHECK(ids.size() == std::size_t(rows) * std::size_t(cols));
        FUZZ_CHECK(ids.size() <= size);  // at least one byte per id
    } catch (const Error&) {
    }
    return 0;
}

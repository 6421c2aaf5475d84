// Shared by the fuzz harnesses that test a file reader: the current input as a memory-backed
// regular file, opened by path as a user's file would be (memfd: no disk writes per execution).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.hpp"

/// The path of a memory file holding exactly `size` bytes of `data` (one file per process, rewritten
/// on every call; the path stays valid until the next call).
inline const std::string& fuzz_memory_file(const uint8_t* data, size_t size) {
    static const int fd = ::memfd_create("attnviz-fuzz-input", MFD_CLOEXEC);
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

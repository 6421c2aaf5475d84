// Shared by the command-line harnesses: the input as argv entries, split on newlines or NUL bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

inline std::vector<std::string> fuzz_argv(const uint8_t* data, size_t size) {
    std::vector<std::string> args;
    std::string cur;
    for (std::size_t i = 0; i < size; ++i) {
        const char c = char(data[i]);
        if (c == '\n' || c == '\0') {
            args.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    args.push_back(cur);
    return args;
}

// Shared by the fuzz harnesses: a property violation aborts (libFuzzer and the replay test both
// report it as a crash, naming the input).
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                                          \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            std::fprintf(stderr, "%s:%d: fuzz property failed: %s\n", __FILE__, __LINE__, #cond); \
            std::abort();                                                                         \
        }                                                                                         \
    } while (0)

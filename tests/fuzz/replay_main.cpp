// Replays files through a libFuzzer harness without libFuzzer: the normal (gcc) build links every
// tests/fuzz/*_fuzz.cpp with this main(), and ctest runs it on the harness's checked-in corpus
// (`fuzz_replay.<name>`), so a regression in any parser is caught without clang.
//
//   fuzz_replay_scene DIR_OR_FILE...    every regular file under each directory, sorted by name
//
// A crash, sanitizer report or uncaught exception fails the test; the file being run is printed
// first so the failing input is named.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        if (fs::is_directory(argv[i])) {
            for (const auto& e : fs::recursive_directory_iterator(argv[i]))
                if (e.is_regular_file()) files.push_back(e.path().string());
        } else {
            files.push_back(argv[i]);
        }
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
        std::fprintf(stderr, "fuzz replay: no corpus files given\n");
        return 1;
    }
    for (const std::string& f : files) {
        std::fprintf(stderr, "fuzz replay: %s\n", f.c_str());
        std::ifstream in(f, std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!in.good() && !in.eof()) {
            std::fprintf(stderr, "fuzz replay: cannot read %s\n", f.c_str());
            return 1;
        }
        LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    }
    std::fprintf(stderr, "fuzz replay: %zu inputs, no crash\n", files.size());
    return 0;
}

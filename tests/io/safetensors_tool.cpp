// Test-only tool for tests/reference/safetensors_test.py (built with the tests, never installed):
//
//   safetensors_tool write OUT   writes a fixed set of tensors (values from formulas and edge cases,
//                                in F32, BF16 and F16) with io/safetensors' writer
//   safetensors_tool read IN     reads a file (or a checkpoint folder) with io/safetensors' reader and
//                                prints one JSON line per tensor: name, dtype, shape, float32 values
//
// The Python test builds the same tensors itself and checks the bytes and values. A refused file gives
// one line on stderr and exit status 1.
#include <sys/stat.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/safetensors.hpp"

namespace {

using namespace attnviz;

/// The formula tensors: value i of tensor k is ((37·i + 11·k) mod 101 − 50) / 7 (float32
/// division), times `scale` (float32 product). Python computes the same with numpy float32.
std::vector<float> formula(int k, int count, float scale) {
    std::vector<float> v(std::size_t(count), 0.0f);  // [count]
    for (int i = 0; i < count; ++i) v[std::size_t(i)] = float((37 * i + 11 * k) % 101 - 50) / 7.0f * scale;
    return v;
}

/// Edge cases as float32 bit patterns (the Python test has the same list).
const std::vector<std::uint32_t> kEdgeBits = {
    0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000,
    0x477fe000,  // 65504, the largest half
    0x477fef00,  // 65519
    0x477ff000,  // 65520: rounds to inf in half
    0x47c35000,  // 100000
    0x322bcc77,  // 1e-8
    0x33800000,  // 2^-24, the smallest half subnormal
    0x33000000,  // 2^-25: a tie, rounds to 0
    0x33400000,  // 1.5 · 2^-25
    0x33a00000,  // 2.5 · 2^-24: a half subnormal tie, rounds to 2 · 2^-24
    0x38800000,  // 2^-14, the smallest normal half
    0x387fc000,  // just below 2^-14
    0x3f808000,  // 1 + 2^-8: a BF16 tie, rounds down to even
    0x3f818000,  // 1 + 3 · 2^-8: a BF16 tie, rounds up to even
    0x3f800800,  // 1 + 2^-12 (below a half ulp)
    0x3f801000,  // 1 + 2^-11: a half tie
    0x3f803000,  // 1 + 3 · 2^-11: a half tie, up
    0x7f7fffff,  // FLT_MAX: inf in BF16 and half
    0x00800000,  // FLT_MIN
    0x00000001,  // the smallest float subnormal
    0x3dcccccd,  // 0.1
    0x3eaaaaab,  // 1/3
    0x40490fdb,  // pi
    0xc2f6e979,  // -123.456
};

std::vector<float> edge_values() {
    std::vector<float> v;  // [kEdgeBits.size()]
    for (const std::uint32_t b : kEdgeBits) {
        float f;
        std::memcpy(&f, &b, 4);
        v.push_back(f);
    }
    return v;
}

int write_command(const std::string& out) {
    const char* dtypes[] = {"F32", "BF16", "F16"};
    std::vector<std::vector<float>> keep;  // the value buffers outlive the write
    std::vector<SafetensorsWriteTensor> tensors;
    for (int k = 0; k < 3; ++k) {
        std::string lower = dtypes[k];
        for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
        keep.push_back(formula(k, 4 * 6, 1.0f));
        tensors.push_back({"formula." + lower, dtypes[k], {4, 6}, keep.back().data(), 24});
        keep.push_back(formula(k + 3, 2 * 3 * 5, 1000.0f));
        tensors.push_back({"scaled." + lower, dtypes[k], {2, 3, 5}, keep.back().data(), 30});
        keep.push_back(edge_values());
        tensors.push_back({"edge." + lower,
                           dtypes[k],
                           {std::int64_t(kEdgeBits.size())},
                           keep.back().data(),
                           kEdgeBits.size()});
    }
    keep.push_back({42.5f});
    tensors.push_back({"scalar", "F32", {}, keep.back().data(), 1});
    tensors.push_back({"empty", "BF16", {0, 4}, nullptr, 0});
    keep.push_back({1.0f, -2.0f});
    tensors.push_back({"layer.\xc3\xbc\"q\"\t", "F16", {2}, keep.back().data(), 2});  // ü, quotes, a tab
    write_safetensors(out, tensors, {{"format", "pt"}, {"producer", "attnviz safetensors_tool"}});
    return 0;
}

std::string number(float f) {
    if (std::isnan(f)) return "NaN";
    if (std::isinf(f)) return f > 0 ? "Infinity" : "-Infinity";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", double(f));  // the exact value (float → double is exact)
    return buf;
}

int read_command(const std::string& in) {
    struct stat st {};
    std::vector<SafetensorsTensor> tensors;
    std::map<std::string, std::string> metadata;
    SafetensorsTable table;  // keeps the mappings alive
    if (::stat(in.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        table = open_safetensors_dir(in);
        for (const auto& [name, t] : table.tensors) tensors.push_back(t);
    } else {
        table.files.push_back(SafetensorsFile::open(in));
        tensors = table.files.back().tensors();
        metadata = table.files.back().metadata();
    }
    auto text = [](const std::string& s) { return nlohmann::json(s).dump(-1, ' ', false); };
    std::string line = "{\"metadata\":{";
    for (const auto& [k, v] : metadata) line += (line.back() == '{' ? "" : ",") + text(k) + ":" + text(v);
    std::printf("%s}}\n", line.c_str());
    for (const SafetensorsTensor& t : tensors) {
        line = "{\"name\":" + text(t.name) + ",\"dtype\":" + text(t.dtype) + ",\"shape\":[";
        for (std::size_t i = 0; i < t.shape.size(); ++i) line += (i ? "," : "") + std::to_string(t.shape[i]);
        line += "],\"values\":[";
        const std::vector<float> v = to_float32(t);
        for (std::size_t i = 0; i < v.size(); ++i) line += (i ? "," : "") + number(v[i]);
        std::printf("%s]}\n", line.c_str());
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3 || (std::string(argv[1]) != "write" && std::string(argv[1]) != "read")) {
        std::fprintf(stderr, "usage: safetensors_tool write OUT | read IN\n");
        return 2;
    }
    try {
        return std::string(argv[1]) == "write" ? write_command(argv[2]) : read_command(argv[2]);
    } catch (const attnviz::Error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}

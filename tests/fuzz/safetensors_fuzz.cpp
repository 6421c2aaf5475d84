// Fuzz harness: bytes as a .safetensors file, through SafetensorsFile::from_bytes and, mapped from a
// memory file, SafetensorsFile::open (both must agree: same tensors, or the same one-line error).
// Either attnviz::Error, or a file whose tensors tile the data section exactly, whose F32/BF16/F16
// tensors convert to float32, and which writes back (safetensors_bytes) and reads back to the same
// values — the same bytes, but for NaN payloads, which become PyTorch's quiet NaN.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "fuzz_check.hpp"
#include "io/safetensors.hpp"
#include "memory_file.hpp"

namespace {

bool same_float(float a, float b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    std::uint32_t x, y;
    std::memcpy(&x, &a, 4);
    std::memcpy(&y, &b, 4);
    return x == y;
}

bool convertible(const std::string& dtype) {
    return dtype == "F32" || dtype == "BF16" || dtype == "F16";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace attnviz;
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    std::optional<SafetensorsFile> f;
    std::string error;
    try {
        f = SafetensorsFile::from_bytes(bytes, "fuzz");
    } catch (const Error& e) {
        error = e.what();
        FUZZ_CHECK(error.find('\n') == std::string::npos);
    }
    // The mapped file gives the same answer (messages name the path instead of "fuzz").
    const std::string& path = fuzz_memory_file(data, size);
    try {
        const SafetensorsFile g = SafetensorsFile::open(path);
        FUZZ_CHECK(f.has_value() && g.tensors().size() == f->tensors().size());
    } catch (const Error& e) {
        FUZZ_CHECK(!f.has_value());
        FUZZ_CHECK(std::string(e.what()).substr(path.size()) == error.substr(4));
    }
    if (!f) return 0;

    // The ranges tile the data section: in order, no gap, no overlap, nothing after.
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | data[i];
    std::uint64_t at = 0;
    for (const SafetensorsTensor& t : f->tensors()) {
        FUZZ_CHECK(t.begin == at && t.end >= t.begin);
        FUZZ_CHECK(t.bytes() == t.count() * safetensors_dtype_size(t.dtype));
        FUZZ_CHECK(std::memcmp(t.data, data + 8 + n + t.begin, t.bytes()) == 0);
        at = t.end;
    }
    FUZZ_CHECK(at == size - 8 - n);

    // Convert, write back, read back.
    std::vector<std::vector<float>> values;  // [tensor][count]
    values.reserve(f->tensors().size());
    std::vector<SafetensorsWriteTensor> out;
    for (const SafetensorsTensor& t : f->tensors()) {
        if (!convertible(t.dtype)) continue;
        values.push_back(to_float32(t));
        out.push_back({t.name, t.dtype, t.shape, values.back().data(), t.count()});
    }
    std::string again;
    try {
        again = safetensors_bytes(out, f->metadata());
    } catch (const Error& e) {
        std::fprintf(stderr, "writing back failed: %s\n", e.what());
        FUZZ_CHECK(false);
    }
    const SafetensorsFile g = SafetensorsFile::from_bytes(again, "again");
    FUZZ_CHECK(g.tensors().size() == out.size());
    FUZZ_CHECK(g.metadata() == f->metadata());
    for (std::size_t i = 0; i < out.size(); ++i) {
        const SafetensorsTensor* t = g.find(out[i].name);
        FUZZ_CHECK(t != nullptr && t->dtype == out[i].dtype && t->shape == out[i].shape);
        const std::vector<float> v = to_float32(*t);
        FUZZ_CHECK(v.size() == values[i].size());
        for (std::size_t k = 0; k < v.size(); ++k) FUZZ_CHECK(same_float(v[k], values[i][k]));
        const SafetensorsTensor* orig = f->find(out[i].name);
        if (out[i].dtype == "F32") FUZZ_CHECK(std::memcmp(orig->data, t->data, t->bytes()) == 0);
    }
    return 0;
}

// Fuzz harness: bytes as a .safetensors file, through SafetensorsFile::from_bytes and, mapped from a
// memory file, SafetensorsFile::open (both must agree: same tensors, or the same one-line error).
// Either attnviz::Error, or a file whose tensors tile the data section exactly, whose F32/BF16/F16
// tensors convert to float32, and which writes back (safetensors_bytes) and reads back to the same
// values — the same bytes, but for NaN payloads, which become PyTorch's quiet NaN.
//
// An input starting with "\xffRCP" is a recipe (tests/fuzz/recipe.hpp): its expansion's head is the
// header JSON, its tail (after the first NUL) the data section, and the harness adds the 8-byte
// length. The fuzzer's structure-aware mutator (ATTNVIZ_FUZZ_MUTATORS) writes such recipes: thousands
// of tensors (zero-size or tiling), 100 MiB headers of string arrays, deep nesting, huge shapes and
// offsets near 2^32 / 2^63 / 2^64, other dtypes; and it mutates raw files through their parsed header.
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
#include "recipe.hpp"

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

int check_file(const std::string& bytes) {
    using namespace attnviz;
    const uint8_t* data = reinterpret_cast<const uint8_t*>(bytes.data());
    const std::size_t size = bytes.size();
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

std::string le64(std::uint64_t n) {
    std::string s(8, '\0');
    for (int i = 0; i < 8; ++i) s[std::size_t(i)] = char((n >> (8 * i)) & 0xff);
    return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (!fuzz_recipe::is_recipe(data, size))
        return check_file(std::string(reinterpret_cast<const char*>(data), size));
    std::string header, tail;
    fuzz_recipe::split_head_tail(fuzz_recipe::expand_recipe(data, size), header, tail);
    std::string file = le64(header.size());
    file.reserve(8 + header.size() + tail.size());
    file += header;
    file += tail;
    header.clear();
    header.shrink_to_fit();
    return check_file(file);
}

#ifdef ATTNVIZ_FUZZ_MUTATORS
// ------------------------------------------------------------------------------------------------
// Structure-aware mutator (libFuzzer binary only)
// ------------------------------------------------------------------------------------------------
#include <nlohmann/json.hpp>

namespace {

using fuzz_mutator::Rng;

const std::vector<std::string> kDtypes = {"F32",     "F16", "BF16", "U8",  "I8",          "I16",  "I32",
                                          "I64",     "U16", "U32",  "U64", "F64",         "BOOL", "F8_E4M3",
                                          "F8_E5M2", "Q4",  "f32",  "",    "__metadata__"};

std::string gen_shape(Rng& r) {
    const std::size_t dims = r(4);
    std::string s = "[";
    for (std::size_t i = 0; i < dims; ++i)
        s += (i ? "," : "") +
             (r.chance(50) ? std::to_string(r(5)) : r.pick(fuzz_mutator::interesting_numbers()));
    return s + "]";
}

/// A fresh recipe: a first member, then groups of tensors / metadata / long arrays / nesting, then the
/// data section the tiling tensors need.
std::string gen_recipe(Rng& r) {
    std::string h = "{";
    std::uint64_t at = 0;  // bytes the tiling groups take
    switch (r(3)) {
        case 0:
            h += R"("__metadata__":{"format":"pt"})";
            break;
        case 1:
            h += R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
            at = 8;
            break;
        default:
            h += R"("__metadata__":{})";
            break;
    }
    const int groups = 1 + int(r(3));
    for (int g = 0; g < groups; ++g) {
        const std::string n = std::to_string(fuzz_mutator::pick_count(r));
        const std::string e = std::to_string(at);
        switch (r(7)) {
            case 0:  // many zero-size tensors at one offset
                h += "\x01" + n + ":,\"z" + std::to_string(g) + "_\x03\":{\"dtype\":\"" + r.pick(kDtypes) +
                     "\",\"shape\":[0],\"data_offsets\":[" + e + "," + e + "]}\x02";
                break;
            case 1: {  // many one-byte tensors that tile the data
                h += "\x01" + n + "+" + e + ":,\"b" + std::to_string(g) +
                     "_\x03\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[\x03,\x04]}\x02";
                at += std::stoull(n);
                break;
            }
            case 2:  // long metadata
                h += ",\"__metadata__\":{\"k\":\"v\"\x01" + n + ":,\"k\x03\":\"v\"\x02}";
                break;
            case 3: {  // a long array of strings (numbers, objects), up to the 100 MiB header limit
                const std::string m = r.chance(50) ? n
                                                   : std::to_string(r.pick(std::vector<std::uint64_t>{
                                                         1000000, 10000000, 30000000, 34000000}));
                h += ",\"x" + std::to_string(g) + "\":[\"\"\x01" + m + ":," +
                     (r.chance(70)   ? "\"\""
                      : r.chance(50) ? "0"
                                     : "{}") +
                     "\x02]";
                break;
            }
            case 4: {  // deep nesting
                const std::string d = std::to_string(r.pick(std::vector<int>{8, 62, 63, 64, 65, 1000}));
                h += ",\"d" + std::to_string(g) + "\":\x01" + d + ":[\x02" + "1" + "\x01" + d + ":]\x02";
                break;
            }
            default: {  // one tensor with a hostile shape, dtype or offsets
                const std::string lo = r.chance(50) ? e : r.pick(fuzz_mutator::interesting_numbers());
                const std::string hi = r.chance(30) ? e : r.pick(fuzz_mutator::interesting_numbers());
                h += ",\"h" + std::to_string(g) + "\":{\"dtype\":\"" + r.pick(kDtypes) +
                     "\",\"shape\":" + gen_shape(r) + ",\"data_offsets\":[" + lo + "," + hi + "]}";
                break;
            }
        }
    }
    h += "}";
    std::string data = at ? "\x01" + std::to_string(at) + ":A\x02" : "";
    if (r.chance(10)) data += "\x01" + std::to_string(fuzz_mutator::pick_count(r)) + ":\xff\x02";
    return std::string(fuzz_recipe::kRecipeMagic) + h + std::string(1, '\0') + data;
}

const std::vector<std::string> kWords = [] {
    std::vector<std::string> w = kDtypes;
    for (const char* s : {"dtype", "shape", "data_offsets", "__metadata__", "a", "z0_1", "x0"})
        w.push_back(s);
    return w;
}();

/// A raw file whose header parses: structural mutations on the JSON, written back with a true length.
std::size_t mutate_raw_header(uint8_t* data, std::size_t size, std::size_t max_size, Rng& r) {
    if (size < 8) return 0;
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | data[i];
    if (n > size - 8) return 0;
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(
        std::string_view(reinterpret_cast<const char*>(data) + 8, std::size_t(n)), nullptr, false);
    if (!j.is_object() || j.empty()) return 0;
    std::vector<std::string> keys;
    for (auto& [k, v] : j.items()) keys.push_back(k);
    const std::string key = r.pick(keys);
    nlohmann::ordered_json& t = j[key];
    switch (r(5)) {
        case 0: {  // copies of one entry under new names (duplicates of the key, too)
            const nlohmann::ordered_json copy = t;  // t dangles once j grows (ordered_json is a vector)
            for (std::size_t i = 0, c = 1 + r(2000); i < c; ++i)
                j[r.chance(2) ? key : key + "_" + std::to_string(i)] = copy;
            break;
        }
        case 1:
            if (t.is_object()) t["shape"] = nlohmann::ordered_json::parse(gen_shape(r), nullptr, false);
            break;
        case 2:
            if (t.is_object()) t["dtype"] = r.pick(kDtypes);
            break;
        case 3:
            if (t.is_object())
                t["data_offsets"] =
                    nlohmann::ordered_json::parse("[" + r.pick(fuzz_mutator::interesting_numbers()) + "," +
                                                      r.pick(fuzz_mutator::interesting_numbers()) + "]",
                                                  nullptr, false);
            break;
        default:
            j.erase(key);  // a hole in the data
            break;
    }
    const std::string h = j.dump();
    const std::string tail(reinterpret_cast<const char*>(data) + 8 + n, size - 8 - std::size_t(n));
    const std::string out = le64(h.size()) + h + tail;
    if (out.size() > max_size) return 0;
    std::memcpy(data, out.data(), out.size());
    return out.size();
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
    Rng r(seed);
    bool taken = false;
    std::size_t out = fuzz_mutator::recipe_step(data, size, max_size, r, gen_recipe, kWords, taken);
    if (!taken && r.chance(40)) {
        out = mutate_raw_header(data, size, max_size, r);
    }
    return out ? out : LLVMFuzzerMutate(data, size, max_size);
}
#endif  // ATTNVIZ_FUZZ_MUTATORS

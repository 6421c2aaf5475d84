// safetensors reader and writer. See io/safetensors.hpp.
#include "io/safetensors.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json_limits.hpp"
#include "io/platform.hpp"

namespace attnviz {

namespace {

using json = nlohmann::json;

constexpr std::uint64_t kMaxElements = 1ull << 40;  // any one dimension, and any tensor's element count

/// 'name' for a message: as is when printable, JSON-escaped when it holds control bytes (one line
/// whatever the file says), cut after 200 bytes.
std::string quote_name(const std::string& name) {
    std::string s = name.size() > 200 ? name.substr(0, 200) + "..." : name;
    const bool plain =
        std::none_of(s.begin(), s.end(), [](char c) { return (unsigned char)c < 0x20 || c == 0x7f; });
    bool utf8 = true;
    try {
        (void)json(s).dump();
    } catch (const json::exception&) {
        utf8 = false;
    }
    if (plain && utf8) return "'" + s + "'";
    return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string shape_text(const std::vector<std::int64_t>& s) {
    std::string r = "[";
    for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + "]";
}

/// nlohmann-json keeps the last of two equal keys; safetensors readers disagree on which wins, so a
/// key twice in any object of the header is refused, naming it.
DuplicateKeyMessage duplicate_key_message(const std::string& path) {
    return [path](const std::vector<std::string>& outer, const std::string& k) {
        if (outer.empty()) return path + ": tensor " + quote_name(k) + " appears twice in the header";
        const std::string& o = outer.back();
        return path + ": " + (o == "__metadata__" ? "__metadata__" : "tensor " + quote_name(o)) +
               " has the key " + quote_name(k) + " twice";
    };
}

std::map<std::string, std::string> read_metadata(const json& m, const std::string& path) {
    std::map<std::string, std::string> out;
    if (m.is_null()) return out;
    if (!m.is_object()) throw Error(path + ": __metadata__ must be an object of strings, got " + m.dump());
    for (auto it = m.begin(); it != m.end(); ++it) {
        if (!it.value().is_string())
            throw Error(path + ": __metadata__ value for " + quote_name(it.key()) +
                        " must be a string, got " +
                        it.value().dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 200));
        out[it.key()] = it.value().get<std::string>();
    }
    return out;
}

/// One header entry → a tensor (offsets not yet checked against the other tensors).
SafetensorsTensor read_tensor_info(const std::string& name, const json& t, const std::string& path,
                                   const unsigned char* data, std::uint64_t data_size) {
    const std::string where = path + ": tensor " + quote_name(name);
    if (name.find('\0') != std::string::npos) throw Error(where + " has a NUL byte in its name");
    if (!t.is_object() || !t.contains("dtype") || !t["dtype"].is_string() || !t.contains("shape") ||
        !t["shape"].is_array() || !t.contains("data_offsets") || !t["data_offsets"].is_array() ||
        t["data_offsets"].size() != 2)
        throw Error(where + " needs dtype, shape and data_offsets [begin, end]");
    SafetensorsTensor info;
    info.name = name;
    info.file = path;
    info.dtype = t["dtype"].get<std::string>();
    const std::uint64_t es = safetensors_dtype_size(info.dtype);
    if (es == 0) throw Error(where + " has unknown dtype " + quote_name(info.dtype));
    std::uint64_t count = 1;
    for (const json& d : t["shape"]) {
        if (!d.is_number_unsigned() || d.get<std::uint64_t>() > kMaxElements)
            throw Error(where + " has a bad shape " + t["shape"].dump());
        const std::uint64_t n = d.get<std::uint64_t>();
        info.shape.push_back(std::int64_t(n));
        if (n != 0 && count > kMaxElements / n) throw Error(where + " has a bad shape " + t["shape"].dump());
        count *= n;  // ≤ kMaxElements: no wrap
    }
    const json& off = t["data_offsets"];
    if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned())
        throw Error(where + " has bad data_offsets " + off.dump());
    const std::uint64_t b = off[0].get<std::uint64_t>(), e = off[1].get<std::uint64_t>();
    if (b > e || e > data_size)
        throw Error(where + " has data_offsets " + off.dump() + " outside the " + std::to_string(data_size) +
                    " data bytes (truncated file or a header that lies)");
    if (e - b != count * es)
        throw Error(where + " has " + std::to_string(e - b) + " bytes for shape " + t["shape"].dump() +
                    " of " + info.dtype + " (" + std::to_string(count * es) + " expected)");
    info.data = data + b;
    info.begin = b;
    info.end = e;
    return info;
}

/// The byte ranges must tile [0, data_size): sorted, each starts where the previous ended, the last
/// ends at the end of the file.
void check_tiling(std::vector<SafetensorsTensor>& tensors, const std::string& path, std::uint64_t data_size) {
    std::sort(tensors.begin(), tensors.end(), [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    std::uint64_t expected = 0;
    const SafetensorsTensor* prev = nullptr;
    for (const SafetensorsTensor& t : tensors) {
        const std::string range = "[" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "]";
        if (t.begin < expected)
            throw Error(path + ": tensor " + quote_name(t.name) + " data_offsets " + range +
                        " overlap tensor " + quote_name(prev->name) + " [" + std::to_string(prev->begin) +
                        ", " + std::to_string(prev->end) + "]");
        if (t.begin > expected)
            throw Error(
                path + ": tensor " + quote_name(t.name) + " starts at data byte " + std::to_string(t.begin) +
                (prev ? ", but tensor " + quote_name(prev->name) + " ends at " + std::to_string(expected)
                      : std::string(", but the data starts at 0")) +
                ": the bytes between belong to no tensor");
        expected = t.end;
        prev = &t;
    }
    if (expected != data_size && prev == nullptr)
        throw Error(path + ": " + std::to_string(data_size) + " data bytes, but the header lists no tensor");
    if (expected != data_size)
        throw Error(path + ": " + std::to_string(data_size - expected) +
                    " data bytes after the last tensor " + quote_name(prev->name) +
                    " belong to no tensor (a header that lies, or trailing bytes)");
}

template <typename Fn>
void convert_each(const SafetensorsTensor& t, float* out, Fn value) {  // out: [count]
    const std::uint64_t n = t.count();
    for (std::uint64_t i = 0; i < n; ++i) out[i] = value(t.data + i * safetensors_dtype_size(t.dtype));
}

std::uint16_t le16(const unsigned char* p) {
    return std::uint16_t(p[0] | (p[1] << 8));
}
std::uint32_t le32(const unsigned char* p) {
    return std::uint32_t(p[0]) | (std::uint32_t(p[1]) << 8) | (std::uint32_t(p[2]) << 16) |
           (std::uint32_t(p[3]) << 24);
}

}  // namespace

std::uint64_t safetensors_dtype_size(std::string_view d) {
    if (d == "F32" || d == "I32" || d == "U32") return 4;
    if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
    if (d == "F64" || d == "I64" || d == "U64") return 8;
    if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2") return 1;
    return 0;
}

std::uint64_t SafetensorsTensor::count() const {
    std::uint64_t n = 1;
    for (const std::int64_t d : shape) n *= std::uint64_t(d);
    return n;
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

SafetensorsFile SafetensorsFile::parse(std::shared_ptr<const void> owner, const unsigned char* base,
                                       std::uint64_t size, const std::string& path) {
    if (size < 8)
        throw Error(path + ": truncated (" + std::to_string(size) + " bytes, no safetensors header)");
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | base[i];
    if (n > kMaxSafetensorsHeaderBytes)
        throw Error(path + ": header length " + std::to_string(n) + " bytes is larger than the " +
                    std::to_string(kMaxSafetensorsHeaderBytes >> 20) + " MiB a safetensors header may have");
    if (n > size - 8)
        throw Error(path + ": truncated (header says " + std::to_string(n) + " bytes, the file has " +
                    std::to_string(size - 8) + " after the length)");
    const std::string_view text(reinterpret_cast<const char*>(base + 8), static_cast<std::size_t>(n));
    // About 12 values a tensor: 1.5 M values is over 100,000 tensors (real files hold thousands).
    const json header = parse_json_limited(text, path, "the header", duplicate_key_message(path), 1'500'000);
    if (!header.is_object()) throw Error(path + ": the header is not a JSON object");
    if (text.front() != '{') throw Error(path + ": the header must start with '{' (no leading spaces)");
    SafetensorsFile f;
    f.path_ = path;
    f.owner_ = std::move(owner);
    const std::uint64_t data_size = size - 8 - n;
    const unsigned char* data = base + 8 + n;
    for (auto it = header.begin(); it != header.end(); ++it) {
        if (it.key() == "__metadata__")
            f.metadata_ = read_metadata(it.value(), path);
        else
            f.tensors_.push_back(read_tensor_info(it.key(), it.value(), path, data, data_size));
    }
    check_tiling(f.tensors_, path, data_size);
    f.by_name_.resize(f.tensors_.size());
    for (std::size_t i = 0; i < f.by_name_.size(); ++i) f.by_name_[i] = i;
    std::sort(f.by_name_.begin(), f.by_name_.end(),
              [&](std::size_t a, std::size_t b) { return f.tensors_[a].name < f.tensors_[b].name; });
    return f;
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
    const platform::ReadFile file = platform::ReadFile::open(path);
    const std::uint64_t size = file.size();
    if (size < 8)
        throw Error(path + ": truncated (" + std::to_string(size) + " bytes, no safetensors header)");
    std::shared_ptr<const void> mapping = file.map();
    const auto* base = static_cast<const unsigned char*>(mapping.get());
    return parse(mapping, base, size, path);
}

SafetensorsFile SafetensorsFile::from_bytes(std::string bytes, const std::string& name) {
    auto owner = std::make_shared<const std::string>(std::move(bytes));
    const auto* base = reinterpret_cast<const unsigned char*>(owner->data());
    return parse(owner, base, owner->size(), name);
}

const SafetensorsTensor* SafetensorsFile::find(const std::string& name) const {
    // A linear scan made "find every tensor" quadratic: 300,000 tensors took minutes (issue 22's fuzzing).
    const auto it =
        std::lower_bound(by_name_.begin(), by_name_.end(), name,
                         [&](std::size_t i, const std::string& n) { return tensors_[i].name < n; });
    return it != by_name_.end() && tensors_[*it].name == name ? &tensors_[*it] : nullptr;
}

SafetensorsTable open_safetensors_dir(const std::string& dir) {
    SafetensorsTable table;
    auto add = [&](const std::string& path) {
        SafetensorsFile f = SafetensorsFile::open(path);
        for (const SafetensorsTensor& t : f.tensors())
            if (!table.tensors.emplace(t.name, t).second)
                throw Error(path + ": tensor " + quote_name(t.name) + " appears twice");
        table.files.push_back(std::move(f));
    };
    const std::string single = dir + "/model.safetensors", index = dir + "/model.safetensors.index.json";
    if (platform::exists(single)) {
        add(single);
    } else if (platform::exists(index)) {
        const json j = parse_json_limited(read_file(index, 64ull << 20), index, "the file");
        if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
            throw Error(index + ": field 'weight_map' is missing or not an object");
        std::map<std::string, std::string> where;  // tensor → shard
        std::set<std::string> shards;
        for (const auto& [name, file] : j["weight_map"].items()) {
            if (!file.is_string())
                throw Error(index + ": weight_map[" + quote_name(name) + "] is not a file name");
            const std::string f = file.get<std::string>();
            if (f.empty() || f.find('/') != std::string::npos || f.find('\0') != std::string::npos ||
                f == "." || f == "..")
                throw Error(index + ": shard name " + quote_name(f) +
                            " must be a plain file name in the folder");
            shards.insert(f);
            where[name] = f;
        }
        for (const std::string& f : shards) add(dir + "/" + f);
        for (const auto& [name, f] : where) {
            const auto it = table.tensors.find(name);
            if (it == table.tensors.end() || it->second.file != dir + "/" + f)
                throw Error(index + ": weight_map puts tensor " + quote_name(name) + " in " + quote_name(f) +
                            ", which has no such tensor");
        }
    } else {
        throw Error(dir + ": no model.safetensors (or model.safetensors.index.json) in the folder");
    }
    return table;
}

// ---------------------------------------------------------------------------------------------
// float32 ↔ F16 / BF16
// ---------------------------------------------------------------------------------------------

float f16_to_float(std::uint16_t h) {
    const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
    std::uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else {  // subnormal: renormalise
            exp = 127 - 15 + 1;
            while ((mant & 0x400u) == 0) {
                mant <<= 1;
                --exp;
            }
            bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

float bf16_to_float(std::uint16_t b) {
    const std::uint32_t bits = std::uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

std::uint16_t float_to_f16(float f) {
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    const std::uint16_t sign = std::uint16_t((x >> 16) & 0x8000u);
    const std::uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return sign | 0x7e00u;  // NaN
    if (ax >= 0x38800000u) {                      // ≥ 2^-14: a normal half, or overflow to inf
        const std::uint32_t rounded = ax + 0xfffu + ((ax >> 13) & 1u);  // ties to even on bit 13
        const std::uint32_t h = (rounded >> 13) - ((127u - 15u) << 10);
        return std::uint16_t(sign | (h >= 0x7c00u ? 0x7c00u : h));
    }
    if (ax <= 0x33000000u) return sign;  // ≤ 2^-25: rounds to ±0 (2^-25 is a tie, 0 is even)
    // A half subnormal k · 2^-24: the float is m · 2^(e-150), so k = m >> (126 - e), e in [102, 112].
    const std::uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u, shift = 126 - e;
    std::uint32_t k = m >> shift;
    const std::uint32_t rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (k & 1u))) ++k;  // may carry into the smallest normal: right
    return std::uint16_t(sign | k);
}

std::uint16_t float_to_bf16(float f) {
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u;  // NaN (as PyTorch)
    return std::uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

void to_float32(const SafetensorsTensor& t, float* out) {
    if (t.dtype == "F32") {
        convert_each(t, out, [](const unsigned char* p) {
            const std::uint32_t bits = le32(p);
            float f;
            std::memcpy(&f, &bits, 4);
            return f;
        });
    } else if (t.dtype == "BF16") {
        convert_each(t, out, [](const unsigned char* p) { return bf16_to_float(le16(p)); });
    } else if (t.dtype == "F16") {
        convert_each(t, out, [](const unsigned char* p) { return f16_to_float(le16(p)); });
    } else {
        throw Error(t.file + ": tensor " + quote_name(t.name) + " is " + t.dtype +
                    " (only F32, BF16 and F16 convert to float32)");
    }
}

std::vector<float> to_float32(const SafetensorsTensor& t) {
    if (t.count() > kMaxSafetensorsBytes / 4)
        throw Error(t.file + ": tensor " + quote_name(t.name) + " as float32 would need more than " +
                    std::to_string(kMaxSafetensorsBytes >> 30) + " GiB");
    if (safetensors_dtype_size(t.dtype) * t.count() != t.bytes())
        throw Error(t.file + ": tensor " + quote_name(t.name) + " has " + std::to_string(t.bytes()) +
                    " bytes for its shape and dtype");
    std::vector<float> out(std::size_t(t.count()));  // [count]
    to_float32(t, out.data());
    return out;
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

namespace {

int dtype_rank(const std::string& d) {
    return d == "F32" ? 0 : d == "BF16" ? 1 : 2;
}  // the Rust crate's order

/// A JSON string exactly as serde_json (and Python's json with ensure_ascii=False) writes it.
std::string json_string(const std::string& s, const std::string& what) {
    try {
        return json(s).dump();
    } catch (const json::exception&) {
        throw Error(what + " is not valid UTF-8");
    }
}

/// The tensors in file order, checked; throws naming `where` and the tensor.
std::vector<const SafetensorsWriteTensor*> plan(const std::vector<SafetensorsWriteTensor>& tensors,
                                                const std::string& where) {
    std::vector<const SafetensorsWriteTensor*> order;
    std::set<std::string> names;
    std::uint64_t total = 0;
    for (const SafetensorsWriteTensor& t : tensors) {
        const std::string tw = where + ": tensor " + quote_name(t.name);
        if (t.name.find('\0') != std::string::npos) throw Error(tw + " has a NUL byte in its name");
        if (t.name == "__metadata__") throw Error(tw + ": that name is reserved for the metadata");
        json_string(t.name, tw + ": the name");
        if (!names.insert(t.name).second) throw Error(tw + " appears twice");
        if (t.dtype != "F32" && t.dtype != "F16" && t.dtype != "BF16")
            throw Error(tw + " has dtype " + quote_name(t.dtype) + " (only F32, F16 and BF16 are written)");
        std::uint64_t count = 1;
        for (const std::int64_t d : t.shape) {
            if (d < 0 || std::uint64_t(d) > kMaxElements)
                throw Error(tw + " has a bad shape " + shape_text(t.shape));
            if (d != 0 && count > kMaxElements / std::uint64_t(d))
                throw Error(tw + " has a bad shape " + shape_text(t.shape));
            count *= std::uint64_t(d);  // ≤ kMaxElements: no wrap
        }
        if (count != t.count)
            throw Error(tw + " has " + std::to_string(t.count) + " values for shape " + shape_text(t.shape) +
                        " (" + std::to_string(count) + " expected)");
        if (count > 0 && t.data == nullptr) throw Error(tw + " has no data");
        total += count * safetensors_dtype_size(t.dtype);
        if (total > kMaxSafetensorsBytes)
            throw Error(tw + " takes the file past " + std::to_string(kMaxSafetensorsBytes >> 30) +
                        " GiB, the app's memory limit");
        order.push_back(&t);
    }
    std::sort(order.begin(), order.end(),
              [](const SafetensorsWriteTensor* a, const SafetensorsWriteTensor* b) {
                  const int ra = dtype_rank(a->dtype), rb = dtype_rank(b->dtype);
                  return ra != rb ? ra < rb : a->name < b->name;
              });
    return order;
}

std::string header_bytes(const std::vector<const SafetensorsWriteTensor*>& order,
                         const std::map<std::string, std::string>& metadata, const std::string& where) {
    std::string h = "{";
    if (!metadata.empty()) {
        h += "\"__metadata__\":{";
        bool first = true;
        for (const auto& [k, v] : metadata) {
            h += (first ? "" : ",") + json_string(k, where + ": __metadata__ key " + quote_name(k)) + ":" +
                 json_string(v, where + ": __metadata__ value for " + quote_name(k));
            first = false;
        }
        h += "}";
    }
    std::uint64_t offset = 0;
    for (const SafetensorsWriteTensor* t : order) {
        const std::uint64_t bytes = t->count * safetensors_dtype_size(t->dtype);
        if (h.size() > 1) h += ",";
        h += json_string(t->name, where) + ":{\"dtype\":\"" + t->dtype + "\",\"shape\":[";
        for (std::size_t i = 0; i < t->shape.size(); ++i) h += (i ? "," : "") + std::to_string(t->shape[i]);
        h += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + bytes) + "]}";
        offset += bytes;
    }
    h += "}";
    h.append((8 - h.size() % 8) % 8, ' ');
    if (h.size() > kMaxSafetensorsHeaderBytes)
        throw Error(where + ": the header would be " + std::to_string(h.size()) + " bytes, more than the " +
                    std::to_string(kMaxSafetensorsHeaderBytes >> 20) + " MiB a reader accepts");
    std::string out(8, '\0');
    for (int i = 0; i < 8; ++i) out[std::size_t(i)] = char((std::uint64_t(h.size()) >> (8 * i)) & 0xff);
    return out + h;
}

/// Values [from, to) of `t` as little-endian bytes of its dtype, appended to `out`.
void append_encoded(const SafetensorsWriteTensor& t, std::uint64_t from, std::uint64_t to, std::string& out) {
    for (std::uint64_t i = from; i < to; ++i) {
        if (t.dtype == "F32") {
            std::uint32_t bits;
            std::memcpy(&bits, t.data + i, 4);
            for (int b = 0; b < 4; ++b) out.push_back(char((bits >> (8 * b)) & 0xff));
        } else {
            const std::uint16_t bits = t.dtype == "BF16" ? float_to_bf16(t.data[i]) : float_to_f16(t.data[i]);
            out.push_back(char(bits & 0xff));
            out.push_back(char(bits >> 8));
        }
    }
}

}  // namespace

std::string safetensors_header(const std::vector<SafetensorsWriteTensor>& tensors,
                               const std::map<std::string, std::string>& metadata) {
    return header_bytes(plan(tensors, "safetensors"), metadata, "safetensors");
}

std::string safetensors_bytes(const std::vector<SafetensorsWriteTensor>& tensors,
                              const std::map<std::string, std::string>& metadata) {
    const std::vector<const SafetensorsWriteTensor*> order = plan(tensors, "safetensors");
    std::string out = header_bytes(order, metadata, "safetensors");
    for (const SafetensorsWriteTensor* t : order) append_encoded(*t, 0, t->count, out);
    return out;
}

StagedFile stage_safetensors(const std::string& path, const std::vector<SafetensorsWriteTensor>& tensors,
                             const std::map<std::string, std::string>& metadata) {
    const std::string where = "cannot write " + path;
    const std::vector<const SafetensorsWriteTensor*> order = plan(tensors, where);
    std::string header = header_bytes(order, metadata, where);
    constexpr std::uint64_t kChunkValues = 1 << 20;
    std::size_t tensor = 0;
    std::uint64_t next_value = 0;
    bool header_done = false;
    return StagedFile(path, [&](std::string& chunk) {
        if (!header_done) {
            chunk = std::move(header);
            header_done = true;
            return true;
        }
        while (tensor < order.size() && next_value >= order[tensor]->count) {
            ++tensor;
            next_value = 0;
        }
        if (tensor == order.size()) return false;
        const SafetensorsWriteTensor& t = *order[tensor];
        const std::uint64_t to = std::min(t.count, next_value + kChunkValues);
        append_encoded(t, next_value, to, chunk);
        next_value = to;
        return true;
    });
}

void write_safetensors(const std::string& path, const std::vector<SafetensorsWriteTensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
    stage_safetensors(path, tensors, metadata).commit();
}

}  // namespace attnviz

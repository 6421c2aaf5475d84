// io/safetensors: round trips in every dtype, the exact bytes the Python library writes, float ↔
// F16/BF16 rounding (exhaustive where it can be), and every refusal of a hostile header naming the
// tensor in one line.
#include "io/safetensors.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <random>

#include "common/test_files.hpp"
#include "core/error.hpp"
#include "io/files.hpp"

namespace attnviz {
namespace {

namespace fs = std::filesystem;

using test::error_of;

using test::TempDir;

/// A file from a raw header text and `data_bytes` bytes of data (values 0, 1, 2, ...).
std::string raw_file(const std::string& header, std::size_t data_bytes) {
    std::string out(8, '\0');
    const std::uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) out[std::size_t(i)] = char((n >> (8 * i)) & 0xff);
    out += header;
    for (std::size_t i = 0; i < data_bytes; ++i) out.push_back(char(i));
    return out;
}

std::string parse_error(const std::string& bytes) {
    return error_of([&] { SafetensorsFile::from_bytes(bytes, "t.safetensors"); });
}

float bits_to_float(std::uint32_t b) {
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}

TEST(Safetensors, WritesTheBytesThePythonLibraryWrites) {
    const std::vector<float> a = {3.0f}, b = {1.0f, 2.0f}, c = {1.0f};
    const std::vector<SafetensorsWriteTensor> ts = {
        {"b", "F16", {2}, b.data(), 2}, {"a", "F32", {1}, a.data(), 1}, {"c", "BF16", {}, c.data(), 1}};
    const std::string h = safetensors_header(ts, {{"format", "pt"}});
    const std::string json =
        R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
        R"("c":{"dtype":"BF16","shape":[],"data_offsets":[4,6]},"b":{"dtype":"F16","shape":[2],"data_offsets":[6,10]}})";
    std::string padded = json + std::string((8 - json.size() % 8) % 8, ' ');
    ASSERT_EQ(h.size(), 8 + padded.size());
    EXPECT_EQ(h.substr(8), padded);
    EXPECT_EQ(h.size() % 8, 0u);
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | (unsigned char)h[std::size_t(i)];
    EXPECT_EQ(n, padded.size());

    TempDir d;
    const std::string path = d.path + "/x.safetensors";
    write_safetensors(path, ts, {{"format", "pt"}});
    const std::string file = read_file(path);
    EXPECT_EQ(file.substr(0, h.size()), h);
    // Data: 3.0f LE, bf16(1) = 0x3f80, f16(1) = 0x3c00, f16(2) = 0x4000.
    EXPECT_EQ(file.substr(h.size()), std::string("\x00\x00\x40\x40\x80\x3f\x00\x3c\x00\x40", 10));
}

TEST(Safetensors, RoundTripsEveryDtypeWithMetadata) {
    TempDir d;
    // Values every dtype holds exactly: multiples of 1/8 up to 64.
    std::vector<float> v(60);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(int(i * 37 % 101) - 50) / 8.0f;
    const std::vector<SafetensorsWriteTensor> ts = {
        {"layer.0.w", "F32", {3, 4, 5}, v.data(), 60}, {"layer.0.b16", "BF16", {6, 10}, v.data(), 60},
        {"layer.0.h", "F16", {60}, v.data(), 60},      {"empty", "F32", {0, 3}, nullptr, 0},
        {"scalar", "F16", {}, v.data() + 1, 1},        {"ünï 名", "BF16", {2}, v.data() + 2, 2}};
    const std::string path = d.path + "/m.safetensors";
    write_safetensors(path, ts, {{"format", "pt"}, {"note", "a \"quoted\"\nline"}});
    const SafetensorsFile f = SafetensorsFile::open(path);
    EXPECT_EQ(f.metadata().at("format"), "pt");
    EXPECT_EQ(f.metadata().at("note"), "a \"quoted\"\nline");
    ASSERT_EQ(f.tensors().size(), ts.size());
    for (const SafetensorsWriteTensor& w : ts) {
        const SafetensorsTensor* t = f.find(w.name);
        ASSERT_NE(t, nullptr) << w.name;
        EXPECT_EQ(t->dtype, w.dtype) << w.name;
        EXPECT_EQ(t->shape, w.shape) << w.name;
        EXPECT_EQ(t->count(), w.count) << w.name;
        const std::vector<float> got = to_float32(*t);
        ASSERT_EQ(got.size(), w.count) << w.name;
        for (std::size_t i = 0; i < got.size(); ++i)
            EXPECT_EQ(got[i], w.data[i]) << w.name << "[" << i << "]";
    }
    // Data order: F32 tensors by name, then BF16, then F16; every range aligned to its dtype.
    std::vector<std::string> order;
    for (const SafetensorsTensor& t : f.tensors()) {
        order.push_back(t.name);
        EXPECT_EQ(t.begin % safetensors_dtype_size(t.dtype), 0u) << t.name;
    }
    EXPECT_EQ(order, (std::vector<std::string>{"empty", "layer.0.w", "layer.0.b16", "ünï 名", "layer.0.h",
                                               "scalar"}));
    // The same bytes from memory give the same tensors.
    const SafetensorsFile m = SafetensorsFile::from_bytes(read_file(path), "mem");
    EXPECT_EQ(to_float32(*m.find("layer.0.h")), to_float32(*f.find("layer.0.h")));
}

TEST(Safetensors, FindingEveryTensorIsNotQuadratic) {
    // Fuzzing (issue 22): looking up each of 300,000 tensors by name scanned the list every time
    // (40,000 tensors: 4 s in Release). 40,000 zero-size tensors, each found by name, and a missing one.
    constexpr int kTensors = 40000;
    std::string header = "{";
    for (int i = 0; i < kTensors; ++i)
        header += (i ? ",\"t" : "\"t") + std::to_string(i) +
                  "\":{\"dtype\":\"F16\",\"shape\":[0],\"data_offsets\":[0,0]}";
    header += "}";
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i)
        bytes[std::size_t(i)] = char((std::uint64_t(header.size()) >> (8 * i)) & 0xff);
    const SafetensorsFile f = SafetensorsFile::from_bytes(bytes + header, "many");
    ASSERT_EQ(f.tensors().size(), std::size_t(kTensors));
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = kTensors - 1; i >= 0; --i) {
        const std::string name = "t" + std::to_string(i);
        const SafetensorsTensor* t = f.find(name);
        ASSERT_NE(t, nullptr) << name;
        EXPECT_EQ(t->name, name);
    }
    EXPECT_EQ(f.find("t40000"), nullptr);
    EXPECT_EQ(f.find(""), nullptr);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(secs, 1.0);  // milliseconds, even sanitized; the linear scan took seconds
}

TEST(Safetensors, Bf16RoundsToNearestEven) {
    EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
    EXPECT_EQ(float_to_bf16(-2.0f), 0xc000);
    EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);        // tie → even (down)
    EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);    // tie → even (up)
    EXPECT_EQ(float_to_bf16(bits_to_float(0x3f808001)), 0x3f81);          // just above a tie
    EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds to inf
    EXPECT_EQ(float_to_bf16(-std::numeric_limits<float>::infinity()), 0xff80);
    EXPECT_EQ(float_to_bf16(std::nanf("")), 0x7fc0);
    EXPECT_EQ(float_to_bf16(-0.0f), 0x8000);
    EXPECT_EQ(float_to_bf16(bits_to_float(0x00000001)), 0x0000);  // smallest subnormal → 0
    // Every bfloat16 survives bf16 → float → bf16; the float is the bits shifted up.
    for (std::uint32_t b = 0; b < 0x10000; ++b) {
        const float f = bf16_to_float(std::uint16_t(b));
        std::uint32_t fb;
        std::memcpy(&fb, &f, 4);
        ASSERT_EQ(fb, b << 16) << b;
        if (!std::isnan(f)) {
            ASSERT_EQ(float_to_bf16(f), b) << b;
        }
    }
}

TEST(Safetensors, F16RoundsToNearestEven) {
    EXPECT_EQ(float_to_f16(1.0f), 0x3c00);
    EXPECT_EQ(float_to_f16(0.1f), 0x2e66);
    EXPECT_EQ(float_to_f16(65504.0f), 0x7bff);
    EXPECT_EQ(float_to_f16(65519.0f), 0x7bff);
    EXPECT_EQ(float_to_f16(65520.0f), 0x7c00);  // tie with the next binade → even = inf
    EXPECT_EQ(float_to_f16(-1e10f), 0xfc00);
    EXPECT_EQ(float_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie → even (down)
    EXPECT_EQ(float_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie → even (up)
    EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -14)), 0x0400);             // smallest normal
    EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -24)), 0x0001);             // smallest subnormal
    EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -25)), 0x0000);             // tie → 0
    EXPECT_EQ(float_to_f16(std::ldexp(1.5f, -25)), 0x0001);
    EXPECT_EQ(float_to_f16(std::ldexp(3.0f, -25)), 0x0002);                           // 1.5 ulp: tie → 2
    EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25)), 0x0400);   // tie → even 0x400
    EXPECT_EQ(float_to_f16(-std::ldexp(1.0f, -14) + std::ldexp(1.0f, -26)), 0x8400);  // rounds up to normal
    EXPECT_EQ(float_to_f16(std::nanf("")), 0x7e00);
    EXPECT_EQ(float_to_f16(-std::nanf("")), 0xfe00);
    EXPECT_EQ(float_to_f16(-0.0f), 0x8000);
    // Every half survives half → float → half.
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
        const float f = f16_to_float(std::uint16_t(h));
        if (!std::isnan(f)) {
            ASSERT_EQ(float_to_f16(f), h) << h;
        }
    }
    // Random floats: the chosen half is a nearest one, and on a tie the even one (checked in double).
    std::mt19937 rng(7);
    for (int i = 0; i < 200000; ++i) {
        const std::uint32_t bits = rng() & 0x47ffffffu;  // |x| < 2^16 (below the overflow), any sign
        const float x = bits_to_float(bits);
        if (std::fabs(x) >= 65520.0f) continue;  // overflows to inf (checked above)
        const std::uint16_t h = float_to_f16(x);
        const double err = std::fabs(double(f16_to_float(h)) - double(x));
        for (const int step : {-1, 1}) {
            const std::uint16_t other = std::uint16_t(h + step);
            if (((other ^ h) & 0x8000) || (other & 0x7c00) == 0x7c00) continue;  // crossed sign or hit inf
            const double other_err = std::fabs(double(f16_to_float(other)) - double(x));
            ASSERT_LE(err, other_err) << "x bits " << bits << " → " << h;
            if (err == other_err) {
                ASSERT_EQ(h & 1, 0) << "tie not to even: x bits " << bits;
            }
        }
    }
}

TEST(Safetensors, RefusesHostileHeadersNamingTheTensor) {
    const std::string f32_2 = R"("dtype":"F32","shape":[2])";
    struct Case {
        std::string bytes, needle;
    };
    const std::vector<Case> cases = {
        {raw_file(
             R"({"a":{)" + f32_2 + R"(,"data_offsets":[0,8]},"b":{)" + f32_2 + R"(,"data_offsets":[12,20]}})",
             20),
         "tensor 'b' starts at data byte 12, but tensor 'a' ends at 8"},
        {raw_file(R"({"a":{)" + f32_2 + R"(,"data_offsets":[4,12]}})", 12),
         "tensor 'a' starts at data byte 4"},
        {raw_file(
             R"({"a":{)" + f32_2 + R"(,"data_offsets":[0,8]},"b":{)" + f32_2 + R"(,"data_offsets":[4,12]}})",
             12),
         "tensor 'b' data_offsets [4, 12] overlap tensor 'a' [0, 8]"},
        {raw_file(
             R"({"a":{)" + f32_2 + R"(,"data_offsets":[0,8]},"b":{)" + f32_2 + R"(,"data_offsets":[0,8]}})",
             8),
         "overlap tensor 'a'"},
        {raw_file(R"({"a":{)" + f32_2 + R"(,"data_offsets":[0,8]}})", 12),
         "4 data bytes after the last tensor 'a'"},
        {raw_file(R"({})", 4), "4 data bytes, but the header lists no tensor"},
        {raw_file(
             R"({"a":{)" + f32_2 + R"(,"data_offsets":[0,8]},"a":{)" + f32_2 + R"(,"data_offsets":[8,16]}})",
             16),
         "tensor 'a' appears twice in the header"},
        {raw_file(R"({"a":{"dtype":"F32","dtype":"F16","shape":[2],"data_offsets":[0,8]}})", 8),
         "tensor 'a' has the key 'dtype' twice"},
        {raw_file(R"({"__metadata__":{"k":"1","k":"2"}})", 0), "__metadata__ has the key 'k' twice"},
        {raw_file(R"({"a\u0000b":{)" + f32_2 + R"(,"data_offsets":[0,8]}})", 8),
         "has a NUL byte in its name"},
        {raw_file(R"({"a\nb":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8),
         R"(tensor "a\nb" has 8 bytes for shape [3] of F32 (12 expected))"},
        {raw_file(R"({"__metadata__":{"k":5},"a":{)" + f32_2 + R"(,"data_offsets":[0,8]}})", 8),
         "__metadata__ value for 'k' must be a string, got 5"},
        {raw_file(R"({"__metadata__":[1]})", 0), "__metadata__ must be an object of strings"},
        {raw_file(R"( {"a":{)" + f32_2 + R"(,"data_offsets":[0,8]}})", 8), "the header must start with '{'"},
        {raw_file(R"({"a":{"dtype":"F7","shape":[2],"data_offsets":[0,8]}})", 8),
         "tensor 'a' has unknown dtype 'F7'"},
        {raw_file(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8),
         "tensor 'a' has a bad shape [-2]"},
        {raw_file(R"({"a":{"dtype":"F32","shape":[1099511627776,1099511627776],"data_offsets":[0,8]}})", 8),
         "tensor 'a' has a bad shape"},
        {raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,-8]}})", 8),
         "tensor 'a' has bad data_offsets"},
        {raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8,9]}})", 8),
         "tensor 'a' needs dtype, shape"},
        {raw_file(R"({"a":{"dtype":"F32","shape":[2]}})", 8), "tensor 'a' needs dtype, shape"},
        {raw_file(R"({"a":{)" + f32_2 + R"(,"data_offsets":[0,1099511627776]}})", 8),
         "tensor 'a' has data_offsets [0,1099511627776] outside the 8 data bytes"},
        {raw_file(R"({"a":{)" + f32_2 + R"(,"data_offsets":[8,0]}})", 8),
         "tensor 'a' has data_offsets [8,0] outside"},
        {raw_file(R"({"a":{)" + f32_2 + R"(,"data_offsets":[0,4]}})", 8),
         "tensor 'a' has 4 bytes for shape [2] of F32"},
        {raw_file(R"([1,2])", 0), "the header is not a JSON object"},
        {raw_file(R"({"a":)", 0), "the header is not valid JSON"},
        {raw_file(std::string(1000, '[') + std::string(1000, ']'), 0),
         "the header nests deeper than 64 levels"},
        {raw_file("{\"\xff\":1}", 0), "the header is not valid JSON"},
        {std::string("\x08\x00\x00\x00", 4), "truncated (4 bytes, no safetensors header)"},
        {std::string("\x10\x00\x00\x00\x00\x00\x00\x00{}", 10), "truncated (header says 16 bytes"},
        {std::string("\x00\x00\x00\x00\x00\x00\x00\x01{}", 10), "larger than the 100 MiB"},
    };
    for (const Case& c : cases) {
        const std::string msg = parse_error(c.bytes);
        EXPECT_NE(msg.find(c.needle), std::string::npos) << "expected '" << c.needle << "' in: " << msg;
        EXPECT_EQ(msg.find("t.safetensors"), 0u) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
    // Zero-size tensors may share an offset; the ranges then still tile the data.
    const SafetensorsFile ok = SafetensorsFile::from_bytes(
        raw_file(R"({"z":{"dtype":"F16","shape":[0],"data_offsets":[8,8]},"a":{)" + f32_2 +
                     R"(,"data_offsets":[0,8]},"y":{"dtype":"BF16","shape":[3,0],"data_offsets":[8,8]}})",
                 8),
        "ok");
    EXPECT_EQ(ok.tensors().size(), 3u);
    EXPECT_TRUE(ok.metadata().empty());
    // Other dtypes are read, but only F32 / BF16 / F16 convert.
    const SafetensorsFile ints = SafetensorsFile::from_bytes(
        raw_file(R"({"__metadata__":null,"i":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}})", 8), "ints");
    const std::string msg = error_of([&] { to_float32(*ints.find("i")); });
    EXPECT_NE(msg.find("ints: tensor 'i' is I32 (only F32, BF16 and F16"), std::string::npos) << msg;
}

TEST(Safetensors, OpensFilesAndShardedFolders) {
    TempDir d;
    const std::vector<float> v = {1, 2, 3, 4, 5, 6};
    write_safetensors(d.path + "/part-1.safetensors", {{"a", "F32", {2, 3}, v.data(), 6}});
    write_safetensors(d.path + "/part-2.safetensors",
                      {{"b", "BF16", {3}, v.data(), 3}, {"c", "F16", {1}, v.data(), 1}});
    auto index = [&](const std::string& weight_map) {
        write_file_atomic(d.path + "/model.safetensors.index.json",
                          R"({"metadata":{"total_size":38},"weight_map":)" + weight_map + "}");
    };
    index(R"({"a":"part-1.safetensors","b":"part-2.safetensors","c":"part-2.safetensors"})");
    const SafetensorsTable t = open_safetensors_dir(d.path);
    EXPECT_EQ(t.tensors.size(), 3u);
    EXPECT_EQ(t.files.size(), 2u);
    EXPECT_EQ(to_float32(t.tensors.at("a")), std::vector<float>(v.begin(), v.end()));
    EXPECT_EQ(to_float32(t.tensors.at("b")), (std::vector<float>{1, 2, 3}));
    EXPECT_EQ(t.tensors.at("c").file, d.path + "/part-2.safetensors");

    index(R"({"a":"part-2.safetensors","b":"part-2.safetensors"})");
    std::string msg = error_of([&] { open_safetensors_dir(d.path); });
    EXPECT_NE(msg.find("weight_map puts tensor 'a' in 'part-2.safetensors', which has no such tensor"),
              std::string::npos)
        << msg;
    index(R"({"a":"../part-1.safetensors"})");
    msg = error_of([&] { open_safetensors_dir(d.path); });
    EXPECT_NE(msg.find("must be a plain file name"), std::string::npos) << msg;
    write_safetensors(d.path + "/part-3.safetensors", {{"a", "F16", {1}, v.data(), 1}});
    index(R"({"a":"part-1.safetensors","x":"part-3.safetensors"})");
    msg = error_of([&] { open_safetensors_dir(d.path); });
    EXPECT_NE(msg.find("tensor 'a' appears twice"), std::string::npos) << msg;
    index(R"({"a":"missing.safetensors"})");
    msg = error_of([&] { open_safetensors_dir(d.path); });
    EXPECT_NE(msg.find("missing.safetensors"), std::string::npos) << msg;
    fs::remove(d.path + "/model.safetensors.index.json");
    msg = error_of([&] { open_safetensors_dir(d.path); });
    EXPECT_NE(msg.find("no model.safetensors"), std::string::npos) << msg;
    // A single file wins over an index.
    write_safetensors(d.path + "/model.safetensors", {{"only", "F32", {1}, v.data(), 1}});
    EXPECT_EQ(open_safetensors_dir(d.path).tensors.count("only"), 1u);
}

TEST(Safetensors, WriterRefusesBadTensorsNamingThem) {
    TempDir d;
    const std::string path = d.path + "/w.safetensors";
    const std::vector<float> v = {1, 2, 3, 4};
    write_safetensors(path, {{"keep", "F32", {1}, v.data(), 1}});
    const std::string before = read_file(path);
    struct Case {
        std::vector<SafetensorsWriteTensor> ts;
        std::string needle;
    };
    const std::vector<Case> cases = {
        {{{"a", "F32", {1}, v.data(), 1}, {"a", "F16", {1}, v.data(), 1}}, "tensor 'a' appears twice"},
        {{{"__metadata__", "F32", {1}, v.data(), 1}}, "tensor '__metadata__': that name is reserved"},
        {{{std::string("a\0b", 3), "F32", {1}, v.data(), 1}}, "has a NUL byte in its name"},
        {{{"bad\xff", "F32", {1}, v.data(), 1}}, "the name is not valid UTF-8"},
        {{{"i", "I32", {1}, v.data(), 1}}, "tensor 'i' has dtype 'I32' (only F32, F16 and BF16 are written)"},
        {{{"s", "F32", {2, 3}, v.data(), 4}}, "tensor 's' has 4 values for shape [2, 3] (6 expected)"},
        {{{"n", "F32", {-1}, v.data(), 0}}, "tensor 'n' has a bad shape [-1]"},
        {{{"z", "F32", {4}, nullptr, 4}}, "tensor 'z' has no data"},
        // 4 GiB of float32 (the data is never read: the size is refused first).
        {{{"big", "F32", {1 << 20, 1 << 10}, v.data(), 1ull << 30}},
         "tensor 'big' takes the file past 3 GiB"},
    };
    for (const Case& c : cases) {
        const std::string msg = error_of([&] { write_safetensors(path, c.ts); });
        EXPECT_NE(msg.find(c.needle), std::string::npos) << "expected '" << c.needle << "' in: " << msg;
        EXPECT_EQ(msg.find("cannot write " + path), 0u) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
        EXPECT_EQ(read_file(path), before) << "the old file must be untouched";
    }
    std::string msg = error_of([&] {
        write_safetensors(path, {{"a", "F32", {1}, v.data(), 1}}, {{"k", "\xc3"}});
    });
    EXPECT_NE(msg.find("__metadata__ value for 'k' is not valid UTF-8"), std::string::npos) << msg;
    // Only a regular file is replaced.
    ASSERT_EQ(::symlink(path.c_str(), (d.path + "/link").c_str()), 0);
    msg = error_of([&] { write_safetensors(d.path + "/link", {{"a", "F32", {1}, v.data(), 1}}); });
    EXPECT_NE(msg.find("not a regular file"), std::string::npos) << msg;
    msg = error_of([&] { write_safetensors(d.path, {{"a", "F32", {1}, v.data(), 1}}); });
    EXPECT_NE(msg.find("cannot write"), std::string::npos) << msg;
    EXPECT_EQ(read_file(path), before);
    // No temp file left behind.
    std::size_t files = 0;
    for (const auto& e : fs::directory_iterator(d.path)) files += e.is_symlink() ? 0 : 1;
    EXPECT_EQ(files, 1u);  // w.safetensors
}

TEST(Safetensors, LargeTensorsAreWrittenInChunks) {
    TempDir d;
    std::vector<float> v(3 * (1 << 20) + 5);  // [3 Mi + 5]: more than one 1 Mi-value chunk
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(i % 256) * 0.25f;
    const std::string path = d.path + "/big.safetensors";
    write_safetensors(path, {{"v", "BF16", {std::int64_t(v.size())}, v.data(), v.size()},
                             {"w", "F32", {std::int64_t(v.size())}, v.data(), v.size()}});
    const SafetensorsFile f = SafetensorsFile::open(path);
    EXPECT_EQ(to_float32(*f.find("w")), v);
    EXPECT_EQ(to_float32(*f.find("v")), v);  // exact in bfloat16 (8 significant bits)
}

}  // namespace
}  // namespace attnviz

// Fuzz harness: .npy bytes through parse_token_npy (the token ids `attnviz grad --tokens` reads). Either
// attnviz::Error or [rows, cols] ids with rows >= 1, cols >= 2, within the file's size.
//
// An input starting with "\xffRCP" is a recipe (tests/fuzz/recipe.hpp): its expansion's head is the
// header dict ("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }"), its tail (after the
// first NUL) the data; the harness adds magic, version and length, padding as numpy does. The
// fuzzer's structure-aware mutator (ATTNVIZ_FUZZ_MUTATORS) writes such recipes: dims near 2^31,
// 2^32, 2^63, many dims, other dtypes, data of the wrong length.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "fuzz_check.hpp"
#include "io/train_commands.hpp"
#include "recipe.hpp"

namespace {

int check_file(const std::string& bytes) {
    using namespace attnviz;
    if (bytes.size() > kMaxTokenFileBytes) return 0;  // read_file refuses these before parsing
    try {
        int rows = 0, cols = 0;
        const std::vector<std::int64_t> ids = parse_token_npy(bytes, "fuzz.npy", rows, cols);
        FUZZ_CHECK(rows >= 1 && cols >= 2);
        FUZZ_CHECK(ids.size() == std::size_t(rows) * std::size_t(cols));
        FUZZ_CHECK(ids.size() <= bytes.size());  // at least one byte per id
    } catch (const Error&) {
    }
    return 0;
}

/// A .npy file around a header dict: version 1 when the padded header fits 16 bits, else 2.
std::string npy_file(std::string header, const std::string& data) {
    const std::size_t prefix = header.size() + 1 > 65535 - 64 ? 12 : 10;
    while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string f = "\x93NUMPY";
    f += prefix == 12 ? '\x02' : '\x01';
    f += '\0';
    for (std::size_t i = 0; i < prefix - 8; ++i) f += char((header.size() >> (8 * i)) & 0xff);
    return f + header + data;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (!fuzz_recipe::is_recipe(data, size))
        return check_file(std::string(reinterpret_cast<const char*>(data), size));
    std::string header, tail;
    fuzz_recipe::split_head_tail(fuzz_recipe::expand_recipe(data, size), header, tail);
    return check_file(npy_file(header, tail));
}

#ifdef ATTNVIZ_FUZZ_MUTATORS
// ------------------------------------------------------------------------------------------------
// Structure-aware mutator (libFuzzer binary only)
// ------------------------------------------------------------------------------------------------
namespace {

using fuzz_mutator::Rng;

const std::vector<std::string> kDescrs = {"<i8", "<i4", "<i2", "|i1", "|u1", "<u2",  "<u4", "<u8", "=i4",
                                          "=i8", ">i8", "<f4", "<f8", "|b1", "<i16", "i8",  "<i3"};
const std::vector<std::string> kDims = {"0",
                                        "1",
                                        "2",
                                        "3",
                                        "7",
                                        "2147483647",
                                        "2147483648",
                                        "4294967295",
                                        "4294967296",
                                        "4294967297",
                                        "8589934592",
                                        "65536",
                                        "67108864",
                                        "999999999999",
                                        "1099511627776",
                                        "9223372036854775807",
                                        "18446744073709551616",
                                        "-1"};

/// Repeat counts for a .npy: data lengths (the header is at most 64 KiB, the file 64 MiB).
std::uint64_t npy_count(Rng& r) {
    return r.pick(std::vector<std::uint64_t>{1, 2, 3, 8, 16, 24, 64, 1000, 65536});
}

std::string gen_recipe(Rng& r) {
    const std::size_t dims = r.chance(80) ? 1 + r(2) : r(6);
    std::string shape = "(";
    for (std::size_t i = 0; i < dims; ++i) shape += (i ? ", " : "") + r.pick(kDims);
    shape += dims == 1 ? ",)" : ")";
    std::string h = "{'descr': '" + r.pick(kDescrs) +
                    "', 'fortran_order': " + (r.chance(70) ? "False" : "True") + ", 'shape': " + shape +
                    ", }";
    std::string tail;
    if (r.chance(60)) tail = "\x01" + std::to_string(npy_count(r)) + ":A\x02";
    return std::string(fuzz_recipe::kRecipeMagic) + h + std::string(1, '\0') + tail;
}

const std::vector<std::string> kWords = [] {
    std::vector<std::string> w = kDescrs;
    for (const char* s : {"descr", "fortran_order", "shape"}) w.push_back(s);
    return w;
}();

/// Replaces a random '...' string of a raw header with a dtype / key (the raw mutations keep the file).
bool replace_quoted(std::string& s, Rng& r) {
    std::vector<std::size_t> q;
    for (std::size_t i = 0; i < s.size() && i < 512; ++i)
        if (s[i] == '\'') q.push_back(i);
    if (q.size() < 2) return false;
    const std::size_t k = r(q.size() / 2) * 2;
    s.replace(q[k] + 1, q[k + 1] - q[k] - 1, r.pick(kWords));
    return true;
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
    Rng r(seed);
    std::size_t out = 0;
    if (fuzz_recipe::is_recipe(data, size)) {
        if (r.chance(75)) {
            // mutate_recipe's dictionary strings are "..."; the header's are '...': both ops here.
            std::string s(reinterpret_cast<const char*>(data), size);
            if (r.chance(30)) {
                replace_quoted(s, r);
                if (s.size() <= max_size) {
                    std::memcpy(data, s.data(), s.size());
                    out = s.size();
                }
            } else {
                out = fuzz_mutator::mutate_recipe(data, size, max_size, r, gen_recipe, kWords, npy_count);
            }
        }
    } else if (r.chance(30)) {
        const std::string g = gen_recipe(r);
        if (g.size() <= max_size) {
            std::memcpy(data, g.data(), g.size());
            out = g.size();
        }
    } else if (r.chance(30)) {  // a raw file: a dim or a dtype in place
        std::string s(reinterpret_cast<const char*>(data), size);
        const bool ok =
            r.chance(50) ? fuzz_mutator::replace_number(s, 10, r.pick(kDims), r) : replace_quoted(s, r);
        if (ok && s.size() <= max_size) {
            std::memcpy(data, s.data(), s.size());
            out = s.size();
        }
    }
    return out ? out : LLVMFuzzerMutate(data, size, max_size);
}
#endif  // ATTNVIZ_FUZZ_MUTATORS

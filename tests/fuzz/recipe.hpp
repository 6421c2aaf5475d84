// Shared by the harnesses that read big files (safetensors, tokenizer_files, token_npy): a compact
// "recipe" input that the harness expands into a large file, so libFuzzer reaches multi-megabyte
// files (many tensors, 100 MiB headers, 4 MiB texts) with a small -max_len.
//
// An input is a recipe when it starts with kRecipeMagic ("\xff" "RCP"); any other input is the raw
// file, exactly as before (the checked-in corpora stay valid). The rest of a recipe is copied byte
// for byte, except for these control bytes:
//
//   \x01 COUNT [+BASE] : BODY \x02   BODY repeated COUNT times (decimal; BASE, default 0, is the
//                                    index of the first repetition); repeats nest
//   \x03                             the innermost repetition's index (BASE + i), in decimal
//   \x04                             that index + 1
//   \x05                             GPT-2's 256 byte-level vocabulary entries as JSON members
//                                    ("Ā":0,"ā":1,...), for tokenizer.json recipes
//
// A malformed repeat is copied literally. Expansion stops at kRecipeMaxBytes (the file is cut there).
// Each harness splits the expansion at its first NUL byte into a head (JSON header, tokenizer.json,
// .npy header dict) and a tail (data section, text to encode), and builds the file around them.
//
// Under ATTNVIZ_FUZZ_MUTATORS (set by tests/fuzz/CMakeLists.txt only for the libFuzzer binaries) this
// header also provides the helpers of the structure-aware mutators (fuzz_mutator namespace).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tests/common/gpt2_bytes.hpp"

namespace fuzz_recipe {

inline constexpr std::string_view kRecipeMagic =
    "\xff"
    "RCP";
inline constexpr std::size_t kRecipeMaxBytes = 120u << 20;  // above the 100 MiB safetensors header limit

inline bool is_recipe(const uint8_t* data, std::size_t size) {
    return size >= kRecipeMagic.size() &&
           std::string_view(reinterpret_cast<const char*>(data), kRecipeMagic.size()) == kRecipeMagic;
}

inline const std::string& byte_vocab_members() {
    static const std::string s = [] {
        std::string r;
        for (int b = 0; b < 256; ++b) {
            const std::string c = attnviz::test::byte_char(static_cast<unsigned char>(b));
            r += b ? "," : "";
            r += '"';
            if (c == "\"" || c == "\\") r += '\\';
            r += c + "\":" + std::to_string(b);
        }
        return r;
    }();
    return s;
}

namespace detail {

/// End of the repeat body that starts at `pos` (the index of its closing \x02), or npos.
inline std::size_t body_end(std::string_view r, std::size_t pos) {
    int depth = 0;
    for (std::size_t i = pos; i < r.size(); ++i) {
        if (r[i] == '\x01')
            ++depth;
        else if (r[i] == '\x02') {
            if (depth == 0) return i;
            --depth;
        }
    }
    return std::string_view::npos;
}

inline bool read_number(std::string_view r, std::size_t& i, std::uint64_t& v) {
    const std::size_t start = i;
    v = 0;
    while (i < r.size() && r[i] >= '0' && r[i] <= '9' && i - start < 12)
        v = v * 10 + std::uint64_t(r[i++] - '0');
    return i > start;
}

inline void expand(std::string_view r, std::uint64_t index, std::string& out, int depth) {
    for (std::size_t i = 0; i < r.size() && out.size() < kRecipeMaxBytes; ++i) {
        const char c = r[i];
        if (c == '\x03' || c == '\x04') {
            out += std::to_string(index + (c == '\x04' ? 1 : 0));
        } else if (c == '\x05') {
            out += byte_vocab_members();
        } else if (c == '\x01' && depth < 8) {
            std::size_t j = i + 1;
            std::uint64_t count = 0, base = 0;
            bool ok = read_number(r, j, count);
            if (ok && j < r.size() && r[j] == '+') {
                ++j;
                ok = read_number(r, j, base);
            }
            ok = ok && j < r.size() && r[j] == ':';
            const std::size_t end = ok ? body_end(r, j + 1) : std::string_view::npos;
            if (end == std::string_view::npos) {
                out += c;  // malformed: literal
                continue;
            }
            const std::string_view body = r.substr(j + 1, end - j - 1);
            if (body.find_first_of("\x03\x04") == std::string_view::npos) {
                // The same bytes every time: expand once, then copy.
                std::string once;
                expand(body, index, once, depth + 1);
                if (!once.empty())
                    for (std::uint64_t k = 0; k < count && out.size() < kRecipeMaxBytes; ++k) out += once;
            } else {
                for (std::uint64_t k = 0; k < count && out.size() < kRecipeMaxBytes; ++k)
                    expand(body, base + k, out, depth + 1);
            }
            i = end;
        } else {
            out += c;
        }
    }
}

}  // namespace detail

/// The expansion of a recipe input (without its magic), at most about kRecipeMaxBytes.
inline std::string expand_recipe(const uint8_t* data, std::size_t size) {
    std::string out;
    const std::string_view r(reinterpret_cast<const char*>(data) + kRecipeMagic.size(),
                             size - kRecipeMagic.size());
    detail::expand(r, 0, out, 0);
    if (out.size() > kRecipeMaxBytes) out.resize(kRecipeMaxBytes);
    return out;
}

/// The expansion split at its first NUL: head, tail (empty when there is no NUL).
inline void split_head_tail(const std::string& e, std::string& head, std::string& tail) {
    const std::size_t nul = e.find('\0');
    head = e.substr(0, nul);
    tail = nul == std::string::npos ? std::string() : e.substr(nul + 1);
}

}  // namespace fuzz_recipe

#ifdef ATTNVIZ_FUZZ_MUTATORS

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <random>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace fuzz_mutator {

struct Rng {
    std::minstd_rand g;
    explicit Rng(unsigned seed) : g(seed) {}
    std::size_t operator()(std::size_t n) { return n ? std::size_t(g()) % n : 0; }
    bool chance(int percent) { return int((*this)(100)) < percent; }
    template <class T>
    const T& pick(const std::vector<T>& v) {
        return v[(*this)(v.size())];
    }
};

/// Numbers that break size arithmetic: around 2^31, 2^32, 2^53, 2^63, 2^64, and ordinary ones.
inline const std::vector<std::string>& interesting_numbers() {
    static const std::vector<std::string> v = {"0",
                                               "1",
                                               "2",
                                               "3",
                                               "4",
                                               "7",
                                               "8",
                                               "16",
                                               "255",
                                               "256",
                                               "1000",
                                               "65535",
                                               "65536",
                                               "1048576",
                                               "2147483647",
                                               "2147483648",
                                               "4294967295",
                                               "4294967296",
                                               "4294967297",
                                               "8589934592",
                                               "1099511627776",
                                               "1099511627777",
                                               "9007199254740993",
                                               "9223372036854775807",
                                               "9223372036854775808",
                                               "18446744073709551615",
                                               "18446744073709551616",
                                               "-1",
                                               "1e308",
                                               "1.5",
                                               "999999999999"};
    return v;
}

/// Repeat counts: the sizes the loaders must survive (thousands of tensors, 100 MiB headers, 4 MiB texts).
inline const std::vector<std::uint64_t>& big_counts() {
    static const std::vector<std::uint64_t> v = {1,     2,     3,      10,     100,     1000,    5000,
                                                 20000, 50000, 100000, 300000, 1000000, 4194304, 30000000};
    return v;
}

/// A repeat count: mostly small (fast executions), a third of the time one of big_counts().
inline std::uint64_t pick_count(Rng& r) {
    static const std::vector<std::uint64_t> small = {1, 2, 3, 10, 100, 1000};
    return r.chance(65) ? r.pick(small) : r.pick(big_counts());
}

/// Replaces the digit run around a random digit of s[from..] with `number`; false when there is none.
inline bool replace_number(std::string& s, std::size_t from, const std::string& number, Rng& rng) {
    std::vector<std::size_t> starts;
    for (std::size_t i = from; i < s.size(); ++i)
        if (s[i] >= '0' && s[i] <= '9' && (i == from || !(s[i - 1] >= '0' && s[i - 1] <= '9')))
            starts.push_back(i);
    if (starts.empty()) return false;
    const std::size_t a = starts[rng(starts.size())];
    std::size_t b = a;
    while (b < s.size() && s[b] >= '0' && s[b] <= '9') ++b;
    s.replace(a, b - a, number);
    return true;
}

/// Replaces a random "quoted" string's content in s[from..] with `word`; false when there is none.
inline bool replace_string(std::string& s, std::size_t from, const std::string& word, Rng& rng) {
    std::vector<std::size_t> quotes;
    for (std::size_t i = from; i < s.size(); ++i)
        if (s[i] == '"' && (i == 0 || s[i - 1] != '\\')) quotes.push_back(i);
    if (quotes.size() < 2) return false;
    const std::size_t k = rng(quotes.size() / 2) * 2;
    s.replace(quotes[k] + 1, quotes[k + 1] - quotes[k] - 1, word);
    return true;
}

/// One text-level structural mutation of a recipe (magic included); `generate` makes a fresh one and
/// `words` are the strings worth putting in quotes. Returns the new size, or 0 to let the caller fall
/// back to LLVMFuzzerMutate.
template <class Generate>
std::size_t mutate_recipe(uint8_t* data, std::size_t size, std::size_t max_size, Rng& rng, Generate generate,
                          const std::vector<std::string>& words, std::uint64_t (*count)(Rng&) = pick_count) {
    std::string r(reinterpret_cast<const char*>(data), size);
    const std::size_t from = fuzz_recipe::kRecipeMagic.size();
    const int rounds = 1 + int(rng(3));
    for (int k = 0; k < rounds; ++k) {
        switch (rng(6)) {
            case 0:
                r = generate(rng);
                break;
            case 1:
                replace_number(r, from, rng.pick(interesting_numbers()), rng);
                break;
            case 2:
                replace_number(r, from, std::to_string(count(rng)), rng);
                break;
            case 3:
                replace_string(r, from, rng.pick(words), rng);
                break;
            case 4: {  // wrap a short span in a repeat
                if (r.size() <= from + 1) break;
                const std::size_t a = from + rng(r.size() - from);
                const std::size_t len = 1 + rng(std::min<std::size_t>(64, r.size() - a));
                r.insert(a + len, "\x02");
                r.insert(a, "\x01" + std::to_string(count(rng)) + ":");
                break;
            }
            default: {  // splice: this recipe's head with a fresh recipe's tail, or the reverse
                const std::string g = generate(rng);
                const std::size_t n1 = r.find('\0'), n2 = g.find('\0');
                if (n1 == std::string::npos || n2 == std::string::npos) break;
                r = rng.chance(50) ? r.substr(0, n1) + g.substr(n2) : g.substr(0, n2) + r.substr(n1);
                break;
            }
        }
    }
    if (r.size() > max_size) return 0;
    std::memcpy(data, r.data(), r.size());
    return r.size();
}

/// What the recipe-aware mutators share: a recipe is mutated as one (3 times in 4); a raw input is
/// replaced by a fresh recipe 1 time in 4. `taken` says whether either was chosen (else the caller
/// mutates the raw input its own way). Returns the new size, or 0 for none.
template <typename Generate>
std::size_t recipe_step(uint8_t* data, std::size_t size, std::size_t max_size, Rng& r, Generate generate,
                        const std::vector<std::string>& words, bool& taken) {
    taken = true;
    if (fuzz_recipe::is_recipe(data, size))
        return r.chance(75) ? mutate_recipe(data, size, max_size, r, generate, words) : 0;
    if (r.chance(25)) {
        const std::string g = generate(r);
        if (g.size() > max_size) return 0;
        std::memcpy(data, g.data(), g.size());
        return g.size();
    }
    taken = false;
    return 0;
}

}  // namespace fuzz_mutator

#endif  // ATTNVIZ_FUZZ_MUTATORS

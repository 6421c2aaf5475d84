// Byte-level BPE tokenizers (GPT-2 files and Hugging Face tokenizer.json). What each step does is
// what Hugging Face's `tokenizers` does for these files:
//
//   text --(added tokens split out first, leftmost-longest; they are never merged)--> segments
//   segment --normalizer (NFC/NFD/NFKC/NFKD or none, ICU)--> --Split regexes (Isolated)--> pieces
//   piece --ByteLevel (optional prefix space, GPT-2 regex if use_regex)--> words
//   word --bytes as GPT-2's printable characters--> BPE merges by rank --> ids
//
// Regexes run on PCRE2 with UTF + UCP (Unicode \p{L}, \p{N}, \s), JIT-compiled when possible.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "io/tokenizer.hpp"

#include "io/json_limits.hpp"
#include "io/platform.hpp"

#include <pcre2.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <nlohmann/json.hpp>
#include <queue>
#include <unordered_map>
#include <utility>

#include "core/error.hpp"
#include "core/utf8.hpp"

namespace attnviz {

// Named, not anonymous: Tokenizer::Impl holds these types, and in a unity build (this file included
// into a batch) members of anonymous-namespace types in a class with external linkage are an error
// waiting to happen (GCC's -Wsubobject-linkage).
namespace tokenizer_detail {

using json = nlohmann::json;

constexpr int kMaxTokenId = (1 << 24) - 1;      // 16.7M ids: far above any real vocabulary
constexpr int kMaxJsonDepth = 64;               // tokenizer files nest 6 deep
constexpr std::size_t kMaxPatternBytes = 4096;  // real Split patterns are ~150 bytes
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// ------------------------------------------------------------------------------------------------
// UTF-8
// ------------------------------------------------------------------------------------------------

// Decoding and encoding: core/utf8.hpp (decode_utf8_step, first_invalid_utf8, walk_utf8, encode_utf8).

void append_utf8(std::string& out, std::uint32_t cp) {
    out += encode_utf8(char32_t(cp));
}

/// Bytes as readable text: valid UTF-8 sequences as they are, every other byte as "\xNN".
std::string readable_bytes(std::string_view bytes) {
    std::string out;
    walk_utf8(
        bytes, [&](std::string_view seq) { out.append(seq); },
        [&](std::string_view invalid) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\x%02x", static_cast<unsigned char>(invalid[0]));
            out += esc;
            return std::size_t(1);
        });
    return out;
}

/// Bytes as UTF-8 with every maximal invalid subpart replaced by U+FFFD (as Rust's
/// String::from_utf8_lossy and Python's bytes.decode(errors="replace") do).
std::string lossy_utf8(std::string_view bytes) {
    std::string out;
    walk_utf8(
        bytes, [&](std::string_view seq) { out.append(seq); },
        [&](std::string_view invalid) {
            out += "\xEF\xBF\xBD";
            return invalid.size();
        });
    return out;
}

std::string quote_token(std::string_view s, std::size_t max_len = 60) {
    std::string r = readable_bytes(s.substr(0, max_len));
    return "'" + r + (s.size() > max_len ? "…'" : "'");
}

// ------------------------------------------------------------------------------------------------
// GPT-2's byte <-> printable character table (bytes_to_unicode in openai/gpt-2 encoder.py): the
// printable Latin-1 bytes stand for themselves, the other 68 bytes get U+0100, U+0101, ... in order.
// ------------------------------------------------------------------------------------------------

struct ByteTable {
    std::array<std::uint32_t, 256> to_char{};  // byte -> code point
    std::array<std::string, 256> to_utf8;      // byte -> that code point as UTF-8
    std::unordered_map<std::uint32_t, unsigned char> to_byte;

    ByteTable() {
        const auto printable = [](int b) {
            return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        };
        std::uint32_t next = 256;
        for (int b = 0; b < 256; ++b) {
            to_char[b] = printable(b) ? std::uint32_t(b) : next++;
            append_utf8(to_utf8[b], to_char[b]);
            to_byte[to_char[b]] = static_cast<unsigned char>(b);
        }
    }
};

const ByteTable& byte_table() {
    static const ByteTable table;
    return table;
}

/// A token string of byte-level characters back to the bytes it stands for; characters outside the
/// table (not produced by a byte-level tokenizer, but possible in a file) are kept as UTF-8.
std::string token_bytes(std::string_view token) {
    const ByteTable& t = byte_table();
    std::string out;
    for (std::size_t i = 0; i < token.size();) {
        const Utf8Step step = decode_utf8_step(token, i);
        const int n = step.length;
        if (n == 0) {  // cannot happen for validated strings; keep the byte
            out += token[i++];
            continue;
        }
        const auto it = t.to_byte.find(step.cp);
        if (it != t.to_byte.end())
            out += static_cast<char>(it->second);
        else
            out.append(token.substr(i, n));
        i += n;
    }
    return out;
}

// ------------------------------------------------------------------------------------------------
// Regex (PCRE2) and normalization (ICU)
// ------------------------------------------------------------------------------------------------

/// Work allowed to the regexes of one encode(). A pcre2_match call that may read `visible` bytes
/// and take `limit` PCRE2 steps costs visible + limit / 16, so the total time is linear in the
/// budget. Ordinary text costs 6-7 per byte; all 1-byte matches 24, 1-byte pieces between added
/// tokens 17 (a call costs at least 8). A pattern that rescans or backtracks over long runs needs
/// ever larger windows for every match and runs out.
constexpr std::uint64_t kRegexBudgetPerByte = 64;
constexpr std::uint64_t kRegexBudgetBase = std::uint64_t{1} << 20;
constexpr std::size_t kRegexMinWindow = 16;  // bytes; doubled while a match needs more text
constexpr std::uint64_t match_limit(std::size_t window) {
    return 4 * std::uint64_t(window) + 64;  // ordinary text needs 3-4 steps a match (70 on long runs)
}

struct RegexBudget {
    std::uint64_t allowed = kRegexBudgetBase, spent = 0, text_bytes = 0;

    void add_text(std::size_t bytes) {
        text_bytes += bytes;
        allowed += kRegexBudgetPerByte * bytes;
    }
    void charge(std::uint64_t cost) {
        spent += cost;
        if (spent > allowed)
            throw TextError("the tokenizer's split regex needs too much work on this text (over " +
                            std::to_string(allowed / 1'000'000) + " million steps for " +
                            std::to_string((text_bytes + 1023) >> 10) +
                            " KiB); its pattern backtracks or rescans on long runs of characters");
    }
};

class Regex {
  public:
    /// Throws Error("<where>: pattern '<p>' is not a valid regex: <reason> at offset N").
    Regex(const std::string& pattern, const std::string& where) {
        if (pattern.size() > kMaxPatternBytes)
            throw Error(where + ": the regex pattern is " + std::to_string(pattern.size()) +
                        " bytes long (at most " + std::to_string(kMaxPatternBytes) + " accepted)");
        int err = 0;
        PCRE2_SIZE offset = 0;
        code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                              PCRE2_UTF | PCRE2_UCP, &err, &offset, nullptr);
        if (!code_) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(err, msg, sizeof msg);
            throw Error(where + ": pattern " + quote_token(pattern, 200) + " is not a valid regex: " +
                        reinterpret_cast<const char*>(msg) + " at offset " + std::to_string(offset));
        }
        jit_ = pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE | PCRE2_JIT_PARTIAL_HARD) == 0;
    }
    ~Regex() { pcre2_code_free(code_); }
    Regex(const Regex&) = delete;
    Regex& operator=(const Regex&) = delete;

    struct Match {  // per-encode state: pcre2_code is shared between threads, these are not
        pcre2_match_data* data = nullptr;
        pcre2_match_context* context = nullptr;
        pcre2_jit_stack* stack = nullptr;
        Match(const pcre2_code* code, bool jit) {
            data = pcre2_match_data_create_from_pattern(code, nullptr);
            context = pcre2_match_context_create(nullptr);
            if (!data || !context) throw Error("out of memory for the tokenizer's regex");
            pcre2_set_depth_limit(context, 100'000);
            pcre2_set_heap_limit(context, 64 * 1024);  // KiB
            if (jit) {
                stack = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, nullptr);
                if (stack) pcre2_jit_stack_assign(context, nullptr, stack);
            }
        }
        ~Match() {
            pcre2_jit_stack_free(stack);
            pcre2_match_context_free(context);
            pcre2_match_data_free(data);
        }
        Match(const Match&) = delete;
        Match& operator=(const Match&) = delete;
    };
    std::unique_ptr<Match> new_match() const { return std::make_unique<Match>(code_, jit_); }

    /// Splits `s` (valid UTF-8) into matches and the gaps between them, in order (Hugging Face's
    /// Split behaviour "Isolated"); empty matches split nothing. Appends non-empty parts to `out`.
    ///
    /// Each search sees a window s[0, end) with end = pos + window (earlier text stays visible to
    /// lookbehinds) and partial matching "hard": a complete match is then one that never looked at
    /// s[end], so it is the match on the whole of s; PCRE2_ERROR_PARTIAL (the search reached the
    /// window's end) doubles the window and searches again; no match means none starts before end.
    /// Every search is charged for its window and step limit, which double together while needed,
    /// so the whole split costs at most `budget` (TextError when it runs out).
    void split_isolated(std::string_view s, std::vector<std::string_view>& out, RegexBudget& budget,
                        Match& m) const {
        budget.add_text(s.size());
        std::size_t pos = 0, last = 0, window = kRegexMinWindow;
        while (pos <= s.size()) {
            std::size_t end = s.size() - pos > window ? pos + window : s.size();
            while (end < s.size() && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) ++end;
            const bool whole = end == s.size();
            const std::uint64_t limit = std::min<std::uint64_t>(match_limit(window), UINT32_MAX);
            budget.charge((end - pos) + limit / 16);
            pcre2_set_match_limit(m.context, std::uint32_t(limit));
            const int rc =
                pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(s.data()), end, pos,
                            PCRE2_NO_UTF_CHECK | (whole ? 0 : PCRE2_PARTIAL_HARD), m.data, m.context);
            if (rc == PCRE2_ERROR_NOMATCH) {
                if (whole) break;
                pos = end;
                window *= 2;
                continue;
            }
            if (rc == PCRE2_ERROR_PARTIAL || rc == PCRE2_ERROR_MATCHLIMIT) {  // more text or more steps
                window *= 2;
                continue;
            }
            if (rc < 0) {
                PCRE2_UCHAR msg[256];
                pcre2_get_error_message(rc, msg, sizeof msg);
                throw TextError(std::string("the tokenizer's regex gave up on this text (") +
                                reinterpret_cast<const char*>(msg) + ")");
            }
            const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(m.data);
            const std::size_t a = ov[0], b = ov[1];
            window = kRegexMinWindow;
            if (b == a) {  // empty match: move on by one character
                pos = a + 1;
                while (pos < s.size() && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) ++pos;
                continue;
            }
            if (a > last) out.push_back(s.substr(last, a - last));
            out.push_back(s.substr(a, b - a));
            last = pos = b;
        }
        if (last < s.size()) out.push_back(s.substr(last));
    }

  private:
    pcre2_code* code_ = nullptr;
    bool jit_ = false;
};

using NormForm = platform::NormForm;  // normalized by platform::normalize (ICU, or Windows' own)

// ------------------------------------------------------------------------------------------------
// Files
// ------------------------------------------------------------------------------------------------

std::string read_capped(const std::string& path) {
    platform::ReadFile f = platform::ReadFile::open(path);
    if (f.size() > kMaxTokenizerFileBytes)
        throw Error(path + ": file is " + std::to_string(f.size() >> 20) +
                    " MiB, larger than the 64 MiB accepted for tokenizer files");
    std::string data(std::size_t(f.size()), '\0');
    std::size_t got = 0;
    while (got < data.size()) {
        const std::size_t r = f.read(data.data() + got, data.size() - got);
        if (r == 0) break;
        got += r;
    }
    data.resize(got);
    char extra;
    if (f.read(&extra, 1) == 1) throw Error("cannot read " + path + ": the file grew while it was being read");
    return data;
}

bool is_regular_file(const std::string& path) {
    return platform::is_regular_file(path);
}

/// Parses JSON after checking size, nesting depth and memory (io/json_limits.hpp).
json parse_json(std::string_view text, const std::string& name) {
    if (text.size() > kMaxTokenizerFileBytes)
        throw Error(name + ": larger than the 64 MiB accepted for tokenizer files");
    if (json_too_deep_at(text, kMaxJsonDepth) != std::string_view::npos)
        throw Error(name + ": JSON nested more than " + std::to_string(kMaxJsonDepth) +
                    " levels deep (not a tokenizer file)");
    // Real files hold up to about a million values (Gemma's 256k pieces with scores; Qwen2's 151k tokens
    // and merges); an added token is about 15.
    return parse_json_limited(text, name, "the file", nullptr, 3'000'000);
}

// ------------------------------------------------------------------------------------------------
// BPE
// ------------------------------------------------------------------------------------------------

struct MergeRule {
    int rank;
    int merged_id;
};

std::uint64_t pair_key(int a, int b) {
    return (std::uint64_t(std::uint32_t(a)) << 32) | std::uint32_t(b);
}

struct AddedToken {
    std::string content;
    int id = 0;
    bool lstrip = false, rstrip = false, single_word = false, special = false;
};

enum class TokenKind : std::uint8_t { Gap, Vocab, Added };

/// Total text of all added tokens accepted (real files: a few KiB to a few MiB). Bounds the
/// automaton below (about 14 bytes per node, two nodes per byte at most).
constexpr std::size_t kMaxAddedTokenBytes = std::size_t{16} << 20;

/// Aho-Corasick automaton over symbols 0..256 (bytes, and 256 for a word-boundary mark). For each
/// node, `out` is the value of the longest pattern that ends there (the node's string or one of its
/// suffixes), or -1. Nodes are numbered breadth first, so the children of a node are contiguous and
/// sorted by symbol. Building and scanning are linear in the pattern and text lengths.
class Automaton {
  public:
    static constexpr int kMark = 256;
    using Pattern = std::u16string;  // symbols 0..256

    bool empty() const { return fail_.size() <= 1; }

    /// `patterns`: distinct, non-empty strings, each with its value (>= 0).
    void build(std::vector<std::pair<Pattern, int>> patterns) {
        std::sort(patterns.begin(), patterns.end());
        std::vector<std::int32_t> parent{-1}, term{-1};
        sym_.assign(1, 0);
        // Depth by depth: the prefixes of length d of the sorted patterns, in order, are the nodes
        // of depth d; a new node whenever the parent or the d-th symbol changes.
        std::vector<std::int32_t> active(patterns.size()), node_of(patterns.size(), 0);
        for (std::size_t j = 0; j < patterns.size(); ++j) active[j] = std::int32_t(j);
        for (std::size_t d = 1; !active.empty(); ++d) {
            std::size_t kept = 0;
            std::int32_t prev_parent = -1, prev_node = -1;
            std::uint16_t prev_sym = 0;
            for (const std::int32_t j : active) {
                const Pattern& p = patterns[std::size_t(j)].first;
                const std::int32_t par = node_of[std::size_t(j)];
                const std::uint16_t c = p[d - 1];
                if (par != prev_parent || c != prev_sym) {
                    prev_node = std::int32_t(sym_.size());
                    sym_.push_back(c);
                    parent.push_back(par);
                    term.push_back(-1);
                    prev_parent = par;
                    prev_sym = c;
                }
                node_of[std::size_t(j)] = prev_node;
                if (p.size() == d)
                    term[std::size_t(prev_node)] = patterns[std::size_t(j)].second;
                else
                    active[kept++] = j;
            }
            active.resize(kept);
        }
        patterns = {};
        const std::size_t n = sym_.size();
        child_begin_.assign(n + 1, 0);
        for (std::size_t u = 1; u < n; ++u) ++child_begin_[std::size_t(parent[u]) + 1];
        child_begin_[0] = 1;
        for (std::size_t v = 0; v < n; ++v) child_begin_[v + 1] += child_begin_[v];
        root_.fill(-1);
        for (std::int32_t u = child_begin_[0]; u < child_begin_[1]; ++u) root_[sym_[std::size_t(u)]] = u;
        fail_.assign(n, 0);
        out_.assign(n, -1);
        for (std::size_t u = 1; u < n; ++u) {  // breadth first: fail links point to shallower nodes
            const std::int32_t p = parent[u];
            if (p != 0) fail_[u] = step(fail_[std::size_t(p)], sym_[u]);
            out_[u] = term[u] >= 0 ? term[u] : out_[std::size_t(fail_[u])];
        }
    }

    /// The node after reading symbol c in node v.
    std::int32_t step(std::int32_t v, int c) const {
        for (;;) {
            const std::int32_t x = child(v, c);
            if (x >= 0) return x;
            if (v == 0) return 0;
            v = fail_[std::size_t(v)];
        }
    }
    std::int32_t out(std::int32_t v) const { return out_[std::size_t(v)]; }

  private:
    std::int32_t child(std::int32_t v, int c) const {
        if (v == 0) return root_[std::size_t(c)];
        const auto first = sym_.begin() + child_begin_[std::size_t(v)];
        const auto last = sym_.begin() + child_begin_[std::size_t(v) + 1];
        const auto it = std::lower_bound(first, last, std::uint16_t(c));
        return it != last && *it == c ? std::int32_t(it - sym_.begin()) : -1;
    }

    std::vector<std::uint16_t> sym_;         // [nodes] symbol on the edge into the node
    std::vector<std::int32_t> child_begin_;  // [nodes + 1] children of v: child_begin_[v] .. [v + 1]
    std::vector<std::int32_t> fail_, out_;   // [nodes]
    std::array<std::int32_t, 257> root_{};   // the root's children by symbol, -1
};

/// For single_word: a letter, digit or '_' in ASCII, or any byte of a multi-byte character.
bool is_word_byte(char c) {
    const auto u = static_cast<unsigned char>(c);
    return std::isalnum(u) || c == '_' || u >= 0x80;
}

}  // namespace tokenizer_detail
using namespace tokenizer_detail;  // (in namespace attnviz: the names stay out of the global one)

struct Tokenizer::Impl {
    std::string description;
    std::unordered_map<std::string, int> vocab;  // byte-level token string -> id
    struct Entry {
        std::string token;  // as spelled in the file (byte-level characters, or an added token's text)
        TokenKind kind = TokenKind::Gap;
        bool special = false;
    };
    std::unordered_map<int, Entry> entries;  // id -> token; sparse, so a file with one huge id stays small
    int max_id = -1;
    std::unordered_map<std::uint64_t, MergeRule> merges;  // (left id, right id) -> rule
    std::array<int, 256> byte_id{};                       // byte -> id of its one-character token, -1
    bool ignore_merges = false;
    int unk_id = -1;

    std::vector<AddedToken> added;
    std::size_t added_bytes = 0;
    // The added tokens spelled backwards (values: indices into `added`), for a backward scan that
    // finds the longest token at every position. `plain`: tokens without single_word. `single`:
    // single_word tokens, with a mark (Automaton::kMark) after every non-word byte of the text, so a
    // pattern that starts with a mark only matches where the token is followed by a non-word byte or
    // the end (the byte before it is checked during the scan).
    Automaton plain_added, single_added;
    std::unordered_map<std::string, int> added_by_content;

    std::vector<NormForm> normalizers;
    std::vector<std::unique_ptr<Regex>> splits;  // Split pre-tokenizers, in order (Isolated)
    std::unique_ptr<Regex> byte_level_regex;     // GPT-2 pattern when ByteLevel.use_regex
    bool add_prefix_space = false;

    /// The token with this id; Error("token id N is not in the vocabulary") for gaps and strangers.
    const Entry& entry(int id) const {
        const auto it = entries.find(id);
        if (it == entries.end()) throw Error("token id " + std::to_string(id) + " is not in the vocabulary");
        return it->second;
    }

    // --- building ---------------------------------------------------------------------------

    void set_token(int id, const std::string& token, TokenKind kind, const std::string& where) {
        if (id < 0 || id > kMaxTokenId)
            throw Error(where + ": id " + std::to_string(id) + " of token " + quote_token(token) +
                        " is out of range (0 to " + std::to_string(kMaxTokenId) + ")");
        Entry& e = entries[id];
        if (e.kind != TokenKind::Gap && e.token != token)
            throw Error(where + ": id " + std::to_string(id) + " is given to both " + quote_token(e.token) +
                        " and " + quote_token(token));
        if (e.kind == TokenKind::Gap || kind == TokenKind::Added) e.kind = kind;
        e.token = token;
        max_id = std::max(max_id, id);
    }

    void add_vocab(const std::string& token, std::int64_t id, const std::string& where) {
        if (token.empty()) throw Error(where + ": the vocabulary has an empty token");
        if (id < 0 || id > kMaxTokenId)
            throw Error(where + ": id " + std::to_string(id) + " of token " + quote_token(token) +
                        " is out of range (0 to " + std::to_string(kMaxTokenId) + ")");
        set_token(int(id), token, TokenKind::Vocab, where);
        vocab[token] = int(id);
    }

    void add_merge(const std::string& a, const std::string& b, int rank, const std::string& where) {
        const auto ia = vocab.find(a), ib = vocab.find(b);
        if (ia == vocab.end() || ib == vocab.end())
            throw Error(where + ": merge " + quote_token(a + " " + b) + " names " +
                        quote_token(ia == vocab.end() ? a : b) + ", which is not in the vocabulary");
        const auto im = vocab.find(a + b);
        if (im == vocab.end())
            throw Error(where + ": merge " + quote_token(a + " " + b) + " makes " + quote_token(a + b) +
                        ", which is not in the vocabulary");
        merges[pair_key(ia->second, ib->second)] = MergeRule{rank, im->second};
    }

    void add_added(AddedToken t, const std::string& where) {
        if (t.content.empty()) throw Error(where + ": an added token has empty content");
        added_bytes += t.content.size();
        if (added_bytes > kMaxAddedTokenBytes)
            throw Error(where + ": the added tokens hold more than " +
                        std::to_string(kMaxAddedTokenBytes >> 20) + " MiB of text (not a tokenizer file)");
        set_token(t.id, t.content, TokenKind::Added, where);
        entries[t.id].special = t.special;
        added_by_content[t.content] = t.id;
        added.push_back(std::move(t));
    }

    void finish(const std::string& where) {
        if (entries.empty()) throw Error(where + ": the vocabulary is empty");
        const ByteTable& bt = byte_table();
        for (int b = 0; b < 256; ++b) {
            const auto it = vocab.find(bt.to_utf8[b]);
            byte_id[b] = it == vocab.end() ? -1 : it->second;
        }
        build_added();
    }

    void build_added() {
        // Of tokens with the same content the first one wins, except that a single_word one can fall
        // back to a later plain one when its word check fails; the others can never match.
        std::unordered_map<std::string_view, std::pair<bool, bool>> seen;  // content -> plain, single
        std::vector<std::pair<Automaton::Pattern, int>> plain, single;
        for (std::size_t k = 0; k < added.size(); ++k) {
            const AddedToken& t = added[k];
            auto& [has_plain, has_single] = seen[t.content];
            if (has_plain || (t.single_word && has_single)) continue;
            (t.single_word ? has_single : has_plain) = true;
            Automaton::Pattern p;
            if (t.single_word) p.push_back(char16_t(Automaton::kMark));
            for (std::size_t i = t.content.size(); i-- > 0;) {
                p.push_back(char16_t(static_cast<unsigned char>(t.content[i])));
                if (t.single_word && i > 0 && !is_word_byte(t.content[i]))
                    p.push_back(char16_t(Automaton::kMark));
            }
            (t.single_word ? single : plain).emplace_back(std::move(p), int(k));
        }
        seen = {};
        plain_added.build(std::move(plain));
        single_added.build(std::move(single));
    }

    // --- encoding ---------------------------------------------------------------------------

    /// BPE of one word (raw bytes), appending ids. Merges lowest rank first, leftmost first on ties.
    void bpe(std::string_view word, std::vector<int>& out) const {
        if (ignore_merges) {
            std::string chars;
            for (unsigned char c : word) chars += byte_table().to_utf8[c];
            const auto it = vocab.find(chars);
            if (it != vocab.end()) {
                out.push_back(it->second);
                return;
            }
        }
        const int n = int(word.size());
        std::vector<int> id;                // [n] symbol id; symbols are merged into their left one
        std::vector<int> prev(n), next(n);  // [n] linked list of live symbols (-1 / n at the ends)
        std::vector<bool> alive(n, true);   // [n]
        id.reserve(n);
        for (int i = 0; i < n; ++i) {
            const int b = byte_id[static_cast<unsigned char>(word[i])];
            id.push_back(b >= 0 ? b : unk_id);
            prev[i] = i - 1;
            next[i] = i + 1;
        }
        // Symbols with no token at all (no byte token, no unk) are dropped, as Hugging Face does.
        for (int i = 0; i < n; ++i)
            if (id[i] < 0) {
                alive[i] = false;
                if (prev[i] >= 0) next[prev[i]] = next[i];
                if (next[i] < n) prev[next[i]] = prev[i];
            }
        struct Cand {
            int rank, pos, left, right;
            bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
        };
        std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> heap;
        const auto push = [&](int i) {
            if (i < 0 || i >= n || !alive[i] || next[i] >= n) return;
            const auto it = merges.find(pair_key(id[i], id[next[i]]));
            if (it != merges.end()) heap.push(Cand{it->second.rank, i, id[i], id[next[i]]});
        };
        for (int i = 0; i < n; ++i) push(i);
        while (!heap.empty()) {
            const Cand c = heap.top();
            heap.pop();
            const int i = c.pos;
            if (!alive[i] || next[i] >= n || id[i] != c.left || id[next[i]] != c.right) continue;
            const int j = next[i];
            id[i] = merges.at(pair_key(c.left, c.right)).merged_id;
            alive[j] = false;
            next[i] = next[j];
            if (next[j] < n) prev[next[j]] = i;
            push(prev[i]);
            push(i);
        }
        for (int i = 0; i < n; ++i)
            if (alive[i]) out.push_back(id[i]);
    }

    /// Splits text into (added token id or -1, span) parts, leftmost-longest, with lstrip/rstrip.
    struct Part {
        int added_id;
        std::string_view text;
    };
    std::vector<Part> split_added(std::string_view s) const {
        std::vector<Part> parts;
        if (added.empty()) {
            parts.push_back({-1, s});
            return parts;
        }
        const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
        // best[i]: the longest token matching at i (index into `added`), -1 for none.
        std::vector<std::int32_t> best(s.size(), -1);
        if (!plain_added.empty()) {
            std::int32_t v = 0;
            for (std::size_t i = s.size(); i-- > 0;) {
                v = plain_added.step(v, static_cast<unsigned char>(s[i]));
                best[i] = plain_added.out(v);
            }
        }
        if (!single_added.empty()) {
            std::int32_t v = single_added.step(0, Automaton::kMark);  // the end of the text is a boundary
            for (std::size_t i = s.size(); i-- > 0;) {
                v = single_added.step(v, static_cast<unsigned char>(s[i]));
                const std::int32_t k = single_added.out(v);
                // Same length as the plain one: the same content, where single_word came first.
                if (k >= 0 && (i == 0 || !is_word_byte(s[i - 1])) &&
                    (best[i] < 0 ||
                     added[std::size_t(k)].content.size() >= added[std::size_t(best[i])].content.size()))
                    best[i] = k;
                if (!is_word_byte(s[i])) v = single_added.step(v, Automaton::kMark);
            }
        }
        std::size_t last = 0;
        for (std::size_t i = 0; i < s.size();) {
            if (best[i] < 0) {
                ++i;
                continue;
            }
            const AddedToken* hit = &added[std::size_t(best[i])];
            std::size_t a = i, b = i + hit->content.size();
            if (hit->lstrip)
                while (a > last && is_space(s[a - 1])) --a;
            if (hit->rstrip)
                while (b < s.size() && is_space(s[b])) ++b;
            if (a > last) parts.push_back({-1, s.substr(last, a - last)});
            parts.push_back({hit->id, s.substr(a, b - a)});
            last = i = b;
        }
        if (last < s.size()) parts.push_back({-1, s.substr(last)});
        return parts;
    }

    /// `words` null: the ids of `text`. Otherwise the words BPE would work on (raw bytes, after the
    /// normalizers and pre-tokenizers) are appended to it instead, and added tokens left out.
    std::vector<int> encode(std::string_view text, std::vector<std::string>* words = nullptr) const {
        if (text.size() > kMaxTokenizeTextBytes)
            throw TextError("the text is " + std::to_string(text.size() >> 10) + " KiB long; at most " +
                            std::to_string(kMaxTokenizeTextBytes >> 20) + " MiB can be tokenized");
        const std::size_t bad = first_invalid_utf8(text);
        if (bad != std::string_view::npos)
            throw TextError("the text is not valid UTF-8 (byte " + std::to_string(bad) + ")");
        std::vector<int> ids;
        std::deque<std::string> kept;  // owned copies of cached words (a deque keeps them in place)
        std::unordered_map<std::string_view, std::vector<int>> cache;  // word -> ids, for this call
        std::vector<std::string_view> pieces, next_pieces;
        std::string prefixed;
        RegexBudget budget;
        std::vector<std::unique_ptr<Regex::Match>> split_match;  // [splits.size()]
        for (const auto& re : splits) split_match.push_back(re->new_match());
        const std::unique_ptr<Regex::Match> byte_level_match =
            byte_level_regex ? byte_level_regex->new_match() : nullptr;
        for (const Part& part : split_added(text)) {
            if (part.added_id >= 0) {
                if (!words) ids.push_back(part.added_id);
                continue;
            }
            std::string normalized(part.text);
            for (NormForm f : normalizers) normalized = platform::normalize(normalized, f);
            pieces.assign(1, normalized);
            for (std::size_t r = 0; r < splits.size(); ++r) {
                next_pieces.clear();
                for (std::string_view p : pieces)
                    splits[r]->split_isolated(p, next_pieces, budget, *split_match[r]);
                pieces.swap(next_pieces);
            }
            for (std::string_view piece : pieces) {
                std::string_view subject = piece;
                if (add_prefix_space && (piece.empty() || piece[0] != ' ')) {
                    prefixed = " " + std::string(piece);
                    subject = prefixed;
                }
                next_pieces.clear();
                if (byte_level_regex)
                    byte_level_regex->split_isolated(subject, next_pieces, budget, *byte_level_match);
                else if (!subject.empty())
                    next_pieces.push_back(subject);
                for (std::string_view word : next_pieces) {
                    if (words) {
                        words->emplace_back(word);
                        continue;
                    }
                    // Words point into `normalized`/`prefixed`, which change: the cache owns copies.
                    const auto it = cache.find(word);
                    if (it != cache.end()) {
                        ids.insert(ids.end(), it->second.begin(), it->second.end());
                        continue;
                    }
                    const std::size_t start = ids.size();
                    bpe(word, ids);
                    if (cache.size() < 100000 && word.size() <= 256) {
                        kept.emplace_back(word);
                        cache.emplace(kept.back(), std::vector<int>(ids.begin() + start, ids.end()));
                    }
                }
            }
        }
        return ids;
    }
};

namespace {

using Impl = Tokenizer::Impl;

std::string type_name(const json& j) {
    return j.is_null() ? "null" : std::string(j.type_name());
}

/// A token id from JSON: an integer in [0, kMaxTokenId].
int json_id(const json& j, const std::string& where, const std::string& token) {
    if (j.is_number_unsigned()) {
        const std::uint64_t v = j.get<std::uint64_t>();
        if (v > std::uint64_t(kMaxTokenId))
            throw Error(where + ": id " + std::to_string(v) + " of token " + quote_token(token) +
                        " is out of range (0 to " + std::to_string(kMaxTokenId) + ")");
        return int(v);
    }
    if (j.is_number_integer()) {
        const std::int64_t v = j.get<std::int64_t>();
        if (v < 0 || v > kMaxTokenId)
            throw Error(where + ": id " + std::to_string(v) + " of token " + quote_token(token) +
                        " is out of range (0 to " + std::to_string(kMaxTokenId) + ")");
        return int(v);
    }
    throw Error(where + ": the id of token " + quote_token(token) + " is " + type_name(j) +
                ", not an integer");
}

const json& member(const json& obj, const char* key, const std::string& where) {
    const auto it = obj.find(key);
    if (it == obj.end()) throw Error(where + ": '" + key + "' is missing");
    return *it;
}

bool json_bool(const json& obj, const char* key, bool fallback, const std::string& where) {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) throw Error(where + "." + key + " is " + type_name(*it) + ", not true/false");
    return it->get<bool>();
}

std::string json_type(const json& obj, const std::string& where) {
    if (!obj.is_object()) throw Error(where + " is " + type_name(obj) + ", not an object");
    const auto it = obj.find("type");
    if (it == obj.end() || !it->is_string()) throw Error(where + ".type is missing");
    return it->get<std::string>();
}

void read_vocab(Impl& m, const json& vocab, const std::string& where) {
    if (!vocab.is_object()) throw Error(where + " is " + type_name(vocab) + ", not an object of token: id");
    m.vocab.reserve(vocab.size());
    m.entries.reserve(vocab.size());
    for (const auto& [token, id] : vocab.items()) m.add_vocab(token, json_id(id, where, token), where);
}

/// "a b" -> (a, b); exactly one space, as in GPT-2's merges.txt.
std::pair<std::string, std::string> split_merge(std::string_view line, const std::string& where) {
    const auto sp = line.find(' ');
    if (sp == std::string_view::npos || sp == 0 || sp + 1 >= line.size() ||
        line.find(' ', sp + 1) != std::string_view::npos)
        throw Error(where + ": " + quote_token(line) + " is not a merge of two tokens ('a b')");
    return {std::string(line.substr(0, sp)), std::string(line.substr(sp + 1))};
}

void add_gpt2_pretokenizer(Impl& m) {
    m.byte_level_regex = std::make_unique<Regex>(kGpt2Pattern, "GPT-2 pattern");
}

/// Escapes a literal for PCRE2 (Split patterns given as {"String": "..."}).
std::string regex_literal(const std::string& s) {
    std::string r;
    for (char c : s) {
        if (std::strchr("\\^$.|?*+()[]{}-/#", c) && c != '\0') r += '\\';
        r += c;
    }
    return r;
}

void read_normalizer(Impl& m, const json& n, const std::string& where) {
    if (n.is_null()) return;
    const std::string type = json_type(n, where);
    if (type == "NFC") {
        m.normalizers.push_back(NormForm::NFC);
    } else if (type == "NFD") {
        m.normalizers.push_back(NormForm::NFD);
    } else if (type == "NFKC") {
        m.normalizers.push_back(NormForm::NFKC);
    } else if (type == "NFKD") {
        m.normalizers.push_back(NormForm::NFKD);
    } else if (type == "Sequence") {
        const json& list = member(n, "normalizers", where);
        if (!list.is_array()) throw Error(where + ".normalizers is not an array");
        for (std::size_t i = 0; i < list.size(); ++i)
            read_normalizer(m, list[i], where + ".normalizers[" + std::to_string(i) + "]");
    } else {
        throw Error(where + ".type '" + type + "' is not supported (only NFC, NFD, NFKC, NFKD or none)");
    }
}

void read_split(Impl& m, const json& p, const std::string& where) {
    const json& pattern = member(p, "pattern", where);
    std::string regex;
    if (pattern.is_object() && pattern.contains("Regex") && pattern["Regex"].is_string())
        regex = pattern["Regex"].get<std::string>();
    else if (pattern.is_object() && pattern.contains("String") && pattern["String"].is_string())
        regex = regex_literal(pattern["String"].get<std::string>());
    else
        throw Error(where + ".pattern must be {\"Regex\": \"...\"} or {\"String\": \"...\"}");
    const json& behavior = member(p, "behavior", where);
    if (!behavior.is_string() || behavior.get<std::string>() != "Isolated")
        throw Error(where + ".behavior " +
                    (behavior.is_string() ? "'" + behavior.get<std::string>() + "'" : type_name(behavior)) +
                    " is not supported (only 'Isolated')");
    if (json_bool(p, "invert", false, where)) throw Error(where + ".invert true is not supported");
    m.splits.push_back(std::make_unique<Regex>(regex, where + ".pattern"));
}

/// ByteLevel alone, or Sequence[Split..., ByteLevel]. Returns a short description ("Split regex").
std::string read_pre_tokenizer(Impl& m, const json& p, const std::string& where) {
    if (p.is_null())
        throw Error(where +
                    " is null; only byte-level BPE tokenizers (pre_tokenizer ByteLevel) are supported");
    const std::string type = json_type(p, where);
    std::vector<std::pair<const json*, std::string>> steps;
    if (type == "Sequence") {
        const json& list = member(p, "pretokenizers", where);
        if (!list.is_array()) throw Error(where + ".pretokenizers is not an array");
        for (std::size_t i = 0; i < list.size(); ++i)
            steps.emplace_back(&list[i], where + ".pretokenizers[" + std::to_string(i) + "]");
    } else {
        steps.emplace_back(&p, where);
    }
    bool byte_level = false;
    for (const auto& [step, at] : steps) {
        const std::string t = json_type(*step, at);
        if (byte_level)
            throw Error(at + ".type '" + t + "' after ByteLevel is not supported (ByteLevel must come last)");
        if (t == "Split") {
            read_split(m, *step, at);
        } else if (t == "ByteLevel") {
            byte_level = true;
            m.add_prefix_space = json_bool(*step, "add_prefix_space", false, at);
            if (json_bool(*step, "use_regex", true, at)) add_gpt2_pretokenizer(m);
        } else {
            throw Error(at + ".type '" + t +
                        "' is not supported (only ByteLevel, after optional Split regexes)");
        }
    }
    if (!byte_level)
        throw Error(where + " has no ByteLevel step; only byte-level BPE tokenizers are supported");
    return m.splits.empty() ? "" : "Split regex";
}

void read_added_tokens(Impl& m, const json& list, const std::string& where) {
    if (list.is_null()) return;
    if (!list.is_array()) throw Error(where + " is " + type_name(list) + ", not an array");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string at = where + "[" + std::to_string(i) + "]";
        const json& t = list[i];
        if (!t.is_object()) throw Error(at + " is " + type_name(t) + ", not an object");
        const json& content = member(t, "content", at);
        if (!content.is_string()) throw Error(at + ".content is " + type_name(content) + ", not a string");
        AddedToken a;
        a.content = content.get<std::string>();
        a.id = json_id(member(t, "id", at), at, a.content);
        a.lstrip = json_bool(t, "lstrip", false, at);
        a.rstrip = json_bool(t, "rstrip", false, at);
        a.single_word = json_bool(t, "single_word", false, at);
        a.special = json_bool(t, "special", false, at);
        m.add_added(std::move(a), at);
    }
}

std::string count_text(const Impl& m) {
    return std::to_string(m.max_id + 1) + " tokens";
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// Loading
// ------------------------------------------------------------------------------------------------

std::shared_ptr<const Tokenizer> Tokenizer::from_gpt2(std::string_view vocab_json,
                                                      std::string_view merges_txt) {
    return from_gpt2_named(vocab_json, "vocab.json", merges_txt, "merges.txt");
}

std::shared_ptr<const Tokenizer> Tokenizer::from_gpt2_named(std::string_view vocab_json,
                                                            const std::string& vocab_name,
                                                            std::string_view merges_txt,
                                                            const std::string& merges_name) {
    auto m = std::make_unique<Impl>();
    read_vocab(*m, parse_json(vocab_json, vocab_name), vocab_name);
    if (merges_txt.size() > kMaxTokenizerFileBytes)
        throw Error(merges_name + ": larger than the 64 MiB accepted for tokenizer files");
    const std::size_t bad = first_invalid_utf8(merges_txt);
    if (bad != std::string_view::npos)
        throw Error(merges_name + ": not valid UTF-8 (line " +
                    std::to_string(1 + std::count(merges_txt.begin(), merges_txt.begin() + bad, '\n')) + ")");
    int rank = 0;
    std::size_t line_no = 0;
    for (std::size_t pos = 0; pos < merges_txt.size();) {
        std::size_t end = merges_txt.find('\n', pos);
        if (end == std::string_view::npos) end = merges_txt.size();
        std::string_view line = merges_txt.substr(pos, end - pos);
        pos = end + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty() || (line_no == 1 && line.rfind("#version", 0) == 0)) continue;
        const std::string at = merges_name + " line " + std::to_string(line_no);
        const auto [a, b] = split_merge(line, at);
        m->add_merge(a, b, rank++, at);
    }
    const auto eot = m->vocab.find("<|endoftext|>");
    if (eot != m->vocab.end()) {
        AddedToken t;
        t.content = "<|endoftext|>";
        t.id = eot->second;
        t.special = true;
        m->add_added(std::move(t), vocab_name);
    }
    add_gpt2_pretokenizer(*m);
    m->finish(vocab_name);
    m->description = "GPT-2 byte-level BPE, " + count_text(*m);
    return std::make_shared<const Tokenizer>(std::move(m));
}

std::shared_ptr<const Tokenizer> Tokenizer::from_tokenizer_json(std::string_view text,
                                                                const std::string& name) {
    const json root = parse_json(text, name);
    if (!root.is_object()) throw Error(name + ": the file is " + type_name(root) + ", not a JSON object");
    auto m = std::make_unique<Impl>();
    const json& model = member(root, "model", name);
    if (!model.is_object()) throw Error(name + ": model is " + type_name(model) + ", not an object");
    if (model.contains("type")) {
        const json& type = model["type"];
        if (!type.is_string() || type.get<std::string>() != "BPE")
            throw Error(name + ": model.type " +
                        (type.is_string() ? "'" + type.get<std::string>() + "'" : type_name(type)) +
                        " is not supported (BPE only)");
    } else if (!model.contains("merges")) {
        throw Error(name + ": model has no type and no merges (only BPE models are supported)");
    }
    if (json_bool(model, "byte_fallback", false, name + ": model"))
        throw Error(
            name +
            ": model.byte_fallback is true (SentencePiece-style BPE); only byte-level BPE is supported");
    if (model.contains("dropout") && !model["dropout"].is_null() &&
        !(model["dropout"].is_number() && model["dropout"].get<double>() == 0.0))
        throw Error(name + ": model.dropout is set; BPE dropout is not supported");
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
        const auto it = model.find(key);
        if (it != model.end() && !it->is_null() && !(it->is_string() && it->get<std::string>().empty()))
            throw Error(name + ": model." + key + " is set; only byte-level BPE without it is supported");
    }
    m->ignore_merges = json_bool(model, "ignore_merges", false, name + ": model");
    read_vocab(*m, member(model, "vocab", name + ": model"), name + ": model.vocab");
    const json& merges = member(model, "merges", name + ": model");
    if (!merges.is_array()) throw Error(name + ": model.merges is " + type_name(merges) + ", not an array");
    m->merges.reserve(merges.size());
    for (std::size_t i = 0; i < merges.size(); ++i) {
        const std::string at = name + ": model.merges[" + std::to_string(i) + "]";
        const json& e = merges[i];
        if (e.is_string()) {
            const auto [a, b] = split_merge(e.get_ref<const std::string&>(), at);
            m->add_merge(a, b, int(i), at);
        } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
            m->add_merge(e[0].get<std::string>(), e[1].get<std::string>(), int(i), at);
        } else {
            throw Error(at + " is neither \"a b\" nor [\"a\", \"b\"]");
        }
    }
    const auto unk = model.find("unk_token");
    if (unk != model.end() && unk->is_string()) {
        const auto it = m->vocab.find(unk->get<std::string>());
        if (it != m->vocab.end()) m->unk_id = it->second;
    }
    read_added_tokens(*m, root.value("added_tokens", json()), name + ": added_tokens");
    read_normalizer(*m, root.value("normalizer", json()), name + ": normalizer");
    const std::string split =
        read_pre_tokenizer(*m, root.value("pre_tokenizer", json()), name + ": pre_tokenizer");
    const json decoder = root.value("decoder", json());
    if (!decoder.is_null()) {
        const std::string t = json_type(decoder, name + ": decoder");
        if (t != "ByteLevel")
            throw Error(name + ": decoder.type '" + t + "' is not supported (ByteLevel only)");
    }
    m->finish(name);
    std::string steps;
    if (!m->normalizers.empty()) steps = "NFC";
    for (NormForm f : m->normalizers)
        if (f != NormForm::NFC) steps = "normalized";
    if (!split.empty()) steps += (steps.empty() ? "" : " + ") + split;
    m->description =
        "byte-level BPE" + (steps.empty() ? std::string() : " (" + steps + ")") + ", " + count_text(*m);
    return std::make_shared<const Tokenizer>(std::move(m));
}

std::shared_ptr<const Tokenizer> Tokenizer::load_tokenizer_json(const std::string& path) {
    return from_tokenizer_json(read_capped(path), path);
}

std::shared_ptr<const Tokenizer> Tokenizer::load_gpt2_files(const std::string& vocab_json,
                                                            const std::string& merges_txt) {
    return from_gpt2_named(read_capped(vocab_json), vocab_json, read_capped(merges_txt), merges_txt);
}

std::shared_ptr<const Tokenizer> Tokenizer::load_dir(const std::string& dir) {
    if (is_regular_file(dir)) {  // a tokenizer.json given directly
        if (dir.size() >= 5 && dir.compare(dir.size() - 5, 5, ".json") == 0) return load_tokenizer_json(dir);
        throw Error(dir + ": expected a model folder (with tokenizer.json, or vocab.json + merges.txt)");
    }
    const std::string base = dir.empty() || dir.back() == '/' ? dir : dir + "/";
    if (is_regular_file(base + "tokenizer.json")) return load_tokenizer_json(base + "tokenizer.json");
    if (is_regular_file(base + "vocab.json") && is_regular_file(base + "merges.txt"))
        return load_gpt2_files(base + "vocab.json", base + "merges.txt");
    if (!platform::is_directory(dir))
        throw Error(dir + ": not a directory (expected a model folder with tokenizer.json)");
    throw Error(dir + ": no tokenizer.json, and no vocab.json + merges.txt");
}

// ------------------------------------------------------------------------------------------------
// Using
// ------------------------------------------------------------------------------------------------

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

std::vector<int> Tokenizer::encode(std::string_view utf8) const {
    return impl_->encode(utf8);
}

std::vector<std::string> Tokenizer::pretokenize(std::string_view utf8) const {
    std::vector<std::string> words;
    impl_->encode(utf8, &words);
    return words;
}

std::string byte_level_token(std::string_view bytes) {
    std::string out;
    for (unsigned char b : bytes) out += byte_table().to_utf8[b];
    return out;
}

std::vector<TokenPiece> Tokenizer::encode_pieces(std::string_view utf8) const {
    std::vector<TokenPiece> pieces;
    for (int id : encode(utf8)) pieces.push_back({id, token_text(id)});
    return pieces;
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
    std::string bytes;
    for (int id : ids) {
        const Impl::Entry& e = impl_->entry(id);
        if (e.kind == TokenKind::Added)
            bytes += e.token;
        else
            bytes += token_bytes(e.token);
    }
    return lossy_utf8(bytes);
}

std::string Tokenizer::token_text(int id) const {
    const Impl::Entry& e = impl_->entry(id);
    if (e.kind == TokenKind::Added) return e.token;
    return readable_bytes(token_bytes(e.token));
}

bool Tokenizer::has_id(int id) const {
    return impl_->entries.count(id) != 0;
}

std::string Tokenizer::token_label(int id) const {
    return has_id(id) ? token_text(id) : "<id " + std::to_string(id) + ">";
}

std::string Tokenizer::decode_labelled(const std::vector<int>& ids) const {
    // Runs of known ids decode together, so a character split over byte tokens joins up.
    std::string out;
    std::vector<int> run;
    for (int id : ids) {
        if (has_id(id)) {
            run.push_back(id);
            continue;
        }
        out += decode(run) + "<id " + std::to_string(id) + ">";
        run.clear();
    }
    return out + decode(run);
}

int Tokenizer::vocab_size() const {
    return impl_->max_id + 1;
}

std::optional<int> Tokenizer::token_id(std::string_view token) const {
    const std::string key(token);
    const auto a = impl_->added_by_content.find(key);
    if (a != impl_->added_by_content.end()) return a->second;
    const auto v = impl_->vocab.find(key);
    if (v != impl_->vocab.end()) return v->second;
    return std::nullopt;
}

std::string Tokenizer::description() const {
    return impl_->description;
}

bool Tokenizer::is_special(int id) const {
    const auto it = impl_->entries.find(id);
    return it != impl_->entries.end() && it->second.special;
}

}  // namespace attnviz

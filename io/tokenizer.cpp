// Hugging Face tokenizers (tokenizer.json), GPT-2's vocab.json + merges.txt and BERT's vocab.txt.
// What each step does is what Hugging Face's `tokenizers` does for these files:
//
//   text --(added tokens split out first, leftmost-longest; they are never merged)--> segments
//   segment --normalizers (io/tokenizer_text: NFC.., Lowercase, StripAccents, BertNormalizer, Strip,
//            Replace, Prepend, Precompiled)--> --pre-tokenizers (Split, ByteLevel, Metaspace,
//            BertPreTokenizer, Whitespace(Split), Punctuation, Digits)--> words
//   word --model: BPE (on bytes as GPT-2's characters, or on characters with byte fallback),
//          WordPiece (greedy longest match, ## continuations) or Unigram (Viterbi)--> ids
//   ids --post-processor (TemplateProcessing, BertProcessing, RobertaProcessing) on request
//
// Regexes run on PCRE2 with UTF + UCP (Unicode \p{L}, \p{N}), JIT-compiled when possible, with \s
// rewritten to Unicode White_Space.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "io/tokenizer.hpp"

#include "io/json_limits.hpp"
#include "io/platform.hpp"
#include "io/tokenizer_text.hpp"

#include <pcre2.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <nlohmann/json.hpp>
#include <queue>
#include <set>
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
        const std::string unicode = tokenizer_text::white_space_pattern(pattern, where);
        code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(unicode.data()), unicode.size(),
                              PCRE2_UTF | PCRE2_UCP, &err, &offset, nullptr);
        if (!code_) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(err, msg, sizeof msg);
            throw Error(where + ": pattern " + quote_token(pattern, 200) +
                        " is not a valid regex: " + reinterpret_cast<const char*>(msg) +
                        (unicode == pattern ? " at offset " + std::to_string(offset) : std::string()));
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

    /// The non-empty matches in `s` (valid UTF-8), left to right, as (begin, end) byte offsets.
    ///
    /// Each search sees a window s[0, end) with end = pos + window (earlier text stays visible to
    /// lookbehinds) and partial matching "hard": a complete match is then one that never looked at
    /// s[end], so it is the match on the whole of s; PCRE2_ERROR_PARTIAL (the search reached the
    /// window's end) doubles the window and searches again; no match means none starts before end.
    /// Every search is charged for its window and step limit, which double together while needed,
    /// so the whole split costs at most `budget` (TextError when it runs out).
    void find_all(std::string_view s, std::vector<std::pair<std::size_t, std::size_t>>& out,
                  RegexBudget& budget, Match& m) const {
        budget.add_text(s.size());
        std::size_t pos = 0, window = kRegexMinWindow;
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
            out.emplace_back(a, b);
            pos = b;
        }
    }

  private:
    pcre2_code* code_ = nullptr;
    bool jit_ = false;
};

using tokenizer_text::NormForm;

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
    if (f.read(&extra, 1) == 1)
        throw Error("cannot read " + path + ": the file grew while it was being read");
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
    bool normalized = false;  // matched in the normalized text (else in the raw text, first)
    std::string pattern;      // what is matched: the content, normalized when `normalized`
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

/// A byte trie of vocabulary strings, for the longest (WordPiece) or every (Unigram) vocabulary
/// entry that starts a text.
class ByteTrie {
  public:
    void insert(std::string_view key, int value) {
        std::int32_t v = 0;
        for (unsigned char c : key) {
            auto it = edges_.find(edge(v, c));
            if (it == edges_.end()) {
                it = edges_.emplace(edge(v, c), std::int32_t(value_.size())).first;
                value_.push_back(-1);
            }
            v = it->second;
        }
        value_[std::size_t(v)] = value;
    }
    /// Calls f(length, value) for every key that is a prefix of s, shortest first; `steps` counts
    /// the bytes walked.
    template <class F>
    void prefixes(std::string_view s, std::uint64_t& steps, F f) const {
        std::int32_t v = 0;
        for (std::size_t i = 0; i < s.size(); ++i) {
            ++steps;
            const auto it = edges_.find(edge(v, static_cast<unsigned char>(s[i])));
            if (it == edges_.end()) return;
            v = it->second;
            if (value_[std::size_t(v)] >= 0) f(i + 1, value_[std::size_t(v)]);
        }
    }

  private:
    static std::uint64_t edge(std::int32_t v, unsigned char c) {
        return (std::uint64_t(std::uint32_t(v)) << 8) | c;
    }
    std::unordered_map<std::uint64_t, std::int32_t> edges_;
    std::vector<std::int32_t> value_{-1};
};

enum class ModelKind { BPE, WordPiece, Unigram };
enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };
enum class CharClass { WhiteSpace, Punctuation, Numeric };

struct NormStep {
    enum class Kind { Form, Lowercase, StripAccents, Strip, Replace, Prepend, Bert, Precompiled } kind;
    explicit NormStep(Kind k) : kind(k) {}
    NormForm form = NormForm::NFC;
    bool left = false, right = false;  // Strip
    std::string literal, content;      // Replace (a String pattern), its content; Prepend's text
    std::unique_ptr<Regex> regex;      // Replace with a Regex pattern
    tokenizer_text::BertNormalizerOptions bert;
    std::unique_ptr<tokenizer_text::PrecompiledCharsmap> charsmap;
};

struct PreStep {
    enum class Kind { Split, ByteLevel, Metaspace, CharSplit, Bert } kind;
    explicit PreStep(Kind k) : kind(k) {}
    std::unique_ptr<Regex> regex;             // Split; ByteLevel's GPT-2 pattern when use_regex
    CharClass chars = CharClass::WhiteSpace;  // CharSplit: which characters are the delimiters
    SplitBehavior behavior = SplitBehavior::Isolated;
    bool invert = false;
    bool add_prefix_space = false;  // ByteLevel
    std::string replacement;        // Metaspace
    enum class Prepend { Always, Never, First } prepend = Prepend::Always;
    bool split = true;  // Metaspace
};

/// One element of a post-processing template: a sequence (0 = A, 1 = B) or special token ids.
struct TemplatePiece {
    int sequence = -1;
    std::vector<int> ids;
    int type_id = 0;
};

struct DecodeStep {
    enum class Kind { ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace, WordPiece } kind;
    explicit DecodeStep(Kind k) : kind(k) {}
    std::string from, to;  // Replace; Metaspace: from = the replacement; WordPiece: from = the prefix
    char32_t strip_char = ' ';
    int start = 0, stop = 0;  // Strip
    bool strip_first = true;  // Metaspace: a prepended replacement is dropped from the first token
    bool cleanup = true;      // WordPiece
};

struct Span {
    std::size_t a, b;
    bool match;
};

/// Hugging Face's SplitDelimiterBehavior on a cover of a string by gaps and matches (in order):
/// appends the resulting non-empty (begin, end) ranges.
void apply_behavior(const std::vector<Span>& cover, SplitBehavior behavior,
                    std::vector<std::pair<std::size_t, std::size_t>>& out) {
    std::vector<Span> acc;
    bool prev_match = false;
    switch (behavior) {
        case SplitBehavior::Removed:
            for (const Span& s : cover)
                if (!s.match) acc.push_back(s);
            break;
        case SplitBehavior::Isolated:
            acc = cover;
            break;
        case SplitBehavior::MergedWithPrevious:
            for (const Span& s : cover) {
                if (s.match && !prev_match && !acc.empty())
                    acc.back().b = s.b;
                else
                    acc.push_back(s);
                prev_match = s.match;
            }
            break;
        case SplitBehavior::MergedWithNext:
            for (std::size_t k = cover.size(); k-- > 0;) {
                const Span& s = cover[k];
                if (s.match && !prev_match && !acc.empty())
                    acc.back().a = s.a;
                else
                    acc.push_back(s);
                prev_match = s.match;
            }
            std::reverse(acc.begin(), acc.end());
            break;
        case SplitBehavior::Contiguous:
            for (const Span& s : cover) {
                if (s.match == prev_match && !acc.empty())
                    acc.back().b = s.b;
                else
                    acc.push_back(s);
                prev_match = s.match;
            }
            break;
    }
    for (const Span& s : acc)
        if (s.b > s.a) out.emplace_back(s.a, s.b);
}

/// The gaps and matches covering a string of n bytes, from its sorted matches; `invert` swaps them.
void cover_of(std::size_t n, const std::vector<std::pair<std::size_t, std::size_t>>& matches, bool invert,
              std::vector<Span>& out) {
    out.clear();
    std::size_t last = 0;
    for (const auto& [a, b] : matches) {
        if (a > last) out.push_back({last, a, invert});
        out.push_back({a, b, !invert});
        last = b;
    }
    if (last < n) out.push_back({last, n, invert});
}

bool in_class(char32_t c, CharClass k) {
    switch (k) {
        case CharClass::WhiteSpace:
            return tokenizer_text::is_white_space(c);
        case CharClass::Punctuation:
            return tokenizer_text::is_bert_punctuation(c);
        case CharClass::Numeric:
            return tokenizer_text::is_numeric(c);
    }
    return false;
}

/// Each character of class k in s as its own match.
void char_matches(std::string_view s, CharClass k, std::vector<std::pair<std::size_t, std::size_t>>& out) {
    out.clear();
    for (std::size_t i = 0; i < s.size();) {
        const Utf8Step st = decode_utf8_step(s, i);
        const std::size_t n = st.length > 0 ? std::size_t(st.length) : 1;
        if (in_class(st.cp, k)) out.emplace_back(i, i + n);
        i += n;
    }
}

/// Each occurrence of a literal (non-empty) in s, left to right, as a match.
void literal_matches(std::string_view s, std::string_view lit,
                     std::vector<std::pair<std::size_t, std::size_t>>& out) {
    out.clear();
    for (std::size_t i = s.find(lit); i != std::string_view::npos; i = s.find(lit, i + lit.size()))
        out.emplace_back(i, i + lit.size());
}

/// "<0xNN>" -> NN, or -1.
int byte_token_value(std::string_view t) {
    if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
    int v = 0;
    for (int k = 3; k < 5; ++k) {
        const char c = t[std::size_t(k)];
        v = v * 16 + (c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1000);
    }
    return v >= 0 ? v : -1;
}

/// Work allowed to the vocabulary lookups (WordPiece, Unigram) of one encode(): bytes walked in
/// the tries, linear in the text. Real vocabularies walk a few bytes per byte of text.
struct TrieBudget {
    std::uint64_t steps = 0, allowed = std::uint64_t{1} << 20;
    void check() const {
        if (steps > allowed)
            throw TextError("the tokenizer's vocabulary lookups need too much work on this text (over " +
                            std::to_string(allowed / 1'000'000) +
                            " million steps); its vocabulary has very long entries matching the text");
    }
};

}  // namespace tokenizer_detail
using namespace tokenizer_detail;  // (in namespace attnviz: the names stay out of the global one)

struct Tokenizer::Impl {
    std::string description;
    std::unordered_map<std::string, int> vocab;  // token as spelled in the file -> id
    struct Entry {
        std::string token;  // as spelled in the file (byte-level characters, or an added token's text)
        TokenKind kind = TokenKind::Gap;
        bool special = false;
        std::string normalized;  // a normalized added token's normalized content, which decode() gives
    };
    std::unordered_map<int, Entry> entries;  // id -> token; sparse, so a file with one huge id stays small
    int max_id = -1;

    ModelKind kind = ModelKind::BPE;
    bool byte_level = false;  // words are bytes, spelled as GPT-2's characters (a ByteLevel pre-tokenizer)
    int unk_id = -1;
    // BPE
    std::unordered_map<std::uint64_t, MergeRule> merges;  // (left id, right id) -> rule
    std::array<int, 256> byte_id{};                       // byte -> id of its byte-level token, -1
    bool ignore_merges = false, byte_fallback = false, fuse_unk = false;
    std::array<int, 256> fallback_id{};  // byte -> id of "<0xNN>", -1
    // WordPiece
    std::string wp_prefix = "##";
    std::size_t wp_max_chars = 100;
    ByteTrie wp_start, wp_continue;  // whole vocabulary; entries with the prefix, prefix removed
    // Unigram
    ByteTrie pieces;
    std::vector<double> score;  // [pieces] by id
    double min_score = 0;

    std::vector<AddedToken> added;
    std::size_t added_bytes = 0;
    // The added tokens spelled backwards (values: indices into `added`), for a backward scan that
    // finds the longest token at every position. `plain`: tokens without single_word. `single`:
    // single_word tokens, with a mark (Automaton::kMark) after every non-word byte of the text, so a
    // pattern that starts with a mark only matches where the token is followed by a non-word byte or
    // the end (the byte before it is checked during the scan).
    // [0]: tokens matched in the raw text; [1]: `normalized` tokens, matched after the normalizers.
    Automaton plain_added[2], single_added[2];
    std::unordered_map<std::string, int> added_by_content;

    std::vector<NormStep> normalizers;
    std::vector<PreStep> pre;
    bool has_post = false;  // a post-processor adds tokens
    std::vector<TemplatePiece> post_single, post_pair;
    std::vector<DecodeStep> decoder;
    bool default_decoder = false;  // no decoder: tokens joined with spaces
    std::string show_space;        // shown as ' ' in token_text (Metaspace's "▁")

    /// The token with this id; Error("token id N is not in the vocabulary") for gaps and strangers.
    const Entry& entry(int id) const {
        const auto it = entries.find(id);
        if (it == entries.end()) throw Error("token id " + std::to_string(id) + " is not in the vocabulary");
        return it->second;
    }

    // --- building ---------------------------------------------------------------------------

    void set_token(int id, const std::string& token, TokenKind tk, const std::string& where) {
        if (id < 0 || id > kMaxTokenId)
            throw Error(where + ": id " + std::to_string(id) + " of token " + quote_token(token) +
                        " is out of range (0 to " + std::to_string(kMaxTokenId) + ")");
        Entry& e = entries[id];
        if (e.kind != TokenKind::Gap && e.token != token)
            throw Error(where + ": id " + std::to_string(id) + " is given to both " + quote_token(e.token) +
                        " and " + quote_token(token));
        if (e.kind == TokenKind::Gap || tk == TokenKind::Added) e.kind = tk;
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
        merges.emplace(pair_key(ia->second, ib->second), MergeRule{rank, im->second});
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
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", b);
            const auto f = vocab.find(name);
            fallback_id[b] = f == vocab.end() ? -1 : f->second;
        }
        RegexBudget budget;
        std::vector<std::unique_ptr<Regex::Match>> norm_match(normalizers.size());
        for (std::size_t k = 0; k < normalizers.size(); ++k)
            if (normalizers[k].regex) norm_match[k] = normalizers[k].regex->new_match();
        for (AddedToken& t : added) {
            t.pattern = t.normalized ? normalize(t.content, norm_match, budget) : t.content;
            if (t.normalized && t.pattern != t.content) entries[t.id].normalized = t.pattern;
        }
        if (kind == ModelKind::WordPiece) {
            for (const auto& [token, id] : vocab) {
                wp_start.insert(token, id);
                if (token.size() > wp_prefix.size() && token.compare(0, wp_prefix.size(), wp_prefix) == 0)
                    wp_continue.insert(std::string_view(token).substr(wp_prefix.size()), id);
            }
        }
        build_added();
    }

    void build_added() {
        for (int set = 0; set < 2; ++set) build_added(set);
    }
    void build_added(int set) {
        // Of tokens with the same content the first one wins, except that a single_word one can fall
        // back to a later plain one when its word check fails; the others can never match.
        std::unordered_map<std::string_view, std::pair<bool, bool>> seen;  // content -> plain, single
        std::vector<std::pair<Automaton::Pattern, int>> plain, single;
        for (std::size_t k = 0; k < added.size(); ++k) {
            const AddedToken& t = added[k];
            if (t.normalized != (set == 1) || t.pattern.empty()) continue;
            auto& [has_plain, has_single] = seen[t.pattern];
            if (has_plain || (t.single_word && has_single)) continue;
            (t.single_word ? has_single : has_plain) = true;
            Automaton::Pattern p;
            if (t.single_word) p.push_back(char16_t(Automaton::kMark));
            for (std::size_t i = t.pattern.size(); i-- > 0;) {
                p.push_back(char16_t(static_cast<unsigned char>(t.pattern[i])));
                if (t.single_word && i > 0 && !is_word_byte(t.pattern[i]))
                    p.push_back(char16_t(Automaton::kMark));
            }
            (t.single_word ? single : plain).emplace_back(std::move(p), int(k));
        }
        seen = {};
        plain_added[set].build(std::move(plain));
        single_added[set].build(std::move(single));
    }

    // --- models -----------------------------------------------------------------------------

    /// BPE of one word, appending ids. The word's symbols are its bytes (byte-level) or characters,
    /// each its token, else its <0xNN> byte tokens (byte_fallback), else unk (runs fused with
    /// fuse_unk), else dropped, as Hugging Face does; then merges lowest rank first, leftmost first.
    void bpe(std::string_view word, std::vector<int>& out) const {
        if (ignore_merges) {
            const auto it = vocab.find(byte_level ? byte_level_token(word) : std::string(word));
            if (it != vocab.end()) {
                out.push_back(it->second);
                return;
            }
        }
        std::vector<int> id;
        id.reserve(word.size());
        int pending_unk = 0;  // unk symbols waiting (one when fused)
        const auto flush_unk = [&] {
            for (; pending_unk > 0; --pending_unk) id.push_back(unk_id);
        };
        std::string one;
        for (std::size_t i = 0; i < word.size();) {
            int sym = -1;
            std::size_t n = 1;
            if (byte_level) {
                sym = byte_id[static_cast<unsigned char>(word[i])];
            } else {
                const Utf8Step st = decode_utf8_step(word, i);
                n = st.length > 0 ? std::size_t(st.length) : 1;
                one.assign(word.substr(i, n));
                const auto it = vocab.find(one);
                if (it != vocab.end()) sym = it->second;
            }
            if (sym >= 0) {
                flush_unk();
                id.push_back(sym);
            } else if (!byte_level && byte_fallback &&
                       std::all_of(word.begin() + std::ptrdiff_t(i), word.begin() + std::ptrdiff_t(i + n),
                                   [&](char c) { return fallback_id[static_cast<unsigned char>(c)] >= 0; })) {
                for (std::size_t k = i; k < i + n; ++k)
                    id.push_back(fallback_id[static_cast<unsigned char>(word[k])]);
            } else if (unk_id >= 0) {
                if (pending_unk == 0 || !fuse_unk) flush_unk(), pending_unk = 1;
            }
            i += n;
        }
        flush_unk();
        merge_all(id);
        out.insert(out.end(), id.begin(), id.end());
    }

    /// Applies the merges to a list of symbols in place.
    void merge_all(std::vector<int>& id) const {
        const int n = int(id.size());
        if (n < 2 || merges.empty()) return;
        const auto un = static_cast<std::size_t>(n);
        std::vector<int> prev(un), next(un);  // linked list of live symbols
        std::vector<bool> alive(un, true);
        for (int i = 0; i < n; ++i) {
            prev[std::size_t(i)] = i - 1;
            next[std::size_t(i)] = i + 1;
        }
        struct Cand {
            int rank, pos, left, right;
            bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
        };
        std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> heap;
        const auto push = [&](int i) {
            if (i < 0 || i >= n || !alive[std::size_t(i)] || next[std::size_t(i)] >= n) return;
            const int r = next[std::size_t(i)];
            const auto it = merges.find(pair_key(id[std::size_t(i)], id[std::size_t(r)]));
            if (it != merges.end())
                heap.push(Cand{it->second.rank, i, id[std::size_t(i)], id[std::size_t(r)]});
        };
        for (int i = 0; i < n; ++i) push(i);
        while (!heap.empty()) {
            const Cand c = heap.top();
            heap.pop();
            const auto i = std::size_t(c.pos);
            if (!alive[i] || next[i] >= n || id[i] != c.left || id[std::size_t(next[i])] != c.right) continue;
            const auto j = std::size_t(next[i]);
            id[i] = merges.at(pair_key(c.left, c.right)).merged_id;
            alive[j] = false;
            next[i] = next[j];
            if (next[j] < n) prev[std::size_t(next[j])] = int(i);
            push(prev[i]);
            push(int(i));
        }
        std::size_t w = 0;
        for (std::size_t i = 0; i < std::size_t(n); ++i)
            if (alive[i]) id[w++] = id[i];
        id.resize(w);
    }

    /// WordPiece: greedy longest match from the start, "##" entries after the first; a word with
    /// more than max_input_chars_per_word characters, or a part no entry matches, is one unk.
    void wordpiece(std::string_view word, std::vector<int>& out, TrieBudget& budget) const {
        std::size_t chars = 0;
        for (unsigned char c : word) chars += (c & 0xC0) != 0x80;
        const std::size_t start_size = out.size();
        bool bad = chars > wp_max_chars;
        for (std::size_t start = 0; !bad && start < word.size();) {
            std::size_t best = 0;
            int best_id = -1;
            (start == 0 ? wp_start : wp_continue)
                .prefixes(word.substr(start), budget.steps, [&](std::size_t len, int v) {
                    best = len;
                    best_id = v;
                });
            budget.check();
            if (best_id < 0) {
                bad = true;
                break;
            }
            out.push_back(best_id);
            start += best;
        }
        if (bad) {
            out.resize(start_size);
            if (unk_id < 0)
                throw TextError("the word " + quote_token(word) +
                                " has no WordPiece tokens and the vocabulary has no unk_token");
            out.push_back(unk_id);
        }
    }

    /// Unigram: the split of the word into vocabulary pieces with the highest total score (Viterbi,
    /// ties to the first found); characters no piece starts with are unk (score: lowest - 10), runs of
    /// them fused, then spelled as <0xNN> byte pieces with byte_fallback.
    void unigram(std::string_view word, std::vector<int>& out, TrieBudget& budget) const {
        const std::size_t n = word.size();
        struct Node {  // the best path ending here: its last piece (id, start) and score; id -1: none yet
            double score = 0;
            std::uint32_t from = 0;
            std::int32_t id = -1;
        };
        std::vector<Node> best(n + 1);  // 16 bytes a byte of the word
        const double unk_score = min_score - 10.0;
        for (std::size_t start = 0; start < n;) {
            const Utf8Step st = decode_utf8_step(word, start);
            const std::size_t mblen = st.length > 0 ? std::size_t(st.length) : 1;
            const double base = best[start].score;
            bool single = false;
            pieces.prefixes(word.substr(start), budget.steps, [&](std::size_t len, int id) {
                Node& t = best[start + len];
                const double s = base + score[std::size_t(id)];
                if (t.id < 0 || s > t.score) t = Node{s, std::uint32_t(start), id};
                if (len == mblen) single = true;
            });
            budget.check();
            if (!single) {
                Node& t = best[start + mblen];
                const double s = base + unk_score;
                if (unk_id < 0)
                    throw TextError("the character " + quote_token(word.substr(start, mblen)) +
                                    " is in no Unigram piece and the vocabulary has no unk_id");
                if (t.id < 0 || s > t.score) t = Node{s, std::uint32_t(start), unk_id};
            }
            start += mblen;
        }
        // Back from the end: (begin, end, id) of the best path, unk runs fused.
        std::vector<std::pair<std::size_t, std::size_t>> parts;
        std::vector<int> part_id;
        for (std::size_t end = n; end > 0;) {
            const Node& node = best[end];
            if (node.id == unk_id && !part_id.empty() && part_id.back() == unk_id)
                parts.back().first = node.from;
            else {
                parts.emplace_back(node.from, end);
                part_id.push_back(node.id);
            }
            end = node.from;
        }
        for (std::size_t k = parts.size(); k-- > 0;) {
            if (part_id[k] != unk_id) {
                out.push_back(part_id[k]);
                continue;
            }
            const std::string_view text = word.substr(parts[k].first, parts[k].second - parts[k].first);
            const auto it = vocab.find(std::string(text));
            if (it != vocab.end()) {
                out.push_back(it->second);
            } else if (byte_fallback && std::all_of(text.begin(), text.end(), [&](char c) {
                           return fallback_id[static_cast<unsigned char>(c)] >= 0;
                       })) {
                for (char c : text) out.push_back(fallback_id[static_cast<unsigned char>(c)]);
            } else {
                out.push_back(unk_id);
            }
        }
    }

    void model(std::string_view word, std::vector<int>& out, TrieBudget& budget) const {
        switch (kind) {
            case ModelKind::BPE:
                bpe(word, out);
                break;
            case ModelKind::WordPiece:
                if (byte_level)
                    wordpiece(byte_level_token(word), out, budget);
                else
                    wordpiece(word, out, budget);
                break;
            case ModelKind::Unigram:
                if (byte_level)
                    unigram(byte_level_token(word), out, budget);
                else
                    unigram(word, out, budget);
                break;
        }
    }

    // --- added tokens -------------------------------------------------------------------------

    /// Splits text into (added token id or -1, span) parts, leftmost-longest, with lstrip/rstrip.
    struct Part {
        int added_id;
        std::string_view text;
    };
    std::vector<Part> split_added(std::string_view s, int set) const {
        std::vector<Part> parts;
        const Automaton& plain = plain_added[set];
        const Automaton& single = single_added[set];
        if (plain.empty() && single.empty()) {
            parts.push_back({-1, s});
            return parts;
        }
        const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
        // best[i]: the longest token matching at i (index into `added`), -1 for none.
        std::vector<std::int32_t> best(s.size(), -1);
        if (!plain.empty()) {
            std::int32_t v = 0;
            for (std::size_t i = s.size(); i-- > 0;) {
                v = plain.step(v, static_cast<unsigned char>(s[i]));
                best[i] = plain.out(v);
            }
        }
        if (!single.empty()) {
            std::int32_t v = single.step(0, Automaton::kMark);  // the end of the text is a boundary
            for (std::size_t i = s.size(); i-- > 0;) {
                v = single.step(v, static_cast<unsigned char>(s[i]));
                const std::int32_t k = single.out(v);
                // Same length as the plain one: the same pattern, where single_word came first.
                if (k >= 0 && (i == 0 || !is_word_byte(s[i - 1])) &&
                    (best[i] < 0 ||
                     added[std::size_t(k)].pattern.size() >= added[std::size_t(best[i])].pattern.size()))
                    best[i] = k;
                if (!is_word_byte(s[i])) v = single.step(v, Automaton::kMark);
            }
        }
        std::size_t last = 0;
        for (std::size_t i = 0; i < s.size();) {
            if (best[i] < 0) {
                ++i;
                continue;
            }
            const AddedToken* hit = &added[std::size_t(best[i])];
            std::size_t a = i, b = i + hit->pattern.size();
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

    // --- the pipeline ---------------------------------------------------------------------------

    std::string normalize(std::string_view text, std::vector<std::unique_ptr<Regex::Match>>& norm_match,
                          RegexBudget& budget) const {
        std::string s(text);
        std::vector<std::pair<std::size_t, std::size_t>> matches;
        for (std::size_t k = 0; k < normalizers.size(); ++k) {
            const NormStep& n = normalizers[k];
            switch (n.kind) {
                case NormStep::Kind::Form:
                    s = tokenizer_text::unicode_normalize(s, n.form);
                    break;
                case NormStep::Kind::Lowercase:
                    s = tokenizer_text::lowercase(s);
                    break;
                case NormStep::Kind::StripAccents:
                    s = tokenizer_text::remove_marks(s, false);
                    break;
                case NormStep::Kind::Strip:
                    s = tokenizer_text::strip_white_space(s, n.left, n.right);
                    break;
                case NormStep::Kind::Bert:
                    s = tokenizer_text::bert_normalize(s, n.bert);
                    break;
                case NormStep::Kind::Precompiled:
                    s = n.charsmap->normalize(s);
                    break;
                case NormStep::Kind::Prepend:
                    if (!s.empty()) s = n.content + s;
                    break;
                case NormStep::Kind::Replace: {
                    matches.clear();
                    if (n.regex)
                        n.regex->find_all(s, matches, budget, *norm_match[k]);
                    else
                        literal_matches(s, n.literal, matches);
                    if (matches.empty()) break;
                    std::string r;
                    std::size_t last = 0;
                    for (const auto& [a, b] : matches) {
                        r.append(s, last, a - last);
                        r += n.content;
                        last = b;
                    }
                    r.append(s, last, std::string::npos);
                    if (r.size() > 4 * kMaxTokenizeTextBytes)
                        throw TextError("the tokenizer's Replace normalizer makes this text too long");
                    s = std::move(r);
                    break;
                }
            }
        }
        return s;
    }

    using Cache = std::unordered_map<std::string_view, std::vector<int>>;  // word -> its ids

    struct Piece {
        std::string_view text;
        bool first;  // starts at the start of the input text (Metaspace's prepend_scheme "first")
    };

    /// Splits every piece by one pre-tokenizer step into `out`; transformed text lives in `arena`.
    void pre_tokenize(const PreStep& p, const std::vector<Piece>& in, std::vector<Piece>& out,
                      std::deque<std::string>& arena, RegexBudget& budget, Regex::Match* match) const {
        out.clear();
        std::vector<std::pair<std::size_t, std::size_t>> matches, ranges;
        std::vector<Span> cover;
        const auto split = [&](const Piece& piece, SplitBehavior b, bool invert) {
            cover_of(piece.text.size(), matches, invert, cover);
            ranges.clear();
            apply_behavior(cover, b, ranges);
            for (const auto& [a, e] : ranges)
                out.push_back({piece.text.substr(a, e - a), piece.first && a == 0});
        };
        for (const Piece& piece : in) {
            switch (p.kind) {
                case PreStep::Kind::Split:
                    matches.clear();
                    p.regex->find_all(piece.text, matches, budget, *match);
                    split(piece, p.behavior, p.invert);
                    break;
                case PreStep::Kind::CharSplit:
                    char_matches(piece.text, p.chars, matches);
                    split(piece, p.behavior, p.invert);
                    break;
                case PreStep::Kind::Bert: {  // white space removed, then each punctuation mark alone
                    char_matches(piece.text, CharClass::WhiteSpace, matches);
                    cover_of(piece.text.size(), matches, false, cover);
                    ranges.clear();
                    apply_behavior(cover, SplitBehavior::Removed, ranges);
                    const auto words = ranges;
                    for (const auto& [a, e] : words) {
                        const Piece w{piece.text.substr(a, e - a), piece.first && a == 0};
                        char_matches(w.text, CharClass::Punctuation, matches);
                        split(w, SplitBehavior::Isolated, false);
                    }
                    break;
                }
                case PreStep::Kind::ByteLevel: {
                    Piece q = piece;
                    if (p.add_prefix_space && (q.text.empty() || q.text[0] != ' ')) {
                        arena.push_back(" " + std::string(q.text));
                        q.text = arena.back();
                    }
                    if (!p.regex) {
                        if (!q.text.empty()) out.push_back(q);
                        break;
                    }
                    matches.clear();
                    p.regex->find_all(q.text, matches, budget, *match);
                    split(q, SplitBehavior::Isolated, false);
                    break;
                }
                case PreStep::Kind::Metaspace: {
                    std::string t;
                    t.reserve(piece.text.size() + 8);
                    for (char c : piece.text) {
                        if (c == ' ')
                            t += p.replacement;
                        else
                            t += c;
                    }
                    const bool starts = t.compare(0, p.replacement.size(), p.replacement) == 0;
                    if (!starts && (p.prepend == PreStep::Prepend::Always ||
                                    (p.prepend == PreStep::Prepend::First && piece.first)))
                        t = p.replacement + t;
                    arena.push_back(std::move(t));
                    const Piece q{arena.back(), piece.first};
                    if (!p.split) {
                        if (!q.text.empty()) out.push_back(q);
                        break;
                    }
                    literal_matches(q.text, p.replacement, matches);
                    split(q, SplitBehavior::MergedWithNext, false);
                    break;
                }
            }
        }
    }

    /// `words` null: the ids of `text`. Otherwise the words the model works on (after the
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
        Cache cache;                   // word -> ids, for this call
        RegexBudget budget;
        TrieBudget trie_budget;
        trie_budget.allowed += 64 * std::uint64_t(text.size());
        std::vector<std::unique_ptr<Regex::Match>> norm_match(normalizers.size()), pre_match(pre.size());
        for (std::size_t k = 0; k < normalizers.size(); ++k)
            if (normalizers[k].regex) norm_match[k] = normalizers[k].regex->new_match();
        for (std::size_t k = 0; k < pre.size(); ++k)
            if (pre[k].regex) pre_match[k] = pre[k].regex->new_match();
        std::vector<Piece> pieces;
        for (const Part& part : split_added(text, 0)) {
            if (part.added_id >= 0) {
                if (!words) ids.push_back(part.added_id);
                continue;
            }
            std::deque<std::string> arena;
            arena.push_back(normalize(part.text, norm_match, budget));
            const std::string_view normalized = arena.back();
            pieces.clear();
            for (const Part& sub : split_added(normalized, 1)) {
                if (sub.added_id < 0) {
                    pieces.push_back(
                        {sub.text, part.text.data() == text.data() && sub.text.data() == normalized.data()});
                    continue;
                }
                flush(pieces, ids, words, arena, budget, trie_budget, pre_match, cache, kept);
                if (!words) ids.push_back(sub.added_id);
            }
            flush(pieces, ids, words, arena, budget, trie_budget, pre_match, cache, kept);
        }
        return ids;
    }

    /// Pre-tokenizes the pieces of text between added tokens and runs the model on each word.
    void flush(std::vector<Piece>& pieces, std::vector<int>& ids, std::vector<std::string>* words,
               std::deque<std::string>& arena, RegexBudget& budget, TrieBudget& trie_budget,
               const std::vector<std::unique_ptr<Regex::Match>>& pre_match, Cache& cache,
               std::deque<std::string>& kept) const {
        // Empty text between added tokens is dropped before the pre-tokenizers (no lone "▁").
        pieces.erase(
            std::remove_if(pieces.begin(), pieces.end(), [](const Piece& p) { return p.text.empty(); }),
            pieces.end());
        std::vector<Piece> next_pieces;
        for (std::size_t k = 0; k < pre.size(); ++k) {
            pre_tokenize(pre[k], pieces, next_pieces, arena, budget, pre_match[k].get());
            pieces.swap(next_pieces);
        }
        for (const Piece& piece : pieces) {
            const std::string_view word = piece.text;
            if (word.empty()) continue;
            if (words) {
                words->emplace_back(word);
                continue;
            }
            // Words point into `arena`, which goes: the cache owns copies.
            const auto it = cache.find(word);
            if (it != cache.end()) {
                ids.insert(ids.end(), it->second.begin(), it->second.end());
                continue;
            }
            const std::size_t start = ids.size();
            model(word, ids, trie_budget);
            if (cache.size() < 100000 && word.size() <= 256) {
                kept.emplace_back(word);
                cache.emplace(kept.back(), std::vector<int>(ids.begin() + std::ptrdiff_t(start), ids.end()));
            }
        }
        pieces.clear();
    }

    /// The post-processor's template around the ids of one or two sequences.
    void post_process(const std::vector<int>& a, const std::vector<int>* b, std::vector<int>& ids,
                      std::vector<int>& type_ids) const {
        ids.clear();
        type_ids.clear();
        if (!has_post) {
            ids = a;
            if (b) ids.insert(ids.end(), b->begin(), b->end());
            type_ids.assign(a.size(), 0);
            if (b) type_ids.resize(ids.size(), 1);
            return;
        }
        for (const TemplatePiece& t : b ? post_pair : post_single) {
            const std::vector<int>& part = t.sequence < 0 ? t.ids : t.sequence == 0 ? a : *b;
            ids.insert(ids.end(), part.begin(), part.end());
            type_ids.resize(ids.size(), t.type_id);
        }
    }

    // --- decoding -------------------------------------------------------------------------------

    /// The decoder's steps on the tokens of `ids` (Hugging Face's decode_chain), joined.
    /// `for_append`: a continuation of a text, so nothing is stripped from its start.
    std::string decode(const std::vector<int>& ids, bool for_append) const {
        std::vector<std::string> tokens;
        tokens.reserve(ids.size());
        for (int id : ids) {
            const Entry& e = entry(id);
            tokens.push_back(e.normalized.empty() ? e.token : e.normalized);
        }
        if (default_decoder) {
            std::string out;
            for (std::size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
            return lossy_utf8(out);
        }
        for (const DecodeStep& d : decoder) {
            switch (d.kind) {
                case DecodeStep::Kind::ByteLevel: {
                    // Added tokens are text already (while the tokens still line up with the ids).
                    const bool aligned = tokens.size() == ids.size();
                    std::string bytes;
                    for (std::size_t i = 0; i < tokens.size(); ++i)
                        bytes += aligned && entry(ids[i]).kind == TokenKind::Added ? tokens[i]
                                                                                   : token_bytes(tokens[i]);
                    tokens.assign(1, lossy_utf8(bytes));
                    break;
                }
                case DecodeStep::Kind::Replace:
                    for (std::string& t : tokens) {
                        std::string r;
                        std::size_t last = 0;
                        for (std::size_t i = t.find(d.from); i != std::string::npos;
                             i = t.find(d.from, last)) {
                            r.append(t, last, i - last);
                            r += d.to;
                            last = i + d.from.size();
                        }
                        t = r + t.substr(last);
                    }
                    break;
                case DecodeStep::Kind::ByteFallback: {
                    std::vector<std::string> r;
                    std::string bytes;
                    std::size_t count = 0;
                    const auto flush = [&] {
                        if (count == 0) return;
                        if (is_valid_utf8(bytes))
                            r.push_back(bytes);
                        else
                            for (std::size_t k = 0; k < count; ++k) r.push_back("\xEF\xBF\xBD");
                        bytes.clear();
                        count = 0;
                    };
                    for (std::string& t : tokens) {
                        const int v = byte_token_value(t);
                        if (v >= 0) {
                            bytes += char(v);
                            ++count;
                            continue;
                        }
                        flush();
                        r.push_back(std::move(t));
                    }
                    flush();
                    tokens.swap(r);
                    break;
                }
                case DecodeStep::Kind::Fuse: {
                    std::string all;
                    for (const std::string& t : tokens) all += t;
                    tokens.assign(1, all);
                    break;
                }
                case DecodeStep::Kind::Strip:
                    for (std::size_t i = 0; i < tokens.size(); ++i) {
                        std::string& t = tokens[i];
                        const std::string c = encode_utf8(d.strip_char);
                        int start = for_append && i == 0 ? 0 : d.start, stop = d.stop;
                        std::size_t a = 0, b = t.size();
                        while (start-- > 0 && t.compare(a, c.size(), c) == 0 && a + c.size() <= b)
                            a += c.size();
                        while (stop-- > 0 && b >= a + c.size() && t.compare(b - c.size(), c.size(), c) == 0)
                            b -= c.size();
                        t = t.substr(a, b - a);
                    }
                    break;
                case DecodeStep::Kind::Metaspace:
                    for (std::size_t i = 0; i < tokens.size(); ++i) {
                        // Every replacement in the first token goes (a prepended one, as Hugging Face).
                        std::string& t = tokens[i];
                        const bool drop = i == 0 && d.strip_first && !for_append;
                        std::string r;
                        for (std::size_t k = 0; k < t.size();) {
                            if (t.compare(k, d.from.size(), d.from) == 0) {
                                if (!drop) r += ' ';
                                k += d.from.size();
                            } else {
                                r += t[k++];
                            }
                        }
                        t = std::move(r);
                    }
                    break;
                case DecodeStep::Kind::WordPiece:
                    for (std::size_t i = 0; i < tokens.size(); ++i) {
                        std::string& t = tokens[i];
                        if (i != 0 || for_append) {
                            if (t.compare(0, d.from.size(), d.from) == 0)
                                t.erase(0, d.from.size());
                            else
                                t = " " + t;
                        }
                        if (d.cleanup) t = wordpiece_cleanup(t);
                    }
                    break;
            }
        }
        std::string out;
        for (const std::string& t : tokens) out += t;
        return lossy_utf8(out);
    }

    /// Hugging Face's decoder cleanup: no space before . ? ! , and English contractions.
    static std::string wordpiece_cleanup(std::string s) {
        static const std::pair<const char*, const char*> rules[] = {
            {" .", "."},   {" ?", "?"},     {" !", "!"},    {" ,", ","},
            {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},  {" do not", " don't"},
            {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
        for (const auto& [from, to] : rules) {
            const std::string f = from;
            for (std::size_t i = s.find(f); i != std::string::npos; i = s.find(f, i + std::strlen(to)))
                s.replace(i, f.size(), to);
        }
        return s;
    }

    /// One token as readable text: bytes of byte-level and <0xNN> tokens, show_space as ' '.
    std::string token_text(int id) const {
        const Entry& e = entry(id);
        if (e.kind == TokenKind::Added) return e.token;
        if (byte_level) return readable_bytes(token_bytes(e.token));
        const int b = byte_token_value(e.token);
        if (b >= 0 && fallback_id[std::size_t(b)] == id) return readable_bytes(std::string(1, char(b)));
        if (show_space.empty()) return e.token;
        std::string r;
        for (std::size_t k = 0; k < e.token.size();) {
            if (e.token.compare(k, show_space.size(), show_space) == 0) {
                r += ' ';
                k += show_space.size();
            } else {
                r += e.token[k++];
            }
        }
        return r;
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

std::string json_string(const json& obj, const char* key, const std::string& fallback,
                        const std::string& where) {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return fallback;
    if (!it->is_string()) throw Error(where + "." + key + " is " + type_name(*it) + ", not a string");
    return it->get<std::string>();
}

std::int64_t json_int(const json& obj, const char* key, std::int64_t fallback, std::int64_t lo,
                      std::int64_t hi, const std::string& where) {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return fallback;
    if (!it->is_number_integer() || it->get<std::int64_t>() < lo || it->get<std::int64_t>() > hi)
        throw Error(where + "." + key + " is " + (it->is_number() ? it->dump() : type_name(*it)) +
                    ", not an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    return it->get<std::int64_t>();
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

PreStep gpt2_byte_level(bool add_prefix_space, bool use_regex) {
    PreStep p(PreStep::Kind::ByteLevel);
    p.add_prefix_space = add_prefix_space;
    if (use_regex) p.regex = std::make_unique<Regex>(kGpt2Pattern, "GPT-2 pattern");
    return p;
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

/// {"Regex": "..."} or {"String": "..."}: (text, is_regex).
std::pair<std::string, bool> read_pattern(const json& p, const std::string& where) {
    const json& pattern = member(p, "pattern", where);
    if (pattern.is_object() && pattern.contains("Regex") && pattern["Regex"].is_string())
        return {pattern["Regex"].get<std::string>(), true};
    if (pattern.is_object() && pattern.contains("String") && pattern["String"].is_string())
        return {pattern["String"].get<std::string>(), false};
    throw Error(where + ".pattern must be {\"Regex\": \"...\"} or {\"String\": \"...\"}");
}

const char* const kNormalizers =
    "BertNormalizer, NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Strip, Replace, Prepend, Precompiled, "
    "Sequence";

void read_normalizer(Impl& m, const json& n, const std::string& where) {
    if (n.is_null()) return;
    const std::string type = json_type(n, where);
    NormStep s(NormStep::Kind::Form);
    if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
        s.form = type == "NFC"    ? NormForm::NFC
                 : type == "NFD"  ? NormForm::NFD
                 : type == "NFKC" ? NormForm::NFKC
                                  : NormForm::NFKD;
    } else if (type == "Lowercase") {
        s.kind = NormStep::Kind::Lowercase;
    } else if (type == "StripAccents") {
        s.kind = NormStep::Kind::StripAccents;
    } else if (type == "Strip") {
        s.kind = NormStep::Kind::Strip;
        s.left = json_bool(n, "strip_left", true, where);
        s.right = json_bool(n, "strip_right", true, where);
    } else if (type == "Prepend") {
        s.kind = NormStep::Kind::Prepend;
        s.content = json_string(n, "prepend", "", where);
    } else if (type == "Replace") {
        s.kind = NormStep::Kind::Replace;
        const auto [text, is_regex] = read_pattern(n, where);
        if (is_regex)
            s.regex = std::make_unique<Regex>(text, where + ".pattern");
        else if (text.empty())
            throw Error(where + ".pattern is an empty string");
        else
            s.literal = text;
        s.content = json_string(n, "content", "", where);
    } else if (type == "BertNormalizer") {
        s.kind = NormStep::Kind::Bert;
        s.bert.clean_text = json_bool(n, "clean_text", true, where);
        s.bert.handle_chinese_chars = json_bool(n, "handle_chinese_chars", true, where);
        s.bert.lowercase = json_bool(n, "lowercase", true, where);
        s.bert.strip_accents = json_bool(n, "strip_accents", s.bert.lowercase, where);  // null: as lowercase
    } else if (type == "Precompiled") {
        s.kind = NormStep::Kind::Precompiled;
        const json& map = member(n, "precompiled_charsmap", where);
        if (map.is_null()) return;  // an empty map normalizes nothing
        if (!map.is_string())
            throw Error(where + ".precompiled_charsmap is " + type_name(map) + ", not a string");
        s.charsmap = std::make_unique<tokenizer_text::PrecompiledCharsmap>(map.get<std::string>(),
                                                                           where + ".precompiled_charsmap");
    } else if (type == "Sequence") {
        const json& list = member(n, "normalizers", where);
        if (!list.is_array()) throw Error(where + ".normalizers is not an array");
        for (std::size_t i = 0; i < list.size(); ++i)
            read_normalizer(m, list[i], where + ".normalizers[" + std::to_string(i) + "]");
        return;
    } else {
        throw Error(where + ".type '" + type + "' is not supported (only " + kNormalizers + ")");
    }
    m.normalizers.push_back(std::move(s));
}

SplitBehavior read_behavior(const json& p, const char* key, SplitBehavior fallback,
                            const std::string& where) {
    const auto it = p.find(key);
    if (it == p.end() || it->is_null()) return fallback;
    const std::string b = it->is_string() ? it->get<std::string>() : "";
    if (b == "Removed") return SplitBehavior::Removed;
    if (b == "Isolated") return SplitBehavior::Isolated;
    if (b == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
    if (b == "MergedWithNext") return SplitBehavior::MergedWithNext;
    if (b == "Contiguous") return SplitBehavior::Contiguous;
    throw Error(
        where + "." + key + " " + (it->is_string() ? "'" + b + "'" : type_name(*it)) +
        " is not a split behavior (Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous)");
}

/// A Metaspace pre-tokenizer or decoder: its replacement and prepend scheme.
void read_metaspace(const json& p, std::string& replacement, PreStep::Prepend& prepend,
                    const std::string& where) {
    replacement = json_string(p, "replacement", "\xE2\x96\x81", where);
    if (replacement.empty() || decode_utf8_step(replacement, 0).length != int(replacement.size()))
        throw Error(where + ".replacement " + quote_token(replacement) + " is not one character");
    const std::string scheme = json_string(p, "prepend_scheme", "", where);
    if (scheme.empty())
        prepend = json_bool(p, "add_prefix_space", true, where) ? PreStep::Prepend::Always
                                                                : PreStep::Prepend::Never;
    else if (scheme == "always")
        prepend = PreStep::Prepend::Always;
    else if (scheme == "never")
        prepend = PreStep::Prepend::Never;
    else if (scheme == "first")
        prepend = PreStep::Prepend::First;
    else
        throw Error(where + ".prepend_scheme '" + scheme + "' is not 'always', 'never' or 'first'");
}

const char* const kPreTokenizers =
    "ByteLevel, Split, Metaspace, BertPreTokenizer, Whitespace, WhitespaceSplit, Punctuation, Digits, "
    "CharDelimiterSplit, Sequence";

void read_pre_tokenizer(Impl& m, const json& p, const std::string& where) {
    if (p.is_null()) return;
    const std::string type = json_type(p, where);
    if (!m.pre.empty() && m.pre.back().kind == PreStep::Kind::ByteLevel && type != "Sequence")
        throw Error(where + ".type '" + type +
                    "' after ByteLevel is not supported (ByteLevel must come last)");
    PreStep s(PreStep::Kind::Split);
    if (type == "Sequence") {
        const json& list = member(p, "pretokenizers", where);
        if (!list.is_array()) throw Error(where + ".pretokenizers is not an array");
        for (std::size_t i = 0; i < list.size(); ++i)
            read_pre_tokenizer(m, list[i], where + ".pretokenizers[" + std::to_string(i) + "]");
        return;
    } else if (type == "Split") {
        const auto [text, is_regex] = read_pattern(p, where);
        s.regex = std::make_unique<Regex>(is_regex ? text : regex_literal(text), where + ".pattern");
        s.behavior = read_behavior(p, "behavior", SplitBehavior::Isolated, where);
        s.invert = json_bool(p, "invert", false, where);
    } else if (type == "CharDelimiterSplit") {
        const std::string d = json_string(p, "delimiter", "", where);
        if (d.empty()) throw Error(where + ".delimiter is missing");
        s.regex = std::make_unique<Regex>(regex_literal(d), where + ".delimiter");
        s.behavior = SplitBehavior::Removed;
    } else if (type == "ByteLevel") {
        s = gpt2_byte_level(json_bool(p, "add_prefix_space", false, where),
                            json_bool(p, "use_regex", true, where));
        m.byte_level = true;
    } else if (type == "Metaspace") {
        s.kind = PreStep::Kind::Metaspace;
        read_metaspace(p, s.replacement, s.prepend, where);
        s.split = json_bool(p, "split", true, where);
    } else if (type == "BertPreTokenizer") {
        s.kind = PreStep::Kind::Bert;
    } else if (type == "Whitespace") {  // \w+|[^\w\s]+ with Rust's Unicode \w
        s.regex = std::make_unique<Regex>(
            R"([\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}]+|[^\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}\s]+)",
            where);
        s.behavior = SplitBehavior::Removed;
        s.invert = true;
    } else if (type == "WhitespaceSplit") {
        s.kind = PreStep::Kind::CharSplit;
        s.chars = CharClass::WhiteSpace;
        s.behavior = SplitBehavior::Removed;
    } else if (type == "Punctuation") {
        s.kind = PreStep::Kind::CharSplit;
        s.chars = CharClass::Punctuation;
        s.behavior = read_behavior(p, "behavior", SplitBehavior::Isolated, where);
    } else if (type == "Digits") {
        s.kind = PreStep::Kind::CharSplit;
        s.chars = CharClass::Numeric;
        s.behavior = json_bool(p, "individual_digits", false, where) ? SplitBehavior::Isolated
                                                                     : SplitBehavior::Contiguous;
    } else {
        throw Error(where + ".type '" + type + "' is not supported (only " + kPreTokenizers + ")");
    }
    m.pre.push_back(std::move(s));
}

/// [token, id] of BertProcessing / RobertaProcessing.
std::vector<int> read_token_pair(const json& p, const char* key, const std::string& where) {
    const json& t = member(p, key, where);
    if (!t.is_array() || t.size() != 2 || !t[0].is_string())
        throw Error(where + "." + key + " is not [\"token\", id]");
    return {json_id(t[1], where + "." + key, t[0].get<std::string>())};
}

std::vector<TemplatePiece> read_template(const json& list, const json& specials, const std::string& where) {
    if (!list.is_array()) throw Error(where + " is " + type_name(list) + ", not an array of template pieces");
    std::vector<TemplatePiece> out;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string at = where + "[" + std::to_string(i) + "]";
        const json& e = list[i];
        TemplatePiece t;
        if (e.is_object() && e.contains("Sequence") && e["Sequence"].is_object()) {
            const std::string id = json_string(e["Sequence"], "id", "A", at);
            if (id != "A" && id != "B") throw Error(at + ".Sequence.id '" + id + "' is not 'A' or 'B'");
            t.sequence = id == "A" ? 0 : 1;
            t.type_id = int(json_int(e["Sequence"], "type_id", 0, 0, 255, at));
        } else if (e.is_object() && e.contains("SpecialToken") && e["SpecialToken"].is_object()) {
            const std::string id = json_string(e["SpecialToken"], "id", "", at);
            t.type_id = int(json_int(e["SpecialToken"], "type_id", 0, 0, 255, at));
            const auto it = specials.is_object() ? specials.find(id) : specials.end();
            if (it == specials.end() || !it->is_object() || !it->contains("ids") || !(*it)["ids"].is_array())
                throw Error(at + ": special token " + quote_token(id) + " is not in special_tokens");
            for (const json& v : (*it)["ids"]) t.ids.push_back(json_id(v, at, id));
        } else {
            throw Error(at + " is neither {\"Sequence\": ...} nor {\"SpecialToken\": ...}");
        }
        out.push_back(std::move(t));
    }
    return out;
}

const char* const kPostProcessors =
    "TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, Sequence";

void read_post_processor(Impl& m, const json& p, const std::string& where) {
    if (p.is_null()) return;
    const std::string type = json_type(p, where);
    if (type == "Sequence") {
        const json& list = member(p, "processors", where);
        if (!list.is_array()) throw Error(where + ".processors is not an array");
        for (std::size_t i = 0; i < list.size(); ++i)
            read_post_processor(m, list[i], where + ".processors[" + std::to_string(i) + "]");
        return;
    }
    if (type == "ByteLevel") return;  // offsets only
    if (type != "TemplateProcessing" && type != "BertProcessing" && type != "RobertaProcessing")
        throw Error(where + ".type '" + type + "' is not supported (only " + kPostProcessors + ")");
    if (m.has_post) throw Error(where + ": a second post-processor adding tokens is not supported");
    m.has_post = true;
    if (type == "TemplateProcessing") {
        const json specials = p.value("special_tokens", json::object());
        m.post_single = read_template(member(p, "single", where), specials, where + ".single");
        m.post_pair = read_template(member(p, "pair", where), specials, where + ".pair");
        return;
    }
    const std::vector<int> sep = read_token_pair(p, "sep", where), cls = read_token_pair(p, "cls", where);
    const TemplatePiece a{0, {}, 0}, b{1, {}, type == "BertProcessing" ? 1 : 0};
    const TemplatePiece cls0{-1, cls, 0}, sep0{-1, sep, 0}, sep1{-1, sep, b.type_id};
    m.post_single = {cls0, a, sep0};
    m.post_pair = type == "BertProcessing" ? std::vector<TemplatePiece>{cls0, a, sep0, b, sep1}
                                           : std::vector<TemplatePiece>{cls0, a, sep0, sep0, b, sep0};
}

const char* const kDecoders = "ByteLevel, WordPiece, Metaspace, ByteFallback, Fuse, Strip, Replace, Sequence";

void read_decoder(Impl& m, const json& d, const std::string& where) {
    if (d.is_null()) return;
    const std::string type = json_type(d, where);
    DecodeStep s(DecodeStep::Kind::ByteLevel);
    if (type == "Sequence") {
        const json& list = member(d, "decoders", where);
        if (!list.is_array()) throw Error(where + ".decoders is not an array");
        for (std::size_t i = 0; i < list.size(); ++i)
            read_decoder(m, list[i], where + ".decoders[" + std::to_string(i) + "]");
        return;
    } else if (type == "ByteLevel") {
    } else if (type == "ByteFallback") {
        s.kind = DecodeStep::Kind::ByteFallback;
    } else if (type == "Fuse") {
        s.kind = DecodeStep::Kind::Fuse;
    } else if (type == "Strip") {
        s.kind = DecodeStep::Kind::Strip;
        const std::string c = json_string(d, "content", " ", where);
        const Utf8Step st = decode_utf8_step(c, 0);
        if (c.empty() || st.length != int(c.size())) throw Error(where + ".content is not one character");
        s.strip_char = st.cp;
        s.start = int(json_int(d, "start", 0, 0, 1 << 20, where));
        s.stop = int(json_int(d, "stop", 0, 0, 1 << 20, where));
    } else if (type == "Replace") {
        s.kind = DecodeStep::Kind::Replace;
        const auto [text, is_regex] = read_pattern(d, where);
        if (is_regex || text.empty())
            throw Error(where + ": a Replace decoder with a " + (is_regex ? "Regex" : "empty") +
                        " pattern is not supported (only a String)");
        s.from = text;
        s.to = json_string(d, "content", "", where);
        if (s.to == " " && m.show_space.empty()) m.show_space = s.from;
    } else if (type == "Metaspace") {
        s.kind = DecodeStep::Kind::Metaspace;
        PreStep::Prepend prepend = PreStep::Prepend::Always;
        read_metaspace(d, s.from, prepend, where);
        s.strip_first = prepend != PreStep::Prepend::Never;
        m.show_space = s.from;
    } else if (type == "WordPiece") {
        s.kind = DecodeStep::Kind::WordPiece;
        s.from = json_string(d, "prefix", "##", where);
        s.cleanup = json_bool(d, "cleanup", true, where);
    } else {
        throw Error(where + ".type '" + type + "' is not supported (only " + kDecoders + ")");
    }
    m.decoder.push_back(std::move(s));
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
        a.normalized = json_bool(t, "normalized", !a.special, at);  // Hugging Face's default
        m.add_added(std::move(a), at);
    }
}

void read_bpe(Impl& m, const json& model, const std::string& name) {
    const std::string at = name + ": model";
    if (model.contains("dropout") && !model["dropout"].is_null() &&
        !(model["dropout"].is_number() && model["dropout"].get<double>() == 0.0))
        throw Error(at + ".dropout is set; BPE dropout is not supported");
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
        const auto it = model.find(key);
        if (it != model.end() && !it->is_null() && !(it->is_string() && it->get<std::string>().empty()))
            throw Error(at + "." + key + " is set; BPE with it is not supported");
    }
    m.ignore_merges = json_bool(model, "ignore_merges", false, at);
    m.byte_fallback = json_bool(model, "byte_fallback", false, at);
    m.fuse_unk = json_bool(model, "fuse_unk", false, at);
    read_vocab(m, member(model, "vocab", at), at + ".vocab");
    const json& merges = member(model, "merges", at);
    if (!merges.is_array()) throw Error(at + ".merges is " + type_name(merges) + ", not an array");
    m.merges.reserve(merges.size());
    for (std::size_t i = 0; i < merges.size(); ++i) {
        const std::string where = at + ".merges[" + std::to_string(i) + "]";
        const json& e = merges[i];
        if (e.is_string()) {
            const auto [a, b] = split_merge(e.get_ref<const std::string&>(), where);
            m.add_merge(a, b, int(i), where);
        } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
            m.add_merge(e[0].get<std::string>(), e[1].get<std::string>(), int(i), where);
        } else {
            throw Error(where + " is neither \"a b\" nor [\"a\", \"b\"]");
        }
    }
    const std::string unk = json_string(model, "unk_token", "", at);
    const auto it = m.vocab.find(unk);
    if (!unk.empty() && it != m.vocab.end()) m.unk_id = it->second;
}

void read_wordpiece(Impl& m, const json& model, const std::string& name) {
    const std::string at = name + ": model";
    m.kind = ModelKind::WordPiece;
    m.wp_prefix = json_string(model, "continuing_subword_prefix", "##", at);
    m.wp_max_chars = std::size_t(json_int(model, "max_input_chars_per_word", 100, 0, 1 << 20, at));
    read_vocab(m, member(model, "vocab", at), at + ".vocab");
    const auto it = m.vocab.find(json_string(model, "unk_token", "[UNK]", at));
    if (it != m.vocab.end()) m.unk_id = it->second;
}

void read_unigram(Impl& m, const json& model, const std::string& name) {
    const std::string at = name + ": model";
    m.kind = ModelKind::Unigram;
    m.byte_fallback = json_bool(model, "byte_fallback", false, at);
    const json& vocab = member(model, "vocab", at);
    if (!vocab.is_array())
        throw Error(at + ".vocab is " + type_name(vocab) + ", not an array of [piece, score]");
    if (vocab.size() > std::size_t(kMaxTokenId) + 1) throw Error(at + ".vocab has too many pieces");
    m.vocab.reserve(vocab.size());
    m.score.resize(vocab.size());
    m.min_score = 0;
    for (std::size_t i = 0; i < vocab.size(); ++i) {
        const json& e = vocab[i];
        const std::string where = at + ".vocab[" + std::to_string(i) + "]";
        if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number())
            throw Error(where + " is not [\"piece\", score]");
        const std::string& piece = e[0].get_ref<const std::string&>();
        const double s = e[1].get<double>();
        if (!std::isfinite(s)) throw Error(where + ": the score is not a finite number");
        m.add_vocab(piece, std::int64_t(i), at + ".vocab");
        m.pieces.insert(piece, int(i));
        m.score[i] = s;
        m.min_score = i == 0 ? s : std::min(m.min_score, s);
    }
    const std::int64_t unk = json_int(model, "unk_id", -1, 0, std::int64_t(vocab.size()) - 1, at);
    m.unk_id = int(unk);
}

/// "WordPiece (BertNormalizer + BertPreTokenizer)": the model and its text steps, for description().
std::string describe(const Impl& m, const json& root) {
    std::string model;
    switch (m.kind) {
        case ModelKind::BPE:
            model = m.byte_level      ? "byte-level BPE"
                    : m.byte_fallback ? "SentencePiece-style BPE (byte fallback)"
                                      : "BPE";
            break;
        case ModelKind::WordPiece:
            model = "WordPiece";
            break;
        case ModelKind::Unigram:
            model = m.byte_fallback ? "Unigram (byte fallback)" : "Unigram";
            break;
    }
    std::vector<std::string> steps;
    const auto names = [&](const json& j, const char* list_key, auto& self) -> void {
        if (!j.is_object()) return;
        const std::string t = j.value("type", "");
        if (t == "Sequence" && j.contains(list_key) && j[list_key].is_array()) {
            for (const json& e : j[list_key]) self(e, list_key, self);
        } else if (!t.empty() && !(t == "ByteLevel" && m.byte_level)) {
            steps.push_back(t == "Split" && m.byte_level ? "Split regex" : t);
        }
    };
    names(root.value("normalizer", json()), "normalizers", names);
    names(root.value("pre_tokenizer", json()), "pretokenizers", names);
    std::string s;
    for (const std::string& t : steps) s += (s.empty() ? "" : " + ") + t;
    return model + (s.empty() ? "" : " (" + s + ")") + ", " + std::to_string(m.max_id + 1) + " tokens";
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
                    std::to_string(
                        1 + std::count(merges_txt.begin(), merges_txt.begin() + std::ptrdiff_t(bad), '\n')) +
                    ")");
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
    m->byte_level = true;
    m->pre.push_back(gpt2_byte_level(false, true));
    m->decoder.push_back(DecodeStep(DecodeStep::Kind::ByteLevel));
    m->finish(vocab_name);
    m->description = "GPT-2 byte-level BPE, " + std::to_string(m->max_id + 1) + " tokens";
    return std::make_shared<const Tokenizer>(std::move(m));
}

std::shared_ptr<const Tokenizer> Tokenizer::from_tokenizer_json(std::string_view text,
                                                                const std::string& name) {
    const json root = parse_json(text, name);
    if (!root.is_object()) throw Error(name + ": the file is " + type_name(root) + ", not a JSON object");
    auto m = std::make_unique<Impl>();
    const json& model = member(root, "model", name);
    if (!model.is_object()) throw Error(name + ": model is " + type_name(model) + ", not an object");
    std::string type;
    if (model.contains("type")) {
        const json& t = model["type"];
        type = t.is_string() ? t.get<std::string>() : "";
        if (type != "BPE" && type != "WordPiece" && type != "Unigram")
            throw Error(name + ": model.type " + (t.is_string() ? "'" + type + "'" : type_name(t)) +
                        " is not supported (BPE, WordPiece or Unigram)");
    } else if (model.contains("merges")) {
        type = "BPE";
    } else if (model.contains("vocab") && model["vocab"].is_array()) {
        type = "Unigram";
    } else if (model.contains("continuing_subword_prefix") || model.contains("max_input_chars_per_word")) {
        type = "WordPiece";
    } else {
        throw Error(name + ": model has no type, and is not BPE, WordPiece or Unigram");
    }
    read_pre_tokenizer(*m, root.value("pre_tokenizer", json()), name + ": pre_tokenizer");
    if (type == "BPE")
        read_bpe(*m, model, name);
    else if (type == "WordPiece")
        read_wordpiece(*m, model, name);
    else
        read_unigram(*m, model, name);
    read_added_tokens(*m, root.value("added_tokens", json()), name + ": added_tokens");
    read_normalizer(*m, root.value("normalizer", json()), name + ": normalizer");
    read_post_processor(*m, root.value("post_processor", json()), name + ": post_processor");
    for (const PreStep& p : m->pre)
        if (p.kind == PreStep::Kind::Metaspace) m->show_space = p.replacement;
    read_decoder(*m, root.value("decoder", json()), name + ": decoder");
    if (m->decoder.empty()) {
        if (m->byte_level)  // (the bytes, as before the file named its decoder)
            m->decoder.push_back(DecodeStep(DecodeStep::Kind::ByteLevel));
        else
            m->default_decoder = true;
    }
    m->finish(name);
    m->description = describe(*m, root);
    return std::make_shared<const Tokenizer>(std::move(m));
}

std::shared_ptr<const Tokenizer> Tokenizer::from_bert_vocab(std::string_view vocab_txt, bool lowercase,
                                                            const std::string& name,
                                                            std::optional<bool> strip_accents,
                                                            bool chinese_chars) {
    if (vocab_txt.size() > kMaxTokenizerFileBytes)
        throw Error(name + ": larger than the 64 MiB accepted for tokenizer files");
    const std::size_t bad = first_invalid_utf8(vocab_txt);
    if (bad != std::string_view::npos)
        throw Error(
            name + ": not valid UTF-8 (line " +
            std::to_string(1 + std::count(vocab_txt.begin(), vocab_txt.begin() + std::ptrdiff_t(bad), '\n')) +
            ")");
    auto m = std::make_unique<Impl>();
    m->kind = ModelKind::WordPiece;
    std::int64_t index = 0;
    for (std::size_t pos = 0; pos < vocab_txt.size(); ++index) {
        std::size_t end = vocab_txt.find('\n', pos);
        if (end == std::string_view::npos) end = vocab_txt.size();
        std::string_view line = vocab_txt.substr(pos, end - pos);
        pos = end + 1;
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
            line.remove_suffix(1);
        if (!line.empty())
            m->add_vocab(std::string(line), index, name + " line " + std::to_string(index + 1));
    }
    for (const char* special : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
        const auto it = m->vocab.find(special);
        if (it == m->vocab.end()) continue;
        AddedToken t;
        t.content = special;
        t.id = it->second;
        t.special = true;
        m->add_added(std::move(t), name);
    }
    const auto unk = m->vocab.find("[UNK]");
    if (unk != m->vocab.end()) m->unk_id = unk->second;
    NormStep n(NormStep::Kind::Bert);
    n.bert.lowercase = lowercase;
    n.bert.strip_accents = strip_accents.value_or(lowercase);
    n.bert.handle_chinese_chars = chinese_chars;
    m->normalizers.push_back(std::move(n));
    m->pre.push_back(PreStep(PreStep::Kind::Bert));
    const auto cls = m->vocab.find("[CLS]"), sep = m->vocab.find("[SEP]");
    if (cls != m->vocab.end() && sep != m->vocab.end()) {
        m->has_post = true;
        const TemplatePiece c{-1, {cls->second}, 0}, s0{-1, {sep->second}, 0}, s1{-1, {sep->second}, 1};
        m->post_single = {c, TemplatePiece{0, {}, 0}, s0};
        m->post_pair = {c, TemplatePiece{0, {}, 0}, s0, TemplatePiece{1, {}, 1}, s1};
    }
    DecodeStep d(DecodeStep::Kind::WordPiece);
    d.from = "##";
    m->decoder.push_back(std::move(d));
    m->finish(name);
    m->description = std::string("WordPiece (BERT vocab.txt, ") + (lowercase ? "lower-cased" : "cased") +
                     "), " + std::to_string(m->max_id + 1) + " tokens";
    return std::make_shared<const Tokenizer>(std::move(m));
}

std::shared_ptr<const Tokenizer> Tokenizer::load_tokenizer_json(const std::string& path) {
    return from_tokenizer_json(read_capped(path), path);
}

std::shared_ptr<const Tokenizer> Tokenizer::load_gpt2_files(const std::string& vocab_json,
                                                            const std::string& merges_txt) {
    return from_gpt2_named(read_capped(vocab_json), vocab_json, read_capped(merges_txt), merges_txt);
}

std::shared_ptr<const Tokenizer> Tokenizer::load_bert_vocab(const std::string& vocab_txt,
                                                            const std::string& tokenizer_config) {
    bool lowercase = true, chinese = true;  // BERT's defaults
    std::optional<bool> strip_accents;      // none: as lowercase
    if (!tokenizer_config.empty() && is_regular_file(tokenizer_config)) {
        const json config = parse_json(read_capped(tokenizer_config), tokenizer_config);
        if (config.is_object()) {
            lowercase = json_bool(config, "do_lower_case", true, tokenizer_config);
            chinese = json_bool(config, "tokenize_chinese_chars", true, tokenizer_config);
            const auto it = config.find("strip_accents");
            if (it != config.end() && !it->is_null())
                strip_accents = json_bool(config, "strip_accents", lowercase, tokenizer_config);
        }
    }
    return from_bert_vocab(read_capped(vocab_txt), lowercase, vocab_txt, strip_accents, chinese);
}

std::shared_ptr<const Tokenizer> Tokenizer::load_dir(const std::string& dir) {
    if (is_regular_file(dir)) {  // a tokenizer.json given directly
        if (dir.size() >= 5 && dir.compare(dir.size() - 5, 5, ".json") == 0) return load_tokenizer_json(dir);
        throw Error(dir +
                    ": expected a model folder (with tokenizer.json, vocab.json + merges.txt, or vocab.txt)");
    }
    const std::string base = dir.empty() || dir.back() == '/' ? dir : dir + "/";
    if (is_regular_file(base + "tokenizer.json")) return load_tokenizer_json(base + "tokenizer.json");
    if (is_regular_file(base + "vocab.json") && is_regular_file(base + "merges.txt"))
        return load_gpt2_files(base + "vocab.json", base + "merges.txt");
    if (is_regular_file(base + "vocab.txt"))
        return load_bert_vocab(base + "vocab.txt", base + "tokenizer_config.json");
    if (!platform::is_directory(dir))
        throw Error(dir + ": not a directory (expected a model folder with tokenizer.json)");
    throw Error(dir + ": no tokenizer.json, no vocab.json + merges.txt, and no vocab.txt");
}

// ------------------------------------------------------------------------------------------------
// Using
// ------------------------------------------------------------------------------------------------

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

std::vector<int> Tokenizer::encode(std::string_view utf8) const {
    return impl_->encode(utf8);
}

Tokenizer::ModelInput Tokenizer::encode_for_model(std::string_view utf8) const {
    ModelInput in;
    impl_->post_process(impl_->encode(utf8), nullptr, in.ids, in.type_ids);
    return in;
}

Tokenizer::ModelInput Tokenizer::encode_pair_for_model(std::string_view a, std::string_view b) const {
    ModelInput in;
    const std::vector<int> ib = impl_->encode(b);
    impl_->post_process(impl_->encode(a), &ib, in.ids, in.type_ids);
    return in;
}

bool Tokenizer::adds_special_tokens() const {
    return impl_->has_post;
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
    return impl_->decode(ids, false);
}

std::string Tokenizer::token_text(int id) const {
    return impl_->token_text(id);
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
        out += impl_->decode(run, true) + "<id " + std::to_string(id) + ">";
        run.clear();
    }
    return out + impl_->decode(run, true);
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

void check_ids_in_vocab(const Tokenizer& tokenizer, const std::vector<int>& ids, int vocab) {
    for (std::size_t k = 0; k < ids.size(); ++k) {
        const int id = ids[k];
        if (id >= 0 && id < vocab) continue;
        // The word the unknown piece belongs to (a learner typed a word, not a piece): the decoded
        // text's whitespace-delimited word at the piece's place. A piece may be the space before a
        // word the tokenizer could only split into bytes, so the word is the one that starts there.
        std::string word;
        try {
            const std::vector<int> before(ids.begin(), ids.begin() + std::ptrdiff_t(k));
            const std::string text = tokenizer.decode(ids), head = tokenizer.decode(before);
            if (text.compare(0, head.size(), head) == 0) {
                auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
                std::size_t b = head.size();
                while (b < text.size() && space(text[b])) ++b;  // (the space before a word)
                if (b == text.size()) b = head.size();          // (trailing spaces: the piece)
                while (b > 0 && !space(text[b - 1]) &&
                       b > head.size() - std::min(head.size(), std::size_t(64)))
                    --b;  // (the piece inside a word)
                std::size_t e = b;
                while (e < text.size() && !space(text[e]) && e - b < 64) ++e;
                word = text.substr(b, e - b);
            }
        } catch (const std::exception&) {  // (no decoder: the piece alone is named)
        }
        // The words the model does know (its ids' texts, specials left out), for the learner to pick from.
        std::vector<std::string> words;
        std::set<std::string> seen;
        for (int i = 0; i < vocab && i < tokenizer.vocab_size(); ++i) {
            if (tokenizer.is_special(i)) continue;
            std::string w;
            try {
                w = tokenizer.decode({i});
            } catch (const std::exception&) {
                continue;
            }
            const std::size_t b = w.find_first_not_of(" \t\n"), e = w.find_last_not_of(" \t\n");
            if (b == std::string::npos || !is_valid_utf8(w)) continue;
            w = w.substr(b, e - b + 1);
            if (seen.insert(w).second) words.push_back(w);
        }
        std::string list;
        for (std::size_t i = 0; i < words.size() && i < 30; ++i) list += (i ? ", " : "") + words[i];
        if (words.size() > 30) list += ", … (" + std::to_string(words.size()) + " in all)";
        const std::string knows =
            words.empty() ? "" : " It knows " + std::to_string(words.size()) + " words: " + list + ".";
        if (!word.empty() && is_valid_utf8(word)) {
            std::string lower = word;
            for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
            // A known word the model only reads joined to the word before it ("cat!", not "cat !").
            if (seen.count(word) > 0)
                throw TextError("'" + word +
                                "' is a word of this model, but not after a space: write it joined "
                                "to the word before it (\"word" +
                                word + "\", not \"word " + word + "\")");
            const bool case_only = lower != word && seen.count(lower) > 0;
            throw TextError("'" + word + "' is not a word this model knows" +
                            (case_only ? ": try '" + lower + "' (its words are lowercase)." : ".") + knows +
                            " (A model trained here on its own small language reads only its words.)");
        }
        throw TextError("the text has a token this model was not trained on: '" + tokenizer.token_label(id) +
                        "' (id " + std::to_string(id) + "; the model knows ids 0.." +
                        std::to_string(vocab - 1) + ")." + knows);
    }
}

}  // namespace attnviz

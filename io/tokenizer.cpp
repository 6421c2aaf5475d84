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

#include <pcre2.h>
#include <sys/stat.h>
#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

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

// Decoding: core/utf8.hpp (decode_utf8_step, first_invalid_utf8, walk_utf8).

void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    }
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
        jit_ = pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE) == 0;
    }
    ~Regex() { pcre2_code_free(code_); }
    Regex(const Regex&) = delete;
    Regex& operator=(const Regex&) = delete;

    /// Splits `s` (valid UTF-8) into matches and the gaps between them, in order (Hugging Face's
    /// Split behaviour "Isolated"); empty matches split nothing. Appends non-empty parts to `out`.
    void split_isolated(std::string_view s, std::vector<std::string_view>& out) const {
        Match m(code_, jit_);
        std::size_t pos = 0, last = 0;
        while (pos <= s.size()) {
            const int rc = pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), pos,
                                       PCRE2_NO_UTF_CHECK, m.data, m.context);
            if (rc == PCRE2_ERROR_NOMATCH) break;
            if (rc < 0) {
                PCRE2_UCHAR msg[256];
                pcre2_get_error_message(rc, msg, sizeof msg);
                throw TextError(std::string("the tokenizer's regex gave up on this text (") +
                                reinterpret_cast<const char*>(msg) + ")");
            }
            const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(m.data);
            const std::size_t a = ov[0], b = ov[1];
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
    struct Match {  // per-call state: pcre2_code is shared between threads, these are not
        pcre2_match_data* data = nullptr;
        pcre2_match_context* context = nullptr;
        pcre2_jit_stack* stack = nullptr;
        Match(const pcre2_code* code, bool jit) {
            data = pcre2_match_data_create_from_pattern(code, nullptr);
            context = pcre2_match_context_create(nullptr);
            if (!data || !context) throw Error("out of memory for the tokenizer's regex");
            pcre2_set_match_limit(context, 2'000'000);
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
    pcre2_code* code_ = nullptr;
    bool jit_ = false;
};

enum class NormForm { NFC, NFD, NFKC, NFKD };

std::string normalize(std::string_view s, NormForm form) {
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* n = nullptr;
    switch (form) {
        case NormForm::NFC:
            n = icu::Normalizer2::getNFCInstance(status);
            break;
        case NormForm::NFD:
            n = icu::Normalizer2::getNFDInstance(status);
            break;
        case NormForm::NFKC:
            n = icu::Normalizer2::getNFKCInstance(status);
            break;
        case NormForm::NFKD:
            n = icu::Normalizer2::getNFKDInstance(status);
            break;
    }
    if (U_FAILURE(status) || !n) throw Error("Unicode normalization is not available (ICU data missing)");
    const icu::UnicodeString in = icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), int32_t(s.size())));
    if (n->isNormalized(in, status) && U_SUCCESS(status)) return std::string(s);
    status = U_ZERO_ERROR;
    const icu::UnicodeString out = n->normalize(in, status);
    if (U_FAILURE(status)) throw TextError("cannot normalize this text to Unicode normal form");
    std::string r;
    out.toUTF8String(r);
    return r;
}

// ------------------------------------------------------------------------------------------------
// Files
// ------------------------------------------------------------------------------------------------

std::string read_capped(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) throw Error("cannot read " + path + ": " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw Error("cannot read " + path + ": not a regular file");
    if (std::uint64_t(st.st_size) > kMaxTokenizerFileBytes)
        throw Error(path + ": file is " + std::to_string(std::uint64_t(st.st_size) >> 20) +
                    " MiB, larger than the 64 MiB accepted for tokenizer files");
    std::ifstream f(path, std::ios::binary);
    if (!f) throw Error("cannot read " + path + ": " + std::strerror(errno));
    std::string data(std::size_t(st.st_size), '\0');
    f.read(data.data(), std::streamsize(data.size()));
    data.resize(std::size_t(f.gcount()));
    if (f.bad()) throw Error("cannot read " + path + ": read error");
    char extra;
    if (f.read(&extra, 1) && f.gcount() == 1)
        throw Error("cannot read " + path + ": the file grew while it was being read");
    return data;
}

bool is_regular_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// Parses JSON after checking size, nesting depth and memory (io/json_limits.hpp).
json parse_json(std::string_view text, const std::string& name) {
    if (text.size() > kMaxTokenizerFileBytes)
        throw Error(name + ": larger than the 64 MiB accepted for tokenizer files");
    if (json_too_deep_at(text, kMaxJsonDepth) != std::string_view::npos)
        throw Error(name + ": JSON nested more than " + std::to_string(kMaxJsonDepth) +
                    " levels deep (not a tokenizer file)");
    return parse_json_limited(text, name, "the file");
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
    std::array<std::vector<int>, 256> added_by_first_byte;  // indices into `added`, longest first
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
        for (std::size_t i = 0; i < added.size(); ++i)
            added_by_first_byte[static_cast<unsigned char>(added[i].content[0])].push_back(int(i));
        for (auto& list : added_by_first_byte)
            std::stable_sort(list.begin(), list.end(),
                             [&](int x, int y) { return added[x].content.size() > added[y].content.size(); });
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
        const auto is_word = [](char c) {
            const auto u = static_cast<unsigned char>(c);
            return std::isalnum(u) || c == '_' || u >= 0x80;
        };
        std::size_t last = 0;
        for (std::size_t i = 0; i < s.size();) {
            const AddedToken* hit = nullptr;
            for (int k : added_by_first_byte[static_cast<unsigned char>(s[i])]) {
                const AddedToken& t = added[k];
                if (s.compare(i, t.content.size(), t.content) != 0) continue;
                const std::size_t end = i + t.content.size();
                if (t.single_word && ((i > 0 && is_word(s[i - 1])) || (end < s.size() && is_word(s[end]))))
                    continue;
                hit = &t;
                break;
            }
            if (!hit) {
                ++i;
                continue;
            }
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
        for (const Part& part : split_added(text)) {
            if (part.added_id >= 0) {
                if (!words) ids.push_back(part.added_id);
                continue;
            }
            std::string normalized(part.text);
            for (NormForm f : normalizers) normalized = normalize(normalized, f);
            pieces.assign(1, normalized);
            for (const auto& re : splits) {
                next_pieces.clear();
                for (std::string_view p : pieces) re->split_isolated(p, next_pieces);
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
                    byte_level_regex->split_isolated(subject, next_pieces);
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
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
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

// The text steps of Hugging Face tokenizers that work on characters, as `tokenizers` (Rust) does them:
// Unicode character classes, the normalizers (Unicode forms, lower-casing, accent stripping, BERT's
// cleaning and CJK spacing, SentencePiece's precompiled charsmap) and the rewrite of \s / \S in split
// patterns to Unicode White_Space. Character properties come from ICU, on Windows too (ICU 72 built
// from Debian's source by scripts/windows/build-deps.sh), so both give the same ids. Everything here is
// linear in its input; texts are valid UTF-8 (the tokenizer checks that first).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz::tokenizer_text {

bool is_white_space(char32_t c);       // Unicode White_Space (Rust's char::is_whitespace); not U+180E
bool is_bert_punctuation(char32_t c);  // ASCII punctuation (incl. $+<=>^`|~) or Unicode P*
bool is_numeric(char32_t c);           // Unicode N* (Rust's char::is_numeric)
bool is_chinese_char(char32_t c);      // the CJK ideograph blocks BERT puts spaces around

/// Unicode normalization of UTF-8 text. Throws attnviz::TextError for text that cannot be normalized.
enum class NormForm { NFC, NFD, NFKC, NFKD };
std::string unicode_normalize(std::string_view s, NormForm form);

/// Every character to its full Unicode lower case, one by one (Rust's char::to_lowercase).
std::string lowercase(std::string_view s);
/// Drops combining marks: general category M (StripAccents), or only Mn (`nonspacing_only`, as BERT).
std::string remove_marks(std::string_view s, bool nonspacing_only);
/// Strips White_Space characters at the start and/or end.
std::string strip_white_space(std::string_view s, bool left, bool right);

struct BertNormalizerOptions {
    bool clean_text = true, handle_chinese_chars = true, strip_accents = true, lowercase = true;
};
/// BertNormalizer: drop NUL, U+FFFD and control characters, every white space to ' ' (clean_text);
/// spaces around CJK ideographs; NFD and drop Mn marks (strip_accents); lower case.
std::string bert_normalize(std::string_view s, const BertNormalizerOptions& o);

/// A regex pattern with \s as the class of Unicode White_Space and \S as its complement (PCRE2's \s
/// also counts U+180E, which Unicode, Hugging Face, Python's regex and JavaScript do not). Throws
/// attnviz::Error("<where>: ...") for \S inside a [...] class.
std::string white_space_pattern(std::string_view pattern, const std::string& where);

/// SentencePiece's precompiled normalization map (a normalizer of T5, ALBERT, XLNet, mT5...): a
/// darts-clone double-array trie of UTF-8 keys whose values are offsets of NUL-terminated
/// replacements in a string blob. normalize() goes grapheme by grapheme as Hugging Face does: a
/// grapheme shorter than 6 bytes with a match is replaced whole, otherwise each character is
/// looked up on its own.
class PrecompiledCharsmap {
  public:
    /// From the base64 text of tokenizer.json's "precompiled_charsmap"; Error naming `where`.
    PrecompiledCharsmap(std::string_view base64, const std::string& where);
    std::string normalize(std::string_view s) const;

  private:
    /// The replacement for the shortest key that is a prefix of `s`; false when none is.
    bool lookup(std::string_view s, std::string_view& replacement) const;
    std::vector<std::uint32_t> units_;
    std::string blob_;
};

}  // namespace attnviz::tokenizer_text

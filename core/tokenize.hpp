// Tokenizer: typed text -> tokens. Words and punctuation for Latin (and other space-separated)
// scripts, one token per CJK character. UTF-8 safe: invalid UTF-8 throws TextError naming the byte
// offset; it never crashes or produces garbage tokens.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/utf8.hpp"  // decode_utf8, encode_utf8

namespace attnviz {

struct Token {
    std::string text;        // the token's UTF-8 text, e.g. "fluffy", ",", "猫"
    std::size_t byte_begin;  // offset of its first byte in the input
    std::size_t byte_end;    // one past its last byte
};

/// True for code points that are tokenized one per character (Han ideographs, kana, CJK
/// compatibility ideographs and their extensions).
bool is_cjk_ideograph(char32_t cp);

/// Splits text into tokens:
///  - runs of letters, digits, marks and intra-word apostrophes/hyphens form one word token;
///  - each punctuation or symbol character is its own token (ASCII and CJK/full-width punctuation);
///  - each CJK ideograph or kana is its own token;
///  - whitespace separates and is dropped.
/// Throws TextError for invalid UTF-8. Returns an empty vector for empty/whitespace-only text (the
/// caller decides whether that is an error).
std::vector<Token> tokenize(std::string_view text);

/// Convenience: just the token strings.
std::vector<std::string> tokenize_strings(std::string_view text);

}  // namespace attnviz

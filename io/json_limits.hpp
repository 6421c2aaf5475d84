// Limits every JSON reader of the project applies before handing text to nlohmann-json: nesting (its
// parser and destructor recurse once per level: a file nested 100,000 deep would overflow the stack)
// and size in memory (a 100 MiB file of empty strings would take 3 GiB as a DOM). One linear scan of
// the text, shared by scenes, tokenizer files, model configs, safetensors headers and workspaces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

/// Byte offset of the bracket that opens nesting level `max_depth + 1` (outside strings), or
/// std::string_view::npos when the text never nests deeper than `max_depth`. Linear, no recursion.
std::size_t json_too_deep_at(std::string_view text, int max_depth);

/// Memory a parsed document may take (estimated before it is built): 1 GiB.
inline constexpr std::uint64_t kMaxJsonDomBytes = std::uint64_t(1) << 30;

/// Called for a key that appears twice in one object: `outer` holds the keys under which the open
/// objects sit, outermost first ("" for the root and for array elements). Returns the message.
using DuplicateKeyMessage =
    std::function<std::string(const std::vector<std::string>& outer, const std::string& key)>;

/// Parses `text` with nesting capped at 64 levels and the document's memory at kMaxJsonDomBytes.
/// Throws attnviz::Error naming `name` and `what`, in one line: "model.safetensors: the header is not
/// valid JSON at byte 17 (unexpected end of input; expected string literal)", "... nests deeper than
/// 64 levels (at byte 64)", "... holds over 9586981 values by byte 28760937, more than the app can hold
/// in memory (1024 MiB)" (a cheap first pass finds both before nlohmann's lexer runs). With
/// `duplicate`, a key twice in one object is refused with its message (nlohmann keeps the last).
/// Linear in the text.
/// `max_values` (0: none) caps the values (and keys) too, for a kind of file that never holds many.
nlohmann::json parse_json_limited(std::string_view text, const std::string& name, const char* what,
                                  const DuplicateKeyMessage& duplicate = nullptr,
                                  std::uint64_t max_values = 0);

/// The checks of parse_json_limited alone (for a caller that builds another kind of document, e.g.
/// nlohmann::ordered_json): after it returns, parsing `text` succeeds within the limits.
void check_json_limited(std::string_view text, const std::string& name, const char* what,
                        const DuplicateKeyMessage& duplicate = nullptr, std::uint64_t max_values = 0);

/// nlohmann-json's exception text in the app's words: its "[json.exception.parse_error.101] parse
/// error at line 1, column 2: " prefix removed.
std::string json_error_reason(const std::string& what);

}  // namespace attnviz

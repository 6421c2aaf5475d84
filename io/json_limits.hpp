// Limits every JSON reader of the project applies before handing text to nlohmann-json, whose parser
// and destructor recurse once per nesting level: a hostile file nested 100,000 deep would overflow the
// stack. One scan, shared by scenes, tokenizer files, model configs and workspaces.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace attnviz {

/// Byte offset of the bracket that opens nesting level `max_depth + 1` (outside strings), or
/// std::string_view::npos when the text never nests deeper than `max_depth`. Linear, no recursion.
std::size_t json_too_deep_at(std::string_view text, int max_depth);

/// Parses `text` with nesting capped at 64 levels. Throws attnviz::Error naming `name` and `what`
/// ("model.safetensors: the header is not valid JSON (...)", "... nests deeper than 64 levels (at byte
/// 64)"). `callback` (optional) is nlohmann-json's parser callback; an attnviz::Error it throws passes
/// through unchanged.
nlohmann::json parse_json_limited(std::string_view text, const std::string& name, const char* what,
                                  const nlohmann::json::parser_callback_t& callback = nullptr);

}  // namespace attnviz

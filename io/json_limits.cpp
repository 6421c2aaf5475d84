#include "io/json_limits.hpp"

#include "core/error.hpp"

namespace attnviz {

std::size_t json_too_deep_at(std::string_view text, int max_depth) {
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth) return i;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return std::string_view::npos;
}

nlohmann::json parse_json_limited(std::string_view text, const std::string& name, const char* what,
                                  const nlohmann::json::parser_callback_t& callback) {
    constexpr int kMaxDepth = 64;
    if (const std::size_t at = json_too_deep_at(text, kMaxDepth); at != std::string_view::npos)
        throw Error(name + ": " + what + " nests deeper than " + std::to_string(kMaxDepth) +
                    " levels (at byte " + std::to_string(at) + ")");
    try {
        return nlohmann::json::parse(text, callback);
    } catch (const nlohmann::json::exception& e) {
        throw Error(name + ": " + what + " is not valid JSON (" + std::string(e.what()) + ")");
    }
}

}  // namespace attnviz

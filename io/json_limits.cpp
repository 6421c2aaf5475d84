#include "io/json_limits.hpp"

#include <set>

#include "core/error.hpp"

namespace attnviz {

namespace {

// What one value (or key) costs as nlohmann::json, with its allocation (a string's characters apart).
constexpr std::uint64_t kPerValue = 112;

struct Prescan {
    std::size_t too_deep_at = std::string_view::npos;  // the bracket that opens level max_depth + 1
    std::size_t too_big_at = std::string_view::npos;   // the token whose cost crosses kMaxJsonDomBytes
    std::uint64_t tokens = 0;                          // tokens up to and including that one
};

/// One linear pass over the text, outside strings: the nesting depth, and a lower bound of the
/// document's memory -- kPerValue for every token that becomes a value or key (a string, a bracket, a
/// number or true/false/null), the strings' characters left out. For valid JSON this never exceeds
/// ScanSax's count, so a document this pass refuses the scan would refuse too, only later: after
/// nlohmann's lexer has read up to 1 GiB / 112 values (a 100 MiB header of empty strings, a
/// million-tensor header) instead of this loop.
Prescan prescan(std::string_view text, int max_depth, std::uint64_t max_values) {
    Prescan r;
    int depth = 0;
    bool in_string = false, in_scalar = false;
    std::uint64_t max_tokens = kMaxJsonDomBytes / kPerValue;  // one more is over
    if (max_values > 0 && max_values < max_tokens) max_tokens = max_values;
    auto token = [&](std::size_t i) {
        if (++r.tokens > max_tokens && r.too_big_at == std::string_view::npos) r.too_big_at = i;
    };
    // (The first limit reached ends the scan: a 100 MiB text over the value cap is refused at once.)
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (r.too_big_at != std::string_view::npos) return r;
        const bool scalar_char = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                 c == '-' || c == '+' || c == '.';
        if (scalar_char && !in_scalar && r.too_big_at == std::string_view::npos) token(i);
        in_scalar = scalar_char;
        if (c == '"') {
            in_string = true;
            if (r.too_big_at == std::string_view::npos) token(i);
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth) {
                r.too_deep_at = i;
                return r;
            }
            if (r.too_big_at == std::string_view::npos) token(i);
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return r;
}

}  // namespace

std::size_t json_too_deep_at(std::string_view text, int max_depth) {
    return prescan(text, max_depth, 0).too_deep_at;
}

std::string json_error_reason(const std::string& what) {
    std::string r = what;
    if (r.rfind("[json.exception.", 0) == 0) {
        if (const auto q = r.find("] "); q != std::string::npos) r = r.substr(q + 2);
    }
    // "parse error at line 1, column 2: syntax error ..." -> "syntax error ..."
    if (r.rfind("parse error", 0) == 0) {
        if (const auto c = r.find(": "); c != std::string::npos) r = r.substr(c + 2);
    }
    return r;
}

namespace {

/// A first pass over the text that builds nothing: counts what the document would cost in memory,
/// checks keys for duplicates (when asked) and records the first syntax error with its byte.
class ScanSax {
  public:
    explicit ScanSax(const DuplicateKeyMessage* duplicate) : duplicate_(duplicate) {}

    bool null() { return value(0); }
    bool boolean(bool) { return value(0); }
    bool number_integer(nlohmann::json::number_integer_t) { return value(0); }
    bool number_unsigned(nlohmann::json::number_unsigned_t) { return value(0); }
    bool number_float(nlohmann::json::number_float_t, const std::string&) { return value(0); }
    bool string(std::string& s) { return value(s.size()); }
    bool binary(nlohmann::json::binary_t& b) { return value(b.size()); }
    bool start_object(std::size_t) {
        if (!value(0)) return false;
        if (duplicate_) {
            outer_.push_back(pending_key_);
            keys_.emplace_back();
        }
        pending_key_.clear();
        return true;
    }
    bool key(std::string& k) {
        bytes_ += kPerValue + k.size();  // a map node and its key
        if (duplicate_ && !keys_.empty() && !keys_.back().insert(k).second) {
            std::vector<std::string> outer(outer_.begin() + 1, outer_.end());  // the root's "" left out
            error_ = (*duplicate_)(outer, k);
            return false;
        }
        pending_key_ = k;
        return over() ? false : true;
    }
    bool end_object() {
        if (duplicate_ && !keys_.empty()) {
            keys_.pop_back();
            outer_.pop_back();
        }
        pending_key_.clear();
        return true;
    }
    bool start_array(std::size_t) {
        const bool ok = value(0);
        if (duplicate_) {
            outer_.push_back(pending_key_);
            keys_.emplace_back();  // arrays have no keys; kept so that every end pops one level
        }
        pending_key_.clear();
        return ok;
    }
    bool end_array() { return end_object(); }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) {
        error_byte_ = position;
        syntax_ = json_error_reason(ex.what());
        return false;
    }

    std::uint64_t values() const { return values_; }
    bool over() const { return bytes_ > kMaxJsonDomBytes; }
    const std::string& duplicate_error() const { return error_; }
    const std::string& syntax_error() const { return syntax_; }
    std::size_t error_byte() const { return error_byte_; }

  private:
    bool value(std::uint64_t extra) {
        ++values_;
        bytes_ += kPerValue + extra;
        return !over();
    }
    const DuplicateKeyMessage* duplicate_;
    std::vector<std::set<std::string>> keys_;
    std::vector<std::string> outer_;
    std::string pending_key_, error_, syntax_;
    std::uint64_t values_ = 0, bytes_ = 0;
    std::size_t error_byte_ = 0;
};

}  // namespace

void check_json_limited(std::string_view text, const std::string& name, const char* what,
                        const DuplicateKeyMessage& duplicate, std::uint64_t max_values) {
    constexpr int kMaxDepth = 64;
    const Prescan pre = prescan(text, kMaxDepth, max_values);
    if (pre.too_deep_at != std::string_view::npos)
        throw Error(name + ": " + what + " nests deeper than " + std::to_string(kMaxDepth) +
                    " levels (at byte " + std::to_string(pre.too_deep_at) + ")");
    if (pre.too_big_at != std::string_view::npos && max_values > 0 && pre.tokens > max_values &&
        max_values < kMaxJsonDomBytes / kPerValue)
        throw Error(name + ": " + what + " holds over " + std::to_string(max_values) + " values (by byte " +
                    std::to_string(pre.too_big_at) + "), more than any real one");
    if (pre.too_big_at != std::string_view::npos)
        throw Error(name + ": " + what + " holds over " + std::to_string(pre.tokens) + " values by byte " +
                    std::to_string(pre.too_big_at) + ", more than the app can hold in memory (" +
                    std::to_string(kMaxJsonDomBytes >> 20) + " MiB)");
    ScanSax scan(duplicate ? &duplicate : nullptr);
    const bool ok = nlohmann::json::sax_parse(text, &scan);
    if (!scan.duplicate_error().empty()) throw Error(scan.duplicate_error());
    if (scan.over())
        throw Error(name + ": " + what + " holds over " + std::to_string(scan.values()) +
                    " values, more than the app can hold in memory (" +
                    std::to_string(kMaxJsonDomBytes >> 20) + " MiB)");
    if (!ok || !scan.syntax_error().empty())
        throw Error(name + ": " + what + " is not valid JSON at byte " + std::to_string(scan.error_byte()) +
                    " (" + scan.syntax_error() + ")");
}

nlohmann::json parse_json_limited(std::string_view text, const std::string& name, const char* what,
                                  const DuplicateKeyMessage& duplicate, std::uint64_t max_values) {
    check_json_limited(text, name, what, duplicate, max_values);
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {  // (the scan above accepted it: not expected)
        throw Error(name + ": " + what + " is not valid JSON (" + json_error_reason(e.what()) + ")");
    }
}

}  // namespace attnviz

#include "io/scene.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json_limits.hpp"

namespace attnviz {

using ojson = nlohmann::ordered_json;

namespace {

constexpr int kSceneVersion = 1;  // "attnviz_scene": marks the file as a scene; always 1
// "version": the scene format. 2 adds the key itself; a scene without it is version 1 and opens the same.
// 3 adds where the scene lands (layer, head, pin, stage, view) and named_heads; a scene without them is
// written as version 2, so older attnviz builds still open it.
constexpr int kSceneFormatVersion = 3;
const std::vector<std::string> kTopKeys = {"attnviz_scene", "version",    "title",      "note", "config",
                                           "model",         "model_text", "layer",      "head", "stage",
                                           "pin",           "view",       "named_heads"};
const std::vector<std::string> kFocusKeys = {"layer", "head", "pin",   "stage",
                                             "view",  "text", "title", "note"};

/// How a config key is stored in JSON. Keys the table does not know (added to the core later) are
/// stored as strings in the text form of get_config_key and accepted as any scalar.
enum class JsonType { String, Integer, Unsigned, Number, Boolean, MaskRows };

JsonType json_type(const std::string& key) {
    const ConfigField* f = find_config_field(key);  // the core's table of fields
    if (!f) return JsonType::String;
    switch (f->kind) {
        case FieldKind::Integer:
            return JsonType::Integer;
        case FieldKind::Unsigned:
            return JsonType::Unsigned;
        case FieldKind::Number:
            return JsonType::Number;
        case FieldKind::Boolean:
            return JsonType::Boolean;
        case FieldKind::MaskRows:
            return JsonType::MaskRows;
        case FieldKind::Text:
        case FieldKind::Choice:
            break;
    }
    return JsonType::String;  // text, source_text, and every enum
}

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
    return out;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

/// "unknown config key 'hedas' (did you mean 'heads'? known keys: ...)".
std::string unknown_key_message(const std::string& what, const std::string& key,
                                const std::vector<std::string>& known) {
    if (key.size() > 64)  // no suggestion is that far off; keep the message one short line
        return "unknown " + what + " '" + key.substr(0, 40) + "...' (known keys: " + join(known) + ")";
    std::string best;
    std::size_t best_d = 3;  // suggest only close matches
    for (const auto& k : known) {
        const std::size_t d = edit_distance(key, k);
        if (d < best_d) best_d = d, best = k;
    }
    return "unknown " + what + " '" + key + "' (" + (best.empty() ? "" : "did you mean '" + best + "'? ") +
           "known keys: " + join(known) + ")";
}

/// At most ~40 characters describing a JSON value for an error message. Containers are described,
/// not serialised: dump() recurses once per nesting level and would copy a huge value whole.
std::string shorten(const ojson& v) {
    if (v.is_array()) return v.empty() ? "[]" : "an array of " + std::to_string(v.size()) + " values";
    if (v.is_object()) return v.empty() ? "{}" : "an object of " + std::to_string(v.size()) + " keys";
    if (v.is_string() && v.get_ref<const std::string&>().size() > 64) {
        std::string head = v.get_ref<const std::string&>().substr(0, 34);
        while (!head.empty() && (std::uint8_t(head.back()) & 0xC0) == 0x80) head.pop_back();  // whole chars
        if (!head.empty() && std::uint8_t(head.back()) >= 0xC0) head.pop_back();
        return ojson(head).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "...";
    }
    std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (s.size() > 40) s = s.substr(0, 37) + "...";
    return s;
}

std::string format_double(double v) {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);  // shortest text that reads back exactly
    (void)ec;
    return std::string(buf, end);
}

/// The text set_config_key expects for one JSON value, or throws Error("NAME: key: expected ...").
std::string value_text(const std::string& key, const ojson& v, const std::string& name) {
    auto wrong = [&](const std::string& expected) -> Error {
        return Error(name + ": " + key + ": expected " + expected + ", got " + shorten(v));
    };
    switch (json_type(key)) {
        case JsonType::String: {
            if (v.is_string()) return v.get<std::string>();
            // A key added to the core after this table was written: pass a scalar's literal text on
            // and let set_config_key judge it.
            const bool known_string_key = find_config_field(key) != nullptr;
            if (!known_string_key && (v.is_number() || v.is_boolean())) return v.dump();
            throw wrong("a string");
        }
        case JsonType::Integer:
        case JsonType::Unsigned:
            if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
            if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
            if (v.is_number_float()) {
                const double d = v.get<double>();
                // 4.0 is an integer written carelessly; 4.5 is not.
                if (std::isfinite(d) && d == std::floor(d) && std::abs(d) < 9.0e15)
                    return std::to_string(std::int64_t(d));
            }
            throw wrong("an integer");
        case JsonType::Number:
            if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
            if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
            if (v.is_number_float()) return format_double(v.get<double>());
            throw wrong("a number");
        case JsonType::Boolean:
            if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
            throw wrong("true or false");
        case JsonType::MaskRows: {
            // ["100", "110", "111"] -> "100;110;111" (1 = key hidden from that query).
            if (!v.is_array()) throw wrong("an array of \"0\"/\"1\" row strings like [\"100\", \"110\"]");
            std::string text;
            for (std::size_t r = 0; r < v.size(); ++r) {
                const ojson& row = v[r];
                if (!row.is_string() || row.get<std::string>().find_first_not_of("01") != std::string::npos)
                    throw Error(name + ": custom_mask: row " + std::to_string(r) +
                                " must be a string of 0 and 1 (1 = hidden), got " + shorten(row));
                if (r > 0) text += ';';
                text += row.get<std::string>();
            }
            return text;
        }
    }
    throw wrong("a value");
}

/// The JSON value of one config key, from the text form get_config_key gives.
ojson typed_value(const std::string& key, const std::string& text) {
    switch (json_type(key)) {
        case JsonType::Integer: {
            std::int64_t v = 0;
            auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (ec == std::errc() && end == text.data() + text.size()) return v;
            return text;
        }
        case JsonType::Unsigned: {
            std::uint64_t v = 0;
            auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (ec == std::errc() && end == text.data() + text.size()) return v;
            return text;
        }
        case JsonType::Number: {
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            if (end == text.c_str() + text.size() && !text.empty() && std::isfinite(v)) return v;
            return text;
        }
        case JsonType::Boolean:
            if (text == "true" || text == "1" || text == "on") return true;
            if (text == "false" || text == "0" || text == "off") return false;
            return text;
        case JsonType::MaskRows: {
            ojson rows = ojson::array();
            std::string row;
            for (const char c : text) {
                if (c == ';' || c == '/') {
                    rows.push_back(row);
                    row.clear();
                } else {
                    row += c;
                }
            }
            if (!text.empty()) rows.push_back(row);
            return rows;
        }
        case JsonType::String:
            break;
    }
    return text;
}

/// 1-based line and column (in characters, not bytes) of byte offset `byte` (0-based).
std::pair<std::size_t, std::size_t> line_col(const std::string& text, std::size_t byte) {
    byte = std::min(byte, text.size());
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < byte; ++i) {
        if (text[i] == '\n') {
            ++line;
            col = 1;
        } else if ((std::uint8_t(text[i]) & 0xC0) != 0x80) {
            ++col;  // count UTF-8 lead bytes only: a Chinese character is one column
        }
    }
    return {line, col};
}

/// nlohmann's DOM builder with two additions: it refuses nesting deeper than kMaxSceneDepth (so no
/// later recursion over the value can overflow the stack), and it records where and why parsing
/// failed -- syntax errors and number overflow (1e400) alike -- instead of throwing without a position.
class SceneSax {
  public:
    explicit SceneSax(ojson& root) : dom_(root, false) {}

    bool null() { return dom_.null(); }
    bool boolean(bool v) { return dom_.boolean(v); }
    bool number_integer(ojson::number_integer_t v) { return dom_.number_integer(v); }
    bool number_unsigned(ojson::number_unsigned_t v) { return dom_.number_unsigned(v); }
    bool number_float(ojson::number_float_t v, const std::string& s) { return dom_.number_float(v, s); }
    bool string(std::string& v) { return dom_.string(v); }
    bool binary(ojson::binary_t& v) { return dom_.binary(v); }
    bool start_object(std::size_t n) { return deeper() && dom_.start_object(n); }
    bool key(std::string& k) { return dom_.key(k); }
    bool end_object() {
        --depth_;
        return dom_.end_object();
    }
    bool start_array(std::size_t n) { return deeper() && dom_.start_array(n); }
    bool end_array() {
        --depth_;
        return dom_.end_array();
    }
    bool parse_error(std::size_t position, const std::string& last_token,
                     const nlohmann::detail::exception& ex) {
        failed_ = true;
        error_ = ex.what();
        overflow_ = ex.id == 406;  // out_of_range.406: number overflow; point at the number's start
        error_byte_ = overflow_ && position > last_token.size() ? position - last_token.size() + 1 : position;
        return false;
    }
    bool overflow() const { return overflow_; }

    bool too_deep() const { return too_deep_; }
    bool failed() const { return failed_; }
    std::size_t error_byte() const { return error_byte_; }  // 1-based, as nlohmann counts
    const std::string& error() const { return error_; }

  private:
    bool deeper() {
        if (++depth_ > kMaxSceneDepth) too_deep_ = true;
        return !too_deep_;
    }
    nlohmann::detail::json_sax_dom_parser<ojson> dom_;
    int depth_ = 0;
    bool too_deep_ = false, failed_ = false, overflow_ = false;
    std::size_t error_byte_ = 0;
    std::string error_;
};

/// Reads the landing keys of `obj` (the scene itself, or one named head) into `focus`; `where` prefixes
/// the messages ("named_heads.pronoun.").
void parse_focus(const ojson& obj, SceneFocus& focus, const std::string& name, const std::string& where,
                 bool allow_text) {
    for (const char* key : {"layer", "head", "pin"}) {
        if (!obj.contains(key)) continue;
        const ojson& v = obj[key];
        if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > (1 << 24))
            throw Error(name + ": " + where + key + ": expected an integer from 0, got " + shorten(v));
        const int x = int(v.get<std::int64_t>());
        (std::string(key) == "layer" ? focus.layer : std::string(key) == "head" ? focus.head : focus.pin) = x;
    }
    for (const char* key : {"stage", "view", "text", "title", "note"}) {
        const std::string k = key;
        if (!obj.contains(key) || (!allow_text && (k == "text" || k == "title" || k == "note"))) continue;
        const ojson& v = obj[key];
        if (!v.is_string()) throw Error(name + ": " + where + key + ": expected a string, got " + shorten(v));
        (k == "stage"   ? focus.stage
         : k == "view"  ? focus.view
         : k == "text"  ? focus.text
         : k == "title" ? focus.title
                        : focus.note) = v.get<std::string>();
    }
    if (!focus.view.empty() && focus.view != "stage" && focus.view != "heads" && focus.view != "model")
        throw Error(name + ": " + where + "view: expected stage, heads or model, got " +
                    shorten(obj["view"]));
}

void write_focus(ojson& obj, const SceneFocus& f) {
    if (f.layer) obj["layer"] = *f.layer;
    if (f.head) obj["head"] = *f.head;
    if (f.pin) obj["pin"] = *f.pin;
    if (!f.stage.empty()) obj["stage"] = f.stage;
    if (!f.view.empty()) obj["view"] = f.view;
    if (!f.text.empty()) obj["text"] = f.text;
    if (!f.title.empty()) obj["title"] = f.title;
    if (!f.note.empty()) obj["note"] = f.note;
}

}  // namespace

const SceneFocus* Scene::named_head(const std::string& name) const {
    for (const auto& [n, f] : named_heads)
        if (n == name) return &f;
    return nullptr;
}

ojson config_to_json(const Config& cfg) {
    ojson out = ojson::object();
    for (const std::string& key : config_keys()) out[key] = typed_value(key, get_config_key(cfg, key));
    return out;
}

void apply_config_json(Config& cfg, const ojson& config, const std::string& name) {
    if (!config.is_object())
        throw Error(name + ": config: expected an object of config keys, got " + shorten(config));
    const auto& known = config_keys();
    for (auto it = config.begin(); it != config.end(); ++it) {
        const std::string& key = it.key();
        if (std::find(known.begin(), known.end(), key) == known.end())
            throw Error(name + ": " + unknown_key_message("config key", key, known));
        const std::string text = value_text(key, it.value(), name);
        try {
            set_config_key(cfg, key, text);
        } catch (const Error& e) {
            throw Error(name + ": " + e.what());
        }
    }
}

Scene parse_scene(const std::string& json_text, const std::string& name) {
    if (json_text.size() > kMaxSceneBytes)
        throw Error(name + ": too large (" + std::to_string(json_text.size() >> 20) + " MiB > " +
                    std::to_string(kMaxSceneBytes >> 20) + " MiB); a scene is a few KiB");
    ojson doc;
    SceneSax sax(doc);
    const bool ok = ojson::sax_parse(json_text, &sax);
    if (!ok || sax.failed() || sax.too_deep()) {
        if (sax.too_deep()) {
            const std::size_t at = json_too_deep_at(json_text, kMaxSceneDepth);
            const auto [line, col] = line_col(json_text, at == std::string::npos ? 0 : at);
            throw Error(name + ":" + std::to_string(line) + ":" + std::to_string(col) +
                        ": JSON nested more than " + std::to_string(kMaxSceneDepth) +
                        " levels deep; a scene needs 3");
        }
        // error_byte is 1-based: the position of the character that could not be parsed.
        const std::size_t byte = sax.error_byte();
        const auto [line, col] = line_col(json_text, byte > 0 ? byte - 1 : 0);
        const std::string what = sax.failed() ? json_error_reason(sax.error()) : "cannot parse";
        throw Error(name + ":" + std::to_string(line) + ":" + std::to_string(col) +
                    (sax.overflow() ? ": JSON number out of range: " : ": JSON syntax error: ") + what);
    }
    if (!doc.is_object())
        throw Error(name + ": a scene must be a JSON object like {\"attnviz_scene\": 1, \"config\": {...}}");

    Scene scene;
    scene.title.clear();
    scene.note.clear();
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        if (std::find(kTopKeys.begin(), kTopKeys.end(), it.key()) == kTopKeys.end())
            throw Error(name + ": " + unknown_key_message("key", it.key(), kTopKeys));
    }
    if (doc.contains("attnviz_scene")) {
        const ojson& v = doc["attnviz_scene"];
        if (!v.is_number_integer())
            throw Error(name + ": attnviz_scene: expected the format version 1, got " + shorten(v));
        if (v.get<std::int64_t>() != kSceneVersion)
            throw Error(name + ": scene format version " + std::to_string(v.get<std::int64_t>()) +
                        " is not supported (this attnviz reads version 1)");
    }
    if (doc.contains("version")) {
        const ojson& v = doc["version"];
        if (!v.is_number_integer())
            throw Error(name + ": version: expected the scene format version 1, 2 or 3, got " + shorten(v));
        const std::int64_t version = v.get<std::int64_t>();
        if (version < 1 || version > kSceneFormatVersion)
            throw Error(name + ": scene format version " + std::to_string(version) +
                        " is not supported (this attnviz reads versions 1 to 3)");
    }
    for (const char* key : {"title", "note", "model", "model_text"}) {
        if (!doc.contains(key)) continue;
        const ojson& v = doc[key];
        if (!v.is_string()) throw Error(name + ": " + key + ": expected a string, got " + shorten(v));
        const std::string k = key;
        (k == "title"   ? scene.title
         : k == "note"  ? scene.note
         : k == "model" ? scene.model
                        : scene.model_text) = v.get<std::string>();
    }
    parse_focus(doc, scene.focus, name, "", /*allow_text=*/false);
    if (doc.contains("named_heads")) {
        const ojson& heads = doc["named_heads"];
        if (!heads.is_object())
            throw Error(name +
                        ": named_heads: expected an object like {\"adjective_noun\": {\"layer\": 1, "
                        "\"head\": 2}}, got " +
                        shorten(heads));
        for (auto it = heads.begin(); it != heads.end(); ++it) {
            const std::string where = "named_heads." + it.key() + ".";
            if (!it.value().is_object())
                throw Error(name + ": " + where.substr(0, where.size() - 1) + ": expected an object, got " +
                            shorten(it.value()));
            for (auto k = it.value().begin(); k != it.value().end(); ++k)
                if (std::find(kFocusKeys.begin(), kFocusKeys.end(), k.key()) == kFocusKeys.end())
                    throw Error(name + ": " + where.substr(0, where.size() - 1) + ": " +
                                unknown_key_message("key", k.key(), kFocusKeys));
            SceneFocus f;
            parse_focus(it.value(), f, name, where, /*allow_text=*/true);
            scene.named_heads.emplace_back(it.key(), std::move(f));
        }
    }
    if (doc.contains("config")) apply_config_json(scene.config, doc["config"], name);
    return scene;
}

Scene load_scene(const std::string& path) {
    Scene scene = parse_scene(read_file(path, kMaxSceneBytes), path);
    if (!scene.model.empty() && scene.model.front() != '/') {  // relative to the scene's folder
        const auto slash = path.rfind('/');
        if (slash != std::string::npos)  // "scenes/../models/m" reads as "models/m" in messages
            scene.model =
                std::filesystem::path(path.substr(0, slash + 1) + scene.model).lexically_normal().string();
    }
    return scene;
}

std::string scene_json(const Scene& scene) {
    ojson doc = ojson::object();
    doc["attnviz_scene"] = kSceneVersion;
    doc["version"] = scene.focus.empty() && scene.named_heads.empty() ? 2 : kSceneFormatVersion;
    doc["title"] = scene.title;
    doc["note"] = scene.note;
    doc["config"] = config_to_json(scene.config);
    if (!scene.model.empty()) doc["model"] = scene.model;
    if (!scene.model_text.empty()) doc["model_text"] = scene.model_text;
    write_focus(doc, scene.focus);
    if (!scene.named_heads.empty()) {
        ojson heads = ojson::object();
        for (const auto& [n, f] : scene.named_heads) {
            ojson one = ojson::object();
            write_focus(one, f);
            heads[n] = one;
        }
        doc["named_heads"] = heads;
    }
    try {
        return doc.dump(2) + "\n";  // UTF-8 kept as is (not \u escapes), so Chinese stays readable
    } catch (const nlohmann::json::type_error&) {
        throw Error("cannot save the scene: its title, note or text is not valid UTF-8");
    }
}

void save_scene(const std::string& path, const Scene& scene) {
    write_file_atomic(path, scene_json(scene));
}

Scene default_scene() {
    Scene scene;
    scene.title = "A fluffy blue creature";
    scene.note =
        "The built-in example: one sentence attending to itself with 4 heads. Step through the stages "
        "to see how each word's query picks the words it takes its new meaning from.";
    scene.config = Config{};
    scene.config.text = kDefaultSentence;
    return scene;
}

}  // namespace attnviz

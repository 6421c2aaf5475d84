// Config: equality, validation with learner-facing messages, and the textual key=value interface
// used by `--set`, scenes and the manifest.
// GCC 12 with -march=native (AVX-512) reports false "may be used uninitialized" warnings inside
// Eigen's vectorised kernels (in the compiler's own intrinsics headers); they are not our code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "core/config.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "core/error.hpp"
#include "core/ops.hpp"
#include "core/tokenize.hpp"

namespace attnviz {

// ---------------------------------------------------------------------------------------------
// MaskGrid, equality
// ---------------------------------------------------------------------------------------------

void MaskGrid::set_blocked(int i, int j, bool value) {
    if (i < 0 || j < 0) return;  // nothing lives at negative indices; ignore rather than crash
    if (i >= rows || j >= cols) {
        if (!value) return;  // cells outside the grid already count as visible
        // Grow, copying old cells; new cells are visible (0).
        const int new_rows = std::max(rows, i + 1);
        const int new_cols = std::max(cols, j + 1);
        std::vector<std::uint8_t> grown(std::size_t(new_rows) * std::size_t(new_cols), 0);
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c)
                if (std::size_t(r) * cols + c < blocked.size())
                    grown[std::size_t(r) * new_cols + c] = blocked[std::size_t(r) * cols + c];
        rows = new_rows;
        cols = new_cols;
        blocked = std::move(grown);
    }
    blocked[std::size_t(i) * cols + j] = value ? 1 : 0;
}

bool Config::operator==(const Config& o) const {
    return text == o.text && source_text == o.source_text && length == o.length &&
           max_tokens == o.max_tokens && d_model == o.d_model && heads == o.heads && d_k == o.d_k &&
           d_v == o.d_v && attention == o.attention && phi == o.phi && scoring == o.scoring &&
           additive_hidden == o.additive_hidden && bandwidth == o.bandwidth && temperature == o.temperature &&
           mask == o.mask && valid_length == o.valid_length && window == o.window &&
           custom_mask == o.custom_mask && positional == o.positional && pe_base == o.pe_base &&
           layernorm == o.layernorm && residual == o.residual && preset == o.preset && seed == o.seed;
}

// ---------------------------------------------------------------------------------------------
// Enum names
// ---------------------------------------------------------------------------------------------

namespace {

template <typename E>
struct EnumNames;

template <>
struct EnumNames<AttentionKind> {
    static constexpr std::pair<AttentionKind, const char*> list[] = {{AttentionKind::Softmax, "softmax"},
                                                                     {AttentionKind::Linear, "linear"}};
};
template <>
struct EnumNames<PhiKind> {
    static constexpr std::pair<PhiKind, const char*> list[] = {
        {PhiKind::Elu1, "elu1"}, {PhiKind::Relu, "relu"}, {PhiKind::Softmax, "softmax"}};
};
template <>
struct EnumNames<Scoring> {
    static constexpr std::pair<Scoring, const char*> list[] = {
        {Scoring::ScaledDot, "scaled_dot"},     {Scoring::Dot, "dot"},
        {Scoring::Additive, "additive"},        {Scoring::Bilinear, "bilinear"},
        {Scoring::Gaussian, "gaussian"},        {Scoring::Boxcar, "boxcar"},
        {Scoring::Epanechnikov, "epanechnikov"}};
};
template <>
struct EnumNames<MaskKind> {
    static constexpr std::pair<MaskKind, const char*> list[] = {{MaskKind::None, "none"},
                                                                {MaskKind::Causal, "causal"},
                                                                {MaskKind::Padding, "padding"},
                                                                {MaskKind::Window, "window"},
                                                                {MaskKind::Custom, "custom"}};
};
template <>
struct EnumNames<Positional> {
    static constexpr std::pair<Positional, const char*> list[] = {{Positional::None, "none"},
                                                                  {Positional::Sinusoidal, "sinusoidal"},
                                                                  {Positional::Learned, "learned"},
                                                                  {Positional::Rope, "rope"},
                                                                  {Positional::Alibi, "alibi"}};
};
template <>
struct EnumNames<LayerNormMode> {
    static constexpr std::pair<LayerNormMode, const char*> list[] = {
        {LayerNormMode::None, "none"}, {LayerNormMode::Pre, "pre"}, {LayerNormMode::Post, "post"}};
};
template <>
struct EnumNames<HeadPreset> {
    static constexpr std::pair<HeadPreset, const char*> list[] = {
        {HeadPreset::None, "none"},
        {HeadPreset::PreviousToken, "previous_token"},
        {HeadPreset::FirstToken, "first_token"},
        {HeadPreset::SameToken, "same_token"},
        {HeadPreset::AdjectiveNoun, "adjective_noun"}};
};

template <typename E>
std::string enum_name(E v) {
    for (const auto& [value, name] : EnumNames<E>::list)
        if (value == v) return name;
    return "unknown";
}

template <typename E>
std::string enum_choices() {
    std::string out;
    for (const auto& [value, name] : EnumNames<E>::list) {
        if (!out.empty()) out += ", ";
        out += name;
    }
    return out;
}

// "\"value\"", cut to about 60 bytes (at a character boundary) so a message stays one short line.
std::string quoted(std::string_view s) {
    if (s.size() <= 64) return "\"" + std::string(s) + "\"";
    std::size_t cut = 60;
    while (cut > 0 && (std::uint8_t(s[cut]) & 0xC0) == 0x80) --cut;
    return "\"" + std::string(s.substr(0, cut)) + "...\" (" + std::to_string(s.size()) + " bytes)";
}

[[noreturn]] void bad_value(std::string_view key, std::string_view value, const std::string& accepted) {
    throw ConfigError(std::string(key) + ": " + quoted(value) + " is not accepted; use " + accepted);
}

template <typename E>
E parse_enum(std::string_view key, std::string_view value) {
    for (const auto& [v, name] : EnumNames<E>::list)
        if (value == name) return v;
    bad_value(key, value, "one of " + enum_choices<E>());
}

int parse_int(std::string_view key, std::string_view value) {
    int out = 0;
    const char* first = value.data();
    const char* last = value.data() + value.size();
    if (first != last && *first == '+') ++first;
    const auto [ptr, ec] = std::from_chars(first, last, out);
    if (value.empty() || ec != std::errc() || ptr != last) {
        bad_value(key, value,
                  "a whole number between " + std::to_string(std::numeric_limits<int>::min()) + " and " +
                      std::to_string(std::numeric_limits<int>::max()));
    }
    return out;
}

std::uint64_t parse_u64(std::string_view key, std::string_view value) {
    std::uint64_t out = 0;
    const char* first = value.data();
    const char* last = value.data() + value.size();
    if (first != last && *first == '+') ++first;
    const auto [ptr, ec] = std::from_chars(first, last, out);
    if (value.empty() || ec != std::errc() || ptr != last) {
        bad_value(key, value, "a whole number between 0 and 18446744073709551615");
    }
    return out;
}

double parse_double(std::string_view key, std::string_view value) {
    double out = 0;
    const char* first = value.data();
    const char* last = value.data() + value.size();
    if (first != last && *first == '+') ++first;
    // from_chars is locale-independent: "0.5" means one half on every machine.
    const auto [ptr, ec] = std::from_chars(first, last, out);
    if (value.empty() || ec != std::errc() || ptr != last) {
        bad_value(key, value, "a number such as 0.5, 2 or 1e-3");
    }
    return out;
}

bool parse_bool(std::string_view key, std::string_view value) {
    if (value == "true" || value == "1" || value == "on") return true;
    if (value == "false" || value == "0" || value == "off") return false;
    bad_value(key, value, "true, false, 1, 0, on or off");
}

// Shortest text that reads back to exactly the same double.
std::string format_double(double v) {
    char buf[64];
    const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
    if (ec != std::errc()) {
        std::snprintf(buf, sizeof buf, "%.17g", v);
        return buf;
    }
    return std::string(buf, ptr);
}

MaskGrid parse_mask(std::string_view key, std::string_view value) {
    MaskGrid grid;
    if (value.empty()) return grid;
    std::vector<std::string_view> rows;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= value.size(); ++i) {
        if (i == value.size() || value[i] == ';' || value[i] == '/') {
            rows.push_back(value.substr(start, i - start));
            start = i + 1;
        }
    }
    const std::size_t cols = rows.front().size();
    const std::string accepted =
        "rows of 0 and 1 of equal length separated by ';' or '/', e.g. \"100;110;111\" (1 = hidden)";
    for (std::string_view r : rows) {
        if (r.size() != cols || cols == 0) bad_value(key, value, accepted);
        for (char c : r)
            if (c != '0' && c != '1') bad_value(key, value, accepted);
    }
    grid.rows = int(rows.size());
    grid.cols = int(cols);
    grid.blocked.reserve(rows.size() * cols);
    for (std::string_view r : rows)
        for (char c : r) grid.blocked.push_back(c == '1' ? 1 : 0);
    return grid;
}

std::string format_mask(const MaskGrid& g) {
    std::string out;
    for (int i = 0; i < g.rows; ++i) {
        if (i > 0) out += ';';
        for (int j = 0; j < g.cols; ++j) out += g.is_blocked(i, j) ? '1' : '0';
    }
    return out;
}

std::string join_keys() {
    std::string out;
    for (const std::string& k : config_keys()) {
        if (!out.empty()) out += ", ";
        out += k;
    }
    return out;
}

[[noreturn]] void unknown_key(std::string_view key) {
    throw ConfigError("unknown config key " + quoted(key) + "; known keys are " + join_keys());
}

// Human-readable size: "3.2 GiB", "512 MiB", "12 KiB".
std::string bytes_text(double bytes) {
    const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 6) {
        bytes /= 1024.0;
        ++u;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
    return buf;
}

// The divisors of d_model, smallest first, at most 64 of them ("1, 2, 4 or 8"). O(√d_model) and in
// 64-bit arithmetic, so it stays fast and exact up to INT_MAX: validate() runs on the UI thread.
std::string divisors_text(int d_model) {
    if (d_model < 1) return "1";
    const std::int64_t d = d_model;
    std::vector<std::int64_t> small, large;  // k <= sqrt(d) and their partners d / k
    for (std::int64_t k = 1; k * k <= d; ++k) {
        if (d % k != 0) continue;
        small.push_back(k);
        if (k != d / k) large.push_back(d / k);
    }
    std::vector<std::int64_t> divs(small.begin(), small.end());
    divs.insert(divs.end(), large.rbegin(), large.rend());
    if (divs.size() > 64) divs.resize(64);
    std::string out;
    for (std::size_t i = 0; i < divs.size(); ++i) {
        if (i > 0) out += (i + 1 == divs.size()) ? " or " : ", ";
        out += std::to_string(divs[i]);
    }
    return out;
}

}  // namespace

std::string to_string(AttentionKind v) {
    return enum_name(v);
}
std::string to_string(PhiKind v) {
    return enum_name(v);
}
std::string to_string(Scoring v) {
    return enum_name(v);
}
std::string to_string(MaskKind v) {
    return enum_name(v);
}
std::string to_string(Positional v) {
    return enum_name(v);
}
std::string to_string(LayerNormMode v) {
    return enum_name(v);
}
std::string to_string(HeadPreset v) {
    return enum_name(v);
}

// ---------------------------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------------------------

namespace {

constexpr double kNoLimit = std::numeric_limits<double>::infinity();

// Every knob once: name, kind, range, help, and how it is read from and written to text. The order
// is the stable order of config_keys() (scenes, the manifest's config, the workspace).
std::vector<ConfigField> make_config_fields() {
    using K = FieldKind;
    return {
        {"text", K::Text, 0, 0,
         "queries (n tokens): Latin words and punctuation, one token per CJK character",
         [](Config& c, std::string_view, std::string_view v) { c.text = std::string(v); },
         [](const Config& c) { return c.text; }},
        {"source_text", K::Text, 0, 0, "keys and values for cross-attention; empty = self-attention",
         [](Config& c, std::string_view, std::string_view v) { c.source_text = std::string(v); },
         [](const Config& c) { return c.source_text; }},
        {"length", K::Integer, 0, kNoLimit,
         "> 0: tile the text's tokens cyclically to exactly this many tokens",
         [](Config& c, std::string_view k, std::string_view v) { c.length = parse_int(k, v); },
         [](const Config& c) { return std::to_string(c.length); }},
        {"max_tokens", K::Integer, 1, kNoLimit, "refuse texts longer than this (after tiling)",
         [](Config& c, std::string_view k, std::string_view v) { c.max_tokens = parse_int(k, v); },
         [](const Config& c) { return std::to_string(c.max_tokens); }},
        {"d_model", K::Integer, 1, kNoLimit, "width of the residual stream",
         [](Config& c, std::string_view k, std::string_view v) { c.d_model = parse_int(k, v); },
         [](const Config& c) { return std::to_string(c.d_model); }},
        {"heads", K::Integer, 1, kNoLimit, "number of attention heads",
         [](Config& c, std::string_view k, std::string_view v) { c.heads = parse_int(k, v); },
         [](const Config& c) { return std::to_string(c.heads); }},
        {"d_k", K::Integer, 0, kNoLimit, "query/key width per head; 0 = d_model / heads",
         [](Config& c, std::string_view k, std::string_view v) { c.d_k = parse_int(k, v); },
         [](const Config& c) { return std::to_string(c.d_k); }},
        {"d_v", K::Integer, 0, kNoLimit, "value width per head; 0 = d_model / heads",
         [](Config& c, std::string_view k, std::string_view v) { c.d_v = parse_int(k, v); },
         [](const Config& c) { return std::to_string(c.d_v); }},
        {"attention", K::Choice, 0, 0, "softmax | linear",
         [](Config& c, std::string_view k, std::string_view v) {
             c.attention = parse_enum<AttentionKind>(k, v);
         },
         [](const Config& c) { return to_string(c.attention); }},
        {"phi", K::Choice, 0, 0, "linear attention's feature map: elu1 | relu | softmax",
         [](Config& c, std::string_view k, std::string_view v) { c.phi = parse_enum<PhiKind>(k, v); },
         [](const Config& c) { return to_string(c.phi); }},
        {"scoring", K::Choice, 0, 0,
         "scaled_dot | dot | additive | bilinear | gaussian | boxcar | epanechnikov",
         [](Config& c, std::string_view k, std::string_view v) { c.scoring = parse_enum<Scoring>(k, v); },
         [](const Config& c) { return to_string(c.scoring); }},
        {"additive_hidden", K::Integer, 0, kNoLimit, "hidden size of additive scoring; 0 = d_k",
         [](Config& c, std::string_view k, std::string_view v) { c.additive_hidden = parse_int(k, v); },
         [](const Config& c) { return std::to_string(c.additive_hidden); }},
        {"bandwidth", K::Number, 0, kNoLimit,
         "kernel width of Gaussian / boxcar / Epanechnikov scoring (> 0)",
         [](Config& c, std::string_view k, std::string_view v) { c.bandwidth = parse_double(k, v); },
         [](const Config& c) { return format_double(c.bandwidth); }},
        {"temperature", K::Number, 0, kNoLimit, "softmax(S / T), T > 0 (the slider spans 0.01–100)",
         [](Config& c, std::string_view k, std::string_view v) { c.temperature = parse_double(k, v); },
         [](const Config& c) { return format_double(c.temperature); }},
        {"mask", K::Choice, 0, 0, "none | causal | padding | window | custom",
         [](Config& c, std::string_view k, std::string_view v) { c.mask = parse_enum<MaskKind>(k, v); },
         [](const Config& c) { return to_string(c.mask); }},
        {"valid_length", K::Integer, -1, kNoLimit,
         "padding mask: keys j >= valid_length are hidden; -1 = all valid",
         [](Config& c, std::string_view k, std::string_view v) { c.valid_length = parse_int(k, v); },
         [](const Config& c) { return std::to_string(c.valid_length); }},
        {"window", K::Integer, 1, kNoLimit, "window mask: query i sees keys i − window < j ≤ i",
         [](Config& c, std::string_view k, std::string_view v) { c.window = parse_int(k, v); },
         [](const Config& c) { return std::to_string(c.window); }},
        {"custom_mask", K::MaskRows, 0, 0, "rows of 0/1 separated by ';' or '/', 1 = hidden",
         [](Config& c, std::string_view k, std::string_view v) { c.custom_mask = parse_mask(k, v); },
         [](const Config& c) { return format_mask(c.custom_mask); }},
        {"positional", K::Choice, 0, 0, "none | sinusoidal | learned | rope | alibi",
         [](Config& c, std::string_view k, std::string_view v) {
             c.positional = parse_enum<Positional>(k, v);
         },
         [](const Config& c) { return to_string(c.positional); }},
        {"pe_base", K::Number, 1, kNoLimit, "base of sinusoidal PE and RoPE (> 1)",
         [](Config& c, std::string_view k, std::string_view v) { c.pe_base = parse_double(k, v); },
         [](const Config& c) { return format_double(c.pe_base); }},
        {"layernorm", K::Choice, 0, 0, "none | pre | post",
         [](Config& c, std::string_view k, std::string_view v) {
             c.layernorm = parse_enum<LayerNormMode>(k, v);
         },
         [](const Config& c) { return to_string(c.layernorm); }},
        {"residual", K::Boolean, 0, 1, "add the input back to the output",
         [](Config& c, std::string_view k, std::string_view v) { c.residual = parse_bool(k, v); },
         [](const Config& c) { return std::string(c.residual ? "true" : "false"); }},
        {"preset", K::Choice, 0, 0,
         "designed head 0: none | previous_token | first_token | same_token | adjective_noun",
         [](Config& c, std::string_view k, std::string_view v) { c.preset = parse_enum<HeadPreset>(k, v); },
         [](const Config& c) { return to_string(c.preset); }},
        {"seed", K::Unsigned, 0, kNoLimit, "seed of the random weights",
         [](Config& c, std::string_view k, std::string_view v) { c.seed = parse_u64(k, v); },
         [](const Config& c) { return std::to_string(c.seed); }},
    };
}

}  // namespace

std::string ConfigField::default_text() const {
    return get(Config{});
}

const std::vector<ConfigField>& config_fields() {
    static const std::vector<ConfigField> fields = make_config_fields();
    return fields;
}

const ConfigField* find_config_field(std::string_view name) {
    for (const ConfigField& f : config_fields())
        if (name == f.name) return &f;
    return nullptr;
}

const std::vector<std::string>& config_keys() {
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> k;
        for (const ConfigField& f : config_fields()) k.push_back(f.name);
        return k;
    }();
    return keys;
}

void set_config_key(Config& c, std::string_view key, std::string_view value) {
    const ConfigField* f = find_config_field(key);
    if (!f) unknown_key(key);
    f->set(c, key, value);
}

std::string get_config_key(const Config& c, std::string_view key) {
    const ConfigField* f = find_config_field(key);
    if (!f) unknown_key(key);
    return f->get(c);
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

double estimate_trace_bytes(const Config& cfg, int n_, int m_, int vocab_) {
    // All in double: the point is to catch configs whose sizes would overflow an int.
    const double n = n_, m = m_, V = vocab_, d = cfg.d_model, h = cfg.heads;
    const double dk = cfg.resolved_d_k(), dv = cfg.resolved_d_v(), hid = cfg.resolved_additive_hidden();
    const double f = 4.0;  // bytes per float
    const double nm = n * m;
    const bool linear = cfg.attention == AttentionKind::Linear;
    // The quadratic part: per head, softmax and kernel scoring store the scores and the weights;
    // linear attention stores only the implied weights (display), and only while all heads' fit in
    // 1 GiB (compute_trace omits them above that). Scaled/masked are derived lazily.
    double pattern = linear ? h * nm * f : h * nm * f * 2.0;
    if (linear && pattern > kMaxLinearWeightsBytes) pattern = 0;
    double bytes = pattern;
    // Linear attention with a window or custom mask materialises φ(Q)φ(K)ᵀ per head as well.
    if (linear && pattern > 0 && (cfg.mask == MaskKind::Window || cfg.mask == MaskKind::Custom))
        bytes += h * nm * f;
    // Workspace of whoever uses the trace: the display copy of a stage that figures and the GUI draw
    // (one n×m matrix), or a derived stage materialised by `dump` or a figure -- `masked` is built as
    // scaled = S·c (one n×m) and then apply_mask's result (a second), as is `scaled` with ALiBi's bias:
    // two n×m matrices at once (measured: dump at 14971 causal tokens peaked at 3.6 GiB when only
    // one was counted). Linear attention has no derived n×m stages: one display copy.
    if (pattern > 0) bytes += (linear ? 1.0 : 2.0) * nm * f;
    // Masks: the trace's n×m booleans, the copy display_matrix() makes, and the custom grid itself.
    if (cfg.mask != MaskKind::None) bytes += 2.0 * nm;
    bytes += double(cfg.custom_mask.blocked.size());
    // Per head: W_Q, W_K, W_V, Q, K, V, head output (+ rotated Q, K for RoPE, KV/phi for linear).
    bytes += h * f * (2 * d * dk + d * dv + n * dk + m * dk + m * dv + n * dv);
    if (cfg.positional == Positional::Rope) bytes += h * f * (n + m) * dk;
    if (linear) bytes += h * f * ((n + m) * dk + dk * dv + n);
    // Scoring parameters and temporaries: additive keeps W_q, W_k (d_k × hidden), Q·W_q (n × hidden),
    // K·W_k and one tanh block (m × hidden) per head; bilinear W (d_k × d_k) and Q·W (n × d_k).
    if (!linear && cfg.scoring == Scoring::Additive)
        bytes += h * f * (2 * dk * hid + hid + (n + 2 * m) * hid);
    if (!linear && cfg.scoring == Scoring::Bilinear) bytes += h * f * (dk * dk + n * dk);
    // Layer-wide: one-hot n×V, embedding table V×d_model, positional, input, source, concat, W_O,
    // output, residual, layer norms -- about eight n×d_model-sized matrices.
    bytes += f * (n * V + V * d + 8 * (n + m) * d + h * dv * d + n * h * dv);
    // Bookkeeping: every stage's title, formula, explanation and axes (about 2 KiB each, some 14 stages
    // per head), the token strings, and each head's row entropies.
    bytes += (14.0 * h + 12.0) * 2048.0 + 64.0 * (n + m + V) + h * n * f;
    return bytes;
}

std::vector<ConfigIssue> validate(const Config& cfg) {
    std::vector<ConfigIssue> issues;
    auto add = [&](const std::string& key, const std::string& message) { issues.push_back({key, message}); };
    auto num = [](double v) { return format_double(v); };

    // --- sizes ---
    bool sizes_ok = true;
    if (cfg.d_model < 1) {
        add("d_model", "d_model = " + std::to_string(cfg.d_model) + " must be at least 1");
        sizes_ok = false;
    }
    if (cfg.heads < 1) {
        add("heads", "heads = " + std::to_string(cfg.heads) + " must be at least 1");
        sizes_ok = false;
    }
    if (cfg.d_k < 0) {
        add("d_k", "d_k = " + std::to_string(cfg.d_k) + " must be at least 1, or 0 for d_model / heads");
        sizes_ok = false;
    }
    if (cfg.d_v < 0) {
        add("d_v", "d_v = " + std::to_string(cfg.d_v) + " must be at least 1, or 0 for d_model / heads");
        sizes_ok = false;
    }
    if (cfg.additive_hidden < 0) {
        add("additive_hidden", "additive_hidden = " + std::to_string(cfg.additive_hidden) +
                                   " must be at least 1, or 0 to use d_k");
        sizes_ok = false;
    }
    if (cfg.d_model >= 1 && cfg.heads >= 1 && (cfg.d_k == 0 || cfg.d_v == 0) &&
        cfg.d_model % cfg.heads != 0) {
        add("heads", "heads = " + std::to_string(cfg.heads) +
                         " does not divide d_model = " + std::to_string(cfg.d_model) + "; choose " +
                         divisors_text(cfg.d_model) + ", or set d_k and d_v by hand");
        sizes_ok = false;
    }

    // --- attention ---
    if (!(cfg.temperature > 0)) {  // also catches NaN
        add("temperature", "temperature = " + num(cfg.temperature) +
                               ": temperature must be > 0; the T→0 limit is argmax (one-hot), the app cannot "
                               "divide by 0");
    } else if (!std::isfinite(cfg.temperature)) {
        add("temperature",
            "temperature must be finite; as T→∞ the weights tend to uniform (1/m), so try a "
            "large value such as 1000");
    }
    if (!(cfg.bandwidth > 0) || !std::isfinite(cfg.bandwidth)) {
        add("bandwidth", "bandwidth = " + num(cfg.bandwidth) +
                             " must be a finite number > 0; it is the kernel width h in u = ‖q − k‖ / h");
    }

    // --- masks ---
    if (cfg.window < 1) {
        add("window", "window = " + std::to_string(cfg.window) +
                          " must be at least 1 (a query always sees itself: i − window < j ≤ i)");
    }
    if (cfg.valid_length < -1) {
        add("valid_length", "valid_length = " + std::to_string(cfg.valid_length) +
                                " must be at least 0, or -1 for all keys valid");
    }
    const MaskGrid& g = cfg.custom_mask;
    if (g.rows < 0 || g.cols < 0 ||
        g.blocked.size() != std::size_t(std::max(g.rows, 0)) * std::size_t(std::max(g.cols, 0))) {
        add("custom_mask", "custom_mask is damaged: it says " + std::to_string(g.rows) + "×" +
                               std::to_string(g.cols) + " cells but stores " +
                               std::to_string(g.blocked.size()) + "; clear it and draw it again");
    }

    // --- position ---
    if (!(cfg.pe_base > 1) || !std::isfinite(cfg.pe_base)) {
        add("pe_base",
            "pe_base = " + num(cfg.pe_base) +
                " must be a finite number > 1 (the usual value is 10000; wavelengths grow as base^(2i/d))");
    }
    if (cfg.positional == Positional::Rope && sizes_ok && cfg.resolved_d_k() % 2 != 0) {
        add("positional", "RoPE rotates pairs of coordinates, so d_k must be even but it is " +
                              std::to_string(cfg.resolved_d_k()) + "; change d_k, d_model or heads");
    }

    // --- texts ---
    bool texts_ok = true;
    int n = 0, m = 0, vocab = 0;
    if (cfg.length < 0) {
        add("length",
            "length = " + std::to_string(cfg.length) + " must be 0 (use the text as typed) or more");
        texts_ok = false;
    }
    if (cfg.max_tokens < 1) {
        add("max_tokens", "max_tokens = " + std::to_string(cfg.max_tokens) + " must be at least 1");
        texts_ok = false;
    }
    // Same rule as tokenize_config(): `length` tiles the query text only; the source text of
    // cross-attention is used as typed.
    auto count = [&](const std::string& key, const std::string& text, bool tiled, int& out,
                     std::set<std::string>& distinct) {
        try {
            const std::vector<std::string> tokens = tokenize_strings(text);
            if (tokens.empty()) {
                add(key, key + " has no tokens; type at least one word");
                texts_ok = false;
                return;
            }
            // Tiling repeats tokens cyclically, so the vocabulary does not grow with it.
            distinct.insert(tokens.begin(), tokens.end());
            const int typed = int(std::min<std::size_t>(tokens.size(), std::size_t(1) << 30));
            out = (tiled && cfg.length > 0) ? cfg.length : typed;
        } catch (const TextError& e) {
            add(key, key + ": " + e.what());
            texts_ok = false;
        }
    };
    std::set<std::string> distinct;
    count("text", cfg.text, true, n, distinct);
    m = n;
    if (cfg.cross_attention()) count("source_text", cfg.source_text, false, m, distinct);
    vocab = int(distinct.size());
    if (texts_ok && cfg.max_tokens >= 1) {
        if (n > cfg.max_tokens) {
            const bool tiled = cfg.length > 0;
            add(tiled ? "length" : "text",
                "text has " + std::to_string(n) + (tiled ? " tokens after tiling to length" : " tokens") +
                    ", more than max_tokens = " + std::to_string(cfg.max_tokens) + "; use a shorter " +
                    (tiled ? "length" : "text") + ", or raise max_tokens");
        }
        if (m > cfg.max_tokens && cfg.cross_attention()) {
            add("source_text", "source_text has " + std::to_string(m) + " tokens, more than max_tokens = " +
                                   std::to_string(cfg.max_tokens) + "; shorten it, or raise max_tokens");
        }
    }

    // --- memory ---
    if (sizes_ok && texts_ok) {
        const double bytes = estimate_trace_bytes(cfg, n, m, vocab);
        if (bytes > kMaxTraceBytes) {
            const double pattern =
                double(cfg.heads) * n * m * 4.0 * (cfg.attention == AttentionKind::Linear ? 1 : 2);
            // The longest query text that would fit with everything else unchanged (keys grow with
            // it in self-attention).
            auto fits = [&](int len) {
                return estimate_trace_bytes(cfg, len, cfg.cross_attention() ? m : len, vocab) <=
                       kMaxTraceBytes;
            };
            int lo = 0, hi = n;  // fits(lo) or lo == 0; !fits(hi)
            while (hi - lo > 1) {
                const int mid = lo + (hi - lo) / 2;
                (fits(mid) ? lo : hi) = mid;
            }
            std::string what;
            const double hidden_part =
                cfg.scoring == Scoring::Additive && cfg.attention != AttentionKind::Linear
                    ? double(cfg.heads) * 4.0 * (2.0 * cfg.resolved_d_k() + 1.0 + n + 2.0 * m) *
                          cfg.resolved_additive_hidden()
                    : 0.0;
            if (hidden_part > bytes / 2)
                what = "reduce additive_hidden (now " + std::to_string(cfg.resolved_additive_hidden()) + ")";
            else if (lo >= 1)
                what = "use at most about " + std::to_string(lo) + " tokens (length), fewer heads";
            else
                what = "reduce d_model or heads";
            if (cfg.attention == AttentionKind::Softmax) what += ", or switch to linear attention";
            add(cfg.length > 0 ? "length" : "heads",
                "this trace would need about " + bytes_text(bytes) + " (the " + std::to_string(cfg.heads) +
                    " heads' n×m = " + std::to_string(n) + "×" + std::to_string(m) + " matrices alone take " +
                    bytes_text(pattern) + "), more than the " + bytes_text(kMaxTraceBytes) + " limit; " +
                    what);
        }
    }
    return issues;
}

void require_valid(const Config& cfg) {
    const std::vector<ConfigIssue> issues = validate(cfg);
    if (issues.empty()) return;
    std::string message;
    for (const ConfigIssue& issue : issues) {
        if (!message.empty()) message += " ";
        message += issue.message;
        if (!message.empty() && message.back() != '.') message += ".";
    }
    throw ConfigError(message);
}

LayerModes layer_modes(const Config& cfg) {
    LayerModes m;
    m.linear = cfg.attention == AttentionKind::Linear;
    m.kernel = !m.linear && is_kernel(cfg.scoring);
    m.rope = cfg.positional == Positional::Rope;
    m.alibi = cfg.positional == Positional::Alibi && !m.linear && !m.kernel;
    m.pre_ln = cfg.layernorm == LayerNormMode::Pre;
    m.post_ln = cfg.layernorm == LayerNormMode::Post;
    m.linear_native_mask =
        cfg.mask == MaskKind::None || cfg.mask == MaskKind::Causal || cfg.mask == MaskKind::Padding;
    return m;
}

}  // namespace attnviz

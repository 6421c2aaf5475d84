// Config: every knob of one attention layer, as one plain value. The GUI edits it, scenes store it,
// `attnviz dump --set key=value` sets it by name, and compute_trace() turns it into a Trace.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

enum class AttentionKind { Softmax, Linear };
/// Feature map of linear attention: sim(q,k) = phi(q)^T phi(k).
///  Elu1    phi(x) = elu(x) + 1                (Katharopoulos et al.)
///  Relu    phi(x) = max(x, 0)
///  Softmax the notes' form softmax_2(Q) . (softmax_1(K)^T V): Q softmaxed over features,
///          K softmaxed over tokens.
enum class PhiKind { Elu1, Relu, Softmax };
enum class Scoring { ScaledDot, Dot, Additive, Bilinear, Gaussian, Boxcar, Epanechnikov };
enum class MaskKind { None, Causal, Padding, Window, Custom };
enum class Positional { None, Sinusoidal, Learned, Rope, Alibi };
enum class LayerNormMode { None, Pre, Post };
/// Designed heads (issue "Teaching labs"): W_Q, W_K built by construction instead of at random.
enum class HeadPreset { None, PreviousToken, FirstToken, SameToken, AdjectiveNoun };

/// A user-editable boolean grid for MaskKind::Custom. cell(i,j) == true means key j is HIDDEN from
/// query i. Cells outside the stored size count as visible, so resizing the text never loses or
/// invents user edits.
struct MaskGrid {
    int rows = 0;
    int cols = 0;
    std::vector<std::uint8_t> blocked;  // rows*cols, row-major, 1 = hidden

    bool is_blocked(int i, int j) const {
        return i >= 0 && j >= 0 && i < rows && j < cols && blocked[std::size_t(i) * cols + j] != 0;
    }
    void set_blocked(int i, int j, bool value);  // grows the grid as needed
    bool operator==(const MaskGrid& o) const {
        return rows == o.rows && cols == o.cols && blocked == o.blocked;
    }
};

struct Config {
    // --- texts -------------------------------------------------------------------------------
    std::string text = "a fluffy blue creature roamed the verdant forest";  // queries (n tokens)
    std::string source_text;  // keys/values for cross-attention; empty = self-attention
    int length = 0;           // >0: tile the text's tokens cyclically to exactly this many tokens
    int max_tokens = 16384;   // refuse texts longer than this (after tiling)

    // --- sizes -------------------------------------------------------------------------------
    int d_model = 64;
    int heads = 4;
    int d_k = 0;  // 0 = d_model / heads (must divide)
    int d_v = 0;  // 0 = d_model / heads (must divide)

    // --- attention ---------------------------------------------------------------------------
    AttentionKind attention = AttentionKind::Softmax;
    PhiKind phi = PhiKind::Elu1;
    Scoring scoring = Scoring::ScaledDot;
    int additive_hidden = 0;   // hidden size of additive (Bahdanau) scoring; 0 = d_k
    double bandwidth = 1.0;    // kernel width for Gaussian / boxcar / Epanechnikov scoring
    double temperature = 1.0;  // softmax(S / T); must be > 0

    // --- masks -------------------------------------------------------------------------------
    MaskKind mask = MaskKind::None;
    int valid_length = -1;  // Padding: keys j >= valid_length are hidden; -1 = all valid
    int window = 3;         // Window: query i sees keys j with i - window < j <= i
    MaskGrid custom_mask;   // Custom

    // --- position ----------------------------------------------------------------------------
    Positional positional = Positional::Sinusoidal;
    double pe_base = 10000.0;  // base of sinusoidal PE and RoPE

    // --- block -------------------------------------------------------------------------------
    LayerNormMode layernorm = LayerNormMode::None;
    bool residual = true;
    HeadPreset preset = HeadPreset::None;
    std::uint64_t seed = 42;

    /// Resolved sizes (apply the 0 = d_model/heads rule). Only meaningful on a valid config.
    int resolved_d_k() const { return d_k > 0 ? d_k : (heads > 0 ? d_model / heads : 0); }
    int resolved_d_v() const { return d_v > 0 ? d_v : (heads > 0 ? d_model / heads : 0); }
    int resolved_additive_hidden() const { return additive_hidden > 0 ? additive_hidden : resolved_d_k(); }
    bool cross_attention() const { return !source_text.empty(); }

    bool operator==(const Config& o) const;
    bool operator!=(const Config& o) const { return !(*this == o); }
};

/// One problem found by validate(): the config key it concerns and a learner-facing sentence.
struct ConfigIssue {
    std::string key;      // e.g. "heads"
    std::string message;  // e.g. "heads = 3 does not divide d_model = 64; choose 1, 2, 4, 8, 16, 32 or 64,
                          //       or set d_k and d_v yourself"
};

/// All problems with a config (empty = valid). Checks: heads >= 1, dims >= 1, heads divide d_model
/// when d_k/d_v are automatic, T > 0 and finite, bandwidth > 0, pe_base > 1, even d_k for RoPE,
/// window >= 1, valid_length >= -1, non-empty text (>= 1 token), max_tokens, and a memory estimate
/// for the trace. Tokenizes the texts, so it also reports invalid UTF-8.
std::vector<ConfigIssue> validate(const Config& cfg);

/// Throws ConfigError with every issue joined, if any.
void require_valid(const Config& cfg);

/// What a config's choices switch on in the layer, derived once for the trace and for its texts.
struct LayerModes {
    bool linear = false;  // linear attention (no n×m softmax)
    bool kernel = false;  // softmax attention with kernel scores (rows normalised, no exp)
    bool rope = false;    // RoPE rotates Q and K
    bool alibi = false;   // ALiBi bias on softmax scores
    bool pre_ln = false, post_ln = false;
    bool linear_native_mask = false;  // a mask linear attention applies without the n×m matrix
};
LayerModes layer_modes(const Config& cfg);

/// Largest trace validate() accepts, in bytes (3 GiB).
inline constexpr double kMaxTraceBytes = 3.0 * 1024.0 * 1024.0 * 1024.0;

/// compute_trace omits linear attention's implied n×m weights when all heads' would exceed this.
inline constexpr double kMaxLinearWeightsBytes = 1024.0 * 1024.0 * 1024.0;

/// Bytes a config can cause to be held at once, for n query tokens, m key tokens and a vocabulary of
/// `vocab`: the trace itself (per head the stored n×m matrices -- scores + weights for softmax and
/// kernels, the implied weights for linear attention -- plus W_Q/W_K/W_V, Q, K, V, head outputs, the
/// scoring parameters and temporaries including additive_hidden, the layer-wide activations, masks,
/// the custom mask grid, labels and explanations) plus the workspace a consumer materialises on top
/// of it: a derived stage written by `dump` (2 n×m floats at once while `masked` is built), or the
/// display copy and mask drawn by a figure or the GUI. validate() rejects configs above kMaxTraceBytes.
/// Consumers that hold more (a heads grid keeps every head's display copy) must add their own part and check
/// again.
double estimate_trace_bytes(const Config& cfg, int n, int m, int vocab);

/// How a field is written: scenes store Integer/Unsigned/Number/Boolean as JSON numbers/booleans,
/// MaskRows as an array of 0/1 strings, Text and Choice as strings.
enum class FieldKind { Text, Integer, Unsigned, Number, Boolean, Choice, MaskRows };

/// One knob of Config, described once: set_config_key/get_config_key (`--set key=value`), scene
/// read/write, the workspace and the dump manifest's config all go through this table.
struct ConfigField {
    const char* name;  // the key, e.g. "pe_base"
    FieldKind kind;
    double min, max;   // the range validate() accepts for numbers (informative; 0, 0 for others)
    const char* help;  // one line for the learner
    void (*set)(Config&, std::string_view key, std::string_view value);  // throws ConfigError
    std::string (*get)(const Config&);                                   // set(get(c)) is the identity
    /// The field's value in a default Config, as text.
    std::string default_text() const;
};
/// Every field, in the stable order of config_keys().
const std::vector<ConfigField>& config_fields();
/// The field with this name, or nullptr.
const ConfigField* find_config_field(std::string_view name);

/// Every key accepted by set_config_key(), in a stable order: text, source_text, length, max_tokens,
/// d_model, heads, d_k, d_v, attention, phi, scoring, additive_hidden, bandwidth, temperature, mask,
/// valid_length, window, custom_mask, positional, pe_base, layernorm, residual, preset, seed.
const std::vector<std::string>& config_keys();

/// Sets one knob from its textual form, as given on the command line (`--set heads=4`) or taken
/// from a scene. Enum values use the names of to_string() ("scaled_dot", "causal", "rope", ...);
/// booleans accept true/false/1/0/on/off; custom_mask is rows of 0/1 separated by ';' or '/'
/// ("100;110;111", 1 = hidden). Throws ConfigError naming the key and the accepted values on an
/// unknown key or a value that does not parse. Does not validate ranges (validate() does).
void set_config_key(Config& cfg, std::string_view key, std::string_view value);

/// Textual form of one knob, such that set_config_key(c, k, get_config_key(c, k)) is the identity.
std::string get_config_key(const Config& cfg, std::string_view key);

// Names used in scenes, --set and the manifest.
std::string to_string(AttentionKind v);  // softmax | linear
std::string to_string(PhiKind v);        // elu1 | relu | softmax
// Scoring: scaled_dot | dot | additive | bilinear | gaussian | boxcar | epanechnikov
std::string to_string(Scoring v);
std::string to_string(MaskKind v);       // none | causal | padding | window | custom
std::string to_string(Positional v);     // none | sinusoidal | learned | rope | alibi
std::string to_string(LayerNormMode v);  // none | pre | post
std::string to_string(HeadPreset v);     // none | previous_token | first_token | same_token | adjective_noun

/// The built-in example sentence of the app.
inline constexpr const char* kDefaultSentence = "a fluffy blue creature roamed the verdant forest";

}  // namespace attnviz

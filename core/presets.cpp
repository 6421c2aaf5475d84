#include "core/presets.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "core/error.hpp"
#include "core/ops.hpp"

namespace attnviz {
namespace {

std::string ascii_lower(const std::string& s) {
    std::string out = s;
    for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Logit gap (after the √d_k scaling) the designed heads aim for between the intended key and its
// neighbours: e^6 ≈ 400, so the intended key gets almost all the weight at T = 1 while the pattern
// still softens visibly when the temperature slider goes up.
constexpr double kGap = 6.0;
// adjective_noun: weight of "is there an adjective?" vs "how close to just before me?".
constexpr double kClassWeight = 6.0;
constexpr double kLocalWeight = 1.0;

bool needs_sinusoidal(HeadPreset p) {
    return p == HeadPreset::PreviousToken || p == HeadPreset::FirstToken || p == HeadPreset::AdjectiveNoun;
}

// Σ_{i<r} cos(δ·w_i): dot product of the fast PE pairs of two positions δ apart.
double pe_pairs_dot(double delta, const Config& cfg, int r) {
    double s = 0;
    for (int i = 0; i < r; ++i) s += std::cos(delta * pe_frequency(i, cfg.d_model, cfg.pe_base));
    return s;
}

std::string fmt(double v, int digits = 2) {
    std::ostringstream o;
    o.setf(std::ios::fixed);
    o.precision(digits);
    o << v;
    return o.str();
}

}  // namespace

const std::vector<std::string>& lexicon_adjectives() {
    static const std::vector<std::string> words = {
        "fluffy", "blue", "verdant", "red",     "green",     "big",    "small", "little", "old",   "young",
        "happy",  "sad",  "quick",   "lazy",    "brown",     "tall",   "dark",  "bright", "soft",  "wild",
        "gentle", "tiny", "huge",    "furry",   "black",     "white",  "cold",  "warm",   "quiet", "loud",
        "good",   "bad",  "new",     "ancient", "beautiful", "golden", "deep",  "long",   "short", "sleepy"};
    return words;
}

const std::vector<std::string>& lexicon_nouns() {
    static const std::vector<std::string> words = {
        "creature", "forest", "cat",    "dog",    "fox",    "tree",  "house", "river",
        "mountain", "bird",   "child",  "man",    "woman",  "king",  "queen", "city",
        "sky",      "sea",    "ocean",  "moon",   "sun",    "world", "book",  "tower",
        "car",      "field",  "flower", "garden", "road",   "night", "day",   "friend",
        "animal",   "dragon", "castle", "lake",   "valley", "wolf",  "owl",   "meadow"};
    return words;
}

WordClass word_class(const std::string& token) {
    const std::string w = ascii_lower(token);
    const auto& adj = lexicon_adjectives();
    if (std::find(adj.begin(), adj.end(), w) != adj.end()) return WordClass::Adjective;
    const auto& noun = lexicon_nouns();
    if (std::find(noun.begin(), noun.end(), w) != noun.end()) return WordClass::Noun;
    return WordClass::Other;
}

PresetLayout preset_layout(int d_model, int d_k) {
    PresetLayout L;
    L.pairs = std::max(0, std::min({4, (d_k - 1) / 2, (d_model - 6) / 4}));
    const int last_pair = d_model / 2 - 1;  // slowest complete (sin, cos) pair
    L.bias_dim = 2 * last_pair + 1;
    L.adjective_dim = 2 * last_pair;
    L.noun_dim = 2 * last_pair - 2;
    L.content_begin = 2 * L.pairs;
    L.content_end = L.noun_dim;
    return L;
}

void check_preset(const Config& cfg) {
    if (cfg.preset == HeadPreset::None) return;
    const int d_k = cfg.resolved_d_k();
    const PresetLayout L = preset_layout(cfg.d_model, d_k);
    if (L.pairs < 1 || L.content_end <= L.content_begin) {
        throw ConfigError("the designed head '" + to_string(cfg.preset) +
                          "' needs d_model >= 10 and d_k >= 3 to hold its position and word-class features; "
                          "make the model wider");
    }
    if (needs_sinusoidal(cfg.preset) && cfg.positional != Positional::Sinusoidal) {
        throw ConfigError("the designed head '" + to_string(cfg.preset) +
                          "' reads token positions from the sinusoidal positional encoding; set positional = "
                          "sinusoidal");
    }
}

void apply_preset_embedding(Mat& table, const std::vector<std::string>& vocab, const Config& cfg) {
    if (cfg.preset == HeadPreset::None) return;
    const PresetLayout L = preset_layout(cfg.d_model, cfg.resolved_d_k());
    for (int v = 0; v < int(table.rows()); ++v) {
        table.row(v).head(2 * L.pairs).setZero();
        table(v, L.bias_dim) = 0.0f;
        const WordClass c = word_class(vocab[std::size_t(v)]);
        table(v, L.adjective_dim) = c == WordClass::Adjective ? 1.0f : 0.0f;
        table(v, L.noun_dim) = c == WordClass::Noun ? 1.0f : 0.0f;
        // The cos partner of the noun pair is left to the word; only the three dims above are read.
    }
}

std::string preset_embedding_note(const Config& cfg) {
    if (cfg.preset == HeadPreset::None) return "";
    const PresetLayout L = preset_layout(cfg.d_model, cfg.resolved_d_k());
    std::ostringstream o;
    o << " Because head " << kPresetHead << " is a designed head (" << to_string(cfg.preset)
      << "), the table reserves a few dimensions: dims 0–" << 2 * L.pairs - 1 << " and " << L.bias_dim
      << " are 0 for every word so that only the positional encoding shows there, dim " << L.adjective_dim
      << " is 1 for the lexicon's adjectives and dim " << L.noun_dim
      << " is 1 for its nouns (e.g. fluffy, blue, verdant / creature, forest). A trained model learns "
         "directions "
         "like these; here they are written by hand so the head's pattern can be read off the weights.";
    return o.str();
}

PresetHead preset_head(const Config& cfg) {
    const int d = cfg.d_model;
    const int d_k = cfg.resolved_d_k();
    const PresetLayout L = preset_layout(d, d_k);
    const int r = L.pairs;
    const double sqrt_dk = std::sqrt(double(d_k));
    // Scores are divided by √d_k later; multiply it in so the designed logit gaps survive.
    const double gap1 = double(r) - pe_pairs_dot(1.0, cfg, r);  // peak minus neighbour, per unit
    PresetHead P;
    P.W_Q = Mat::Zero(d, d_k);  // d_model x d_k
    P.W_K = Mat::Zero(d, d_k);  // d_model x d_k
    std::ostringstream e;

    // R(−1) restricted to the r fast pairs: PE(p−1)ᵀ = R(−1)·PE(p)ᵀ. In row-vector form
    // q = x·W_Q, so W_Q's block is R(−1)ᵀ.
    const Mat R = pe_shift_matrix(-1.0, d, cfg.pe_base).topLeftCorner(2 * r, 2 * r);  // 2r x 2r

    switch (cfg.preset) {
        case HeadPreset::PreviousToken: {
            const double c = kGap / gap1;
            P.W_Q.topLeftCorner(2 * r, 2 * r) = (c * sqrt_dk) * R.transpose();
            P.W_K.topLeftCorner(2 * r, 2 * r).setIdentity();
            e << "Designed head: previous token. W_K copies the " << r << " fastest positional pairs (dims 0–"
              << 2 * r - 1
              << ") into k, so k_s = PE(s). W_Q copies the same dims but first rotates them by R(−1), the "
                 "matrix that "
                 "shifts a sinusoidal position by −1 (PE(p−1)ᵀ = R(−1)·PE(p)ᵀ), and scales by "
              << fmt(c * sqrt_dk)
              << ". So q_p·k_s ∝ PE(p−1)·PE(s) = Σᵢ cos((p−1−s)·ωᵢ), which is largest when s = p−1. "
                 "Embeddings are 0 in those dims, so the word itself does not disturb the pattern. Expect a "
                 "bright "
                 "line just below the diagonal: every token looks at the one before it (token 0 has no "
                 "predecessor "
                 "and spreads its weight).";
            break;
        }
        case HeadPreset::FirstToken: {
            const double c = kGap / gap1;
            for (int i = 0; i < r; ++i) P.W_Q(L.bias_dim, 2 * i + 1) = float(c * sqrt_dk);
            P.W_K.topLeftCorner(2 * r, 2 * r).setIdentity();
            e << "Designed head: first token. W_Q reads only dim " << L.bias_dim
              << " (the slowest positional cosine, ≈ 1 at every position) and writes it where PE(0) has its "
                 "ones, so "
                 "every query is the same vector ≈ PE(0) on the fast positional pairs. W_K copies those "
                 "pairs, so k_s = "
                 "PE(s) and q·k_s ∝ Σᵢ cos(s·ωᵢ), largest at s = 0. Expect a bright first column: every "
                 "token looks at "
                 "the start of the text (real models use such heads as a 'no-op' resting place).";
            break;
        }
        case HeadPreset::SameToken: {
            const int k = std::min(d_k, L.content_end - L.content_begin);
            // Expected |x|² over k dims ≈ 1.5k (embedding 1 + positional 0.5 per dim): aim for a
            // diagonal logit of about kGap + 2.
            const double g = std::sqrt((kGap + 2.0) * sqrt_dk / (1.5 * k));
            for (int c = 0; c < k; ++c) {
                P.W_Q(L.content_begin + c, c) = float(g);
                P.W_K(L.content_begin + c, c) = float(g);
            }
            e << "Designed head: same token. W_Q = W_K: both copy the word's own embedding dims "
              << L.content_begin << "–" << L.content_begin + k - 1 << " (scaled by " << fmt(g)
              << "). Then q_i·k_j ∝ x_i·x_j, and a vector is most similar to itself: |x_i|² is a sum of " << k
              << " squares, while x_i·x_j for a different word is a sum of terms with random signs that "
                 "mostly cancel. "
                 "Expect a bright diagonal, plus bright cells wherever the same word occurs twice.";
            break;
        }
        case HeadPreset::AdjectiveNoun: {
            const double unit = sqrt_dk;
            // Class part: q[2r] = noun(p), k[2r] = adjective(s).
            P.W_Q(L.noun_dim, 2 * r) = float(kClassWeight * unit);
            P.W_K(L.adjective_dim, 2 * r) = 1.0f;
            // Locality part: a soft previous-token preference, so a noun picks the adjectives
            // right before it ("verdant forest") rather than ones earlier in the sentence.
            P.W_Q.topLeftCorner(2 * r, 2 * r) = (kLocalWeight * unit) * R.transpose();
            P.W_K.topLeftCorner(2 * r, 2 * r).setIdentity();
            e << "Designed head: adjective → noun. The lexicon's nouns carry a 1 in dim " << L.noun_dim
              << " and its adjectives a 1 in dim " << L.adjective_dim
              << ". W_Q turns 'I am a noun' into the question "
              << "'is there an adjective?' (q gets " << fmt(kClassWeight)
              << " in one coordinate), and W_K turns 'I am an adjective' into the answer (k gets 1 in the "
                 "same "
                 "coordinate): their product adds "
              << fmt(kClassWeight)
              << " to the score only for noun-query / adjective-key pairs. A weaker previous-token part (the "
                 "R(−1) "
                 "rotation of the positional dims, weight "
              << fmt(kLocalWeight)
              << ") prefers keys just before the query. Expect 'creature' to look at 'fluffy' and 'blue', "
                 "'forest' at "
                 "'verdant'; other words softly look at their predecessor. This is the classic "
                 "adjective→noun example: a "
                 "noun asking "
                 "'is there an adjective in front of me?'.";
            break;
        }
        case HeadPreset::None:
            break;
    }
    e << " (Designed for scaled dot-product scoring at T = 1; other scoring functions and temperatures "
         "change the "
         "picture.)";
    P.explanation = e.str();
    return P;
}

}  // namespace attnviz

// Designed heads ("teaching labs"): instead of random W_Q, W_K, head 0 gets weights built by hand
// so that its attention pattern means something a learner can check: attend to the previous token,
// to the first token, to the same token, or (for nouns) to the adjectives just before them.
//
// How it works. With a preset, the embedding table keeps a few dimensions free of word content so
// that position and word class can be read cleanly by a linear map (real models learn similar
// "reserved" directions during training):
//   dims 0 .. 2r-1     the r fastest sinusoidal PE pairs only (token embeddings are 0 there)
//   dim  bias_dim      cos of the slowest PE pair, ≈ 1 at every position: a constant input
//   dim  adjective_dim 1 for lexicon adjectives, else 0   (sin of the slowest pair, ≈ 0)
//   dim  noun_dim      1 for lexicon nouns, else 0        (sin of the second slowest pair, ≈ 0)
// Everything else keeps the token's random embedding. Other heads stay random, for contrast.
#pragma once

#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/shapes.hpp"
#include "core/word_class.hpp"

namespace attnviz {

/// Class of a word in the built-in lexicon (ASCII case-insensitive); Other when not listed.
WordClass word_class(const std::string& token);
/// The lexicon itself, for display.
const std::vector<std::string>& lexicon_adjectives();
const std::vector<std::string>& lexicon_nouns();

struct PresetLayout {
    int pairs = 0;          // r: PE pairs read for position (dims 0 .. 2r-1)
    int bias_dim = 0;       // ≈ 1 everywhere
    int adjective_dim = 0;  // is-adjective feature
    int noun_dim = 0;       // is-noun feature
    int content_begin = 0;  // [content_begin, content_end): the token's own random embedding
    int content_end = 0;
};

/// Layout for a model width and head width. Only meaningful when preset_supported() is true.
PresetLayout preset_layout(int d_model, int d_k);

/// Throws ConfigError when `cfg.preset` cannot be built for this config (too small, or a preset
/// that reads positions without sinusoidal positional encoding). No-op for HeadPreset::None.
void check_preset(const Config& cfg);

/// The head that gets the designed weights.
inline constexpr int kPresetHead = 0;

/// Rewrites the reserved dimensions of the embedding table (V x d_model) for `cfg.preset`
/// (no-op for None): zero in the position and bias dims, lexicon features in the class dims.
void apply_preset_embedding(Mat& table, const std::vector<std::string>& vocab, const Config& cfg);

struct PresetHead {
    Mat W_Q;                  // d_model x d_k
    Mat W_K;                  // d_model x d_k
    std::string explanation;  // how the weights were built and what pattern to expect
};
/// Designed W_Q, W_K for `cfg.preset` (must not be None; call check_preset first).
PresetHead preset_head(const Config& cfg);

/// Sentence for the embedding stage explaining what the preset changed in the table ("" for None).
std::string preset_embedding_note(const Config& cfg);

}  // namespace attnviz

// The translation task's toy language pair: an English-like source language (subject–verb–object,
// adjectives before their noun) and a target language of its own words (subject–object–verb,
// adjectives after their noun), each source word translated by exactly one target word, so every
// target word has one source word it comes from (its gold alignment). Because verbs move to the end
// and adjectives after their noun, the alignment is not a diagonal:
//
//   source: the big red dog sees a cat .           (D A A N V D N .)
//   target: lo hundo grando roso una kato vidas .  (D N A A D N V .) then </s>
//
// A sentence ends in ".", "!" or "?", kept as it is: the target's last mark too must be read from
// the source (it is no more predictable from the target words than any other word).
//
// Deterministic from a seed. Also the alignment score: the fraction of target words whose strongest
// cross-attention (averaged over heads) falls on their own source word.
//
// Shapes: m source tokens, n decoder positions (the decoder's input is the start token and the
// target's words but the last; row t predicts target word t).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tasks.hpp"
#include "core/train.hpp"

namespace attnviz {

/// The word lists of the pair, each source word i of a class translated by target word i of it.
struct TranslateLexicon {
    std::vector<std::string> src_det, src_adj, src_noun, src_verb;
    std::vector<std::string> tgt_det, tgt_adj, tgt_noun, tgt_verb;
    std::vector<std::string> stops = {".", "!", "?"};  // a sentence's end mark, the same in both languages
};
const TranslateLexicon& translate_lexicon();  // (never destroyed)

/// The vocabulary shared by both languages (one embedding, as T5's): "<pad>" (0: also the decoder's
/// start token), "</s>" (1: the target's end), "<unk>" (2), the end marks ".", "!", "?", then the
/// source words and the target words, each but the specials and the marks with its leading space as
/// it appears in text (" dog").
const std::vector<std::string>& translate_tokens();
inline constexpr int kTranslatePad = 0, kTranslateEos = 1, kTranslateUnk = 2;
/// A word's id (without or with its leading space), or kTranslateUnk.
int translate_id(const std::string& word);

/// One sentence pair: source and target words and, for each target word, the position of the source
/// word it translates.
struct SentencePair {
    std::vector<std::string> source, target;  // target without </s>
    std::vector<int> alignment;               // [target.size()] source positions
};

/// A sentence with `adjectives` adjectives in all (0–4, at most 2 per noun), its words drawn from
/// `seed`: subject and object differ, as do their determiners and the adjectives, so each source
/// word occurs once in its sentence.
SentencePair generate_sentence_pair(std::uint64_t seed, int adjectives);

/// The pair of a source sentence (words of the source language, an end mark last), translated by the rules;
/// throws ConfigError naming the first word or place that breaks them.
SentencePair translate_sentence(const std::vector<std::string>& source);

/// A batch of B pairs, all with `adjectives` adjectives (0–4), so every source has the same m = 6 +
/// adjectives words (no padding, which the encoder would attend to); the decoder's rows are padded to
/// `n` ≥ m + 1 (causal: padding after the end changes no earlier row): batch.source [B, m] the source
/// ids; batch.inputs [B, n] the decoder's input (start token <pad>, the target's words, then <pad>);
/// batch.targets [B, n] the target's words, </s>, then −1 (not scored). alignment [B][n]: the source
/// position of each row's target word (−1 for </s> and padding).
struct TranslateBatch {
    Batch batch;
    std::vector<std::vector<int>> alignment;
};
TranslateBatch translate_batch(int B, int adjectives, std::uint64_t seed, int n = 0);  // n 0: m + 1

/// The alignment score of one sequence: `heads` [h] cross-attention weights [n, m] (one layer's
/// heads), averaged over the heads; the share of the rows with a gold source position (gold[t] ≥ 0)
/// whose largest averaged weight falls on it (ties: the first largest). `rows` (optional) receives
/// how many rows were counted. Pure.
double alignment_score(const std::vector<MatT<float>>& heads, const std::vector<int>& gold, int* rows = nullptr);

/// The score of a single head (the per-head curve of the lab): the same with `heads` = {P}.
double head_alignment_score(const MatT<float>& P, const std::vector<int>& gold, int* rows = nullptr);

/// The translate task (an encoder–decoder task: batches carry their source): training batches of
/// 0–3 adjectives (drawn per batch from its seed), decoder rows padded to the context of 10; held-out
/// batches (held-out loss, probe) of 3 adjectives, the longest, from seeds the training batches never
/// use. Its figure "alignment" (every evaluation): model_alignment over `probe` pairs.
Task translate_task(int probe = 32);

/// The alignment score of a model (an encoder–decoder of train.hpp), its last decoder layer's, over
/// `pairs` held-out pairs drawn from `seed`, a quarter of them with each number of adjectives 0–3.
double model_alignment(const Params<float>& params, int pairs, std::uint64_t seed);

}  // namespace attnviz

// What kind of head this is, on the text in front of it: each head type's score from the head's
// attention weights on the current tokens, and a label (the best type that clearly beats a head that
// spreads its attention evenly, else "broad"). previous-token, induction and first-token are
// core/tasks.hpp's pattern_scores, the training scores; adjective→noun reads word classes per token
// position, as does pronoun→antecedent (io/story_grammar.hpp gives them from a model's story_grammar.json).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/shapes.hpp"
#include "core/word_class.hpp"

namespace attnviz {

enum class HeadType {
    PreviousToken,
    Induction,
    AdjectiveNoun,
    PronounAntecedent,
    FirstToken,
    Self,
    Separator,
    Broad
};
constexpr int kScoredHeadTypes = 7;  // every type but Broad has a score

const char* head_type_name(HeadType type);   // "previous-token", "induction", "adjective→noun", ...
const char* head_type_short(HeadType type);  // "prev", "induct", "noun→adj", "pron→noun", "first", ...
const char* head_type_explanation(HeadType type);  // one sentence for a tooltip

struct HeadTypeScore {
    double score = 0;      // in [0, 1]: mean over the positions where it is defined
    bool defined = false;  // false: nothing on this text defines it (no repeat; no noun after adjectives)
    double uniform = 0;    // the score of a head that spreads evenly over the allowed keys, same text
};

struct HeadLabel {
    HeadType type = HeadType::Broad;
    double score = 0;  // the label's score (Broad: the best type's score, for the tooltip)
    std::array<HeadTypeScore, kScoredHeadTypes> scores{};  // indexed by int(HeadType)
};

struct HeadLabelRule {
    double threshold = 0.4;  // a label's score is at least this
    double lift = 1.5;       // ... and this many times the even-spread head's score on the same text
};

/// Mean over nouns (and names) t that follow adjectives of the attention t gives its own adjectives: the
/// run of adjective positions right before t (determiners between are not skipped: "the fluffy
/// blue creature" has two). `count` receives how many nouns defined it. P: [n, n], classes: [n].
double adjective_noun_score(const Mat& P, const std::vector<WordClass>& classes, int* count);

/// Mean over pronouns t that follow a noun or name of the attention t gives to every earlier noun and
/// name (the words it could stand for: "she" at "Mia"). `count` receives how many pronouns defined it.
double pronoun_antecedent_score(const Mat& P, const std::vector<WordClass>& classes, int* count);

/// Mean over t ≥ 1 of P(t, t) (row 0 may only attend to itself).
double self_score(const Mat& P);

/// Mean over the rows of the attention on separator positions (BERT's [SEP], RoBERTa's </s>: Clark et
/// al. 2019 found many BERT heads park most of their weight there). `count` receives how many rows
/// defined it (rows that may see a separator). separators: [n], or empty (undefined).
double separator_score(const Mat& P, const std::vector<bool>& separators, int* count);

/// P: one head's attention weights [n, n] (rows: queries, causal or not); ids: [n] token ids (equal ids =
/// the same token); classes: [n] word classes, or empty when the model has no grammar (adjective→noun
/// then undefined); separators: [n] the [SEP] / </s> positions of an encoder's input, or empty.
HeadLabel classify_head(const Mat& P, const std::vector<int>& ids, const std::vector<WordClass>& classes,
                        const HeadLabelRule& rule = {}, const std::vector<bool>& separators = {});

/// Ids for token strings: equal strings get equal ids (for traces that keep only the tokens' text).
std::vector<int> ids_of_tokens(const std::vector<std::string>& tokens);

}  // namespace attnviz

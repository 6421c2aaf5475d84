// The story language: a small English-like language of short stories, its generator, its grammar
// checker and the annotations the adjective→noun and pronoun→antecedent head scores read.
//
// A story is sentences "Subject Verb [Preposition] Place .":
//   Subject := Det Adj{0,2} CreatureNoun | Person | Person and Person | it | they | he | she
//   Person  := FirstName Surname         (a first name keeps its surname for the whole story)
//   Place   := Det Adj{0,2} PlaceNoun
// Meaning that spans words (what makes attention worth it):
//   - every adjective is of one of four kinds (soft, colour, size, mood) and every verb fits two
//     kinds: a subject's verb must fit the kinds of ALL its adjectives ("a fluffy blue creature"
//     is soft and colour: roamed, wandered or strolled), so predicting the verb after the noun needs
//     every adjective, not only the previous word;
//   - each first name has a kind of its own, and a pair "A and B" has both kinds;
//   - a pronoun stands for the most recent creature noun (it), female name (she), male name (he) or
//     pair of names (they), and its verb must fit that antecedent's kinds: predicting it needs the
//     antecedent;
//   - a character's surname is drawn per story, so a repeated first name predicts its surname only
//     by induction.
// Verbs that take their place directly ("roamed the verdant forest") never take a preposition,
// the others always do ("dozed under the tiny hill").
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tasks.hpp"

namespace attnviz {

/// Which words are which: enough to annotate any text of the language (the app reads these lists
/// from a model folder's story_grammar.json).
struct StoryWords {
    std::vector<std::string> determiners, adjectives, creature_nouns, place_nouns, verbs, prepositions,
        female_names, male_names, surnames;
    std::string it = "it", they = "they", he = "he", she = "she", conjunction = "and", stop = ".";
};

/// The whole grammar: the word classes plus the kinds the agreement rules use.
struct StoryGrammar {
    StoryWords words;
    std::vector<std::string> kind_names;         // [4] "soft", "colour", "size", "mood"
    std::vector<int> adjective_kind;             // [adjectives]
    std::vector<std::array<int, 2>> verb_kinds;  // [verbs] the two kinds a verb fits
    std::vector<bool> verb_direct;               // [verbs] takes its place without a preposition
    std::vector<int> female_kind, male_kind;     // [names]
};

/// The built-in grammar (never destroyed).
const StoryGrammar& story_grammar();

/// Every word of the language in id order: "." first, then " and", the determiners, adjectives,
/// creature nouns, place nouns, verbs, prepositions, pronouns, names and surnames, each (but ".")
/// with its leading space as it appears in text (" fluffy").
const std::vector<std::string>& story_tokens();

/// One story of at least `min_words` words (whole sentences), as words without spaces.
std::vector<std::string> generate_story(std::uint64_t seed, int min_words);

/// A sentence of a checked text: words [begin, end) (the "." included), and whether it is valid.
struct StorySentence {
    int begin = 0, end = 0;
    bool valid = false;
};
/// Splits `words` into sentences at "." (a last one without "." is left out) and checks each in
/// order, a pronoun or a name against the sentences before it.
std::vector<StorySentence> check_story(const std::vector<std::string>& words,
                                       const StoryGrammar& grammar = story_grammar());

/// The nouns with their own adjectives and the pronouns with their antecedents in any sequence of
/// words (leading spaces ignored; unknown words are skipped): a noun's adjectives are the adjectives
/// right before it; a pronoun's antecedent is the most recent creature (it: its adjectives and noun,
/// "fluffy blue creature"), female name and its surname (she), male name and surname (he), or the
/// two names and surnames of the most recent "A and B" (they).
SequenceAnnotations annotate_story(const std::vector<std::string>& words, const StoryWords& lexicon);

/// The story task: stories of `context` + 1 tokens (story_tokens ids); every position scored.
Task story_task(int context);

/// Fraction of the valid sentences a model writes: from `prompts` held-out story openings (their
/// first sentence), each continued greedily (temperature 0) or sampled at `temperature` with
/// `seed`, up to the model's context; the prompt's own sentences and the last unfinished one are not
/// counted.
struct StoryWriting {
    int sentences = 0, valid = 0;
    double fraction() const { return sentences ? double(valid) / double(sentences) : 0.0; }
};
StoryWriting story_writing(const Params<float>& params, int prompts, double temperature, std::uint64_t seed);

}  // namespace attnviz

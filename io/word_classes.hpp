// Word classes for the head labels' adjective→noun score (core/head_types.hpp): which token positions
// hold adjectives, nouns, names and pronouns, from a model folder's story_grammar.json as
// io/story_grammar.hpp reads it (the one reader of that file).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "core/head_types.hpp"
#include "core/story.hpp"

namespace attnviz {

/// Word → class (words compared after word_key()).
struct WordClassTable {
    std::unordered_map<std::string, WordClass> words;
    bool empty() const { return words.empty(); }
};

/// A table from lists of words (a later list wins for a word in two).
WordClassTable word_class_table(const std::vector<std::string>& adjectives,
                                const std::vector<std::string>& nouns, const std::vector<std::string>& names,
                                const std::vector<std::string>& pronouns);

/// The table of a story grammar's words: its adjectives, nouns (creature and place), first names and
/// pronouns.
WordClassTable word_class_table(const StoryWords& words);

/// The key a token or word is looked up by: its text without the space markers tokenizers put on it
/// (spaces, "Ġ", "▁", "·"), ASCII lower-cased.
std::string word_key(const std::string& token);

/// The class of each token: [tokens.size()] (Other for a token that is no word of the table).
std::vector<WordClass> word_classes_of(const WordClassTable& table, const std::vector<std::string>& tokens);

}  // namespace attnviz

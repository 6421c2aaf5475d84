// The word class of a token: the designed adjective head's built-in lexicon (core/presets.hpp) and a
// story model's grammar (io/word_classes.hpp) both say it, the head labels (core/head_types.hpp) read it.
#pragma once

namespace attnviz {

/// Other: not a listed word (or no word list at all).
enum class WordClass : unsigned char { Other, Adjective, Noun, Name, Pronoun };

}  // namespace attnviz

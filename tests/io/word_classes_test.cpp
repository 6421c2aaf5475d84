// Word classes from a story grammar (the head labels' adjective→noun score): tokens with their
// tokenizers' space markers find their word. (A broken story_grammar.json: checkpoint_files_test.)
#include "io/word_classes.hpp"

#include <gtest/gtest.h>

#include "io/story_grammar.hpp"

namespace attnviz {
namespace {

TEST(WordClasses, TokensFindTheirWords) {
    const WordClassTable t = word_class_table(parse_story_grammar(
        R"({"adjectives": ["fluffy", "blue", "verdant"], "nouns": ["creature", "forest"],
            "names": ["Mia"], "pronouns": ["it", "they"], "verbs": ["roamed"]})",
        "story_grammar.json"));
    const std::vector<WordClass> c = word_classes_of(
        t, {"a", " fluffy", "Ġblue", "▁creature", " roamed", "the", "·verdant", "forest", " Mia", " it"});
    using W = WordClass;
    EXPECT_EQ(c, (std::vector<W>{W::Other, W::Adjective, W::Adjective, W::Noun, W::Other, W::Other,
                                 W::Adjective, W::Noun, W::Name, W::Pronoun}));
    EXPECT_EQ(word_key(" The "), "the");
}

// The finer lists of attnviz's own grammars count too: creature and place nouns are nouns, first names
// of either gender are names.
TEST(WordClasses, FinerListsOfTheStoryGrammar) {
    const WordClassTable t = word_class_table(parse_story_grammar(
        R"({"adjectives": ["red"], "nouns": [], "names": [], "pronouns": ["she"],
            "creature_nouns": ["fox"], "place_nouns": ["forest"], "female_names": ["Mia"],
            "male_names": ["Tom"]})"));
    using W = WordClass;
    EXPECT_EQ(word_classes_of(t, {" red", " fox", " forest", " Mia", " Tom", " she", " it"}),
              (std::vector<W>{W::Adjective, W::Noun, W::Noun, W::Name, W::Name, W::Pronoun, W::Other}));
}

}  // namespace
}  // namespace attnviz

// Word classes from a story_grammar.json (the head labels' adjective→noun score): tokens with their
// tokenizers' space markers find their word; a broken grammar is one line naming the file and key.
#include "io/word_classes.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace attnviz {
namespace {

TEST(WordClasses, TokensFindTheirWords) {
    const WordClassTable t = parse_word_classes(
        R"({"adjectives": ["fluffy", "blue", "verdant"], "nouns": ["creature", "forest"],
            "names": ["Mia"], "pronouns": ["it", "they"], "verbs": ["roamed"]})",
        "story_grammar.json");
    const std::vector<WordClass> c = word_classes_of(
        t, {"a", " fluffy", "Ġblue", "▁creature", " roamed", "the", "·verdant", "forest", " Mia", " it"});
    using W = WordClass;
    EXPECT_EQ(c, (std::vector<W>{W::Other, W::Adjective, W::Adjective, W::Noun, W::Other, W::Other,
                                 W::Adjective, W::Noun, W::Name, W::Pronoun}));
    EXPECT_EQ(word_key(" The "), "the");
}

TEST(WordClasses, BrokenGrammarIsOneLine) {
    for (const char* bad : {"[1, 2]", R"({"nouns": "cat"})", R"({"nouns": ["cat", 3]})", "{", ""}) {
        try {
            parse_word_classes(bad, "story_grammar.json");
            ADD_FAILURE() << "accepted " << bad;
        } catch (const Error& e) {
            const std::string m = e.what();
            EXPECT_EQ(m.find('\n'), std::string::npos) << m;
            EXPECT_EQ(m.rfind("story_grammar.json", 0), 0u) << m;
        }
    }
    EXPECT_TRUE(parse_word_classes("{}", "g.json").empty());
}

}  // namespace
}  // namespace attnviz

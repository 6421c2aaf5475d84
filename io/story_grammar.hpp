// A model folder's story_grammar.json (written beside a checkpoint of the story task, core/story.hpp):
// a JSON object of word lists, each the words as they appear in text: "adjectives", "nouns", "names"
// and "pronouns" always, and "determiners", "creature_nouns", "place_nouns", "verbs", "prepositions",
// "female_names", "male_names", "surnames", "conjunctions" from attnviz. The app reads it to know
// which words of a text are nouns, adjectives, names and pronouns (the annotations of
// core/story.hpp's annotate_story).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/story.hpp"

namespace attnviz {

/// Largest story_grammar.json read: 1 MiB.
inline constexpr std::size_t kMaxStoryGrammarBytes = std::size_t{1} << 20;

/// The text of story_grammar.json for these (key, words) lists.
std::string story_grammar_json(const std::vector<std::pair<std::string, std::vector<std::string>>>& lists);
/// The word classes from the text of a story_grammar.json (`name` names it in messages). Throws
/// attnviz::Error, one line, for anything but an object of lists of strings with the four keys.
/// A file without the finer lists (female_names, ...) still gives the four: every noun then counts as
/// a creature noun and every name as a first name of both genders.
StoryWords parse_story_grammar(const std::string& text, const std::string& name = "story_grammar.json");
/// DIR/story_grammar.json when the folder has one (nullopt when it has none); a broken file is
/// reported in `problem` (one line) and gives nullopt, so the model still opens.
std::optional<StoryWords> read_story_grammar(const std::string& dir, std::string* problem = nullptr);

}  // namespace attnviz

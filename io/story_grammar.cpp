// story_grammar.json: see io/story_grammar.hpp.
#include "io/story_grammar.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json_limits.hpp"
#include "io/platform.hpp"

namespace attnviz {

std::string story_grammar_json(const std::vector<std::pair<std::string, std::vector<std::string>>>& lists) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (const auto& [key, words] : lists) j[key] = words;
    return j.dump(1) + "\n";
}

StoryWords parse_story_grammar(const std::string& text, const std::string& name) {
    const nlohmann::json j = parse_json_limited(text, name, "the file");
    if (!j.is_object()) throw Error(name + ": not a JSON object of word lists");
    auto list = [&](const char* key, bool required) {
        std::vector<std::string> out;
        const auto it = j.find(key);
        if (it == j.end()) {
            if (required) throw Error(name + ": no \"" + key + "\" list");
            return out;
        }
        if (!it->is_array()) throw Error(name + ": \"" + key + "\" is not a list of words");
        for (const auto& w : *it) {
            if (!w.is_string() || w.get_ref<const std::string&>().empty())
                throw Error(name + ": \"" + key + "\" holds something other than a word");
            out.push_back(w.get<std::string>());
        }
        return out;
    };
    StoryWords w;
    const std::vector<std::string> nouns = list("nouns", true), names = list("names", true),
                                   pronouns = list("pronouns", true);
    w.adjectives = list("adjectives", true);
    w.determiners = list("determiners", false);
    w.verbs = list("verbs", false);
    w.prepositions = list("prepositions", false);
    w.creature_nouns = list("creature_nouns", false);
    w.place_nouns = list("place_nouns", false);
    if (w.creature_nouns.empty() && w.place_nouns.empty()) w.creature_nouns = nouns;
    w.female_names = list("female_names", false);
    w.male_names = list("male_names", false);
    w.surnames = list("surnames", false);
    if (w.female_names.empty() && w.male_names.empty()) w.female_names = w.male_names = names;
    // The pronouns keep their roles by their English spelling; a list without one leaves it unused.
    auto has = [&](const char* p) {
        for (const std::string& s : pronouns)
            if (s == p) return true;
        return false;
    };
    if (!has("it")) w.it = "";
    if (!has("they")) w.they = "";
    if (!has("he")) w.he = "";
    if (!has("she")) w.she = "";
    const std::vector<std::string> conj = list("conjunctions", false);
    if (!conj.empty()) w.conjunction = conj.front();
    return w;
}

std::optional<StoryWords> read_story_grammar(const std::string& dir, std::string* problem) {
    const std::string path = dir + "/story_grammar.json";
    if (!platform::exists(path)) return std::nullopt;  // no grammar: not a story model
    try {
        return parse_story_grammar(read_file(path, kMaxStoryGrammarBytes), path);
    } catch (const Error& e) {
        if (problem) *problem = e.what();
        return std::nullopt;
    }
}

}  // namespace attnviz

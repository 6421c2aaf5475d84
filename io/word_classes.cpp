#include "io/word_classes.hpp"

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json_limits.hpp"

namespace attnviz {

std::string word_key(const std::string& token) {
    std::string s = token;
    bool changed = true;
    while (changed && !s.empty()) {
        changed = false;
        for (const char* marker : {" ", "\t", "\n", "Ġ", "▁", "·", "Ċ"}) {
            const std::string m(marker);
            if (s.size() >= m.size() && s.compare(0, m.size(), m) == 0) {
                s.erase(0, m.size());
                changed = true;
            }
            if (s.size() >= m.size() && s.compare(s.size() - m.size(), m.size(), m) == 0) {
                s.erase(s.size() - m.size());
                changed = true;
            }
        }
    }
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    return s;
}

WordClassTable word_class_table(const std::vector<std::string>& adjectives,
                                const std::vector<std::string>& nouns, const std::vector<std::string>& names,
                                const std::vector<std::string>& pronouns) {
    WordClassTable t;
    const std::pair<const std::vector<std::string>*, WordClass> lists[] = {
        {&adjectives, WordClass::Adjective},
        {&nouns, WordClass::Noun},
        {&names, WordClass::Name},
        {&pronouns, WordClass::Pronoun}};
    for (const auto& [words, cls] : lists)
        for (const std::string& w : *words) {
            const std::string k = word_key(w);
            if (!k.empty()) t.words[k] = cls;
        }
    return t;
}

WordClassTable parse_word_classes(const std::string& json_text, const std::string& name) {
    const nlohmann::json j = parse_json_limited(json_text, name, "the grammar", nullptr, 1'000'000);
    if (!j.is_object()) throw Error(name + ": the grammar is not a JSON object");
    std::vector<std::string> lists[4];
    const char* keys[4] = {"adjectives", "nouns", "names", "pronouns"};
    for (int k = 0; k < 4; ++k) {
        const auto it = j.find(keys[k]);
        if (it == j.end()) continue;
        if (!it->is_array()) throw Error(name + ": \"" + keys[k] + "\" is not a list of words");
        for (const auto& w : *it) {
            if (!w.is_string()) throw Error(name + ": \"" + keys[k] + "\" holds a value that is not a word");
            lists[k].push_back(w.get<std::string>());
        }
    }
    return word_class_table(lists[0], lists[1], lists[2], lists[3]);
}

WordClassTable read_word_classes(const std::string& path) {
    return parse_word_classes(read_file(path, std::uint64_t(4) << 20), path);
}

std::vector<WordClass> word_classes_of(const WordClassTable& table, const std::vector<std::string>& tokens) {
    std::vector<WordClass> out(tokens.size(), WordClass::Other);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const auto it = table.words.find(word_key(tokens[i]));
        if (it != table.words.end()) out[i] = it->second;
    }
    return out;
}

}  // namespace attnviz

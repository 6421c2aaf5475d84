#include "io/word_classes.hpp"

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

WordClassTable word_class_table(const StoryWords& w) {
    std::vector<std::string> nouns = w.creature_nouns, names = w.female_names, pronouns;
    nouns.insert(nouns.end(), w.place_nouns.begin(), w.place_nouns.end());
    names.insert(names.end(), w.male_names.begin(), w.male_names.end());
    for (const std::string* p : {&w.it, &w.they, &w.he, &w.she})
        if (!p->empty()) pronouns.push_back(*p);
    return word_class_table(w.adjectives, nouns, names, pronouns);
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

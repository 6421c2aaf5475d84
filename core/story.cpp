// The story language: see core/story.hpp.
#include "core/story.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <unordered_map>

#include "core/error.hpp"

namespace attnviz {

namespace {

constexpr int kSoft = 0, kColour = 1, kSize = 2, kMood = 3;

StoryGrammar make_grammar() {
    StoryGrammar g;
    StoryWords& w = g.words;
    g.kind_names = {"soft", "colour", "size", "mood"};
    w.determiners = {"a", "the", "one", "that"};
    const std::vector<std::pair<int, std::vector<std::string>>> adjectives = {
        {kSoft, {"fluffy", "furry", "woolly", "silky", "fuzzy", "downy", "velvety", "feathery"}},
        {kColour, {"blue", "red", "golden", "silver", "verdant", "purple", "amber", "crimson"}},
        {kSize, {"tiny", "huge", "little", "giant", "small", "enormous", "slender", "mighty"}},
        {kMood, {"sleepy", "brave", "shy", "happy", "gentle", "curious", "grumpy", "proud"}},
    };
    for (const auto& [kind, words] : adjectives)
        for (const std::string& a : words) {
            w.adjectives.push_back(a);
            g.adjective_kind.push_back(kind);
        }
    w.creature_nouns = {"creature", "fox",    "rabbit", "dragon", "owl",    "cat",      "bear",
                        "wolf",     "mouse",  "deer",   "otter",  "badger", "hedgehog", "squirrel",
                        "turtle",   "frog",   "lion",   "tiger",  "goat",   "horse",    "duck",
                        "swan",     "beetle", "snail",  "lamb",   "pony"};
    w.place_nouns = {"forest", "river",   "meadow",   "hill",  "cave",  "lake",   "valley", "garden",
                     "field",  "village", "mountain", "beach", "marsh", "castle", "bridge", "island"};
    struct Verb {
        const char* word;
        int a, b;
        bool direct;
    };
    const Verb verbs[] = {
        {"roamed", kSoft, kColour, true},     {"wandered", kSoft, kColour, false},
        {"strolled", kSoft, kColour, false},  {"explored", kSoft, kSize, true},
        {"crept", kSoft, kSize, false},       {"tumbled", kSoft, kSize, false},
        {"napped", kSoft, kMood, false},      {"dozed", kSoft, kMood, false},
        {"rested", kSoft, kMood, false},      {"crossed", kColour, kSize, true},
        {"flew", kColour, kSize, false},      {"glided", kColour, kSize, false},
        {"danced", kColour, kMood, false},    {"sang", kColour, kMood, false},
        {"shimmered", kColour, kMood, false}, {"climbed", kSize, kMood, true},
        {"marched", kSize, kMood, false},     {"stomped", kSize, kMood, false},
    };
    for (const Verb& v : verbs) {
        w.verbs.push_back(v.word);
        g.verb_kinds.push_back({v.a, v.b});
        g.verb_direct.push_back(v.direct);
    }
    w.prepositions = {"in", "through", "across", "near", "under", "over", "into", "beside"};
    w.female_names = {"Mia", "Lily", "Emma", "Zoe", "Ava", "Nora", "Ruby", "Ella"};
    w.male_names = {"Leo", "Sam", "Max", "Finn", "Owen", "Jack", "Theo", "Ben"};
    g.female_kind = g.male_kind = {kSoft, kSoft, kColour, kColour, kSize, kSize, kMood, kMood};
    w.surnames = {"Storm", "Brook", "Stone", "Wood", "Frost", "Vale",
                  "Reed",  "Finch", "Moss",  "Ash",  "Gray",  "Fern"};
    return g;
}

// The word classes of a text's words, looked up once.
enum class Cls {
    None,
    Det,
    Adj,
    Creature,
    Place,
    Verb,
    Prep,
    Female,
    Male,
    Surname,
    It,
    They,
    He,
    She,
    And,
    Stop
};

struct TaggedWord {
    Cls cls = Cls::None;
    int index = -1;  // within its list
};

struct Classifier {
    std::unordered_map<std::string, TaggedWord> map;
    explicit Classifier(const StoryWords& w) {
        auto add = [&](const std::vector<std::string>& list, Cls c) {
            for (std::size_t i = 0; i < list.size(); ++i) map.emplace(list[i], TaggedWord{c, int(i)});
        };
        add(w.determiners, Cls::Det);
        add(w.adjectives, Cls::Adj);
        add(w.creature_nouns, Cls::Creature);
        add(w.place_nouns, Cls::Place);
        add(w.verbs, Cls::Verb);
        add(w.prepositions, Cls::Prep);
        add(w.female_names, Cls::Female);
        add(w.male_names, Cls::Male);
        add(w.surnames, Cls::Surname);
        const std::pair<const std::string*, Cls> single[] = {
            {&w.it, Cls::It},   {&w.they, Cls::They},       {&w.he, Cls::He},
            {&w.she, Cls::She}, {&w.conjunction, Cls::And}, {&w.stop, Cls::Stop}};
        for (const auto& [word, c] : single)
            if (!word->empty()) map.emplace(*word, TaggedWord{c, 0});
    }
    TaggedWord operator()(const std::string& word) const {
        std::size_t s = 0;
        while (s < word.size() && word[s] == ' ') ++s;
        const auto it = map.find(s ? word.substr(s) : word);
        return it == map.end() ? TaggedWord{} : it->second;
    }
};

// A bit mask of kinds (bit k = kind k).
using Kinds = unsigned;

bool verb_fits(const StoryGrammar& g, int verb, Kinds kinds) {
    const Kinds fits =
        (1u << g.verb_kinds[std::size_t(verb)][0]) | (1u << g.verb_kinds[std::size_t(verb)][1]);
    return (kinds & ~fits) == 0;
}

double story_uniform(std::mt19937_64& rng) {
    return double(rng() >> 11) * (1.0 / 9007199254740992.0);  // the same on every platform
}

int draw_index(std::mt19937_64& rng, int n) {
    return int(story_uniform(rng) * n);
}

}  // namespace

const StoryGrammar& story_grammar() {
    static const StoryGrammar& g = *new StoryGrammar(make_grammar());
    return g;
}

const std::vector<std::string>& story_tokens() {
    static const std::vector<std::string>& tokens = *new std::vector<std::string>([] {
        const StoryWords& w = story_grammar().words;
        std::vector<std::string> t = {w.stop, " " + w.conjunction};
        for (const auto* list :
             {&w.determiners, &w.adjectives, &w.creature_nouns, &w.place_nouns, &w.verbs, &w.prepositions})
            for (const std::string& s : *list) t.push_back(" " + s);
        for (const std::string* p : {&w.it, &w.they, &w.he, &w.she}) t.push_back(" " + *p);
        for (const auto* list : {&w.female_names, &w.male_names, &w.surnames})
            for (const std::string& s : *list) t.push_back(" " + s);
        return t;
    }());
    return tokens;
}

std::vector<std::string> generate_story(std::uint64_t seed, int min_words) {
    const StoryGrammar& g = story_grammar();
    const StoryWords& w = g.words;
    std::mt19937_64 rng(seed);
    std::vector<std::string> out;
    // The story's three characters: distinct first names (female or male), each with a surname.
    struct Person {
        bool female;
        int name, surname;
        Kinds kinds;
    };
    std::vector<Person> people;
    while (people.size() < 3) {
        Person p{draw_index(rng, 2) == 0, draw_index(rng, 8), draw_index(rng, int(w.surnames.size())), 0};
        bool taken = false;
        for (const Person& q : people) taken = taken || (q.female == p.female && q.name == p.name);
        if (taken) continue;
        p.kinds = 1u << (p.female ? g.female_kind : g.male_kind)[std::size_t(p.name)];
        people.push_back(p);
    }
    // What the pronouns stand for (-1: nothing yet) and the last creature's kinds.
    int last_female = -1, last_male = -1, pair_a = -1, pair_b = -1;
    bool has_creature = false;
    Kinds creature_kinds = 0;
    auto say_person = [&](int i) {
        const Person& p = people[std::size_t(i)];
        out.push_back((p.female ? w.female_names : w.male_names)[std::size_t(p.name)]);
        out.push_back(w.surnames[std::size_t(p.surname)]);
        (p.female ? last_female : last_male) = i;
    };
    auto noun_phrase = [&](const std::vector<std::string>& nouns, const double adj_odds[2]) {
        out.push_back(w.determiners[std::size_t(draw_index(rng, int(w.determiners.size())))]);
        const double u = story_uniform(rng);
        const int n_adj = u < adj_odds[0] ? 0 : u < adj_odds[0] + adj_odds[1] ? 1 : 2;
        Kinds kinds = 0;
        for (int k = 0; k < n_adj; ++k) {
            const int a = draw_index(rng, int(w.adjectives.size()));
            out.push_back(w.adjectives[std::size_t(a)]);
            kinds |= 1u << g.adjective_kind[std::size_t(a)];
        }
        out.push_back(nouns[std::size_t(draw_index(rng, int(nouns.size())))]);
        return kinds;
    };
    while (int(out.size()) < min_words) {
        Kinds kinds = 0;
        const double u = story_uniform(rng);
        std::vector<int> pronouns;  // 0 it, 1 they, 2 he, 3 she: those with an antecedent
        if (has_creature) pronouns.push_back(0);
        if (pair_a >= 0) pronouns.push_back(1);
        if (last_male >= 0) pronouns.push_back(2);
        if (last_female >= 0) pronouns.push_back(3);
        if (u < 0.35) {  // a new creature
            static const double odds[2] = {0.1, 0.35};
            kinds = creature_kinds = noun_phrase(w.creature_nouns, odds);
            has_creature = true;
        } else if (u < 0.7 && !pronouns.empty()) {
            switch (pronouns[std::size_t(draw_index(rng, int(pronouns.size())))]) {
                case 0:
                    out.push_back(w.it);
                    kinds = creature_kinds;
                    break;
                case 1:
                    out.push_back(w.they);
                    kinds = people[std::size_t(pair_a)].kinds | people[std::size_t(pair_b)].kinds;
                    break;
                case 2:
                    out.push_back(w.he);
                    kinds = people[std::size_t(last_male)].kinds;
                    break;
                default:
                    out.push_back(w.she);
                    kinds = people[std::size_t(last_female)].kinds;
                    break;
            }
        } else if (u < 0.8) {  // two characters
            const int a = draw_index(rng, 3), b = (a + 1 + draw_index(rng, 2)) % 3;
            say_person(a);
            out.push_back(w.conjunction);
            say_person(b);
            pair_a = a;
            pair_b = b;
            kinds = people[std::size_t(a)].kinds | people[std::size_t(b)].kinds;
        } else {
            const int a = draw_index(rng, 3);
            say_person(a);
            kinds = people[std::size_t(a)].kinds;
        }
        std::vector<int> fitting;
        for (int v = 0; v < int(w.verbs.size()); ++v)
            if (verb_fits(g, v, kinds)) fitting.push_back(v);
        const int verb = fitting[std::size_t(draw_index(rng, int(fitting.size())))];
        out.push_back(w.verbs[std::size_t(verb)]);
        if (!g.verb_direct[std::size_t(verb)])
            out.push_back(w.prepositions[std::size_t(draw_index(rng, int(w.prepositions.size())))]);
        static const double place_odds[2] = {0.92, 0.08};  // places seldom have adjectives
        noun_phrase(w.place_nouns, place_odds);
        out.push_back(w.stop);
    }
    return out;
}

std::vector<StorySentence> check_story(const std::vector<std::string>& words, const StoryGrammar& g) {
    const Classifier classify(g.words);
    std::vector<StorySentence> out;
    // The story so far (from valid sentences): surnames of first names, and what pronouns stand for.
    std::map<std::pair<bool, int>, int> surname;  // (female, name) -> surname
    Kinds last_female = 0, last_male = 0, last_pair = 0, last_creature = 0;
    bool has_female = false, has_male = false, has_pair = false, has_creature = false;
    int begin = 0;
    for (int end = 0; end < int(words.size()); ++end) {
        if (classify(words[std::size_t(end)]).cls != Cls::Stop) continue;
        StorySentence s;
        s.begin = begin;
        s.end = end + 1;
        begin = end + 1;
        std::vector<TaggedWord> c;
        for (int i = s.begin; i < s.end; ++i) c.push_back(classify(words[std::size_t(i)]));
        std::size_t i = 0;
        auto at = [&](std::size_t k) { return k < c.size() ? c[k].cls : Cls::None; };
        // Proposed updates, applied only when the sentence is valid.
        std::map<std::pair<bool, int>, int> names;
        Kinds kinds = 0;
        bool ok = true;
        int persons = 0;
        Kinds female = 0, male = 0, pair = 0, creature = 0;
        bool new_female = false, new_male = false, new_pair = false, new_creature = false;
        auto person = [&]() {
            const bool fem = at(i) == Cls::Female;
            if ((!fem && at(i) != Cls::Male) || at(i + 1) != Cls::Surname) return false;
            const std::pair<bool, int> key{fem, c[i].index};
            const int sn = c[i + 1].index;
            auto known = surname.find(key);
            if (known != surname.end() && known->second != sn) return false;
            auto here = names.find(key);
            if (here != names.end() && here->second != sn) return false;
            names[key] = sn;
            const Kinds k = 1u << (fem ? g.female_kind : g.male_kind)[std::size_t(c[i].index)];
            (fem ? female : male) = k;
            (fem ? new_female : new_male) = true;
            kinds |= k;
            i += 2;
            ++persons;
            return true;
        };
        auto noun_phrase = [&](Cls noun, Kinds* adj_kinds) {
            if (at(i) != Cls::Det) return false;
            ++i;
            int n_adj = 0;
            while (at(i) == Cls::Adj) {
                if (adj_kinds) *adj_kinds |= 1u << g.adjective_kind[std::size_t(c[i].index)];
                ++i;
                ++n_adj;
            }
            if (n_adj > 2 || at(i) != noun) return false;
            ++i;
            return true;
        };
        switch (at(0)) {
            case Cls::Det:
                ok = noun_phrase(Cls::Creature, &kinds);
                creature = kinds;
                new_creature = true;
                break;
            case Cls::Female:
            case Cls::Male: {
                const std::size_t first = i;
                ok = person();
                if (ok && at(i) == Cls::And) {
                    ++i;
                    ok = person() && !(c[first].cls == c[i - 2].cls && c[first].index == c[i - 2].index);
                    pair = kinds;
                    new_pair = true;
                }
                break;
            }
            case Cls::It:
                ok = has_creature;
                kinds = last_creature;
                ++i;
                break;
            case Cls::They:
                ok = has_pair;
                kinds = last_pair;
                ++i;
                break;
            case Cls::He:
                ok = has_male;
                kinds = last_male;
                ++i;
                break;
            case Cls::She:
                ok = has_female;
                kinds = last_female;
                ++i;
                break;
            default:
                ok = false;
        }
        if (ok && at(i) == Cls::Verb) {
            const int verb = c[i].index;
            ok = verb_fits(g, verb, kinds);
            ++i;
            if (!g.verb_direct[std::size_t(verb)]) {
                ok = ok && at(i) == Cls::Prep;
                ++i;
            }
            ok = ok && noun_phrase(Cls::Place, nullptr) && at(i) == Cls::Stop && i + 1 == c.size();
        } else {
            ok = false;
        }
        (void)persons;
        s.valid = ok;
        if (ok) {
            for (const auto& [key, sn] : names) surname[key] = sn;
            // In "A and B" the later name of each gender is the most recent one.
            if (new_female) last_female = female, has_female = true;
            if (new_male) last_male = male, has_male = true;
            if (new_pair) last_pair = pair, has_pair = true;
            if (new_creature) last_creature = creature, has_creature = true;
        }
        out.push_back(s);
    }
    return out;
}

SequenceAnnotations annotate_story(const std::vector<std::string>& words, const StoryWords& lexicon) {
    const Classifier classify(lexicon);
    SequenceAnnotations a;
    std::vector<TaggedWord> c;
    for (const std::string& word : words) c.push_back(classify(word));
    const int n = int(c.size());
    // A name's words: the first name and the surname right after it.
    auto name_words = [&](int i) {
        std::vector<int> p = {i};
        if (i + 1 < n && c[std::size_t(i + 1)].cls == Cls::Surname) p.push_back(i + 1);
        return p;
    };
    std::vector<int> creature, female, male, pair;
    for (int i = 0; i < n; ++i) {
        const Cls k = c[std::size_t(i)].cls;
        if (k == Cls::Creature || k == Cls::Place) {
            std::vector<int> adj;
            for (int j = i - 1; j >= 0 && c[std::size_t(j)].cls == Cls::Adj; --j) adj.insert(adj.begin(), j);
            if (!adj.empty()) a.noun_adjectives.emplace_back(i, adj);
            if (k == Cls::Creature) {  // what "it" stands for: the creature's adjectives and noun
                creature = adj;
                creature.push_back(i);
            }
        } else if (k == Cls::Female || k == Cls::Male) {
            (k == Cls::Female ? female : male) = name_words(i);
            // "A [S] and B [S]": the pair they stands for.
            const int after = i + int(name_words(i).size());
            if (after + 1 < n && c[std::size_t(after)].cls == Cls::And &&
                (c[std::size_t(after + 1)].cls == Cls::Female ||
                 c[std::size_t(after + 1)].cls == Cls::Male)) {
                pair = name_words(i);
                for (int p : name_words(after + 1)) pair.push_back(p);
            }
        } else if (k == Cls::It || k == Cls::They || k == Cls::He || k == Cls::She) {
            const std::vector<int>& ante = k == Cls::It     ? creature
                                           : k == Cls::They ? pair
                                           : k == Cls::He   ? male
                                                            : female;
            if (!ante.empty()) a.pronoun_antecedents.emplace_back(i, ante);
        }
    }
    return a;
}

namespace {

TaskBatch story_batch(int n, int B, std::uint64_t seed) {
    static const std::unordered_map<std::string, int>& ids = *new std::unordered_map<std::string, int>([] {
        std::unordered_map<std::string, int> m;
        const auto& t = story_tokens();
        for (std::size_t i = 0; i < t.size(); ++i) m[t[i][0] == ' ' ? t[i].substr(1) : t[i]] = int(i);
        return m;
    }());
    TaskBatch out;
    out.batch.B = B;
    out.batch.n = n;
    out.batch.inputs.resize(std::size_t(B) * std::size_t(n));
    out.batch.targets.resize(out.batch.inputs.size());
    out.kind.assign(out.batch.inputs.size(), 1);
    std::mt19937_64 rng(seed);
    for (int b = 0; b < B; ++b) {
        const std::vector<std::string> story = generate_story(rng(), n + 1);
        for (int i = 0; i < n; ++i) {
            const std::size_t k = std::size_t(b) * std::size_t(n) + std::size_t(i);
            out.batch.inputs[k] = ids.at(story[std::size_t(i)]);
            out.batch.targets[k] = ids.at(story[std::size_t(i) + 1]);
        }
    }
    return out;
}

std::vector<std::string> words_of(const std::vector<int>& ids) {
    const auto& t = story_tokens();
    std::vector<std::string> w;
    for (int id : ids) w.push_back(id >= 0 && id < int(t.size()) ? t[std::size_t(id)] : std::string());
    return w;
}

// Held-out stories come from seeds the training batches never use (the top bit set).
constexpr std::uint64_t kHeldout = 1ull << 63;

}  // namespace

Task story_task(int context) {
    if (context < 16) throw ConfigError("The story task needs a context of at least 16 tokens.");
    Task task;
    task.name = "story";
    task.vocab_size = int(story_tokens().size());
    task.context = context;
    task.first_label = "words";
    task.repeat_label = "";
    task.train_batch = [context](int B, std::uint64_t seed) {
        return story_batch(context, B, seed & ~kHeldout);
    };
    task.heldout_batch = [context](int B, std::uint64_t seed) {
        return story_batch(context, B, seed | kHeldout);
    };
    task.tokens = story_tokens();
    const StoryWords& w = story_grammar().words;
    std::vector<std::string> nouns = w.creature_nouns, names = w.female_names;
    nouns.insert(nouns.end(), w.place_nouns.begin(), w.place_nouns.end());
    names.insert(names.end(), w.male_names.begin(), w.male_names.end());
    names.insert(names.end(), w.surnames.begin(), w.surnames.end());
    task.grammar = {
        {"determiners", w.determiners},
        {"adjectives", w.adjectives},
        {"nouns", nouns},
        {"creature_nouns", w.creature_nouns},
        {"place_nouns", w.place_nouns},
        {"verbs", w.verbs},
        {"prepositions", w.prepositions},
        {"names", names},
        {"female_names", w.female_names},
        {"male_names", w.male_names},
        {"surnames", w.surnames},
        {"pronouns", {w.it, w.they, w.he, w.she}},
        {"conjunctions", {w.conjunction}},
    };
    task.annotate = [](const std::vector<int>& ids) {
        return annotate_story(words_of(ids), story_grammar().words);
    };
    task.report_words = {
        {"induction_chance", "the induction score of a head that attends evenly: chance level"},
        {"grammatical_greedy", "share of sentences written greedily (T = 0) that are grammatical"},
        {"grammatical_t0.8", "share of sentences sampled at T = 0.8 that are grammatical"},
        {"sentences_greedy", "sentences written greedily to measure it"},
        {"sentences_t0.8", "sentences sampled at T = 0.8 to measure it"},
    };
    task.report = [context](const Params<float>& p) {
        const StoryWriting greedy = story_writing(p, 32, 0.0, 1), warm = story_writing(p, 32, 0.8, 1);
        // The induction score of a head attending evenly to every position it may see: chance.
        const TaskBatch b = story_batch(context, 32, 2 | kHeldout);
        double chance = 0;
        long counted = 0;
        for (int r = 0; r < b.batch.B; ++r) {
            const int* ids = b.batch.inputs.data() + std::ptrdiff_t(r) * context;
            for (int t = 0; t < context; ++t) {
                int matches = 0;
                for (int j = 1; j <= t; ++j) matches += ids[j - 1] == ids[t];
                if (matches == 0) continue;
                chance += double(matches) / double(t + 1);
                ++counted;
            }
        }
        return std::vector<std::pair<std::string, double>>{
            {"induction_chance", counted ? chance / double(counted) : 0.0},
            {"grammatical_greedy", greedy.fraction()},
            {"grammatical_t0.8", warm.fraction()},
            {"sentences_greedy", double(greedy.sentences)},
            {"sentences_t0.8", double(warm.sentences)},
        };
    };
    return task;
}

StoryWriting story_writing(const Params<float>& params, int prompts, double temperature, std::uint64_t seed) {
    const int n = params.config.context, V = int(story_tokens().size());
    if (params.config.vocab_size < V)
        throw ConfigError("The model's vocabulary does not hold the story language.");
    const auto& tokens = story_tokens();
    const StoryGrammar& g = story_grammar();
    std::mt19937_64 rng(seed);
    StoryWriting r;
    for (int p = 0; p < prompts; ++p) {
        // The prompt: a held-out story's first sentence (its own seed stream, apart from the batches').
        std::vector<std::string> story =
            generate_story((seed * 7919 + std::uint64_t(p)) | kHeldout | (1ull << 62), 1);
        std::vector<int> ids;
        for (const std::string& word : story)
            for (int v = 0; v < V; ++v)
                if (tokens[std::size_t(v)] == word || tokens[std::size_t(v)] == " " + word) {
                    ids.push_back(v);
                    break;
                }
        const int prompt_words = int(ids.size());
        while (int(ids.size()) < n) {
            const std::vector<double> logits = next_token_logits(params, ids);
            int next = 0;
            if (temperature <= 0) {
                for (int v = 1; v < V; ++v)
                    if (logits[std::size_t(v)] > logits[std::size_t(next)]) next = v;
            } else {
                double mx = logits[0];
                for (int v = 1; v < V; ++v) mx = std::max(mx, logits[std::size_t(v)]);
                std::vector<double> weight(static_cast<std::size_t>(V));
                double sum = 0;
                for (int v = 0; v < V; ++v)
                    sum += weight[std::size_t(v)] = std::exp((logits[std::size_t(v)] - mx) / temperature);
                double u = story_uniform(rng) * sum;
                next = V - 1;
                for (int v = 0; v < V; ++v) {
                    u -= weight[std::size_t(v)];
                    if (u < 0) {
                        next = v;
                        break;
                    }
                }
            }
            ids.push_back(next);
        }
        for (const StorySentence& s : check_story(words_of(ids), g)) {
            if (s.begin < prompt_words) continue;
            ++r.sentences;
            r.valid += s.valid ? 1 : 0;
        }
    }
    return r;
}

}  // namespace attnviz

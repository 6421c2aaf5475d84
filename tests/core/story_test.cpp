// The story language (core/story.hpp): its size, the seeds' sentence, the grammar checker on valid
// and broken sentences (each rule), every generated story valid, the annotations the head scores
// read, and the story task in the registry with its two extra scores.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "core/story.hpp"
#include "core/task_registry.hpp"

namespace attnviz {
namespace {

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> w;
    std::string word;
    for (char ch : text) {
        if (ch == ' ' || ch == '.') {
            if (!word.empty()) w.push_back(word);
            word.clear();
            if (ch == '.') w.push_back(".");
        } else {
            word += ch;
        }
    }
    if (!word.empty()) w.push_back(word);
    return w;
}

std::vector<bool> validity(const std::string& text) {
    std::vector<bool> v;
    for (const StorySentence& s : check_story(split(text))) v.push_back(s.valid);
    return v;
}

TEST(Story, TheLanguageIsBigEnoughAndEveryWordIsOneToken) {
    const StoryWords& w = story_grammar().words;
    EXPECT_GE(w.adjectives.size(), 30u);
    EXPECT_GE(w.creature_nouns.size() + w.place_nouns.size(), 40u);
    std::set<std::string> tokens(story_tokens().begin(), story_tokens().end());
    EXPECT_EQ(tokens.size(), story_tokens().size());
    for (const char* word : {" fluffy", " blue", " creature", " roamed", " verdant", " forest", " it",
                             " they", " he", " she", "."})
        EXPECT_TRUE(tokens.count(word)) << word;
}

TEST(Story, TheSeedsSentenceIsValid) {
    EXPECT_EQ(validity("a fluffy blue creature roamed the verdant forest."), std::vector<bool>{true});
}

TEST(Story, EachRuleRefusesWhatBreaksIt) {
    // A verb must fit every adjective: climbed fits size and mood, not soft (fluffy).
    EXPECT_EQ(validity("a fluffy blue creature climbed the hill."), std::vector<bool>{false});
    EXPECT_EQ(validity("a tiny sleepy creature climbed the hill."), std::vector<bool>{true});
    // roamed takes its place directly, dozed with a preposition.
    EXPECT_EQ(validity("a fluffy creature roamed through the forest."), std::vector<bool>{false});
    EXPECT_EQ(validity("a fluffy creature dozed the forest."), std::vector<bool>{false});
    EXPECT_EQ(validity("a fluffy creature dozed under the forest."), std::vector<bool>{true});
    // At most two adjectives; a place is not a subject; no place, no sentence.
    EXPECT_EQ(validity("a fluffy blue tiny creature roamed the forest."), std::vector<bool>{false});
    EXPECT_EQ(validity("the forest roamed the forest."), std::vector<bool>{false});
    EXPECT_EQ(validity("a fluffy creature roamed."), std::vector<bool>{false});
    // A pronoun needs its antecedent, and its verb must fit it.
    EXPECT_EQ(validity("it dozed in the lake."), std::vector<bool>{false});
    EXPECT_EQ(validity("a fluffy blue creature roamed the forest. it wandered in the lake."),
              (std::vector<bool>{true, true}));
    EXPECT_EQ(validity("a fluffy blue creature roamed the forest. it climbed the hill."),
              (std::vector<bool>{true, false}));
    // Mia is soft; Leo is soft; Emma is colour: she = the most recent female name.
    EXPECT_EQ(
        validity("Mia Storm napped in the lake. Emma Reed sang near the hill. she flew over the river."),
        (std::vector<bool>{true, true, true}));
    EXPECT_EQ(
        validity("Emma Reed sang near the hill. Mia Storm napped in the lake. she flew over the river."),
        (std::vector<bool>{true, true, false}));
    EXPECT_EQ(validity("he napped in the lake."), std::vector<bool>{false});
    // they: both names' kinds (soft and colour).
    EXPECT_EQ(validity("Mia Storm and Emma Reed roamed the hill. they wandered into the cave."),
              (std::vector<bool>{true, true}));
    EXPECT_EQ(validity("Mia Storm and Emma Reed crept into the hill."), std::vector<bool>{false});
    // A character keeps her surname.
    EXPECT_EQ(validity("Mia Storm napped in the lake. Mia Reed napped in the lake."),
              (std::vector<bool>{true, false}));
    // Unknown words, and a name without a surname.
    EXPECT_EQ(validity("a fluffy creature roamed the moon."), std::vector<bool>{false});
    EXPECT_EQ(validity("Mia napped in the lake."), std::vector<bool>{false});
    // A last sentence without its stop is not judged.
    EXPECT_TRUE(check_story(split("a fluffy creature roamed the")).empty());
}

TEST(Story, EveryGeneratedStoryIsValid) {
    std::set<std::string> seen;
    int sentences = 0, pronouns = 0;
    for (std::uint64_t seed = 0; seed < 300; ++seed) {
        const std::vector<std::string> story = generate_story(seed, 80);
        ASSERT_GE(story.size(), 80u);
        EXPECT_EQ(story.back(), ".");
        for (const StorySentence& s : check_story(story)) {
            std::string text;
            for (int i = s.begin; i < s.end; ++i) text += story[std::size_t(i)] + " ";
            EXPECT_TRUE(s.valid) << "seed " << seed << ": " << text;
            ++sentences;
        }
        for (const std::string& w : story) {
            seen.insert(w);
            pronouns += w == "it" || w == "they" || w == "he" || w == "she";
        }
    }
    EXPECT_GT(sentences, 3000);
    EXPECT_GT(pronouns, 600);
    EXPECT_EQ(seen.size(), story_tokens().size());  // every word of the language appears
    EXPECT_EQ(generate_story(5, 40), generate_story(5, 40));
}

TEST(Story, AnnotationsFindEachNounsAdjectivesAndEachPronounsAntecedent) {
    // it (9) -> fluffy blue creature (1, 2, 3); they (25) -> Mia Storm and Leo Reed (15, 16, 18, 19); she
    // (31) -> Mia Storm.
    const auto words = split(
        "a fluffy blue creature roamed the verdant forest. it dozed under the hill. "
        "Mia Storm and Leo Reed sang near the lake. they rested in a cave. she napped in a cave.");
    const SequenceAnnotations a = annotate_story(words, story_grammar().words);
    ASSERT_EQ(a.noun_adjectives.size(), 2u);
    EXPECT_EQ(a.noun_adjectives[0], (std::pair<int, std::vector<int>>{3, {1, 2}}));
    EXPECT_EQ(a.noun_adjectives[1], (std::pair<int, std::vector<int>>{7, {6}}));
    ASSERT_EQ(a.pronoun_antecedents.size(), 3u);
    EXPECT_EQ(a.pronoun_antecedents[0], (std::pair<int, std::vector<int>>{9, {1, 2, 3}}));
    EXPECT_EQ(a.pronoun_antecedents[1].second, (std::vector<int>{15, 16, 18, 19}));
    EXPECT_EQ(a.pronoun_antecedents[2].second, (std::vector<int>{15, 16}));
    // Leading spaces (token texts) are the same words.
    std::vector<std::string> spaced;
    for (const std::string& w : words) spaced.push_back(w == "." ? w : " " + w);
    const SequenceAnnotations b = annotate_story(spaced, story_grammar().words);
    EXPECT_EQ(b.noun_adjectives, a.noun_adjectives);
    EXPECT_EQ(b.pronoun_antecedents, a.pronoun_antecedents);
}

TEST(Story, ScoresSumTheAttentionOnTheAnnotatedWords) {
    MatT<float> P = MatT<float>::Zero(4, 4);
    P(0, 0) = 1;
    P(1, 0) = 0.5f, P(1, 1) = 0.5f;
    P(2, 0) = 0.2f, P(2, 1) = 0.3f, P(2, 2) = 0.5f;
    P(3, 0) = 0.1f, P(3, 1) = 0.2f, P(3, 2) = 0.3f, P(3, 3) = 0.4f;
    SequenceAnnotations a;
    a.noun_adjectives = {{2, {0, 1}}, {3, {2}}, {9, {1}}};  // the last lies outside P: left out
    a.pronoun_antecedents = {{3, {0}}};
    int count = 0;
    EXPECT_NEAR(adjective_noun_score(P, a, &count), (0.5 + 0.3) / 2, 1e-6);
    EXPECT_EQ(count, 2);
    EXPECT_NEAR(pronoun_antecedent_score(P, a, &count), 0.1, 1e-6);
    EXPECT_EQ(count, 1);
    EXPECT_EQ(adjective_noun_score(P, SequenceAnnotations{}, &count), 0.0);
    EXPECT_EQ(count, 0);
}

TEST(Story, TheTaskReportsTheTwoScoresAndAnnotatesItsProbe) {
    const TaskInfo* info = find_task("story");
    ASSERT_NE(info, nullptr);
    std::vector<std::string> names;
    for (HeadScore k : info->scores) names.push_back(head_score_name(k));
    EXPECT_EQ(names, (std::vector<std::string>{"previous_token", "induction", "first_token", "same_token",
                                               "adjective_noun", "pronoun_antecedent"}));
    for (const TaskInfo& t : task_registry()) {  // only the story task reports the two new scores
        if (t.name == "story") continue;
        for (HeadScore k : t.scores) {
            EXPECT_TRUE(k != HeadScore::AdjectiveNoun && k != HeadScore::PronounAntecedent) << t.name;
        }
        if (t.encoder_decoder) {  // translate: its cross-attention's alignment alone
            EXPECT_EQ(t.scores, std::vector<HeadScore>{HeadScore::Alignment}) << t.name;
        } else if (t.name != "modadd") {
            EXPECT_EQ(t.scores, all_head_scores()) << t.name;  // modadd declares none
        }
    }
    TaskRequest r;
    r.context = 32;
    const Task task = make_task(*info, r);
    EXPECT_EQ(task.vocab_size, int(story_tokens().size()));
    const TaskBatch b = task.heldout_batch(2, 3);
    ASSERT_EQ(b.batch.inputs.size(), 64u);
    const std::vector<int> row(b.batch.inputs.begin(), b.batch.inputs.begin() + 32);
    for (int i = 0; i + 1 < 32; ++i) EXPECT_EQ(b.batch.targets[std::size_t(i)], row[std::size_t(i + 1)]);
    ASSERT_TRUE(task.annotate);
    const SequenceAnnotations a = task.annotate(row);
    std::vector<std::string> words;
    for (int id : row) words.push_back(story_tokens()[std::size_t(id)]);
    EXPECT_EQ(a.noun_adjectives, annotate_story(words, story_grammar().words).noun_adjectives);
    // Training and held-out stories differ.
    EXPECT_NE(task.train_batch(2, 3).batch.inputs, b.batch.inputs);

    // A tiny model's scores: the two new ones are filled in, within [0, 1].
    TrainConfig c;
    c.n_layer = 1;
    c.n_head = 2;
    c.d_model = 16;
    c.context = 32;
    c.vocab_size = task.vocab_size;
    TrainOptions o;
    o.steps = 1;
    o.probe = 4;
    o.heldout = 4;
    o.batch = 2;
    Trainer trainer(c, task, o);
    ASSERT_EQ(trainer.probe_annotations().size(), 4u);
    const EvalPoint e = trainer.evaluate();
    for (const HeadScores& s : e.scores[0]) {
        EXPECT_GT(s.adjective_noun, 0.0);
        EXPECT_LE(s.adjective_noun, 1.0);
        EXPECT_GT(s.pronoun_antecedent, 0.0);
        EXPECT_LE(s.pronoun_antecedent, 1.0);
    }
}

}  // namespace
}  // namespace attnviz

// Every checkpoint attnviz writes opens in attnviz (issue 24, defect 1): each registered task trained
// for two steps by `attnviz train` leaves a folder the model loader and the tokenizer loader read, in
// which the task's tokens are text (" 3", " +", " fluffy"); the story task's folder also holds
// story_grammar.json. Also the tokenizer writer itself and story_grammar.json's reader.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/run_command.hpp"
#include "common/test_files.hpp"
#include "core/story.hpp"
#include "core/task_registry.hpp"
#include "io/checkpoint.hpp"
#include "io/files.hpp"
#include "io/model_loader.hpp"
#include "io/story_grammar.hpp"
#include "io/tokenizer.hpp"
#include "io/train_commands.hpp"

namespace attnviz {
namespace {

using test::TempDir;

TEST(CheckpointFiles, EveryTasksCheckpointOpensWithItsTokenizer) {
    TempDir tmp("ckpt-files");
    std::string text;  // a text for the text task: ASCII and Chinese characters
    for (int i = 0; i < 40; ++i) text += "the cat sat on the mat. 猫坐在垫子上。\n";
    write_file_atomic(tmp.path + "/text.txt", text);
    for (const TaskInfo& info : task_registry()) {
        const std::string out = tmp.path + "/" + info.name;
        std::vector<std::string> args = {"--task",       info.name, "--steps",   "2",  "--layers",  "1",
                                         "--heads",      "1",       "--d-model", "16", "--context", "48",
                                         "--eval-every", "1",       "--out",     out};
        if (info.file_option()) args.insert(args.end(), {info.file_option()->flag, tmp.path + "/text.txt"});
        const auto r = test::run_command("train", args, run_train_command);
        ASSERT_EQ(r.code, 0) << info.name << ": " << r.err;
        const ModelWeights model = load_model_dir(out);
        std::shared_ptr<const Tokenizer> tok;
        ASSERT_NO_THROW(tok = Tokenizer::load_dir(out)) << info.name;
        // Every id of the model is named, and reads back as itself.
        for (int id = 0; id < model.spec.vocab_size; ++id) {
            ASSERT_TRUE(tok->has_id(id)) << info.name << " id " << id;
            const std::string t = tok->decode({id});
            const std::vector<int> back = tok->encode(t);
            // (a text's first word gets a space: "." alone reads as " ", "."; a word " 3" as itself)
            if (t[0] == ' ' || info.name == "text")
                EXPECT_EQ(back, std::vector<int>{id}) << info.name << " '" << t << "'";
            else
                EXPECT_EQ(back.back(), id) << info.name << " '" << t << "'";
        }
        const std::string sample = info.name == "text" ? "the cat 猫"
                                   : info.name == "story"
                                       ? "a fluffy blue creature roamed the verdant forest."
                                   : info.name == "modadd"    ? "3 + 5 ="
                                   : info.name == "translate" ? "the big dog sees a cat."
                                                           : "3 1 4 1 5";
        const std::vector<int> ids = tok->encode(sample);
        for (int id : ids) EXPECT_LT(id, model.spec.vocab_size) << info.name << ": " << sample;
        if (info.name != "text") {
            EXPECT_EQ(tok->decode(ids), " " + sample) << info.name;
        }
        EXPECT_EQ(std::filesystem::exists(out + "/story_grammar.json"), info.name == "story") << info.name;
    }
}

TEST(CheckpointFiles, TheStoryTokenizerMakesEachWordOneToken) {
    const std::string json = words_tokenizer_json(story_tokens(), int(story_tokens().size()), true);
    const auto tok = Tokenizer::from_tokenizer_json(json);
    const std::vector<int> ids = tok->encode("a fluffy blue creature roamed the verdant forest. it dozed.");
    std::vector<std::string> words;
    for (int id : ids) words.push_back(tok->token_text(id));
    EXPECT_EQ(words, (std::vector<std::string>{" a", " fluffy", " blue", " creature", " roamed", " the",
                                               " verdant", " forest", ".", " it", " dozed", "."}));
    for (int id : ids) EXPECT_LT(id, int(story_tokens().size()));
    // Words outside the language give ids past the model's vocabulary, not a wrong word.
    for (int id : tok->encode("zebra")) EXPECT_GE(id, int(story_tokens().size()));
    EXPECT_THROW(words_tokenizer_json({" a", " a"}, 2, true), Error);
}

TEST(CheckpointFiles, StoryGrammarIsReadAndABrokenOneIsOneLine) {
    TempDir tmp("grammar");
    EXPECT_FALSE(read_story_grammar(tmp.path).has_value());  // none: not a story model
    TaskRequest r;
    r.context = 32;
    const Task task = make_task(*find_task("story"), r);
    write_file_atomic(tmp.path + "/story_grammar.json", story_grammar_json(task.grammar));
    std::string problem;
    const auto words = read_story_grammar(tmp.path, &problem);
    ASSERT_TRUE(words.has_value()) << problem;
    EXPECT_EQ(words->adjectives, story_grammar().words.adjectives);
    EXPECT_EQ(words->female_names, story_grammar().words.female_names);
    EXPECT_EQ(words->place_nouns, story_grammar().words.place_nouns);
    // The same annotations from the file's words as from the built-in ones.
    const std::vector<std::string> text = {"a",   "fluffy", "blue", "creature", "roamed",
                                           "the", "forest", ".",    "it",       "dozed"};
    EXPECT_EQ(annotate_story(text, *words).noun_adjectives,
              annotate_story(text, story_grammar().words).noun_adjectives);
    EXPECT_EQ(annotate_story(text, *words).pronoun_antecedents,
              annotate_story(text, story_grammar().words).pronoun_antecedents);
    for (const char* broken : {"{\"adjectives\": [\"a\"", "[1, 2]", "{\"adjectives\": [], \"nouns\": []}",
                               "{\"adjectives\": [3], \"nouns\": [], \"names\": [], \"pronouns\": []}"}) {
        write_file_atomic(tmp.path + "/story_grammar.json", broken);
        problem.clear();
        EXPECT_FALSE(read_story_grammar(tmp.path, &problem).has_value()) << broken;
        EXPECT_FALSE(problem.empty()) << broken;
        EXPECT_EQ(problem.find('\n'), std::string::npos) << problem;
        EXPECT_NE(problem.find("story_grammar.json"), std::string::npos) << problem;
    }
}

}  // namespace
}  // namespace attnviz

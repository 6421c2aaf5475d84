// The story task: short stories in the story language (core/story.hpp), every word one token. The
// model learns which word comes next; doing that well needs heads that gather a noun's adjectives
// (its verb must fit all of them), heads that find a pronoun's antecedent (its verb must fit that
// too) and induction heads (a character's surname is drawn per story). Head scores: the four of
// every task plus adjective_noun and pronoun_antecedent (core/tasks.hpp), read from the annotations
// of each probe story. Shapes: B stories, n = context tokens.
#include "core/story.hpp"
#include "core/task_registry.hpp"

namespace attnviz {

TaskInfo story_task_info() {
    TaskInfo t;
    t.name = "story";
    t.label = "stories: adjective and pronoun heads";
    t.description =
        "Short stories in a small English-like language: \"a fluffy blue creature roamed the verdant "
        "forest. it strolled across the hill.\" A verb must fit every adjective of its noun and the "
        "antecedent of its pronoun, and characters keep their surnames: watch heads appear that make a "
        "noun attend to its adjectives, a pronoun to the noun or name it stands for, and a repeated "
        "name to what followed it before (induction).";
    t.fits_model = true;  // the vocabulary is the language's words; the stories fill the model's context
    t.scores = all_head_scores();
    t.scores.push_back(HeadScore::AdjectiveNoun);
    t.scores.push_back(HeadScore::PronounAntecedent);
    t.make = [](const TaskRequest& r) { return story_task(r.context); };
    // The shipped model's shape (assets/models/story: 4000 steps) for half as many steps: the adjective
    // head appears near step 500, the pronoun head by step 1000-2000 (README, docs/story.md).
    t.lab_preset = [](TrainConfig& c, TrainOptions& o) {
        c.n_layer = 2;
        c.d_model = 64;
        c.context = 64;
        c.mlp = MlpKind::Gelu;
        o.adam.lr = 3e-3;
        o.steps = 2000;
        o.batch = 32;
    };
    return t;
}

}  // namespace attnviz

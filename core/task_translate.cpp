// The translate task: a tiny encoder–decoder (T5's layout, core/train_seq2seq.hpp) learns the toy
// language pair of core/translate.hpp by teacher forcing (cross-entropy of every target word and
// </s>). Writing each target word well needs the source word it translates, which the word order put
// elsewhere (the verb last, adjectives after their noun): watch the decoder's cross-attention turn
// from a blur into the alignment. Head score: alignment of each decoder head's cross-attention;
// figure: the alignment score of the last decoder layer (heads averaged) at every evaluation.
#include "core/task_registry.hpp"
#include "core/translate.hpp"

namespace attnviz {

TaskInfo translate_task_info() {
    TaskInfo t;
    t.name = "translate";
    t.label = "Translation: watch alignment form";
    t.description =
        "A tiny encoder-decoder learns to translate a toy language: \"the big dog sees a cat .\" becomes "
        "\"lo hundo grando una kato vidas .\" (the verb moves to the end, adjectives after their noun). "
        "Each target word must fetch the source word it translates through cross-attention (rows: the "
        "target word being written; columns: the source words): watch the map turn from a blur into the "
        "alignment, which is not a diagonal.";
    t.fits_model = true;  // the vocabulary is the two languages' words; the sentences fit the context
    t.encoder_decoder = true;
    t.scores = {HeadScore::Alignment};
    t.make = [](const TaskRequest&) { return translate_task(); };
    // 1 encoder block and 2 decoder blocks of width 64 (4 heads), gated-GELU MLPs of 128, lr 2e-3: the
    // last decoder layer's heads align the words (score >= 0.8) within 400-600 steps at seeds 1-4, about
    // 0.93 at step 1000 (README). (With 2 encoder blocks the encoder mixes the words more and the last
    // layer aligns less sharply: 0.79 at step 1000, seed 1.)
    t.lab_preset = [](TrainConfig& c, TrainOptions& o) {
        c.encoder_layers = 1;
        c.n_layer = 2;
        c.n_head = 4;
        c.d_model = 64;
        c.d_ff = 128;
        c.context = 16;
        c.norm_eps = 1e-6;
        o.adam.lr = 2e-3;
        o.batch = 32;
        o.steps = 1000;
        o.eval_every = 25;
    };
    return t;
}

}  // namespace attnviz

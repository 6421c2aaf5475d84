// app/seq2seq_run: cross-attention rows are labelled by the word each row writes; the last row, which
// writes the word not chosen yet, names the model's pick ("→ vidas?") from the same logits the
// next-token panel ranks, or "→ ?" when no pick is known.
#include "app/seq2seq_run.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/test_files.hpp"
#include "common/translate_folder.hpp"
#include "core/sampling.hpp"
#include "core/task_registry.hpp"
#include "core/train.hpp"
#include "core/translate.hpp"
#include "io/checkpoint.hpp"
#include "io/files.hpp"

namespace attnviz::app {
namespace {

using Labels = std::vector<std::string>;

TEST(CrossRowLabels, EachRowNamesTheWordItWritesAndTheLastTheModelsPick) {
    const Labels target = {"<pad>", " lo", " hundo", "!"};
    EXPECT_EQ(cross_row_labels(target, std::string(" vidas")),
              (Labels{"→ lo", "→ hundo", "→ !", "→ vidas?"}));
    EXPECT_EQ(cross_row_labels(target, std::string("vidas")).back(), "→ vidas?");
    EXPECT_EQ(cross_row_labels(target, std::string("</s>")).back(), "→ </s>?");  // the model would stop
}

TEST(CrossRowLabels, AnUnknownPickIsAQuestionMark) {
    EXPECT_EQ(cross_row_labels({"<pad>", " lo"}, std::nullopt), (Labels{"→ lo", "→ ?"}));
    // The start token alone: its one row writes the first word, not chosen yet.
    EXPECT_EQ(cross_row_labels({"<pad>"}, std::nullopt), (Labels{"→ ?"}));
    EXPECT_EQ(cross_row_labels({"<pad>"}, std::string(" lo")), (Labels{"→ lo?"}));
    EXPECT_TRUE(cross_row_labels({}, std::string("x")).empty());
}

TEST(CrossRowLabels, ALoneSpaceIsKept) {
    // A token that is only a space keeps it (dropping it would read as "nothing known").
    EXPECT_EQ(cross_row_labels({"<pad>", " "}, std::string(" ")), (Labels{"→  ", "→  ?"}));
}

// A translation model as `attnviz train --task translate` writes it (random weights: the pick is
// whatever they give), run as the GUI runs it: every decoder layer's cross-attention rows end with the
// next-token panel's first token, which is what "Append greedy" appends.
TEST(Seq2SeqRun, TheLastCrossRowNamesTheNextTokenPanelsFirstToken) {
    test::TempDir dir("seq2seq-labels");
    const test::TranslateSetup setup = test::translate_setup();
    test::write_translate_folder(dir.path, setup, init_params(setup.config, 7));
    const LoadedModel model = load_model_folder(dir.path, [](const char*, float) {});
    ASSERT_TRUE(model.weights->spec.encoder_decoder);

    const ModelRun r = run_seq2seq_on_text(model, "the big red dog sees a cat.", "lo hundo", 1, nullptr);
    ASSERT_EQ(r.ids.size(), 3u);  // the start token, lo, hundo
    // The next-token panel's ranking (app/model_session.cpp update_next_tokens): the last row's logits.
    const Mat& logits = r.forward->logits;
    ASSERT_GT(logits.rows(), 0);
    const SamplingDistribution d = sampling_distribution(logits.row(logits.rows() - 1), 1.0, 0, 1.0);
    const std::string pick = model.tokenizer->token_label(d.order[0]);
    ASSERT_FALSE(pick.empty());
    const std::string word = pick[0] == ' ' && pick.size() > 1 ? pick.substr(1) : pick;
    ASSERT_FALSE(r.layers.empty());
    for (std::size_t l = 0; l < r.layers.size(); ++l) {
        const Stage* st = r.layers[l]->get("cross_weights", 0);
        ASSERT_NE(st, nullptr) << "layer " << l;
        ASSERT_EQ(st->n_rows(), 3) << "layer " << l;
        EXPECT_EQ(st->rows.label(0), "→ lo") << "layer " << l;
        EXPECT_EQ(st->rows.label(1), "→ hundo") << "layer " << l;
        EXPECT_EQ(st->rows.label(2), "→ " + word + "?") << "layer " << l << ", the panel's pick " << pick;
    }
}

}  // namespace
}  // namespace attnviz::app

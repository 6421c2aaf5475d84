// A translation model trained here is a real T5 folder: written by save_train_checkpoint (config.json
// of model_type t5, shared / encoder.block.* / decoder.block.* / lm_head tensors) with the task's
// tokenizer, opened by the model loader like any Hugging Face encoder–decoder, and run through
// run_seq2seq it gives the trainer's own cross-attention and next-word probabilities.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "common/translate_folder.hpp"
#include "core/seq2seq.hpp"
#include "core/task_registry.hpp"
#include "core/translate.hpp"
#include "io/checkpoint.hpp"
#include "io/files.hpp"
#include "io/model_loader.hpp"
#include "io/tokenizer.hpp"

namespace attnviz {
namespace {

TEST(TranslateCheckpoint, OpensAsAT5ModelWithTheTrainersAttention) {
    test::TranslateSetup setup = test::translate_setup();
    const TrainConfig& c = setup.config;
    setup.options.steps = 30;  // a few steps: weights away from their initialisation
    setup.options.eval_every = 30;
    const TrainResult r = train_task(c, setup.task, setup.options);

    const std::string dir = (std::filesystem::temp_directory_path() / "attnviz_translate_ckpt").string();
    std::filesystem::remove_all(dir);
    make_dirs(dir);
    test::write_translate_folder(dir, setup, r.params);

    const ModelWeights model = load_model_dir(dir);
    EXPECT_EQ(model.spec.architecture, "t5");
    ASSERT_TRUE(model.spec.encoder_decoder);
    EXPECT_EQ(model.spec.s2s.n_encoder_layer, c.encoder_layers);
    EXPECT_EQ(model.spec.n_layer, c.n_layer);

    // The source sentence through the folder's own tokenizer: one id per word.
    const auto tok = Tokenizer::load_dir(dir);
    const std::vector<int> src = tok->encode("the big red dog sees a cat.");
    std::vector<int> want;
    for (const char* w : {"the", "big", "red", "dog", "sees", "a", "cat", "."})
        want.push_back(translate_id(w));
    EXPECT_EQ(src, want);
    const std::vector<int> tgt = {kTranslatePad, translate_id("lo"), translate_id("hundo")};

    const Seq2SeqForward fwd = run_seq2seq(model, src, tgt);
    const auto trainer = cross_attention_patterns(r.params, src, tgt);
    ASSERT_EQ(fwd.decoder.layers.size(), trainer.size());
    for (std::size_t l = 0; l < trainer.size(); ++l)
        for (int h = 0; h < c.n_head; ++h) {
            const Mat& a = fwd.decoder.layers[l].cross_heads[std::size_t(h)].weights;
            const MatT<float>& b = trainer[l][std::size_t(h)];
            ASSERT_EQ(a.rows(), b.rows());
            ASSERT_EQ(a.cols(), b.cols());
            for (Eigen::Index i = 0; i < a.rows(); ++i)
                for (Eigen::Index j = 0; j < a.cols(); ++j)
                    EXPECT_NEAR(a(i, j), b(i, j), 1e-5)
                        << "layer " << l << " head " << h << " (" << i << ", " << j << ")";
        }
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace attnviz

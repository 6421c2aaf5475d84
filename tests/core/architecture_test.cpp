// The table of architectures (core/architecture): every model_type is found, the message lists them,
// and the trainer writes GPT-2's layout until a config has one of Llama's choices (RMSNorm, SwiGLU,
// RoPE). The names and shapes themselves are checked against PyTorch in tests/reference/.
#include <gtest/gtest.h>

#include "core/architecture.hpp"

namespace attnviz {
namespace {

TEST(Architectures, ModelTypesAndTheTrainersLayout) {
    for (const char* type :
         {"gpt2", "llama", "qwen2", "mistral", "gemma", "bert", "roberta", "xlm-roberta", "distilbert"}) {
        const Architecture* a = find_architecture(type);
        ASSERT_NE(a, nullptr) << type;
        EXPECT_TRUE(a->read) << type;
    }
    EXPECT_EQ(find_architecture("t5-like"), nullptr);
    EXPECT_EQ(architecture_names(),
              "gpt2, llama, qwen2, mistral, gemma, bert, roberta, xlm-roberta or distilbert");
    for (const char* type : {"gemma", "bert", "roberta", "distilbert"})
        EXPECT_FALSE(find_architecture(type)->trains) << type;  // read only
    TrainConfig c;
    EXPECT_EQ(train_architecture(c).model_types.front(), "gpt2");
    EXPECT_EQ(param_layout(c).front().name, "wte.weight");
    c.positions = PositionKind::Rope;
    EXPECT_EQ(train_architecture(c).model_types.front(), "llama");
    EXPECT_EQ(param_layout(c).front().name, "model.embed_tokens.weight");
    EXPECT_TRUE(llama_layout(c));
}

}  // namespace
}  // namespace attnviz

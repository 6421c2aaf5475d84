// The table of architectures (core/architecture): every model_type is found, the message lists them,
// and the trainer writes GPT-2's layout until a config has one of Llama's choices (RMSNorm, SwiGLU,
// RoPE). The names and shapes themselves are checked against PyTorch in tests/reference/.
#include <gtest/gtest.h>

#include "core/architecture.hpp"

namespace attnviz {
namespace {

TEST(Architectures, ModelTypesAndTheTrainersLayout) {
    for (const char* type : {"gpt2", "llama", "qwen2", "mistral", "gemma", "t5", "bart"}) {
        const Architecture* a = find_architecture(type);
        ASSERT_NE(a, nullptr) << type;
        EXPECT_TRUE(a->read) << type;
    }
    EXPECT_EQ(find_architecture("bert"), nullptr);
    EXPECT_EQ(architecture_names(), "gpt2, llama, qwen2, mistral, gemma, t5 or bart");
    // The encoder–decoders name each stack's tensors; T5's feed-forward is layer.1 in the encoder and
    // layer.2 in the decoder (layer.1 is its cross-attention there).
    const Architecture& t5 = *find_architecture("t5");
    EXPECT_EQ(t5.encoder_tensors.block_prefix(3) + t5.encoder_tensors.fc,
              "encoder.block.3.layer.1.DenseReluDense.wi");
    EXPECT_EQ(t5.tensors.block_prefix(0) + t5.tensors.down, "decoder.block.0.layer.2.DenseReluDense.wo");
    EXPECT_EQ(t5.tensors.cross_k, "layer.1.EncDecAttention.k");
    EXPECT_TRUE(t5.encoder_tensors.cross_q.empty());
    EXPECT_FALSE(find_architecture("t5")->trains);
    EXPECT_EQ(find_architecture("bart")->tensors.cross_o, "encoder_attn.out_proj");
    EXPECT_FALSE(find_architecture("gemma")->trains);  // read only
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

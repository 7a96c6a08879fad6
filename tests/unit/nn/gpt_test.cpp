// The GPT model: its blocks, parameter count, unsupported options, and every block's
// gradients against finite differences on a 2-layer model.
#include "nn/models/gpt.h"

#include <gtest/gtest.h>

#include <string>

#include "gradient_check.h"

namespace zt::nn {
namespace {

constexpr GptShape kTiny{/*n_layer=*/2, /*n_head=*/2,
                         /*d_model=*/8, /*vocab_size=*/11,
                         /*seq_len=*/5, /*tie_embeddings=*/false};

TEST(Gpt, HasEmbeddingTransformerBlocksAndHead) {
  const Model model = make_gpt(kTiny);
  ASSERT_EQ(model.num_blocks(), 4u);
  EXPECT_EQ(model.block(0).name, "embedding");
  EXPECT_EQ(model.block(1).name, "block.0");
  EXPECT_EQ(model.block(2).name, "block.1");
  EXPECT_EQ(model.block(3).name, "head");
  const auto block_specs = model.block(1).module->parameter_specs();
  ASSERT_EQ(block_specs.size(), 12u);
  EXPECT_EQ(block_specs[0].name, "ln_1.weight");
  EXPECT_EQ(block_specs[2].name, "attn.qkv.weight");
  EXPECT_EQ(block_specs[11].name, "mlp.proj.bias");
  // The attention output projection is scaled down by 1/sqrt(2 n_layer) = 1/2.
  EXPECT_FLOAT_EQ(block_specs[4].init.scale, 0.01f);
}

TEST(Gpt, ParameterCountMatchesClosedForm) {
  // C = 8, V = 11, S = 5, L = 2: (V + S) C = 128; per block 12 C^2 + 13 C = 872;
  // head 2 C + V C = 104.
  EXPECT_EQ(make_gpt(kTiny).parameter_count(), 128 + 2 * 872 + 104);
  // GPT-2 small (untied head): 124,439,808 tied + the 38,597,376 of a separate lm_head.
  const GptShape gpt2{12, 12, 768, 50257, 1024, false};
  EXPECT_EQ(gpt_parameter_count(gpt2), 124439808 + 50257 * 768);
  EXPECT_EQ(make_gpt(gpt2).parameter_count(), gpt_parameter_count(gpt2));
}

TEST(Gpt, TiedEmbeddingsShareTheHeadWithTheTokenEmbedding) {
  GptShape shape = kTiny;
  shape.tie_embeddings = true;
  const Model model = make_gpt(shape);
  ASSERT_EQ(model.ties().size(), 1u);
  const ParameterTie& tie = model.ties()[0];
  EXPECT_EQ(model.block(tie.block).module->parameter_specs()[tie.parameter].name, "lm_head.weight");
  EXPECT_EQ(model.block(tie.source_block).module->parameter_specs()[tie.source_parameter].name,
            "wte");
  EXPECT_EQ(model.parameter_count(),
            make_gpt(kTiny).parameter_count() - shape.vocab_size * shape.d_model);
  EXPECT_EQ(model.parameter_count(), gpt_parameter_count(shape));
  // GPT-2 small with its tied head: the published 124,439,808.
  EXPECT_EQ(gpt_parameter_count({12, 12, 768, 50257, 1024, true}), 124439808);
}

TEST(Gpt, DModelNotDivisibleByHeadsIsAConfigError) {
  GptShape shape = kTiny;
  shape.n_head = 3;
  EXPECT_THROW(make_gpt(shape), ConfigError);
}

TEST(GptGradients, EveryBlockMatchesFiniteDifferences) {
  Model model = make_gpt(kTiny);
  const std::int64_t batch = 2;
  {
    SCOPED_TRACE("embedding");
    MemoryTracker tracker(Device::cpu());
    testing::ModuleState state = testing::make_state(*model.block(0).module, tracker, 91);
    Tensor ids = Tensor::zeros(Shape{batch, kTiny.seq_len}, DType::kI32, tracker,
                               MemoryCategory::kActivations);
    for (std::int64_t i = 0; i < ids.numel(); ++i) {
      ids.data_as<std::int32_t>()[i] = static_cast<std::int32_t>((7 * i + 3) % kTiny.vocab_size);
    }
    testing::expect_parameter_gradients_match(*model.block(0).module, state, ids, 92);
  }
  for (std::size_t b = 1; b < model.num_blocks(); ++b) {
    SCOPED_TRACE(model.block(b).name);
    testing::expect_gradients_match(*model.block(b).module,
                                    Shape{batch, kTiny.seq_len, kTiny.d_model}, 93 + b);
  }
}

}  // namespace
}  // namespace zt::nn

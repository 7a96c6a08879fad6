// The Llama model: its blocks and parameter names, the parameter count against the published
// Llama 3 figures, the tied head, the refused shapes naming their keys, and every block's
// gradients against finite differences on a 2-layer model.
#include "nn/models/llama.h"

#include <gtest/gtest.h>

#include <string>

#include "gradient_check.h"

namespace zt::nn {
namespace {

LlamaShape tiny() {
  LlamaShape shape;
  shape.n_layer = 2;
  shape.n_head = 4;
  shape.n_kv_head = 2;
  shape.d_model = 8;
  shape.ffn_dim = 12;
  shape.vocab_size = 11;
  shape.seq_len = 5;
  return shape;
}

TEST(Llama, HasTokenEmbeddingRmsNormBlocksAndHead) {
  const Model model = make_llama(tiny());
  EXPECT_EQ(model.name(), "llama");
  ASSERT_EQ(model.num_blocks(), 4u);
  EXPECT_EQ(model.block(0).name, "embedding");
  EXPECT_EQ(model.block(1).name, "block.0");
  EXPECT_EQ(model.block(3).name, "head");
  const auto embedding_specs = model.block(0).module->parameter_specs();
  ASSERT_EQ(embedding_specs.size(), 1u);  // no wpe: positions are rotary
  EXPECT_EQ(embedding_specs[0].name, "wte");
  const auto block_specs = model.block(1).module->parameter_specs();
  ASSERT_EQ(block_specs.size(), 6u);
  EXPECT_EQ(block_specs[0].name, "rms_1.weight");
  EXPECT_EQ(block_specs[1].name, "attn.qkv.weight");
  EXPECT_EQ(block_specs[1].shape, (Shape{(4 + 2 * 2) * 2, 8}));
  EXPECT_EQ(block_specs[2].name, "attn.proj.weight");
  EXPECT_EQ(block_specs[3].name, "rms_2.weight");
  EXPECT_EQ(block_specs[4].name, "mlp.fc.weight");
  EXPECT_EQ(block_specs[4].shape, (Shape{2 * 12, 8}));
  EXPECT_EQ(block_specs[5].name, "mlp.proj.weight");
  // The residual projections are scaled down by 1/sqrt(2 n_layer) = 1/2.
  EXPECT_FLOAT_EQ(block_specs[2].init.scale, 0.01f);
  EXPECT_FLOAT_EQ(block_specs[5].init.scale, 0.01f);
  const auto head_specs = model.block(3).module->parameter_specs();
  ASSERT_EQ(head_specs.size(), 2u);
  EXPECT_EQ(head_specs[0].name, "rms_f.weight");
  EXPECT_EQ(head_specs[1].name, "lm_head.weight");
}

TEST(Llama, ParameterCountMatchesClosedFormAndLlama3) {
  // C = 8, hd = 2, V = 11, F = 12, L = 2: V C = 88; per block 2 C + (4 + 4) 2 C + C^2 + 3 C F
  // = 16 + 128 + 64 + 288 = 496; head C + V C = 96.
  EXPECT_EQ(make_llama(tiny()).parameter_count(), 88 + 2 * 496 + 96);
  EXPECT_EQ(llama_parameter_count(tiny()), 88 + 2 * 496 + 96);
  LlamaShape llama_3_2_1b{16, 32, 8, 2048, 8192, 128256, 2048, 500000.0f, 1e-5f, true};
  EXPECT_EQ(llama_parameter_count(llama_3_2_1b), 1235814400);
  LlamaShape llama_3_8b{32, 32, 8, 4096, 14336, 128256, 8192, 500000.0f, 1e-5f, false};
  EXPECT_EQ(llama_parameter_count(llama_3_8b), 8030261248);
}

TEST(Llama, DefaultFfnDimIsEightThirdsOfDModelRoundedUpTo256) {
  EXPECT_EQ(llama_default_ffn_dim(4096), 11008);  // Llama 2 7B
  EXPECT_EQ(llama_default_ffn_dim(64), 256);
  EXPECT_EQ(llama_default_ffn_dim(96), 256);
  EXPECT_EQ(llama_default_ffn_dim(97), 512);  // 8 x 97 / 3 = 258
}

TEST(Llama, TiedHeadSharesTheTokenEmbedding) {
  LlamaShape shape = tiny();
  shape.tie_embeddings = true;
  const Model model = make_llama(shape);
  ASSERT_EQ(model.ties().size(), 1u);
  const ParameterTie& tie = model.ties()[0];
  EXPECT_EQ(model.block(tie.block).module->parameter_specs()[tie.parameter].name, "lm_head.weight");
  EXPECT_EQ(model.block(tie.source_block).module->parameter_specs()[tie.source_parameter].name,
            "wte");
  EXPECT_EQ(model.parameter_count(), llama_parameter_count(shape));
  EXPECT_EQ(model.parameter_count(),
            make_llama(tiny()).parameter_count() - shape.vocab_size * shape.d_model);
}

void expect_refused_naming(const LlamaShape& shape, const std::string& key) {
  try {
    (void)make_llama(shape);
    ADD_FAILURE() << "expected a ConfigError naming " << key;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
  }
}

TEST(Llama, ShapesThatCannotBeBuiltAreConfigErrorsNamingTheKey) {
  LlamaShape shape = tiny();
  shape.n_kv_head = 3;  // does not divide 4
  expect_refused_naming(shape, "model.n_kv_head");
  shape = tiny();
  shape.n_head = 8;  // head_dim 1: no rotary pairs
  shape.n_kv_head = 8;
  expect_refused_naming(shape, "even");
  shape = tiny();
  shape.n_head = 3;
  expect_refused_naming(shape, "model.n_head");
  shape = tiny();
  shape.ffn_dim = 0;
  expect_refused_naming(shape, "model.ffn_dim");
  shape = tiny();
  shape.rope_theta = 0.0f;
  expect_refused_naming(shape, "model.rope_theta");
  shape = tiny();
  shape.norm_eps = -1.0f;
  expect_refused_naming(shape, "model.norm_eps");
}

TEST(LlamaGradients, EveryBlockMatchesFiniteDifferences) {
  const LlamaShape shape = tiny();
  Model model = make_llama(shape);
  const std::int64_t batch = 2;
  {
    SCOPED_TRACE("embedding");
    MemoryTracker tracker(Device::cpu());
    testing::ModuleState state = testing::make_state(*model.block(0).module, tracker, 101);
    Tensor ids = Tensor::zeros(Shape{batch, shape.seq_len}, DType::kI32, tracker,
                               MemoryCategory::kActivations);
    for (std::int64_t i = 0; i < ids.numel(); ++i) {
      ids.data_as<std::int32_t>()[i] = static_cast<std::int32_t>((7 * i + 3) % shape.vocab_size);
    }
    testing::expect_parameter_gradients_match(*model.block(0).module, state, ids, 102);
  }
  for (std::size_t b = 1; b < model.num_blocks(); ++b) {
    SCOPED_TRACE(model.block(b).name);
    testing::expect_gradients_match(*model.block(b).module,
                                    Shape{batch, shape.seq_len, shape.d_model}, 103 + b);
  }
}

}  // namespace
}  // namespace zt::nn

// Embedding: the looked-up sums, the scatter-add backward (against finite differences),
// and the error for a token id outside the vocabulary.
#include "nn/layers/embedding.h"

#include <gtest/gtest.h>

#include <string>

#include "cpu_test_context.h"
#include "gradient_check.h"

namespace zt::nn {
namespace {

Tensor token_ids(MemoryTracker& tracker, std::int64_t batch, std::int64_t seq_len,
                 const std::vector<std::int32_t>& ids) {
  Tensor t =
      Tensor::zeros(Shape{batch, seq_len}, DType::kI32, tracker, MemoryCategory::kActivations);
  for (std::size_t i = 0; i < ids.size(); ++i) t.data_as<std::int32_t>()[i] = ids[i];
  return t;
}

TEST(Embedding, OutputIsTokenPlusPositionRow) {
  MemoryTracker tracker(Device::cpu());
  Embedding embedding(7, 4, 3);
  const testing::ModuleState state = testing::make_state(embedding, tracker, 81);
  const Tensor ids = token_ids(tracker, 2, 3, {6, 0, 6, 2, 2, 5});
  SavedActivations saved;
  testing::CpuTestContext cpu_context(tracker);
  ModuleContext ctx = cpu_context.module(saved);
  const Tensor y = embedding.forward(state.params, ids, ctx);
  ASSERT_EQ(y.shape(), (Shape{2, 3, 3}));
  const float* wte = state.params[0].data_as<float>();
  const float* wpe = state.params[1].data_as<float>();
  for (std::int64_t i = 0; i < 6; ++i) {
    const std::int32_t id = ids.data_as<std::int32_t>()[i];
    for (std::int64_t c = 0; c < 3; ++c) {
      EXPECT_FLOAT_EQ(y.data_as<float>()[i * 3 + c], wte[id * 3 + c] + wpe[(i % 3) * 3 + c]);
    }
  }
}

// The loss Σ w·y is linear in wte and wpe, so central differences are exact up to round-off;
// repeated ids (6 twice, 2 twice) check that the scatter accumulates.
TEST(EmbeddingGradients, ScatterAddMatchesFiniteDifferences) {
  MemoryTracker tracker(Device::cpu());
  Embedding embedding(7, 4, 3);
  testing::ModuleState state = testing::make_state(embedding, tracker, 82);
  const Tensor ids = token_ids(tracker, 2, 3, {6, 0, 6, 2, 2, 5});
  testing::expect_parameter_gradients_match(embedding, state, ids, 83);
}

TEST(Embedding, WithoutPositionsOutputIsTheTokenRowAndHasNoWpe) {
  MemoryTracker tracker(Device::cpu());
  Embedding embedding(7, 4, 3, PositionEmbedding::kNone);
  ASSERT_EQ(embedding.parameter_specs().size(), 1u);
  EXPECT_EQ(embedding.parameter_specs()[0].name, "wte");
  const testing::ModuleState state = testing::make_state(embedding, tracker, 85);
  const Tensor ids = token_ids(tracker, 2, 3, {6, 0, 6, 2, 2, 5});
  SavedActivations saved;
  testing::CpuTestContext cpu_context(tracker);
  ModuleContext ctx = cpu_context.module(saved);
  const Tensor y = embedding.forward(state.params, ids, ctx);
  const float* wte = state.params[0].data_as<float>();
  for (std::int64_t i = 0; i < 6; ++i) {
    const std::int32_t id = ids.data_as<std::int32_t>()[i];
    for (std::int64_t c = 0; c < 3; ++c) EXPECT_EQ(y.data_as<float>()[i * 3 + c], wte[id * 3 + c]);
  }
  saved.clear();
}

TEST(EmbeddingGradients, WithoutPositionsScatterAddMatchesFiniteDifferences) {
  MemoryTracker tracker(Device::cpu());
  Embedding embedding(7, 4, 3, PositionEmbedding::kNone);
  testing::ModuleState state = testing::make_state(embedding, tracker, 86);
  const Tensor ids = token_ids(tracker, 2, 3, {6, 0, 6, 2, 2, 5});
  testing::expect_parameter_gradients_match(embedding, state, ids, 87);
}

TEST(Embedding, BackwardReturnsNoInputGradient) {
  MemoryTracker tracker(Device::cpu());
  Embedding embedding(5, 2, 2);
  testing::ModuleState state = testing::make_state(embedding, tracker, 84);
  const Tensor ids = token_ids(tracker, 1, 2, {1, 4});
  SavedActivations saved;
  testing::CpuTestContext cpu_context(tracker);
  ModuleContext ctx = cpu_context.module(saved);
  const Tensor y = embedding.forward(state.params, ids, ctx);
  EXPECT_FALSE(embedding.backward(state.params, state.grads, y, ctx).defined());
  EXPECT_TRUE(saved.empty());
}

TEST(Embedding, TokenIdOutsideVocabularyIsAFormatErrorNamingIdAndVocabSize) {
  MemoryTracker tracker(Device::cpu());
  Embedding embedding(5, 4, 2);
  const testing::ModuleState state = testing::make_state(embedding, tracker, 85);
  for (const std::int32_t bad : {5, -1, 1000}) {
    const Tensor ids = token_ids(tracker, 1, 3, {0, bad, 1});
    SavedActivations saved;
    testing::CpuTestContext cpu_context(tracker);
    ModuleContext ctx = cpu_context.module(saved);
    try {
      embedding.forward(state.params, ids, ctx);
      ADD_FAILURE() << "id " << bad << " was accepted";
    } catch (const FormatError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("token id " + std::to_string(bad)), std::string::npos) << message;
      EXPECT_NE(message.find("vocab_size = 5"), std::string::npos) << message;
      EXPECT_NE(message.find("position 1"), std::string::npos) << message;
    }
    EXPECT_TRUE(saved.empty()) << "a rejected batch left saved activations";
  }
}

}  // namespace
}  // namespace zt::nn

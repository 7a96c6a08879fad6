// Flat layouts pad to even, aligned shards; buckets cover the buffer from its end.
#include "sharding/flat_layout.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nn/models/gpt.h"
#include "nn/models/mlp.h"
#include "sharding/gradient_buckets.h"

namespace zt::zero {
namespace {

TEST(FlatLayout, PadsToWorldSizeTimesAlignment) {
  const nn::Model model = nn::make_mlp({5, 7, 3});  // 5*7+7+7*3+3 = 66 parameters
  for (int world : {1, 2, 3, 4}) {
    const FlatLayout layout = make_flat_layout(model, world);
    EXPECT_EQ(layout.numel, 66);
    EXPECT_EQ(layout.padded_numel % (kShardAlignElements * world), 0);
    // Each parameter aligned to 8 elements: 35 -> 40, 7 -> 8, 21 -> 24, 3 -> 8 (Note [Why
    // parameters are aligned]), then the shards' padding.
    EXPECT_GE(layout.padded_numel, 80);
    EXPECT_LT(layout.padded_numel, 80 + kShardAlignElements * world);
  }
  const FlatLayout layout = make_flat_layout(model, 1);
  ASSERT_EQ(layout.blocks.size(), 2u);
  EXPECT_EQ(layout.blocks[0].parameters[1].offset, 40);
  EXPECT_EQ(layout.blocks[1].offset, 48);
  EXPECT_EQ(layout.blocks[1].parameters[1].offset, 48 + 24);
  // The unpadded order, which checkpoints and exports hold, is unchanged by the alignment.
  EXPECT_EQ(layout.blocks[1].unpadded_offset, 42);
  EXPECT_EQ(layout.blocks[1].parameters[1].unpadded_offset, 42 + 21);
  EXPECT_EQ(layout.blocks[1].numel, 24);
  EXPECT_EQ(layout.blocks[1].aligned_numel, 32);
}

// A GPT of odd widths (d_model 36, a GPT-2 vocabulary of 50257): every parameter starts on a
// 16-byte boundary in bf16 (and 32 in f32), in both paddings and at every world size; the
// unpadded offsets still run back to back.
TEST(FlatLayout, ParametersOfOddWidthsStartSixteenByteAligned) {
  const nn::Model model = nn::make_gpt({2, 4, 36, 50257, 20, true});
  for (const BlockPadding padding : {BlockPadding::kWholeBuffer, BlockPadding::kEachBlock}) {
    for (int world : {1, 3, 4}) {
      const FlatLayout layout = make_flat_layout(model, world, padding);
      std::int64_t unpadded = 0;
      for (const BlockSlots& block : layout.blocks) {
        for (const ParameterSlot& slot : block.parameters) {
          SCOPED_TRACE(block.name + "." + slot.spec.name + " world " + std::to_string(world));
          EXPECT_EQ(slot.offset % kParameterAlignElements, 0);
          EXPECT_EQ(slot.offset * 2 % 16, 0);  // bf16 compute copy and gradients
          if (slot.tied_to_block) continue;
          EXPECT_EQ(slot.unpadded_offset, unpadded);
          unpadded += slot.spec.shape.numel();
        }
      }
      EXPECT_EQ(unpadded, layout.numel);
      EXPECT_EQ(layout.numel, model.parameter_count());
      EXPECT_GT(layout.padded_numel, layout.numel);
    }
  }
}

TEST(FlatLayout, InitializationIsIndependentOfWorldSizeAndPaddingStaysZero) {
  const nn::Model model = nn::make_mlp({5, 7, 3});
  MemoryTracker tracker(Device::cpu());
  const FlatLayout one = make_flat_layout(model, 1);
  const FlatLayout four = make_flat_layout(model, 4);
  Tensor a =
      Tensor::zeros(Shape{one.padded_numel}, DType::kF32, tracker, MemoryCategory::kParameters);
  Tensor b =
      Tensor::zeros(Shape{four.padded_numel}, DType::kF32, tracker, MemoryCategory::kParameters);
  const std::unique_ptr<DeviceContext> device = make_cpu_device_context(tracker);
  initialize_parameters(one, 99, a, *device);
  initialize_parameters(four, 99, b, *device);
  for (std::int64_t i = 0; i < one.padded_numel; ++i)
    ASSERT_EQ(a.data_as<float>()[i], b.data_as<float>()[i]);
  // Padding, between the aligned parameters and after them, is zero.
  std::vector<bool> parameter(static_cast<std::size_t>(four.padded_numel), false);
  for (const BlockSlots& block : four.blocks) {
    for (const ParameterSlot& slot : block.parameters) {
      for (std::int64_t i = 0; i < slot.spec.shape.numel(); ++i) {
        parameter[static_cast<std::size_t>(slot.offset + i)] = true;
      }
    }
  }
  for (std::int64_t i = 0; i < four.padded_numel; ++i) {
    if (!parameter[static_cast<std::size_t>(i)]) {
      EXPECT_EQ(b.data_as<float>()[i], 0.0f) << i;
    }
  }
  // Biases are initialized too (uniform), weights differ from each other.
  EXPECT_NE(a.data_as<float>()[0], a.data_as<float>()[1]);
}

TEST(FlatLayout, UnpaddedParametersAreTheBlocksWithoutTheirPadding) {
  // Each block padded on its own (the sharded strategies' layout) at world size 4: the
  // export is every block's real elements back to back, the same as the one-rank layout's.
  const nn::Model model = nn::make_mlp({5, 7, 3});
  MemoryTracker tracker(Device::cpu());
  const std::unique_ptr<DeviceContext> device = make_cpu_device_context(tracker);
  const FlatLayout one = make_flat_layout(model, 1);
  const FlatLayout padded = make_flat_layout(model, 4, BlockPadding::kEachBlock);
  ASSERT_GT(padded.blocks[1].offset, padded.blocks[0].numel);  // padding between the blocks
  Tensor a =
      Tensor::zeros(Shape{one.padded_numel}, DType::kF32, tracker, MemoryCategory::kParameters);
  Tensor b =
      Tensor::zeros(Shape{padded.padded_numel}, DType::kF32, tracker, MemoryCategory::kParameters);
  initialize_parameters(one, 7, a, *device);
  initialize_parameters(padded, 7, b, *device);
  const std::vector<float> exported = unpadded_parameters(padded, b, *device);
  ASSERT_EQ(exported.size(), 66u);
  // The export is in the unpadded order: each parameter's values, back to back.
  std::size_t next = 0;
  for (const BlockSlots& block : one.blocks) {
    for (const ParameterSlot& slot : block.parameters) {
      for (std::int64_t i = 0; i < slot.spec.shape.numel(); ++i) {
        ASSERT_EQ(exported[next++], a.data_as<float>()[slot.offset + i]);
      }
    }
  }
  EXPECT_EQ(unpadded_parameters(one, a, *device), exported);
}

TEST(GradientBuckets, CoverTheBufferFromTheEndAndBecomeReadyInOrder) {
  GradientBuckets buckets(100, 30);
  ASSERT_EQ(buckets.size(), 4);
  EXPECT_EQ(buckets.bucket(0).offset, 70);
  EXPECT_EQ(buckets.bucket(3).offset, 0);
  EXPECT_EQ(buckets.bucket(3).numel, 10);
  EXPECT_TRUE(buckets.take_ready(75).empty());   // [75, 100) final: [70, 100) is not yet
  EXPECT_EQ(buckets.take_ready(50).size(), 1u);  // [50, 100) final: [70, 100) only
  EXPECT_EQ(buckets.take_ready(40).size(), 1u);  // [40, 70) too
  EXPECT_EQ(buckets.take_ready(0).size(), 2u);
  EXPECT_TRUE(buckets.all_taken());
  buckets.reset();
  EXPECT_FALSE(buckets.all_taken());
}

TEST(GradientBuckets, AreComputedNotStoredSoAnySizeCostsNothing) {
  // 10^16 one-element buckets: storing them would take 160 PB.
  GradientBuckets buckets(std::int64_t{10'000'000'000'000'000}, 1);
  EXPECT_EQ(buckets.size(), std::int64_t{10'000'000'000'000'000});
  EXPECT_EQ(buckets.bucket(0).offset, std::int64_t{9'999'999'999'999'999});
  EXPECT_EQ(buckets.take_ready(std::int64_t{9'999'999'999'999'997}).size(), 3u);
  EXPECT_FALSE(buckets.all_taken());
}

}  // namespace
}  // namespace zt::zero

// GradientReducer under hybrid sharding: a block's reduced slices cross the replicas as one
// all-reduce however many segments the block has (Note [One all-reduce per block]), and the
// shard receives them where the segments' slices belong; and each block's all-reduce starts
// when the next block is reduced, not at drain() (Note [Replicas all-reduce behind the
// backward]).
#include "sharding/gradient_reducer.h"

#include <gtest/gtest.h>

#include <string>

#include "comm/communicator_factory.h"
#include "comm/recording_communicator.h"
#include "comm/store/memory_store.h"
#include "nn/models/gpt.h"
#include "sharding/flat_layout.h"
#include "sharding/shard_plan.h"

namespace zt::zero {
namespace {

TEST(GradientReducer, HybridShardingAllReducesEachBlockOnceAcrossReplicas) {
  const nn::Model model = nn::make_gpt({4, 2, 32, 32, 8, false});
  const FlatLayout layout = make_flat_layout(model, 1, BlockPadding::kEachBlock);
  // Small segments, so that blocks have several (as configs/tiny.toml's 64 KiB buckets do).
  const ShardPlan plan{layout, 1, 0, 256};
  MemoryTracker tracker{Device::cpu()};
  const std::unique_ptr<DeviceContext> device = make_cpu_device_context(tracker);
  comm::MemoryStore store;
  const std::unique_ptr<comm::Communicator> group = comm::create_cpu_communicator(store, 0, 1);
  comm::MemoryStore replica_store;
  const std::unique_ptr<comm::Communicator> replica_world =
      comm::create_cpu_communicator(replica_store, 0, 1);
  comm::RecordingCommunicator replicas(*replica_world, [] { return std::string("backward"); });
  const Tensor shard =
      Tensor::zeros(Shape{plan.shard_numel()}, DType::kF32, tracker, MemoryCategory::kGradients);
  std::int64_t most_segments = 0;
  {
    GradientReducer reducer(*group, &replicas, plan, ShardBuffer::own(plan, shard), *device);
    for (std::size_t block = 0; block < plan.block_count(); ++block) {
      most_segments = std::max(most_segments, plan.segments(block).size());
      const std::int64_t numel = layout.blocks[block].padded_numel;
      Tensor grads = Tensor::zeros(Shape{numel}, DType::kF32, tracker, MemoryCategory::kGradients);
      float* values = grads.data_as<float>();
      for (std::int64_t i = 0; i < numel; ++i) {
        values[i] = static_cast<float>(layout.blocks[block].offset + i);
      }
      reducer.reduce_block(block, grads, /*accumulate=*/false);
    }
    reducer.drain();
  }
  ASSERT_GT(most_segments, 1) << "the test needs a block of several segments";
  std::size_t all_reduces = 0;
  for (const comm::RecordedOp& op : replicas.ops()) {
    if (op.kind == comm::CollectiveKind::kAllReduce) ++all_reduces;
  }
  EXPECT_EQ(all_reduces, plan.block_count());
  // One rank in each group and one replica: the shard is the flat gradients themselves.
  const float* reduced = shard.data_as<float>();
  for (std::int64_t i = 0; i < plan.shard_numel(); ++i) {
    ASSERT_EQ(reduced[i], static_cast<float>(i)) << "element " << i;
  }
}

// Blocks reduced as backward does, last first: block b's all-reduce across the replicas is
// submitted while block b - 1 is being handed over (its reduce-scatter inside the group waited
// for then), so only the last block's waits for drain(). Before, a queue of 4 in flight held
// them back until it filled or drain().
TEST(GradientReducer, HybridAllReduceStartsWhenTheNextBlockIsReduced) {
  const nn::Model model = nn::make_gpt({4, 2, 32, 32, 8, false});
  const FlatLayout layout = make_flat_layout(model, 1, BlockPadding::kEachBlock);
  const ShardPlan plan{layout, 1, 0, 1 << 20};
  ASSERT_GT(plan.block_count(), 4u) << "more blocks than the flat queue holds";
  MemoryTracker tracker{Device::cpu()};
  const std::unique_ptr<DeviceContext> device = make_cpu_device_context(tracker);
  comm::MemoryStore store;
  const std::unique_ptr<comm::Communicator> group = comm::create_cpu_communicator(store, 0, 1);
  comm::MemoryStore replica_store;
  const std::unique_ptr<comm::Communicator> replica_world =
      comm::create_cpu_communicator(replica_store, 0, 1);
  std::string phase;
  comm::RecordingCommunicator replicas(*replica_world, [&] { return phase; });
  const Tensor shard =
      Tensor::zeros(Shape{plan.shard_numel()}, DType::kF32, tracker, MemoryCategory::kGradients);
  {
    GradientReducer reducer(*group, &replicas, plan, ShardBuffer::own(plan, shard), *device);
    for (std::size_t block = plan.block_count(); block-- > 0;) {
      phase = "reducing block " + std::to_string(block);
      reducer.reduce_block(block,
                           Tensor::zeros(Shape{layout.blocks[block].padded_numel}, DType::kF32,
                                         tracker, MemoryCategory::kGradients),
                           /*accumulate=*/false);
    }
    phase = "drain";
    reducer.drain();
  }
  std::vector<std::string> phases;
  for (const comm::RecordedOp& op : replicas.ops()) {
    if (op.kind == comm::CollectiveKind::kAllReduce) phases.push_back(op.submitted_in);
  }
  std::vector<std::string> want;
  for (std::size_t block = plan.block_count(); block-- > 1;) {
    want.push_back("reducing block " + std::to_string(block - 1));
  }
  want.push_back("drain");
  EXPECT_EQ(phases, want);
}

}  // namespace
}  // namespace zt::zero

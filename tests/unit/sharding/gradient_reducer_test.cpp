// GradientReducer under hybrid sharding: a block's reduced slices cross the replicas as one
// all-reduce however many segments the block has (Note [One all-reduce per block]), and the
// shard receives them where the segments' slices belong.
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

}  // namespace
}  // namespace zt::zero

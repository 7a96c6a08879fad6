// ParameterGatherer: prefetching stops where the gathered bytes would pass
// zero.max_live_parameters, the block being computed is gathered regardless, and release
// frees what prefetch took; driven through a stage-3 forward and backward of a GPT.
#include "sharding/parameter_gatherer.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "nn/models/gpt.h"
#include "sharding/flat_layout.h"
#include "sharding/shard_plan.h"

namespace zt::zero {
namespace {

struct StageThreeRank {
  nn::Model model = nn::make_gpt({4, 2, 32, 32, 8, false});
  FlatLayout layout = make_flat_layout(model, 1, BlockPadding::kEachBlock);
  ShardPlan plan{layout, 1, 0, 1 << 12};
  MemoryTracker tracker{Device::cpu()};
  std::unique_ptr<DeviceContext> device = make_cpu_device_context(tracker);
  comm::MemoryStore store;
  std::unique_ptr<comm::Communicator> comm = comm::create_cpu_communicator(store, 0, 1);
  Tensor shard =
      Tensor::zeros(Shape{plan.shard_numel()}, DType::kF32, tracker, MemoryCategory::kParameters);

  std::int64_t block_bytes(std::size_t block) const {
    return layout.blocks[block].padded_numel * 4;
  }
  std::int64_t largest_block_bytes() const {
    std::int64_t largest = 0;
    for (std::size_t b = 0; b < layout.blocks.size(); ++b) {
      largest = std::max(largest, block_bytes(b));
    }
    return largest;
  }

  // Runs the stage-3 hook order with `prefetch` blocks ahead; returns the most bytes that
  // were ever gathered at once.
  std::int64_t forward_backward(std::int64_t max_live_bytes, std::int64_t prefetch) {
    ZeroConfig config;
    config.prefetch_blocks = prefetch;
    config.max_live_parameters_bytes = max_live_bytes;
    ParameterGatherer gatherer(*comm, layout, plan, shard, *device, config);
    std::int64_t most = 0;
    const auto note = [&] { most = std::max(most, gatherer.live_bytes()); };
    const std::size_t blocks = layout.blocks.size();
    for (std::size_t b = 0; b < blocks; ++b) {
      EXPECT_EQ(gatherer.acquire(b).size(), layout.blocks[b].parameters.size());
      note();
      for (std::int64_t ahead = 1; ahead <= prefetch; ++ahead) {
        gatherer.prefetch(b + static_cast<std::size_t>(ahead));
        note();
      }
      if (b + 1 < blocks) gatherer.release(b);
    }
    for (std::size_t b = blocks; b-- > 0;) {
      gatherer.acquire(b);
      note();
      for (std::int64_t behind = 1; behind <= prefetch && b >= static_cast<std::size_t>(behind);
           ++behind) {
        gatherer.prefetch(b - static_cast<std::size_t>(behind));
        note();
      }
      gatherer.release(b);
    }
    EXPECT_EQ(gatherer.live_bytes(), 0);
    return most;
  }
};

TEST(ParameterGatherer, LiveBytesNeverPassTheCapWhilePrefetching) {
  StageThreeRank rank;
  const std::int64_t cap = 2 * rank.largest_block_bytes();
  EXPECT_LE(rank.forward_backward(cap, 4), cap);
}

TEST(ParameterGatherer, WithoutACapPrefetchGathersAhead) {
  StageThreeRank rank;
  // The control for the test above: four blocks ahead, uncapped, hold more than the cap.
  EXPECT_GT(rank.forward_backward(std::int64_t{1} << 40, 4), 2 * rank.largest_block_bytes());
}

TEST(ParameterGatherer, ACapBelowOneBlockStillGathersTheBlockInUse) {
  StageThreeRank rank;
  EXPECT_EQ(rank.forward_backward(1, 2), rank.largest_block_bytes());
}

}  // namespace
}  // namespace zt::zero

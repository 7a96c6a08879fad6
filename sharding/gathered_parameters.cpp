// Stage 3's gathered parameters: acquire, release and prefetch around each block.
#include "sharding/gathered_parameters.h"

#include <algorithm>

namespace zt::zero {

GatheredParameters::GatheredParameters(comm::Communicator& comm, const FlatLayout& layout,
                                       const ShardPlan& plan, ShardBuffer param_shard,
                                       DeviceContext& device, const ZeroConfig& config,
                                       bool shard_on_host, comm::Communicator* secondary)
    : block_count_(layout.blocks.size()),
      prefetch_blocks_(config.prefetch_blocks),
      param_shard_(std::move(param_shard)),
      gatherer_(comm, layout, plan, param_shard_.storage(), device, config, shard_on_host,
                secondary) {}

void GatheredParameters::start_next_forward() {
  for (std::int64_t b = 0; b < std::max<std::int64_t>(1, prefetch_blocks_); ++b) {
    gatherer_.prefetch(static_cast<std::size_t>(b));
  }
}

void GatheredParameters::before_forward(std::size_t block) {
  gatherer_.acquire(block);
  for (std::int64_t ahead = 1; ahead <= prefetch_blocks_; ++ahead) {
    gatherer_.prefetch(block + static_cast<std::size_t>(ahead));
  }
}

void GatheredParameters::after_forward(std::size_t block) {
  // The last block's backward comes next: keep it gathered.
  if (block + 1 < block_count_) gatherer_.release(block);
}

void GatheredParameters::end_forward_only() {
  // after_forward kept the last block for a backward that will not come; the next forward
  // starts at block 0, as after an optimizer step.
  gatherer_.release(block_count_ - 1);
  start_next_forward();
}

void GatheredParameters::before_backward(std::size_t block) {
  gatherer_.acquire(block);
  for (std::int64_t behind = 1; behind <= prefetch_blocks_; ++behind) {
    if (block >= static_cast<std::size_t>(behind)) {
      gatherer_.prefetch(block - static_cast<std::size_t>(behind));
    }
  }
}

void GatheredParameters::after_backward(std::size_t block, bool last_micro_batch) {
  gatherer_.release(block);
  // The next micro-batch's forward starts at block 0: have it on the way.
  if (block == 0 && !last_micro_batch) start_next_forward();
}

}  // namespace zt::zero

// GatheredParameters (ZeRO stage 3): the rank keeps only its parameter shard; each block is
// gathered around its forward and backward by the ParameterGatherer (hpZ's secondary shard
// lives inside it), with zero.prefetch_blocks blocks on the way ahead.
#pragma once

#include <vector>

#include "sharding/parameter_gatherer.h"
#include "sharding/parameter_residency.h"

namespace zt::zero {

class GatheredParameters final : public ParameterResidency {
 public:
  // `param_shard` is the rank's shard (on the host with `shard_on_host`); the gatherer's
  // arguments as ParameterGatherer's.
  GatheredParameters(comm::Communicator& comm, const FlatLayout& layout, const ShardPlan& plan,
                     ShardBuffer param_shard, DeviceContext& device, const ZeroConfig& config,
                     bool shard_on_host, comm::Communicator* secondary);

  const std::vector<Tensor>& parameters(std::size_t block) override {
    return gatherer_.acquire(block);
  }
  void before_forward(std::size_t block) override;
  void after_forward(std::size_t block) override;
  void end_forward_only() override;
  void before_backward(std::size_t block) override;
  void after_backward(std::size_t block, bool last_micro_batch) override;

  const ShardBuffer& own_shard() const override { return param_shard_; }
  // No refresh exists here; the gathers in flight are the gatherer's, and before_update
  // waits for them as it releases them.
  void wait_for_readers() override {}
  // Gathered copies, persistent ones too, are stale once the shard changes.
  void before_update() override { gatherer_.release_all(); }
  // Gathers read the shard itself: nothing to send.
  void publish() override {}
  void start_next_forward() override;
  std::int64_t peak_gathered_bytes() const override { return gatherer_.peak_live_bytes(); }

 private:
  const std::size_t block_count_;
  const std::int64_t prefetch_blocks_;  // zero.prefetch_blocks
  ShardBuffer param_shard_;             // this rank's parameters, compute dtype
  ParameterGatherer gatherer_;
};

}  // namespace zt::zero

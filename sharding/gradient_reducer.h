// GradientReducer: reduce-scatters a block's gradients into this rank's gradient shard as
// soon as the block's backward is done, while backward continues on the caller's thread.
// With accumulation, later micro-batches reduce into scratch and are added on completion.
// A shard in place in the reduced buffer (stage 1's full gradients) receives its slices
// where they lie, so the shard costs no second copy.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "core/device/device_context.h"
#include "sharding/shard_buffer.h"
#include "sharding/shard_plan.h"

namespace zt::zero {

class GradientReducer {
 public:
  // Scratch comes from `device`'s tracker; results are applied with its ops.
  GradientReducer(comm::Communicator& comm, const ShardPlan& plan, ShardBuffer grad_shard,
                  DeviceContext& device);

  // Reduce-scatters `block_grads` (the block's padded region, f32). With `accumulate` the
  // result is added to the shard; otherwise it replaces the shard's slice. Keeps
  // `block_grads` alive until the reduction is done.
  void reduce_block(std::size_t block, Tensor block_grads, bool accumulate);
  // Waits for every reduction in flight and applies it.
  void drain();

 private:
  struct InFlight {
    std::vector<std::shared_ptr<comm::Work>> works;
    Tensor input;    // kept alive for the comm thread
    Tensor scratch;  // accumulate: where the reduced slices land first
    std::size_t block = 0;
    bool accumulate = false;
    bool via_scratch = false;  // reduced into scratch, then added or copied into the shard
  };
  void complete_oldest();

  // Bound on reductions in flight, so transient gradient buffers cannot pile up.
  static constexpr std::size_t kMaxInFlight = 4;

  comm::Communicator& comm_;
  const ShardPlan& plan_;
  ShardBuffer grad_shard_;
  DeviceContext& device_;
  std::deque<InFlight> in_flight_;
};

}  // namespace zt::zero

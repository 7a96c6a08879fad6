// GradientReducer: reduce-scatters a block's gradients into this rank's gradient shard as
// soon as the block's backward is done, while backward continues on the caller's thread.
// With accumulation, later micro-batches reduce into scratch and are added on completion.
// A shard in place in the reduced buffer (stage 1's full gradients) receives its slices
// where they lie, so the shard costs no second copy. Under hybrid sharding (Note [Hybrid
// sharding] in sharding/shard_groups.h) the reduce-scatter runs inside the shard group and
// the reduced slices are then all-reduced across the replicas. With qgZ
// (zero.quantized_gradients) each block's reduce-scatter is the hierarchical quantized one of
// Note [Quantized gradient reduce-scatters], its result landing in scratch as ever.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "core/device/device_context.h"
#include "sharding/quantized_reduce_scatter.h"
#include "sharding/shard_buffer.h"
#include "sharding/shard_plan.h"

namespace zt::zero {

class GradientReducer {
 public:
  // Scratch comes from `device`'s tracker; results are applied with its ops. `comm`
  // reduce-scatters (the shard group); `replicas`, when not null, all-reduces each reduced
  // slice across the groups that hold the same shard.
  GradientReducer(comm::Communicator& comm, comm::Communicator* replicas, const ShardPlan& plan,
                  ShardBuffer grad_shard, DeviceContext& device);

  // qgZ: every later reduce_block runs over `exchange`'s two hops in `format`. With
  // `residuals` (error feedback: for each block, the f32 error buffers of its two
  // quantizations) each block carries its rounding error to its next reduction.
  void quantize(const GradientExchange& exchange, const nn::math::BlockQuantFormat& format,
                std::vector<QuantizationResidual> residuals = {});

  // Reduce-scatters `block_grads` (the block's padded region, f32). With `accumulate` the
  // result is added to the shard; otherwise it replaces the shard's slice. Keeps
  // `block_grads` alive until the reduction is done.
  // `last_micro_batch` marks the step's final contribution to the block's slices.
  void reduce_block(std::size_t block, Tensor block_grads, bool accumulate,
                    bool last_micro_batch = true);
  // Waits for every reduction in flight and applies it.
  void drain();
  // Called with the block as soon as its slices of the shard hold the step's reduced
  // gradients (its last micro-batch's reduction applied): during backward for all but the
  // last few blocks in flight, the rest from drain(). The offloaded optimizer sends them to
  // the host from here, overlapping the rest of backward.
  void on_block_reduced(std::function<void(std::size_t block)> callback) {
    on_block_reduced_ = std::move(callback);
  }

 private:
  struct InFlight {
    std::vector<std::shared_ptr<comm::Work>> works;
    Tensor input;    // kept alive for the comm thread
    Tensor scratch;  // accumulate: where the reduced slices land first
    std::size_t block = 0;
    bool accumulate = false;
    bool via_scratch = false;  // reduced into scratch, then added or copied into the shard
    bool last_micro_batch = true;
    std::unique_ptr<QuantizedReduceScatter> quantized;  // qgZ: its hops, then null
  };
  // Waits for the oldest flight's reduce-scatters; applies it, or under hybrid sharding
  // starts its all-reduce across the replicas and queues it in replicating_. A qgZ flight
  // whose first hop that was goes on to its second in exchanging_.
  void complete_oldest();
  // Waits for the oldest exchanging flight's second hop, then as complete_oldest.
  void finish_oldest_exchanging();
  // A flight whose reduction inside the group is done: applied, or all-reduced across the
  // replicas first.
  void reduced_in_group(InFlight flight);
  // Waits for the oldest replicating flight's all-reduces and applies it.
  void finish_oldest_replicating();
  // The flight's reduced slices into the shard (from scratch), then on_block_reduced_.
  void apply(const InFlight& flight);
  // Hybrid sharding: all-reduces the flight's reduced slices (where the reduce-scatter put
  // them) across the replicas, once the reduce-scatters are done, as one message where they
  // lie back to back (Note [One all-reduce per block]); returns the works.
  std::vector<std::shared_ptr<comm::Work>> reduce_across_replicas(const InFlight& flight);

  // Bound on reductions in flight, so transient gradient buffers cannot pile up; under hybrid
  // sharding 1 (Note [Replicas all-reduce behind the backward] in gradient_reducer.cpp).
  static constexpr std::size_t kMaxInFlight = 4;
  // Hybrid sharding: all-reduces across replicas left running past their block's completion,
  // waited for when the next block completes.
  static constexpr std::size_t kMaxReplicating = 1;
  // qgZ: flights in their cross-node hop past the next block's first hop.
  static constexpr std::size_t kMaxExchanging = 1;

  comm::Communicator& comm_;
  comm::Communicator* replicas_;  // null: one group holds every shard
  const ShardPlan& plan_;
  ShardBuffer grad_shard_;
  DeviceContext& device_;
  std::deque<InFlight> in_flight_;
  std::deque<InFlight> exchanging_;   // qgZ: in their second hop (across nodes)
  std::deque<InFlight> replicating_;  // reduced in the group, all-reducing across replicas
  const GradientExchange* exchange_ = nullptr;  // qgZ's hops; null: plain reduce-scatters
  nn::math::BlockQuantFormat format_;
  std::vector<QuantizationResidual> residuals_;  // by block; empty: no error feedback
  std::function<void(std::size_t block)> on_block_reduced_;
};

}  // namespace zt::zero

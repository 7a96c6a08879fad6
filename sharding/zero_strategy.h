// ZeroStrategy: where a model's parameters, gradients and optimizer states live across ranks,
// and the communication that keeps them consistent. The engine drives it block by
// block; the stage decides what each hook gathers, reduces or releases.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "comm/comm_lanes.h"
#include "comm/communicator.h"
#include "core/config/config.h"
#include "core/device/device_context.h"
#include "core/memory_tracker.h"
#include "optim/optimizer.h"
#include "sharding/flat_layout.h"
#include "sharding/state_shard.h"

namespace zt::zero {

inline constexpr std::string_view kParametersInUse = "parameters_in_use";

// The squared gradient norm finish_gradients found, and whether it is this rank's part only.
struct GradientNormSquared {
  double value = 0.0;
  bool rank_part = false;  // true: sum `value` over the ranks for the global norm squared
};

class ZeroStrategy {
 public:
  virtual ~ZeroStrategy() = default;

  virtual const FlatLayout& layout() const = 0;

  // Views of block `block`'s parameters, valid for compute between before_* and after_*.
  virtual const std::vector<Tensor>& parameters(std::size_t block) = 0;
  // Views backward accumulates block `block`'s gradients into.
  virtual const std::vector<Tensor>& gradients(std::size_t block) = 0;

  virtual void before_forward(std::size_t block) = 0;
  virtual void after_forward(std::size_t block) = 0;
  virtual void before_backward(std::size_t block) = 0;
  // Block `block` finished its backward; `last_micro_batch` marks the accumulation boundary.
  virtual void after_backward(std::size_t block, bool last_micro_batch) = 0;
  // A forward that no backward follows (evaluation) finished its last block: drop what
  // after_forward kept for the backward and ready the next forward, so the next step finds
  // memory as the optimizer step left it.
  virtual void end_forward_only() {}

  // Called before the last micro-batch's backward when nothing can veto this step's update
  // (no gradient clipping, no loss scaling), with the update's step (from 1) and lr: an
  // offloaded optimizer may then update each block's shard as soon as its gradients are
  // final, while backward goes on. optimizer_step(update_step, lr) still follows.
  virtual void prepare_update(std::int64_t update_step, float lr) {
    (void)update_step;
    (void)lr;
  }
  // Waits for the step's gradient reductions; returns the gradient norm squared. A strategy
  // whose ranks hold the whole reduced gradient (stage 0) returns the global value; one whose
  // ranks hold shards returns this rank's part, and the caller sums it over the ranks, in the
  // same all-reduce as the step's loss (Note [One host wait per step]).
  virtual GradientNormSquared finish_gradients() = 0;
  // When nothing can veto the update (no clipping, no loss scaling): finish_gradients() and
  // optimizer_step(step, lr) in one, returning what finish_gradients() would; `before_update`
  // runs between the two (the caller's phase changes there). A strategy may read the norm in
  // the update's own pass over the gradients (DDP: Note [The gradient norm in the update's
  // pass] in optim/step_internal.h), so the caller learns of a non-finite gradient only after
  // the update.
  virtual GradientNormSquared finish_gradients_and_update(
      std::int64_t step, float lr, const std::function<void()>& before_update) {
    const GradientNormSquared norm = finish_gradients();
    before_update();
    optimizer_step(step, lr);
    return norm;
  }
  // Multiplies this rank's gradients (or gradient shard) by `factor` (clipping, unscaling).
  virtual void scale_gradients(float factor) = 0;
  // Updates this rank's parameters (or shard) with the optimizer; `step` counts from 1.
  virtual void optimizer_step(std::int64_t step, float lr) = 0;
  virtual void zero_gradients() = 0;

  // The full, unpadded parameters in layout order, identical on every rank (collective).
  virtual std::vector<float> full_parameters() = 0;
  // Bytes this rank sent per collective kind so far.
  virtual comm::CommCounters comm_counters() const = 0;
  // Stage 3: the most gathered parameter bytes live at once so far; 0 where nothing is
  // gathered (stages 0-2 keep full parameters).
  virtual std::int64_t peak_gathered_parameter_bytes() const { return 0; }
  // Checkpoints (Note [Checkpoint state]): the fp32 master weights and optimizer states this
  // rank saves, as runs of the model's elements. Stages 1-3 save their shard; DDP, where every
  // rank holds everything, saves an equal 1/world slice of it, so every rank writes.
  virtual StateShard state_shard() const = 0;
  // Tensors saved after the optimizer's states, by name: with offload.overlap_step,
  // kParametersInUse (the parameters the next forward uses, one update behind the masters,
  // widened to f32). export_states writes them after the states; import_states takes them
  // when the checkpoint has them, and rebuilds the parameters from the masters otherwise.
  virtual std::vector<std::string> extra_state_names() const { return {}; }
  // How many files a checkpoint's states go to, given the ranks of the world, and which of
  // them this rank writes (nullopt: none). Every rank its own by default; under hybrid
  // sharding one group's ranks (the others hold copies of its shards: Note [Hybrid
  // sharding]), so a checkpoint is saved once and reads like one of a world of the group's
  // size, at any world size and group size.
  virtual int checkpoint_files(int world_size) const { return world_size; }
  virtual std::optional<int> checkpoint_file(int rank) const { return rank; }
  // What this rank loads: its state shard, or (DDP) every element.
  virtual StateShard load_shard() const { return state_shard(); }
  // Copies this rank's state shard into host memory: out[0] the fp32 masters, out[1 + i]
  // optimizer state i, each state_shard().numel elements (padding written as zero). Between
  // steps only; an update still in flight (offload.overlap_step) lands first, and its
  // parameters go out as a step would send them.
  virtual void export_states(std::span<float* const> out) = 0;
  // The reverse, before the first step: overwrites the masters and optimizer states with
  // `in` (laid out as load_shard() says, each load_shard().numel elements) and rebuilds the
  // compute-dtype parameters from the masters. Collective in stages 1-3 (the parameters are
  // all-gathered).
  virtual void import_states(std::span<const float* const> in) = 0;

  // offload.optimizer = "cpu": the host tracker counting the offloaded states
  // (host_offload); null when nothing is offloaded.
  virtual const MemoryTracker* host_offload_tracker() const { return nullptr; }
};

struct StrategyInputs {
  const nn::Model& model;
  const Config& config;
  comm::CommLanes lanes;  // gradients: reductions; parameters: all-gathers; control: the norm
  DeviceContext& device;  // where model states live; its tracker counts them
  const optim::Optimizer& optimizer;
};

// The strategy zero.stage selects; a stage this build cannot run is a ConfigError.
std::unique_ptr<ZeroStrategy> make_zero_strategy(const StrategyInputs& inputs);

}  // namespace zt::zero

// ZeroStrategy: where a model's parameters, gradients and optimizer states live across ranks,
// and the communication that keeps them consistent. The engine drives it block by
// block; the stage decides what each hook gathers, reduces or releases.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "comm/comm_lanes.h"
#include "comm/communicator.h"
#include "core/config/config.h"
#include "core/device/device_context.h"
#include "core/memory_tracker.h"
#include "optim/optimizer.h"
#include "sharding/flat_layout.h"

namespace zt::zero {

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

  // Called before the last micro-batch's backward when nothing can veto this step's update
  // (no gradient clipping, no loss scaling), with the update's step (from 1) and lr: an
  // offloaded optimizer may then update each block's shard as soon as its gradients are
  // final, while backward goes on. optimizer_step(update_step, lr) still follows.
  virtual void prepare_update(std::int64_t update_step, float lr) {
    (void)update_step;
    (void)lr;
  }
  // Waits for the step's gradient reductions; returns the global gradient norm squared.
  virtual double finish_gradients() = 0;
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

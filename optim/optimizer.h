// Optimizer: updates flat fp32 parameters from flat gradients and its own flat fp32 state
// tensors, on whichever device holds them: the tensors' device picks the CPU loop or the
// CUDA kernels, so no caller names a backend. It never knows whose shard it updates.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "core/config/config.h"
#include "core/device/device_context.h"
#include "core/device/host_scalar.h"
#include "core/tensor.h"

namespace zt::optim {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual std::string_view name() const = 0;
  // fp32 state values kept per parameter element (SGD with momentum 1, Adam 2).
  virtual int states_per_element() const = 0;
  // One update of `params` (f32) in place from `grads` (f32, bf16 or f16, read in their own
  // dtype and widened to fp32 element by element). `states` holds states_per_element() f32
  // tensors, each as long as `params`. If `compute_params` is defined (f32, bf16 or f16, as
  // long as `params`), it receives the updated parameters rounded to nearest even in the same
  // pass: what a cast after the step would write (Note [The optimizer in one pass] in
  // docs/ARCHITECTURE.md). Every tensor lives on `device`: on the CPU the update has finished
  // when this returns; on a GPU it is enqueued on the device's compute stream. `step` counts
  // updates from 1 (Adam's bias correction).
  void step(const Tensor& params, const Tensor& grads, std::span<const Tensor> states,
            const Tensor& compute_params, std::int64_t step, float lr,
            DeviceContext& device) const {
    update(params, grads, states, compute_params, step, lr, device, false);
  }
  // The same update, also returning Σ grads² (each widened to fp32, summed in double) with the
  // bits DeviceOps::sum_of_squares(grads) gives: on the CPU read in the update's own pass over
  // the gradients (Note [The gradient norm in the update's pass] in optim/step_internal.h); on
  // a GPU reduced after the update, on the compute stream.
  HostScalar step_summing_squares(const Tensor& params, const Tensor& grads,
                                  std::span<const Tensor> states, const Tensor& compute_params,
                                  std::int64_t step, float lr, DeviceContext& device) const {
    return update(params, grads, states, compute_params, step, lr, device, true);
  }
  // The same with no compute-dtype copy.
  void step(const Tensor& params, const Tensor& grads, std::span<const Tensor> states,
            std::int64_t step, float lr, DeviceContext& device) const {
    this->step(params, grads, states, Tensor(), step, lr, device);
  }

 protected:
  // The update both steps make; with `sum_squares` it returns Σ grads² as
  // step_summing_squares says, else 0.
  virtual HostScalar update(const Tensor& params, const Tensor& grads,
                            std::span<const Tensor> states, const Tensor& compute_params,
                            std::int64_t step, float lr, DeviceContext& device,
                            bool sum_squares) const = 0;
};

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config);

}  // namespace zt::optim

// Adam and AdamW (decoupled weight decay), with bias correction.
#pragma once

#include "optim/math/optimizer_math.h"
#include "optim/optimizer.h"

namespace zt::optim {

class Adam final : public Optimizer {
 public:
  Adam(float beta1, float beta2, float eps, float weight_decay, bool decoupled_weight_decay);
  std::string_view name() const override { return decoupled_ ? "adamw" : "adam"; }
  int states_per_element() const override { return 2; }
  // The scalars of update `step` (from 1), bias corrections included: what step() applies,
  // for kernels that run the same update elsewhere (the offloaded CPU Adam).
  math::AdamStepScalars step_scalars(std::int64_t step, float lr) const;

 private:
  HostScalar update(const Tensor& params, const Tensor& grads, std::span<const Tensor> states,
                    const Tensor& compute_params, std::int64_t step, float lr,
                    DeviceContext& device, bool sum_squares) const override;
  float beta1_;
  float beta2_;
  float eps_;
  float weight_decay_;
  bool decoupled_;
};

}  // namespace zt::optim

// SGD with momentum and optional Nesterov (PyTorch semantics).
#pragma once

#include "optim/optimizer.h"

namespace zt::optim {

class Sgd final : public Optimizer {
 public:
  Sgd(float momentum, bool nesterov, float weight_decay);
  std::string_view name() const override { return "sgd"; }
  int states_per_element() const override { return momentum_ == 0.0f ? 0 : 1; }

 private:
  HostScalar update(const Tensor& params, const Tensor& grads, std::span<const Tensor> states,
                    const Tensor& compute_params, std::int64_t step, float lr,
                    DeviceContext& device, bool sum_squares) const override;
  float momentum_;
  bool nesterov_;
  float weight_decay_;
};

}  // namespace zt::optim

// GELU, tanh approximation (GPT-2): y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
#pragma once

#include "nn/module.h"

namespace zt::nn {

class Gelu final : public Module {
 public:
  std::vector<ParameterSpec> parameter_specs() const override { return {}; }
  Tensor forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) override;
  Tensor backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                  ModuleContext& ctx) override;
};

}  // namespace zt::nn

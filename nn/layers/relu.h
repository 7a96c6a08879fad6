// ReLU: y = max(x, 0), element-wise.
#pragma once

#include "nn/module.h"

namespace zt::nn {

class Relu final : public Module {
 public:
  std::vector<ParameterSpec> parameter_specs() const override { return {}; }
  Tensor forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) override;
  Tensor backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                  ModuleContext& ctx) override;
};

}  // namespace zt::nn

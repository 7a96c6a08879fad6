// Residual: y = x + m(x) around a child module m (the skip connection of a transformer).
#pragma once

#include <memory>

#include "nn/module.h"

namespace zt::nn {

class Residual final : public Module {
 public:
  explicit Residual(std::unique_ptr<Module> child);

  // The child's parameters, unchanged.
  std::vector<ParameterSpec> parameter_specs() const override;
  Tensor forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) override;
  Tensor backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                  ModuleContext& ctx) override;

 private:
  std::unique_ptr<Module> child_;
};

}  // namespace zt::nn

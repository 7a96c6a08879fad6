// Sequential: children applied in order; their parameters concatenated in that order.
#pragma once

#include <memory>
#include <vector>

#include "nn/module.h"

namespace zt::nn {

class Sequential final : public Module {
 public:
  Sequential& add(std::unique_ptr<Module> child);

  std::vector<ParameterSpec> parameter_specs() const override;
  // The first child's check: it is the one that reads the input.
  void check_input(const Tensor& input) const override;
  Tensor forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) override;
  Tensor backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                  ModuleContext& ctx) override;

 private:
  std::vector<std::unique_ptr<Module>> children_;
  std::vector<std::size_t> first_parameter_;  // index of each child's first parameter
  std::vector<std::size_t> parameter_count_;
};

}  // namespace zt::nn

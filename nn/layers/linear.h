// Linear: y = x W^T + b, with W (out_features, in_features) as in PyTorch.
#pragma once

#include <cstdint>
#include <optional>

#include "nn/module.h"

namespace zt::nn {

class Linear final : public Module {
 public:
  // Without `weight_init` the weight is uniform(±1/sqrt(in)) as PyTorch's default Linear;
  // biases start at zero when a weight init is given (GPT-2), else uniform like the weight.
  Linear(std::string name, std::int64_t in_features, std::int64_t out_features, bool bias,
         std::optional<Init> weight_init = std::nullopt);

  std::vector<ParameterSpec> parameter_specs() const override;
  Tensor forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) override;
  Tensor backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                  ModuleContext& ctx) override;

 private:
  void check_parameters(ParameterViews params, DType compute) const;

  std::string name_;
  std::int64_t in_features_;
  std::int64_t out_features_;
  bool bias_;
  std::optional<Init> weight_init_;
};

}  // namespace zt::nn

// Linear: y = x W^T + b, with W (out_features, in_features) as in PyTorch.
#pragma once

#include <cstdint>

#include "nn/module.h"

namespace zt::nn {

class Linear final : public Module {
 public:
  Linear(std::string name, std::int64_t in_features, std::int64_t out_features, bool bias);

  std::vector<ParameterSpec> parameter_specs() const override;
  Tensor forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) override;
  Tensor backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                  ModuleContext& ctx) override;

 private:
  std::string name_;
  std::int64_t in_features_;
  std::int64_t out_features_;
  bool bias_;
};

}  // namespace zt::nn

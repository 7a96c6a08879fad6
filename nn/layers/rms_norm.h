// RMSNorm over the last axis (Llama's norm): y = x / sqrt(mean(x^2) + eps) * weight.
#pragma once

#include <cstdint>
#include <string>

#include "nn/module.h"

namespace zt::nn {

class RmsNorm final : public Module {
 public:
  // Parameter "<name>.weight" (channels), ones. eps defaults to Llama's 1e-5.
  RmsNorm(std::string name, std::int64_t channels, float eps = 1e-5f);

  std::vector<ParameterSpec> parameter_specs() const override;
  Tensor forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) override;
  Tensor backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                  ModuleContext& ctx) override;

 private:
  void check_parameters(ParameterViews params, DType compute) const;

  std::string name_;
  std::int64_t channels_;
  float eps_;
};

}  // namespace zt::nn

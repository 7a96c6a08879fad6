// SwiGluMlp: Llama's MLP, fc (C -> 2F, no bias) producing [gate | up], h = silu(gate) * up,
// proj (F -> C, no bias).
#pragma once

#include <cstdint>
#include <string>

#include "nn/module.h"

namespace zt::nn {

class SwiGluMlp final : public Module {
 public:
  // Parameters, in this order: fc_name.weight (2 hidden, C), the gate's hidden rows then
  // up's (Note [SwiGLU column order] in nn/kernels/kernel_backend.h), and proj_name.weight
  // (C, hidden); from the given inits.
  SwiGluMlp(std::string fc_name, std::string proj_name, std::int64_t channels, std::int64_t hidden,
            Init fc_init, Init proj_init);

  std::vector<ParameterSpec> parameter_specs() const override;
  Tensor forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) override;
  Tensor backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                  ModuleContext& ctx) override;

 private:
  std::string fc_name_;
  std::string proj_name_;
  std::int64_t channels_;
  std::int64_t hidden_;
  Init fc_init_;
  Init proj_init_;
};

}  // namespace zt::nn

// GeluMlp: the transformer block's MLP, fc (C -> hidden), GELU, proj (hidden -> C), with the
// GELU fused into the two Linears' GEMMs (Note [GELU in the GEMMs] in kernel_backend.h).
#pragma once

#include <cstdint>
#include <string>

#include "nn/module.h"

namespace zt::nn {

class GeluMlp final : public Module {
 public:
  // Parameters, in this order and with these names, as Linear(fc_name), Gelu,
  // Linear(proj_name) would have them: fc_name.weight (hidden, C), fc_name.bias (hidden),
  // proj_name.weight (C, hidden), proj_name.bias (C); weights from the given inits, biases 0.
  GeluMlp(std::string fc_name, std::string proj_name, std::int64_t channels, std::int64_t hidden,
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

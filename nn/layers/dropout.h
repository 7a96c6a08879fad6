// Dropout: inverted dropout at one site of one layer, in a training forward and its backward
// only; evaluation and generation (no DropoutDraw in the context) pass the input through.
#pragma once

#include <cstdint>

#include "nn/kernels/math/dropout_math.h"
#include "nn/module.h"

namespace zt::nn {

// The mask of a micro-batch drawn by `draw` at `layer`'s `site` with probability p in (0, 1).
math::DropoutMask dropout_mask(const DropoutDraw& draw, float p, std::int64_t layer,
                               math::DropoutSite site);

class Dropout final : public Module {
 public:
  // p in (0, 1): the probability an element is zeroed. `layer` and `site` pick this module's
  // masks (Note [Dropout masks from a hash]).
  Dropout(float p, std::int64_t layer, math::DropoutSite site);

  std::vector<ParameterSpec> parameter_specs() const override { return {}; }
  // x (B, ...) -> y (B, ...): y = x / (1 - p) where kept, else 0. Nothing is saved: backward
  // draws the same mask again from the context's DropoutDraw.
  Tensor forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) override;
  Tensor backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                  ModuleContext& ctx) override;

  // The mask of a micro-batch drawn by `draw` at this module's layer and site.
  math::DropoutMask mask(const DropoutDraw& draw) const;

 private:
  // y = the masked x, a new tensor (x may be saved by the module that wrote it).
  Tensor apply(const Tensor& x, ModuleContext& ctx) const;

  float p_;
  std::int64_t layer_;
  math::DropoutSite site_;
};

}  // namespace zt::nn

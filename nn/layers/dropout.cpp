// Dropout forward and backward: one kernel, the same mask both ways (Note [Dropout masks from
// a hash] in nn/kernels/math/dropout_math.h).
//   forward:  y = x ⊙ m / (1 - p)
//   backward: dx = dy ⊙ m / (1 - p)
#include "nn/layers/dropout.h"

#include <string>

#include "core/error.h"

namespace zt::nn {

Dropout::Dropout(float p, std::int64_t layer, math::DropoutSite site)
    : p_(p), layer_(layer), site_(site) {
  ZT_CHECK(p > 0.0f && p < 1.0f, "Dropout built with p = " + std::to_string(p));
}

math::DropoutMask dropout_mask(const DropoutDraw& draw, float p, std::int64_t layer,
                               math::DropoutSite site) {
  math::DropoutMask mask;
  mask.stream = math::dropout_stream(draw.seed, draw.step, layer, site);
  mask.first_sample = draw.first_sample;
  mask.threshold = math::dropout_threshold(p);
  mask.scale = 1.0f / (1.0f - p);
  return mask;
}

math::DropoutMask Dropout::mask(const DropoutDraw& draw) const {
  return dropout_mask(draw, p_, layer_, site_);
}

Tensor Dropout::apply(const Tensor& x, ModuleContext& ctx) const {
  Tensor y = Tensor::empty(x.shape(), x.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.dropout(ctx.device, mask(*ctx.dropout), x, y);
  return y;
}

Tensor Dropout::forward(ParameterViews /*params*/, const Tensor& input, ModuleContext& ctx) {
  if (ctx.dropout == nullptr) return input;
  return apply(input, ctx);
}

Tensor Dropout::backward(ParameterViews /*params*/, ParameterViews /*grads*/,
                         const Tensor& grad_output, ModuleContext& ctx) {
  if (ctx.dropout == nullptr) return grad_output;
  return apply(grad_output, ctx);
}

}  // namespace zt::nn

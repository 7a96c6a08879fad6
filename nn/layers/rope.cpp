// Rope: q and k of a fused qkv through the kernel backend's rope ops.
#include "nn/layers/rope.h"

#include <cmath>
#include <string>

#include "core/error.h"

namespace zt::nn {

Rope::Rope(float theta) : theta_(theta) {
  ZT_CHECK(std::isfinite(theta_) && theta_ > 0.0f,
           "rotary embedding theta must be finite and > 0, got " + std::to_string(theta_));
}

void Rope::forward(const QkvHeads& qkv, std::int64_t start_position, ModuleContext& ctx) const {
  ctx.kernels.rope_forward(ctx.device, qkv.q, start_position, theta_);
  ctx.kernels.rope_forward(ctx.device, qkv.k, start_position, theta_);
}

void Rope::backward(const QkvHeads& d_qkv, std::int64_t start_position, ModuleContext& ctx) const {
  ctx.kernels.rope_backward(ctx.device, d_qkv.q, start_position, theta_);
  ctx.kernels.rope_backward(ctx.device, d_qkv.k, start_position, theta_);
}

}  // namespace zt::nn

// Rope: the rotary position embedding a Llama attention layer applies to its q and k heads
// between the qkv projection and attention, in place in the fused qkv (Note [Rotary pairs]
// in nn/kernels/kernel_backend.h). Not a Module: it has no parameters and its input and
// output are the same heads, so the attention layer calls it on the heads it already holds.
#pragma once

#include <cstdint>

#include "nn/kernels/attention_heads.h"
#include "nn/module.h"

namespace zt::nn {

class Rope {
 public:
  // theta: the base of the angles (Llama 2: 10000, Llama 3: 500000), > 0.
  explicit Rope(float theta);

  float theta() const { return theta_; }

  // Turns q's and k's heads of positions start_position, start_position + 1, ... in place;
  // v is left alone.
  void forward(const QkvHeads& qkv, std::int64_t start_position, ModuleContext& ctx) const;
  // Turns the gradients at the rotated q and k back, in place, into the gradients at the
  // projection's q and k (same start_position as forward).
  void backward(const QkvHeads& d_qkv, std::int64_t start_position, ModuleContext& ctx) const;

 private:
  float theta_;
};

}  // namespace zt::nn

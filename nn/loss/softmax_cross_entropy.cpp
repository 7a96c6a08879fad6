// CPU loop over the shared per-row softmax cross-entropy. bf16/f16 logits are widened one
// row at a time; the loss and (p - onehot) * grad_scale are computed in f32 and the
// gradient rounded once, so a large f16 loss scale overflows to inf for the engine to see.
#include "nn/loss/softmax_cross_entropy.h"

#include <string>

#include "core/error.h"
#include "nn/kernels/cpu/dtype_io.h"
#include "nn/kernels/math/cross_entropy_math.h"

namespace zt::nn {

LossResult softmax_cross_entropy(const Tensor& logits, const Tensor& targets, float grad_scale,
                                 MemoryTracker& tracker) {
  const std::int64_t classes = logits.dim(logits.rank() - 1);
  const std::int64_t rows = logits.numel() / classes;
  ZT_CHECK(targets.numel() == rows, "cross-entropy: one target per row expected");
  LossResult result;
  result.rows = rows;
  result.grad_logits =
      Tensor::zeros(logits.shape(), logits.dtype(), tracker, MemoryCategory::kActivations);
  const cpu::F32Rows z(logits, classes, tracker);
  const cpu::F32Rows dz(result.grad_logits, classes, tracker);
  const std::int32_t* t = targets.data_as<std::int32_t>();
  for (std::int64_t n = 0; n < rows; ++n) {
    ZT_CHECK(t[n] >= 0 && t[n] < classes, "cross-entropy target " + std::to_string(t[n]) +
                                              " outside [0, " + std::to_string(classes) + ")");
    result.loss_sum +=
        math::softmax_cross_entropy_row(z.load(n), classes, t[n], grad_scale, dz.out(n));
    dz.store(n);
  }
  return result;
}

}  // namespace zt::nn

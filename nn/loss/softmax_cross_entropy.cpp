// Softmax cross-entropy on the kernel backend: the loss and (p - onehot) * grad_scale are
// computed in f32 and the gradient rounded once, so a large f16 loss scale overflows to inf
// for the engine to see.
#include "nn/loss/softmax_cross_entropy.h"

#include "core/error.h"

namespace zt::nn {

LossResult softmax_cross_entropy(const Tensor& logits, const Tensor& targets, float grad_scale,
                                 DeviceContext& device, const KernelBackend& kernels) {
  const std::int64_t classes = logits.dim(logits.rank() - 1);
  const std::int64_t rows = logits.numel() / classes;
  ZT_CHECK(targets.numel() == rows, "cross-entropy: one target per row expected");
  LossResult result;
  result.rows = rows;
  result.grad_logits =
      Tensor::empty(logits.shape(), logits.dtype(), device.tracker(), MemoryCategory::kActivations);
  result.loss_sum =
      kernels.softmax_cross_entropy(device, logits, targets, grad_scale, result.grad_logits);
  return result;
}

}  // namespace zt::nn

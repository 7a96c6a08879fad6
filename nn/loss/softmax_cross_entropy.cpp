// Softmax cross-entropy on the kernel backend: the loss and (p - onehot) * grad_scale are
// computed in f32 and the gradient rounded once, so a large f16 loss scale overflows to inf
// for the engine to see.
#include "nn/loss/softmax_cross_entropy.h"

#include "core/error.h"

namespace zt::nn {

LossResult softmax_cross_entropy(const Tensor& logits, const Tensor& targets, float grad_scale,
                                 DeviceContext& device, const KernelBackend& kernels,
                                 std::int64_t classes) {
  const std::int64_t columns = logits.dim(logits.rank() - 1);
  const std::int64_t rows = logits.numel() / columns;
  if (classes == 0) classes = columns;
  if (classes < 0 || classes > columns) {
    throw Error("softmax_cross_entropy: a softmax over " + std::to_string(classes) +
                " classes, but the logits " + logits.shape().to_string() + " have " +
                std::to_string(columns) + " columns");
  }
  if (targets.numel() != rows || targets.dtype() != DType::kI32) {
    throw Error("softmax_cross_entropy: expects one i32 class index per row of the logits " +
                logits.shape().to_string() + " (" + std::to_string(rows) + " rows of " +
                std::to_string(columns) + " classes), got targets " + targets.shape().to_string() +
                " " + std::string(dtype_name(targets.dtype())));
  }
  LossResult result;
  result.rows = rows;
  result.grad_logits =
      Tensor::empty(logits.shape(), logits.dtype(), device.tracker(), MemoryCategory::kActivations);
  result.loss_sum = HostScalar::staged(device);
  kernels.softmax_cross_entropy(device, logits, targets, classes, grad_scale, result.grad_logits,
                                result.loss_sum.data());
  result.loss_sum.written(device.compute_stream().record());
  return result;
}

}  // namespace zt::nn

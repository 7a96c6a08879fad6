// Fused softmax cross-entropy over the last axis: the mean loss and dL/dlogits in one pass,
// so the probabilities are never stored.
#pragma once

#include "core/device/device_context.h"
#include "core/device/host_scalar.h"
#include "core/tensor.h"
#include "nn/kernels/kernel_backend.h"

namespace zt::nn {

struct LossResult {
  // Σ over rows of the loss, in double for a stable report. A built-in loss leaves it in host
  // staging memory for the device to write (no wait per micro-batch); reading it waits for
  // that write. A loss may also assign a double known on the host.
  HostScalar loss_sum;
  std::int64_t rows = 0;
  Tensor grad_logits;  // same shape and dtype as logits
};

// logits (N, C) or (B, T, C), f32, bf16 or f16; targets (N) or (B, T) i32 in [0, classes).
// The softmax spans the first `classes` columns (0: all C); the padded ones after them get no
// probability and a zero gradient (Note [Padded vocabulary] in
// nn/kernels/math/cross_entropy_math.h). grad_logits, in the logits' dtype, is
// (p - onehot) * grad_scale computed in f32 and rounded once; grad_scale is typically
// 1 / (rows in the global batch), times the loss scale in f16, where a too-large scale gives
// inf (never a NaN) for the overflow check to catch. Runs on `kernels`, the backend of
// `device`, where logits and targets live; loss_sum is staged on the host, written once the
// compute stream has run. Error when classes exceeds C.
LossResult softmax_cross_entropy(const Tensor& logits, const Tensor& targets, float grad_scale,
                                 DeviceContext& device, const KernelBackend& kernels,
                                 std::int64_t classes = 0);

}  // namespace zt::nn

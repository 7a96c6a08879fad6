// Fused softmax cross-entropy over the last axis: the mean loss and dL/dlogits in one pass,
// so the probabilities are never stored.
#pragma once

#include "core/memory_tracker.h"
#include "core/tensor.h"

namespace zt::nn {

struct LossResult {
  double loss_sum = 0;   // Σ over rows of -log p(target), in double for a stable report
  std::int64_t rows = 0;
  Tensor grad_logits;    // same shape as logits
};

// logits (N, C) or (B, T, C) f32; targets (N) or (B, T) i32 in [0, C). grad_logits is
// (p - onehot) * grad_scale, where grad_scale is typically 1 / (rows in the global batch).
LossResult softmax_cross_entropy(const Tensor& logits, const Tensor& targets, float grad_scale,
                                 MemoryTracker& tracker);

}  // namespace zt::nn

// CUDA optimizer steps (SGD, Adam/AdamW) over flat fp32 shards: thin element-wise kernels
// over optim/math/optimizer_math.h, so device, CPU-offloaded and CUDA updates agree.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "core/tensor.h"
#include "optim/math/optimizer_math.h"

namespace zt::optim::cuda {

// All pointers are device pointers; work is enqueued on `stream` (a cudaStream_t).
// params and optimizer state are fp32 (master weights); grads are G = float, BF16 or F16 and
// are widened to fp32 before the update. n == 0 does nothing.

// params, grads, momentum_buffer (n). momentum_buffer may be nullptr when momentum == 0.
template <typename G>
void sgd_step(float* params, const G* grads, float* momentum_buffer, std::int64_t n, float lr,
              float momentum, float weight_decay, bool nesterov, void* stream);

// params, grads, m, v (n); `scalars` carries this step's lr and bias corrections.
template <typename G>
void adam_step(float* params, const G* grads, float* m, float* v, std::int64_t n,
               const math::AdamStepScalars& scalars, void* stream);

// The same over GPU tensors of one length (params and states f32), by the gradients' dtype.
void sgd_step(const Tensor& params, const Tensor& grads, const Tensor* momentum_buffer, float lr,
              float momentum, float weight_decay, bool nesterov, void* stream);
void adam_step(const Tensor& params, const Tensor& grads, const Tensor& m, const Tensor& v,
               const math::AdamStepScalars& scalars, void* stream);

}  // namespace zt::optim::cuda

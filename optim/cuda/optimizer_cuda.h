// CUDA optimizer steps (SGD, Adam/AdamW) over flat fp32 shards: one kernel per range, a thin
// element-wise loop over optim/math/optimizer_math.h, so device, CPU-offloaded and CUDA
// updates agree.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "core/tensor.h"
#include "optim/math/optimizer_math.h"

namespace zt::optim::cuda {

// All pointers are device pointers; work is enqueued on `stream` (a cudaStream_t), one
// launch per call. params and optimizer state are fp32 (master weights); grads are G =
// float, BF16 or F16, read in that dtype and widened to fp32 element by element.
// compute_params (P = float, BF16 or F16), unless nullptr, receives the updated params
// rounded to nearest even in the same pass. n == 0 does nothing.

// params, grads, momentum_buffer, compute_params (n). momentum_buffer may be nullptr when
// momentum == 0.
template <typename G, typename P>
void sgd_step(float* params, const G* grads, float* momentum_buffer, P* compute_params,
              std::int64_t n, float lr, float momentum, float weight_decay, bool nesterov,
              void* stream);

// params, grads, m, v, compute_params (n); `scalars` carries this step's lr and bias
// corrections.
template <typename G, typename P>
void adam_step(float* params, const G* grads, float* m, float* v, P* compute_params, std::int64_t n,
               const math::AdamStepScalars& scalars, void* stream);

// The same over GPU tensors of one length (params and states f32), by the gradients' and the
// compute copy's dtypes; an undefined compute_params means none.
void sgd_step(const Tensor& params, const Tensor& grads, const Tensor* momentum_buffer,
              const Tensor& compute_params, float lr, float momentum, float weight_decay,
              bool nesterov, void* stream);
void adam_step(const Tensor& params, const Tensor& grads, const Tensor& m, const Tensor& v,
               const Tensor& compute_params, const math::AdamStepScalars& scalars, void* stream);

}  // namespace zt::optim::cuda

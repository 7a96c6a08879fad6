// LayerNorm on the CPU: row loops over nn/kernels/math/layer_norm_math.h compiled for the
// widest vector unit the CPU has (Note [One loop, three instruction sets]), for
// KernelBackend::layer_norm_forward and layer_norm_backward.
#pragma once

#include <cstdint>

#include "core/memory_tracker.h"
#include "core/tensor.h"
#include "core/vector_isa.h"

namespace zt::nn::cpu {

// One row, as math::layer_norm_forward_row: x, y (C); weight, bias (C). Every isa gives the
// same bits.
void layer_norm_forward_row_f32(const float* x, const float* weight, const float* bias,
                                std::int64_t channels, float eps, float* y, float* mean,
                                float* rstd, VectorIsa isa = widest_vector_isa());
// One row, as math::layer_norm_backward_row: dy, x, dx (C) with dx written; weight (C);
// dweight, dbias (C) accumulated. Every isa gives the same bits.
void layer_norm_backward_row_f32(const float* dy, const float* x, const float* weight, float mean,
                                 float rstd, std::int64_t channels, float* dx, float* dweight,
                                 float* dbias, VectorIsa isa = widest_vector_isa());

// x, y (N, C) of one dtype; weight, bias (C); mean, rstd (N) f32, written. Rows in parallel.
void layer_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps,
                        const Tensor& y, const Tensor& mean, const Tensor& rstd,
                        MemoryTracker& tracker);
// dx (N, C) written; dweight, dbias (C) f32 accumulated, the same bits on any thread count.
void layer_norm_backward(const Tensor& x, const Tensor& weight, const Tensor& mean,
                         const Tensor& rstd, const Tensor& dy, const Tensor& dx,
                         const Tensor& dweight, const Tensor& dbias, MemoryTracker& tracker);

}  // namespace zt::nn::cpu

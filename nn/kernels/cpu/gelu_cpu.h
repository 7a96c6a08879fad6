// GELU on the CPU: loops over nn/kernels/math/gelu_math.h compiled for the widest vector unit
// the CPU has (Note [One loop, three instruction sets]), for KernelBackend::gelu_forward and
// gelu_backward and for the Linear epilogues that fuse GELU.
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "core/vector_isa.h"

namespace zt::nn::cpu {

// y[i] = gelu(x[i]) for i < n; y may be x. Every isa gives the same bits.
void gelu_forward_f32(const float* x, float* y, std::int64_t n,
                      VectorIsa isa = widest_vector_isa());
// dx[i] = gelu'(x[i]) dy[i] for i < n; dx may be dy. Every isa gives the same bits.
void gelu_backward_f32(const float* x, const float* dy, float* dx, std::int64_t n,
                       VectorIsa isa = widest_vector_isa());

// y = gelu(x) over tensors of one dtype and size: f32 arithmetic, rounded once, in chunks on
// parallel_for's threads.
void gelu_forward(const Tensor& x, const Tensor& y);
// dx = gelu'(x) ⊙ dy over tensors of one dtype and size, as gelu_forward.
void gelu_backward(const Tensor& x, const Tensor& dy, const Tensor& dx);

}  // namespace zt::nn::cpu

// CUDA activation kernels; thin loops over nn/kernels/math/activation_math.h.
#pragma once

#include <cstdint>

namespace zt::nn::cuda {

// y (n) = relu(x (n)), on device pointers, enqueued on `stream` (a cudaStream_t).
void relu_forward(const float* x, float* y, std::int64_t n, void* stream);
// dx (n) = relu'(x) * dy, on device pointers.
void relu_backward(const float* x, const float* dy, float* dx, std::int64_t n, void* stream);

}  // namespace zt::nn::cuda

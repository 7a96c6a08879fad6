// The tensor forms of the CUDA optimizer steps: pick the kernel for the gradients' dtype.
#include <string>

#include "core/error.h"
#include "optim/cuda/optimizer_cuda.h"

namespace zt::optim::cuda {
namespace {

float* f32_data(const Tensor& tensor) { return static_cast<float*>(tensor.data()); }

// Calls fn(typed gradient pointer) for the gradients' dtype.
template <typename Fn>
void with_typed_grads(const Tensor& grads, Fn&& fn) {
  switch (grads.dtype()) {
    case DType::kF32:
      fn(static_cast<const float*>(grads.data()));
      return;
    case DType::kBF16:
      fn(static_cast<const BF16*>(grads.data()));
      return;
    case DType::kF16:
      fn(static_cast<const F16*>(grads.data()));
      return;
    case DType::kI32:
      break;
  }
  ZT_CHECK(false,
           "optimizer step over gradients of dtype " + std::string(dtype_name(grads.dtype())));
}

}  // namespace

void sgd_step(const Tensor& params, const Tensor& grads, const Tensor* momentum_buffer, float lr,
              float momentum, float weight_decay, bool nesterov, void* stream) {
  float* buffer = momentum_buffer == nullptr ? nullptr : f32_data(*momentum_buffer);
  with_typed_grads(grads, [&](const auto* g) {
    sgd_step(f32_data(params), g, buffer, params.numel(), lr, momentum, weight_decay, nesterov,
             stream);
  });
}

void adam_step(const Tensor& params, const Tensor& grads, const Tensor& m, const Tensor& v,
               const math::AdamStepScalars& scalars, void* stream) {
  with_typed_grads(grads, [&](const auto* g) {
    adam_step(f32_data(params), g, f32_data(m), f32_data(v), params.numel(), scalars, stream);
  });
}

}  // namespace zt::optim::cuda

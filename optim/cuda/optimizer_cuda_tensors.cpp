// The tensor forms of the CUDA optimizer steps: pick the kernel for the gradients' and the
// compute copy's dtypes.
#include "optim/cuda/optimizer_cuda.h"
#include "optim/step_internal.h"

namespace zt::optim::cuda {
namespace {

float* f32_data(const Tensor& tensor) { return static_cast<float*>(tensor.data()); }

}  // namespace

void sgd_step(const Tensor& params, const Tensor& grads, const Tensor* momentum_buffer,
              const Tensor& compute_params, float lr, float momentum, float weight_decay,
              bool nesterov, void* stream) {
  float* buffer = momentum_buffer == nullptr ? nullptr : f32_data(*momentum_buffer);
  detail::with_typed_operands(grads, compute_params, [&](const auto* g, auto* compute) {
    sgd_step(f32_data(params), g, buffer, compute, params.numel(), lr, momentum, weight_decay,
             nesterov, stream);
  });
}

void adam_step(const Tensor& params, const Tensor& grads, const Tensor& m, const Tensor& v,
               const Tensor& compute_params, const math::AdamStepScalars& scalars, void* stream) {
  detail::with_typed_operands(grads, compute_params, [&](const auto* g, auto* compute) {
    adam_step(f32_data(params), g, f32_data(m), f32_data(v), compute, params.numel(), scalars,
              stream);
  });
}

}  // namespace zt::optim::cuda

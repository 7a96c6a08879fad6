// optim's entry into the CUDA module (Note [The CUDA backend module] in
// core/device/cuda_module.h): the optimizer steps over GPU tensors (optim/cuda/).
#pragma once

#include "core/device/cuda_module.h"
#include "core/tensor.h"
#include "optim/math/optimizer_math.h"

namespace zt::optim {

struct CudaOptimizerEntries {
  void (*sgd_step)(const Tensor& params, const Tensor& grads, const Tensor* momentum_buffer,
                   const Tensor& compute_params, float lr, float momentum, float weight_decay,
                   bool nesterov, void* stream) = nullptr;
  void (*adam_step)(const Tensor& params, const Tensor& grads, const Tensor& m, const Tensor& v,
                    const Tensor& compute_params, const math::AdamStepScalars& scalars,
                    void* stream) = nullptr;
};
CudaModuleSlot<CudaOptimizerEntries>& cuda_optimizer_entries();

}  // namespace zt::optim

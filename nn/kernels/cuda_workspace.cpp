// The CUDA backend's workspace allocations, shared by the real backend and its dry run.
#include "nn/kernels/cuda_workspace.h"

namespace zt::nn::cuda {
namespace {

// `tensor` itself when it is f32, else an uninitialized f32 workspace tensor of its shape.
Tensor f32_workspace_for(DeviceContext& device, const Tensor& tensor) {
  if (tensor.dtype() == DType::kF32) return tensor;
  return Tensor::empty(tensor.shape(), DType::kF32, device.tracker(), MemoryCategory::kWorkspace);
}

}  // namespace

Allocation cublas_workspace(DeviceContext& device) {
  const ScopedAllocationName name("cuBLAS workspace");
  return device.tracker().allocate(kCublasWorkspaceBytes, MemoryCategory::kWorkspace,
                                   Fill::kUninitialized);
}

Tensor dgelu_bias_grad_workspace(DeviceContext& device, std::int64_t in_features, DType dtype) {
  const ScopedAllocationName name("Linear pre-GELU bias-gradient scratch");
  return Tensor::empty(Shape{in_features}, dtype, device.tracker(), MemoryCategory::kWorkspace);
}

Tensor bias_grad_workspace(DeviceContext& device, std::int64_t out_features) {
  const ScopedAllocationName name("Linear bias-gradient scratch");
  return Tensor::empty(Shape{out_features}, DType::kF32, device.tracker(),
                       MemoryCategory::kWorkspace);
}

AttentionForwardWorkspace attention_forward_workspace(DeviceContext& device, const Tensor& qkv,
                                                      const Tensor& att, const Tensor& y) {
  const ScopedAllocationName name("attention f32 workspace");
  return {f32_workspace_for(device, qkv), f32_workspace_for(device, att),
          f32_workspace_for(device, y)};
}

AttentionBackwardWorkspace attention_backward_workspace(DeviceContext& device, const Tensor& qkv,
                                                        const Tensor& att, const Tensor& dy,
                                                        const Tensor& dqkv) {
  const ScopedAllocationName name("attention f32 workspace");
  return {f32_workspace_for(device, qkv), f32_workspace_for(device, att),
          f32_workspace_for(device, dy), f32_workspace_for(device, dqkv),
          Tensor::empty(att.shape(), DType::kF32, device.tracker(), MemoryCategory::kWorkspace)};
}

CrossEntropyWorkspace cross_entropy_workspace(DeviceContext& device, std::int64_t rows) {
  const ScopedAllocationName name("cross-entropy losses");
  CrossEntropyWorkspace workspace;
  workspace.losses =
      Tensor::empty(Shape{rows}, DType::kF32, device.tracker(), MemoryCategory::kWorkspace);
  workspace.device_sum =
      Tensor::empty(Shape{2}, DType::kF32, device.tracker(), MemoryCategory::kWorkspace);
  return workspace;
}

}  // namespace zt::nn::cuda

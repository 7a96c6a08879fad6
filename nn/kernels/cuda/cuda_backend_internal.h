// What the CUDA backend's files share: the compute stream of a context, the dtype dispatch
// and the cuBLAS handle of one GPU. Private to nn/kernels/cuda.
#pragma once

#include <memory>
#include <mutex>
#include <utility>

#include "core/device/device_context.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/tensor.h"
#include "nn/kernels/attention_heads.h"
#include "nn/kernels/cuda/gemm_cublas.h"
#include "nn/kernels/cuda_workspace.h"

namespace zt::nn::cuda::detail {

// The cudaStream_t of `device`'s compute stream, after checking that it is GPU `expected`'s.
inline void* compute_stream_of(DeviceContext& device, const Device& expected) {
  ZT_CHECK(device.device() == expected, "the " + expected.to_string() +
                                            " kernel backend was given the context of " +
                                            device.device().to_string());
  return device.compute_stream().native_handle();
}

// Calls fn(T{}) with T float or BF16, the storage types the CUDA kernels are built for.
template <typename Fn>
decltype(auto) dispatch_cuda_floating(DType dtype, Fn&& fn) {
  if (dtype == DType::kBF16) return fn(BF16{});
  if (dtype == DType::kF32) return fn(float{});
  throw Error(std::string("the CUDA kernels compute in f32 or bf16 activations, not ") +
              std::string(dtype_name(dtype)) + ": use bf16 mixed precision on the GPU");
}

// One cuBLAS handle for one GPU, created at the first GEMM. A handle is not thread-safe, so
// every use holds the lock, and binds the handle to the caller's stream first and then to a
// workspace from the caller's tracker (Note [cuBLAS workspace]).
class SharedCublasHandle {
 public:
  explicit SharedCublasHandle(int device_index) : device_index_(device_index) {}

  // fn(handle) with a workspace of its own, the op's request's next cuBLAS entry (Note
  // [Workspace requests]), freed when fn has enqueued its GEMMs.
  template <typename Fn>
  void with_stream(WorkspaceAllocator& op_workspace, void* stream, Fn&& fn) const {
    const Allocation workspace = op_workspace.next(WorkspaceUse::kCublas);
    with_workspace(stream, workspace, std::forward<Fn>(fn));
  }

  // fn(handle) with `workspace`, an op's cuBLAS workspace that the caller keeps alive while
  // fn enqueues and may hand to cuBLASLt too (one workspace per Linear op).
  template <typename Fn>
  void with_workspace(void* stream, const Allocation& workspace, Fn&& fn) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (handle_ == nullptr) handle_ = make_handle();
    handle_->set_stream(stream);
    handle_->set_workspace(workspace.data(), workspace.bytes());
    fn(*handle_);
  }

 private:
  std::unique_ptr<CublasHandle> make_handle() const;

  int device_index_;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<CublasHandle> handle_;  // guarded by mutex_
};

// Causal attention (cuda_attention.cpp): batched GEMMs over the heads and the attention row
// kernels, in f32 (bf16 tensors are widened with the context's DeviceOps). The contract is
// KernelBackend::attention_forward / attention_backward.
void attention_forward(DeviceContext& device, const SharedCublasHandle& cublas, void* stream,
                       const AttentionHeads& q, const AttentionHeads& k, const AttentionHeads& v,
                       const AttentionHeads& o, const Tensor& lse,
                       const math::DropoutMask* probs_dropout);
void attention_backward(DeviceContext& device, const SharedCublasHandle& cublas, void* stream,
                        const AttentionHeads& q, const AttentionHeads& k, const AttentionHeads& v,
                        const AttentionHeads& o, const Tensor& lse, const AttentionHeads& d_o,
                        const AttentionHeads& dq, const AttentionHeads& dk,
                        const AttentionHeads& dv, const math::DropoutMask* probs_dropout);

}  // namespace zt::nn::cuda::detail

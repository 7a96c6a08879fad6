// The CUDA backend's workspace allocations, op by op, without the GPU: each op below mirrors
// its namesake in nn/kernels/cuda/ (cuda_kernel_backend.cpp, cuda_attention.cpp), one
// cublas_workspace() per SharedCublasHandle::with_stream there and one per Linear op, and
// nothing for the kernels that need no workspace (element-wise, layer norm, embedding, bias);
// with the cuDNN attention, the bound of Note [cuDNN attention workspace] per attention op.
#include "nn/kernels/cuda_dry_kernel_backend.h"

#include "core/error.h"
#include "nn/kernels/cuda_workspace.h"

namespace zt::nn::cuda {
namespace {

void expect_meta(const DeviceContext& device) {
  ZT_CHECK(device.device().meta && device.device().kind == DeviceKind::kCuda,
           "the dry CUDA kernel backend was given the context of " + device.device().to_string());
}

// One SharedCublasHandle::with_stream: its workspace lives while the GEMMs are enqueued.
void gemm_group(DeviceContext& device) { const Allocation workspace = cublas_workspace(device); }

class CudaDryKernelBackend final : public KernelBackend {
 public:
  explicit CudaDryKernelBackend(CudaAttention attention) : attention_(attention) {}

  const Device& device() const override { return device_; }

  void gemm(DeviceContext& device, bool, bool, float, const Tensor&, const Tensor&, float,
            const Tensor&) const override {
    expect_meta(device);
    gemm_group(device);
  }

  // One workspace for the op's cuBLASLt GEMM; the bias and GELU epilogues, or the GELU kernel
  // after the GEMM for widths cuBLASLt cannot fuse, need none.
  void linear_forward(DeviceContext& device, const Tensor&, const Tensor&, const Tensor&,
                      const Tensor&, const Tensor&) const override {
    expect_meta(device);
    const Allocation workspace = cublas_workspace(device);
  }
  // One workspace for the dx and dweight GEMMs, and while it lives the bias-gradient scratch
  // of each GEMM whose epilogue writes one (DGELU_BGRAD on dx, BGRADB on dweight).
  void linear_backward(DeviceContext& device, const Tensor&, const Tensor& weight, const Tensor&,
                       const Tensor& dx, const Tensor&, const Tensor& dbias,
                       const Tensor& x_pre_gelu, const Tensor& x_pre_gelu_dbias) const override {
    expect_meta(device);
    const std::int64_t out_features = weight.dim(0);
    const std::int64_t in_features = weight.dim(1);
    const Allocation workspace = cublas_workspace(device);
    if (x_pre_gelu.defined() && x_pre_gelu_dbias.defined() && gelu_fuses_into_gemm(in_features)) {
      const Tensor scratch = dgelu_bias_grad_workspace(device, in_features, dx.dtype());
    }
    if (dbias.defined()) {
      const Tensor scratch = bias_grad_workspace(device, out_features);
    }
  }

  void gelu_forward(DeviceContext& device, const Tensor&, const Tensor&) const override {
    expect_meta(device);
  }
  void gelu_backward(DeviceContext& device, const Tensor&, const Tensor&,
                     const Tensor&) const override {
    expect_meta(device);
  }
  void relu_forward(DeviceContext& device, const Tensor&, const Tensor&) const override {
    expect_meta(device);
  }
  void relu_backward(DeviceContext& device, const Tensor&, const Tensor&,
                     const Tensor&) const override {
    expect_meta(device);
  }
  void add(DeviceContext& device, const Tensor&, const Tensor&, const Tensor&) const override {
    expect_meta(device);
  }
  void layer_norm_forward(DeviceContext& device, const Tensor&, const Tensor&, const Tensor&, float,
                          const Tensor&, const Tensor&, const Tensor&) const override {
    expect_meta(device);
  }
  void layer_norm_backward(DeviceContext& device, const Tensor&, const Tensor&, const Tensor&,
                           const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                           const Tensor&) const override {
    expect_meta(device);
  }

  // Two GEMM groups (S, then P v) around the softmax, with the f32 copies and the scores
  // live.
  void attention_forward(DeviceContext& device, const AttentionHeads& q, const AttentionHeads& k,
                         const AttentionHeads& v, const AttentionHeads& o,
                         const Tensor& lse) const override {
    expect_meta(device);
    const AttentionShape shape = attention_shape_of(q, k, v, o, lse);
    if (runs_cudnn(q)) {
      const Allocation workspace = cudnn_attention_workspace(device, shape, false, 0);
      return;
    }
    const AttentionForwardWorkspace ws = attention_forward_workspace(device, q, k, v, o);
    gemm_group(device);
    gemm_group(device);
  }
  // Three GEMM groups (S; dv and dP; dq and dk) around the row kernels, with the f32 copies,
  // P, dS and D live.
  void attention_backward(DeviceContext& device, const AttentionHeads& q, const AttentionHeads& k,
                          const AttentionHeads& v, const AttentionHeads& o, const Tensor& lse,
                          const AttentionHeads& d_o, const AttentionHeads& dq,
                          const AttentionHeads& dk, const AttentionHeads& dv) const override {
    expect_meta(device);
    const AttentionShape shape = attention_shape_of(q, k, v, o, lse);
    check_attention_gradients(shape, d_o, dq, dk, dv);
    if (runs_cudnn(q)) {
      const Allocation workspace = cudnn_attention_workspace(device, shape, true, 0);
      return;
    }
    const AttentionBackwardWorkspace ws =
        attention_backward_workspace(device, q, k, v, o, d_o, dq, dk, dv);
    gemm_group(device);
    gemm_group(device);
    gemm_group(device);
  }

  // The ids are checked on the host (a host vector, not device memory).
  void embedding_forward(DeviceContext& device, const Tensor&, const Tensor&, const Tensor&,
                         const Tensor&) const override {
    expect_meta(device);
  }
  void embedding_backward(DeviceContext& device, const Tensor&, const Tensor&, const Tensor&,
                          const Tensor&) const override {
    expect_meta(device);
  }

  void softmax_cross_entropy(DeviceContext& device, const Tensor& logits, const Tensor&, float,
                             const Tensor&, double*) const override {
    expect_meta(device);
    const std::int64_t classes = logits.dim(logits.rank() - 1);
    const CrossEntropyWorkspace workspace =
        cross_entropy_workspace(device, logits.numel() / classes);
    // The loss sum's slot on a meta device has no bytes (HostScalar): nothing is written.
  }

 private:
  // As the CUDA backend: cuDNN for bf16 operands when chosen, rows otherwise.
  bool runs_cudnn(const AttentionHeads& q) const {
    return attention_ == CudaAttention::kCudnn && q.base.dtype() == DType::kBF16;
  }

  Device device_ = Device::meta_of(Device::cuda(0));
  CudaAttention attention_;
};

}  // namespace

const KernelBackend& cuda_dry_kernel_backend(CudaAttention attention) {
  static const CudaDryKernelBackend rows(CudaAttention::kRows);
  static const CudaDryKernelBackend cudnn(CudaAttention::kCudnn);
  return attention == CudaAttention::kCudnn ? cudnn : rows;
}

}  // namespace zt::nn::cuda

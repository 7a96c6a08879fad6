// The CUDA backend's workspace allocations, op by op, without the GPU: each op below mirrors
// its namesake in nn/kernels/cuda/ (cuda_kernel_backend.cpp, cuda_attention.cpp), one
// cublas_workspace() per SharedCublasHandle::with_stream there and one per Linear op, and
// nothing for the kernels that need no workspace (element-wise, layer norm, RMSNorm, rotary
// embedding, SwiGLU, embedding, bias); with the cuDNN attention, the bound of Note [cuDNN
// attention workspace] per attention op.
#include "nn/kernels/cuda_dry_kernel_backend.h"

#include "core/error.h"
#include "nn/kernels/cuda_workspace.h"
#include "nn/kernels/llama_op_checks.h"

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
                       const Tensor&, const Tensor&, const Tensor& dbias, const Tensor& x_pre_gelu,
                       const Tensor& x_pre_gelu_dbias) const override {
    expect_meta(device);
    const std::int64_t out_features = weight.dim(0);
    const std::int64_t in_features = weight.dim(1);
    const Allocation workspace = cublas_workspace(device);
    if (x_pre_gelu.defined() && x_pre_gelu_dbias.defined() && gelu_fuses_into_gemm(in_features)) {
      const Tensor scratch = dgelu_bias_grad_workspace(device, in_features);
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
  void dropout(DeviceContext& device, const math::DropoutMask&, const Tensor&,
               const Tensor&) const override {
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

  // The Llama block's row and element kernels need no workspace; their operands are checked
  // as the CUDA backend checks them.
  void rms_norm_forward(DeviceContext& device, const Tensor& x, const Tensor& weight, float,
                        const Tensor& y, const Tensor& rstd) const override {
    expect_meta(device);
    rms_norm_shape(x, weight, y, rstd);
  }
  void rms_norm_backward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                         const Tensor& rstd, const Tensor& dy, const Tensor& dx,
                         const Tensor& dweight) const override {
    expect_meta(device);
    rms_norm_backward_shape(x, weight, rstd, dy, dx, dweight);
  }
  void rope_forward(DeviceContext& device, const AttentionHeads& heads, std::int64_t start_position,
                    float theta) const override {
    expect_meta(device);
    check_rope_heads(heads, start_position, theta, "heads");
  }
  void rope_backward(DeviceContext& device, const AttentionHeads& d_heads,
                     std::int64_t start_position, float theta) const override {
    expect_meta(device);
    check_rope_heads(d_heads, start_position, theta, "d_heads");
  }
  void swiglu_forward(DeviceContext& device, const Tensor& gate_up,
                      const Tensor& h) const override {
    expect_meta(device);
    swiglu_shape(gate_up, h);
  }
  void swiglu_backward(DeviceContext& device, const Tensor& gate_up, const Tensor& dh,
                       const Tensor& d_gate_up) const override {
    expect_meta(device);
    swiglu_backward_shape(gate_up, dh, d_gate_up);
  }

  // Two GEMM groups (S, then P v) around the softmax, with the f32 copies and the scores
  // live.
  void attention_forward(DeviceContext& device, const AttentionHeads& q, const AttentionHeads& k,
                         const AttentionHeads& v, const AttentionHeads& o, const Tensor& lse,
                         const math::DropoutMask* /*probs_dropout: in place*/) const override {
    expect_meta(device);
    const AttentionShape shape = attention_shape_of(q, k, v, o, lse);
    if (runs_cudnn(q, k)) {
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
                          const AttentionHeads& dk, const AttentionHeads& dv,
                          const math::DropoutMask* /*probs_dropout: in place*/) const override {
    expect_meta(device);
    const AttentionShape shape = attention_shape_of(q, k, v, o, lse);
    check_attention_gradients(shape, d_o, dq, dk, dv);
    if (runs_cudnn(q, k)) {
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

  void softmax_cross_entropy(DeviceContext& device, const Tensor& logits, const Tensor&,
                             std::int64_t, float, const Tensor&, double*) const override {
    expect_meta(device);
    const std::int64_t classes = logits.dim(logits.rank() - 1);
    const CrossEntropyWorkspace workspace =
        cross_entropy_workspace(device, logits.numel() / classes);
    // The loss sum's slot on a meta device has no bytes (HostScalar): nothing is written.
  }

 private:
  // As the CUDA backend: cuDNN for bf16 operands of equal lengths when chosen, rows otherwise.
  bool runs_cudnn(const AttentionHeads& q, const AttentionHeads& k) const {
    return attention_ == CudaAttention::kCudnn && q.base.dtype() == DType::kBF16 &&
           k.seq_len == q.seq_len;
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

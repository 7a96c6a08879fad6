// The CUDA backend's workspace allocations, op by op, without the GPU: each op below replays
// the request its namesake in nn/kernels/cuda/ allocates (Note [Workspace requests]), and the
// kernels that need no workspace (element-wise, layer norm, RMSNorm, rotary embedding,
// SwiGLU, embedding) allocate nothing; with the cuDNN attention, the bound of Note [cuDNN
// attention workspace] per attention op.
#include "nn/kernels/cuda_dry_kernel_backend.h"

#include "core/error.h"
#include "nn/kernels/block_quant_checks.h"
#include "nn/kernels/cuda_workspace.h"
#include "nn/kernels/llama_op_checks.h"
#include "nn/kernels/token_select_rows.h"

namespace zt::nn::cuda {
namespace {

void expect_meta(const DeviceContext& device) {
  ZT_CHECK(device.device().meta && device.device().kind == DeviceKind::kCuda,
           "the dry CUDA kernel backend was given the context of " + device.device().to_string());
}

class CudaDryKernelBackend final : public KernelBackend {
 public:
  explicit CudaDryKernelBackend(CudaAttention attention) : attention_(attention) {}

  const Device& device() const override { return device_; }

  void gemm(DeviceContext& device, bool, bool, float, const Tensor&, const Tensor&, float,
            const Tensor&) const override {
    expect_meta(device);
    replay_workspace(device, gemm_workspace_request());
  }

  // The cuBLASLt fused and unfused paths allocate the same (Note [Workspace requests]).
  void linear_forward(DeviceContext& device, const Tensor&, const Tensor&, const Tensor&,
                      const Tensor&, const Tensor&) const override {
    expect_meta(device);
    replay_workspace(device, linear_forward_workspace_request());
  }
  void linear_backward(DeviceContext& device, const Tensor&, const Tensor& weight, const Tensor&,
                       const Tensor&, const Tensor&, const Tensor& dbias, const Tensor& x_pre_gelu,
                       const Tensor& x_pre_gelu_dbias) const override {
    expect_meta(device);
    replay_workspace(
        device, linear_backward_workspace_request(weight, dbias, x_pre_gelu, x_pre_gelu_dbias));
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

  // The path the CUDA backend takes for these operands; with cuDNN, the workspace bound (graph
  // bytes 0), which the steps' graphs are built to fit (Note [Workspace requests]). Dropout on
  // the probabilities runs the rows kernels, as the CUDA backend does (the mask is applied in
  // place: no workspace of its own).
  AttentionPath path_of(const AttentionHeads& q, const AttentionHeads& k,
                        const math::DropoutMask* probs_dropout) const {
    return probs_dropout != nullptr ? AttentionPath::kRows : attention_path(attention_, q, k);
  }
  void attention_forward(DeviceContext& device, const AttentionHeads& q, const AttentionHeads& k,
                         const AttentionHeads& v, const AttentionHeads& o, const Tensor& lse,
                         const math::DropoutMask* probs_dropout) const override {
    expect_meta(device);
    attention_shape_of(q, k, v, o, lse);
    replay_workspace(device,
                     attention_forward_workspace_request(path_of(q, k, probs_dropout), q, k, v, o));
  }
  void attention_backward(DeviceContext& device, const AttentionHeads& q, const AttentionHeads& k,
                          const AttentionHeads& v, const AttentionHeads& o, const Tensor& lse,
                          const AttentionHeads& d_o, const AttentionHeads& dq,
                          const AttentionHeads& dk, const AttentionHeads& dv,
                          const math::DropoutMask* probs_dropout) const override {
    expect_meta(device);
    const AttentionShape shape = attention_shape_of(q, k, v, o, lse);
    check_attention_gradients(shape, d_o, dq, dk, dv);
    replay_workspace(device, attention_backward_workspace_request(path_of(q, k, probs_dropout), q,
                                                                  k, v, o, d_o, dq, dk, dv));
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
    replay_workspace(device, cross_entropy_workspace_request(logits.numel() / classes));
    // The loss sum's slot on a meta device has no bytes (HostScalar): nothing is written.
  }

  // The CUDA kernel allocates nothing: a block per row keeps its partial counts and sums in
  // shared memory, and the ids go straight into `ids`.
  void select_tokens(DeviceContext& device, const Tensor& logits, std::int64_t classes,
                     const math::TokenSampling&, const Tensor& ids) const override {
    expect_meta(device);
    last_logit_rows(logits, classes, ids);
  }

  // One pass per direction, no workspace (nn/kernels/cuda/block_quant_cuda.cu).
  void quantize_blocks(DeviceContext& device, const math::BlockQuantFormat& format, const Tensor& x,
                       const Tensor& payload, const Tensor& scales) const override {
    expect_meta(device);
    check_block_quant_operands(format, x, payload, scales, "quantize_blocks");
  }
  void dequantize_blocks(DeviceContext& device, const math::BlockQuantFormat& format,
                         const Tensor& payload, const Tensor& scales,
                         const Tensor& y) const override {
    expect_meta(device);
    check_block_quant_operands(format, y, payload, scales, "dequantize_blocks");
  }

 private:
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

// The CUDA kernel backend: each op checks its context, picks the storage type and enqueues
// cuBLAS, cuBLASLt and the nn CUDA kernels on the compute stream. A Linear's bias, fused GELU
// and their gradients run in cuBLASLt's epilogues (Note [GELU in the GEMMs]); embedding and
// layer-norm parameter gradients use atomics, so their last bits vary from run to run.
// Attention runs the rows kernels (cuda_attention.cpp) or, when runtime.attention chose it,
// cuDNN's flash attention for bf16 (Note [cuDNN attention]). Each op takes its workspace
// (cuBLAS's, cuBLASLt's and cuDNN's included) from its request in nn/kernels/cuda_workspace.h,
// which the dry run replays (Note [Workspace requests]).
#include "nn/kernels/cuda/cuda_kernel_backend.h"

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "nn/dtype_contract.h"
#include "nn/kernels/block_quant_checks.h"
#include "nn/kernels/cuda/activation_cuda.h"
#include "nn/kernels/cuda/bias_cuda.h"
#include "nn/kernels/cuda/block_quant_cuda.h"
#include "nn/kernels/cuda/cross_entropy_cuda.h"
#include "nn/kernels/cuda/cuda_backend_internal.h"
#include "nn/kernels/cuda/cuda_check.h"
#include "nn/kernels/cuda/dropout_cuda.h"
#include "nn/kernels/cuda/embedding_cuda.h"
#include "nn/kernels/cuda/gemm_cublas.h"
#include "nn/kernels/cuda/gemm_cublaslt.h"
#include "nn/kernels/cuda/layer_norm_cuda.h"
#include "nn/kernels/cuda/residual_cuda.h"
#include "nn/kernels/cuda/rms_norm_cuda.h"
#include "nn/kernels/cuda/rope_cuda.h"
#include "nn/kernels/cuda/swiglu_cuda.h"
#include "nn/kernels/cuda/token_select_cuda.h"
#include "nn/kernels/cuda_workspace.h"
#include "nn/kernels/llama_op_checks.h"
#include "nn/kernels/token_select_rows.h"
#if defined(ZT_HAVE_CUDNN)
#include "nn/kernels/cuda/cudnn/cudnn_attention.h"
#endif

namespace zt::nn::cuda {

std::unique_ptr<CublasHandle> detail::SharedCublasHandle::make_handle() const {
  // The handle belongs to the GPU that is current when it is created.
  ZT_CUDA_CHECK(cudaSetDevice(device_index_), "selecting GPU " + std::to_string(device_index_));
  return std::make_unique<CublasHandle>();
}

namespace {

using detail::dispatch_cuda_floating;

class CudaKernelBackend final : public KernelBackend {
 public:
  CudaKernelBackend(int device_index, CudaAttention attention)
      : device_(Device::cuda(device_index)), cublas_(device_index) {
#if defined(ZT_HAVE_CUDNN)
    if (attention == CudaAttention::kCudnn) cudnn_ = std::make_unique<CudnnAttention>(device_index);
#else
    ZT_CHECK(attention == CudaAttention::kRows, "the cuDNN attention in a build without it");
#endif
  }

  const Device& device() const override { return device_; }

  void gemm(DeviceContext& device, bool transpose_a, bool transpose_b, float alpha, const Tensor& a,
            const Tensor& b, float beta, const Tensor& c) const override {
    void* stream = stream_of(device);
    ZT_CHECK(a.rank() == 2 && b.rank() == 2 && c.rank() == 2, "gemm over non-matrices");
    expect_dtype(b, a.dtype(), "gemm b");
    const std::int64_t m = transpose_a ? a.dim(1) : a.dim(0);
    const std::int64_t k = transpose_a ? a.dim(0) : a.dim(1);
    const std::int64_t n = transpose_b ? b.dim(0) : b.dim(1);
    ZT_CHECK((transpose_b ? b.dim(1) : b.dim(0)) == k && c.dim(0) == m && c.dim(1) == n,
             "gemm shapes do not match");
    ZT_CHECK(c.dtype() == DType::kF32 || c.dtype() == a.dtype(), "gemm c in a third dtype");
    WorkspaceAllocator workspace(device, gemm_workspace_request());
    cublas_.with_stream(workspace, stream, [&](CublasHandle& handle) {
      dispatch_cuda_floating(a.dtype(), [&](auto tag) {
        using T = decltype(tag);
        if (c.dtype() == DType::kF32) {
          cuda::gemm<T, float>(handle, transpose_a, transpose_b, m, n, k, alpha, a.data_as<T>(),
                               a.dim(1), b.data_as<T>(), b.dim(1), beta, c.data_as<float>(), n);
        } else {
          cuda::gemm<T, T>(handle, transpose_a, transpose_b, m, n, k, alpha, a.data_as<T>(),
                           a.dim(1), b.data_as<T>(), b.dim(1), beta, c.data_as<T>(), n);
        }
      });
    });
    workspace.finish();
  }

  // Note [GELU in the GEMMs]: bias, GELU and their gradients run in cuBLASLt's epilogues.
  void linear_forward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                      const Tensor& bias, const Tensor& y, const Tensor& pre_gelu) const override {
    void* stream = stream_of(device);
    const std::int64_t out_features = weight.dim(0);
    const std::int64_t in_features = weight.dim(1);
    const std::int64_t rows = x.numel() / in_features;
    WorkspaceAllocator op_workspace(device, linear_forward_workspace_request());
    // one for all of the op's GEMMs
    const Allocation workspace = op_workspace.next(WorkspaceUse::kCublas);
    dispatch_cuda_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      LtEpilogue epilogue{LtEpilogue::Kind::kBias, bias.defined() ? bias.data_as<T>() : nullptr};
      // Widths cuBLASLt's GELU aux cannot take run the GELU kernel after the GEMM.
      const bool fused_gelu = pre_gelu.defined() && gelu_fuses_into_gemm(out_features);
      if (fused_gelu) {
        epilogue.kind = LtEpilogue::Kind::kGelu;
        epilogue.aux = pre_gelu.data_as<T>();
      }
      T* product = pre_gelu.defined() && !fused_gelu ? pre_gelu.data_as<T>() : y.data_as<T>();
      cublas_.with_workspace(stream, workspace, [&](CublasHandle& handle) {
        gemm_lt<T, T>(handle, lt_plans_, stream, false, true, rows, out_features, in_features, 1.0f,
                      x.data_as<T>(), in_features, weight.data_as<T>(), in_features, 0.0f, product,
                      out_features, epilogue, workspace.data(), workspace_bytes(workspace));
      });
      if (pre_gelu.defined() && !fused_gelu) {
        cuda::gelu_forward<T>(pre_gelu.data_as<T>(), y.data_as<T>(), y.numel(), stream);
      }
    });
    op_workspace.finish();
  }

  void linear_backward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                       const Tensor& dy, const Tensor& dx, const Tensor& dweight,
                       const Tensor& dbias, const Tensor& x_pre_gelu,
                       const Tensor& x_pre_gelu_dbias) const override {
    void* stream = stream_of(device);
    const std::int64_t out_features = weight.dim(0);
    const std::int64_t in_features = weight.dim(1);
    const std::int64_t rows = x.numel() / in_features;
    ZT_CHECK(x_pre_gelu.defined() || !x_pre_gelu_dbias.defined(),
             "linear_backward: a pre-GELU bias gradient without the pre-GELU input");
    WorkspaceAllocator op_workspace(
        device, linear_backward_workspace_request(weight, dbias, x_pre_gelu, x_pre_gelu_dbias));
    // one for all of the op's GEMMs
    const Allocation workspace = op_workspace.next(WorkspaceUse::kCublas);
    dispatch_cuda_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      backward_input<T>(op_workspace, stream, workspace, rows, in_features, out_features, weight,
                        dy, dx, x_pre_gelu, x_pre_gelu_dbias);
      // dweight += dy^T x, and dy's column sums (BGRADB) into f32 scratch, then into dbias.
      LtEpilogue epilogue;
      const Tensor dbias_scratch =
          dbias.defined() ? op_workspace.next_f32(WorkspaceUse::kBiasGrad, Shape{out_features})
                          : Tensor();
      if (dbias.defined()) {
        epilogue = {LtEpilogue::Kind::kBiasGradFromA, nullptr, dbias_scratch.data_as<float>()};
      }
      cublas_.with_workspace(stream, workspace, [&](CublasHandle& handle) {
        gemm_lt<T, float>(handle, lt_plans_, stream, true, false, out_features, in_features, rows,
                          1.0f, dy.data_as<T>(), out_features, x.data_as<T>(), in_features, 1.0f,
                          dweight.data_as<float>(), in_features, epilogue, workspace.data(),
                          workspace_bytes(workspace));
      });
      if (dbias.defined()) {
        bias_backward<float>(dbias_scratch.data_as<float>(), dbias.data_as<float>(), 1,
                             out_features, stream);
      }
    });
    op_workspace.finish();
  }

  void gelu_forward(DeviceContext& device, const Tensor& x, const Tensor& y) const override {
    void* stream = stream_of(device);
    dispatch_cuda_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::gelu_forward<T>(x.data_as<T>(), y.data_as<T>(), x.numel(), stream);
    });
  }
  void gelu_backward(DeviceContext& device, const Tensor& x, const Tensor& dy,
                     const Tensor& dx) const override {
    void* stream = stream_of(device);
    dispatch_cuda_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::gelu_backward<T>(x.data_as<T>(), dy.data_as<T>(), dx.data_as<T>(), x.numel(), stream);
    });
  }
  void relu_forward(DeviceContext& device, const Tensor& x, const Tensor& y) const override {
    void* stream = stream_of(device);
    dispatch_cuda_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::relu_forward<T>(x.data_as<T>(), y.data_as<T>(), x.numel(), stream);
    });
  }
  void relu_backward(DeviceContext& device, const Tensor& x, const Tensor& dy,
                     const Tensor& dx) const override {
    void* stream = stream_of(device);
    dispatch_cuda_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::relu_backward<T>(x.data_as<T>(), dy.data_as<T>(), dx.data_as<T>(), x.numel(), stream);
    });
  }

  void add(DeviceContext& device, const Tensor& a, const Tensor& b,
           const Tensor& out) const override {
    void* stream = stream_of(device);
    ZT_CHECK(b.numel() == a.numel() && out.numel() == a.numel(), "add over different sizes");
    dispatch_cuda_floating(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      residual_add<T>(a.data_as<T>(), b.data_as<T>(), out.data_as<T>(), a.numel(), stream);
    });
  }

  void dropout(DeviceContext& device, const math::DropoutMask& mask, const Tensor& x,
               const Tensor& y) const override {
    void* stream = stream_of(device);
    ZT_CHECK(y.numel() == x.numel() && x.rank() > 0, "dropout over different sizes");
    const std::int64_t samples = x.dim(0);
    const std::int64_t row_elements = samples == 0 ? 0 : x.numel() / samples;
    dispatch_cuda_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      dropout_rows<T>(mask, x.data_as<T>(), y.data_as<T>(), x.numel(), row_elements, stream);
    });
  }

  void layer_norm_forward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                          const Tensor& bias, float eps, const Tensor& y, const Tensor& mean,
                          const Tensor& rstd) const override {
    void* stream = stream_of(device);
    const std::int64_t channels = weight.numel();
    dispatch_cuda_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::layer_norm_forward<T>(x.data_as<T>(), weight.data_as<T>(), bias.data_as<T>(),
                                  x.numel() / channels, channels, eps, y.data_as<T>(),
                                  mean.data_as<float>(), rstd.data_as<float>(), stream);
    });
  }

  void layer_norm_backward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                           const Tensor& mean, const Tensor& rstd, const Tensor& dy,
                           const Tensor& dx, const Tensor& dweight,
                           const Tensor& dbias) const override {
    void* stream = stream_of(device);
    const std::int64_t channels = weight.numel();
    dispatch_cuda_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::layer_norm_backward<T>(dy.data_as<T>(), x.data_as<T>(), weight.data_as<T>(),
                                   mean.data_as<float>(), rstd.data_as<float>(),
                                   x.numel() / channels, channels, dx.data_as<T>(),
                                   dweight.data_as<float>(), dbias.data_as<float>(), stream);
    });
  }

  void rms_norm_forward(DeviceContext& device, const Tensor& x, const Tensor& weight, float eps,
                        const Tensor& y, const Tensor& rstd) const override {
    void* stream = stream_of(device);
    const RowShape shape = rms_norm_shape(x, weight, y, rstd);
    dispatch_cuda_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::rms_norm_forward<T>(x.data_as<T>(), weight.data_as<T>(), shape.rows, shape.channels,
                                eps, y.data_as<T>(), rstd.data_as<float>(), stream);
    });
  }
  void rms_norm_backward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                         const Tensor& rstd, const Tensor& dy, const Tensor& dx,
                         const Tensor& dweight) const override {
    void* stream = stream_of(device);
    const RowShape shape = rms_norm_backward_shape(x, weight, rstd, dy, dx, dweight);
    dispatch_cuda_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::rms_norm_backward<T>(dy.data_as<T>(), x.data_as<T>(), weight.data_as<T>(),
                                 rstd.data_as<float>(), shape.rows, shape.channels, dx.data_as<T>(),
                                 dweight.data_as<float>(), stream);
    });
  }

  void rope_forward(DeviceContext& device, const AttentionHeads& heads, std::int64_t start_position,
                    float theta) const override {
    check_rope_heads(heads, start_position, theta, "heads");
    rope_rotate(device, heads, start_position, theta, false);
  }
  void rope_backward(DeviceContext& device, const AttentionHeads& d_heads,
                     std::int64_t start_position, float theta) const override {
    check_rope_heads(d_heads, start_position, theta, "d_heads");
    rope_rotate(device, d_heads, start_position, theta, true);
  }

  void swiglu_forward(DeviceContext& device, const Tensor& gate_up,
                      const Tensor& h) const override {
    void* stream = stream_of(device);
    const RowShape shape = swiglu_shape(gate_up, h);
    dispatch_cuda_floating(h.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::swiglu_forward<T>(gate_up.data_as<T>(), shape.rows, shape.channels, h.data_as<T>(),
                              stream);
    });
  }
  void swiglu_backward(DeviceContext& device, const Tensor& gate_up, const Tensor& dh,
                       const Tensor& d_gate_up) const override {
    void* stream = stream_of(device);
    const RowShape shape = swiglu_backward_shape(gate_up, dh, d_gate_up);
    dispatch_cuda_floating(dh.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::swiglu_backward<T>(gate_up.data_as<T>(), dh.data_as<T>(), shape.rows, shape.channels,
                               d_gate_up.data_as<T>(), stream);
    });
  }

  // Note [Attention dropout] masks are the project's hash, which cuDNN's Philox dropout cannot
  // draw: a step with dropout on the probabilities runs the rows kernels (the runtime refuses
  // runtime.attention = "cudnn" with model.dropout > 0 before it gets here).
  void attention_forward(DeviceContext& device, const AttentionHeads& q, const AttentionHeads& k,
                         const AttentionHeads& v, const AttentionHeads& o, const Tensor& lse,
                         const math::DropoutMask* probs_dropout) const override {
#if defined(ZT_HAVE_CUDNN)
    // Note [cuDNN attention never ends a run]: a shape cuDNN refused runs on rows below.
    if (probs_dropout == nullptr && runs_cudnn(q, k) &&
        cudnn_->forward(device, stream_of(device), q, k, v, o, lse)) {
      return;
    }
#endif
    detail::attention_forward(device, cublas_, stream_of(device), q, k, v, o, lse, probs_dropout);
  }
  void attention_backward(DeviceContext& device, const AttentionHeads& q, const AttentionHeads& k,
                          const AttentionHeads& v, const AttentionHeads& o, const Tensor& lse,
                          const AttentionHeads& d_o, const AttentionHeads& dq,
                          const AttentionHeads& dk, const AttentionHeads& dv,
                          const math::DropoutMask* probs_dropout) const override {
#if defined(ZT_HAVE_CUDNN)
    if (probs_dropout == nullptr && runs_cudnn(q, k) &&
        cudnn_->backward(device, stream_of(device), q, k, v, o, lse, d_o, dq, dk, dv)) {
      return;
    }
#endif
    detail::attention_backward(device, cublas_, stream_of(device), q, k, v, o, lse, d_o, dq, dk, dv,
                               probs_dropout);
  }

  void embedding_forward(DeviceContext& device, const Tensor& ids, const Tensor& wte,
                         const Tensor& wpe, const Tensor& out) const override {
    void* stream = stream_of(device);
    const std::int64_t seq_len = ids.dim(1);
    const std::int64_t channels = wte.dim(1);
    // Ids are user data, checked on the host when the batch was read (Module::check_input),
    // so nothing is copied back here; the kernel traps on an id that got past that.
    dispatch_cuda_floating(wte.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* wpe_data = wpe.defined() ? wpe.data_as<T>() : nullptr;
      cuda::embedding_forward<T>(ids.data_as<std::int32_t>(), wte.data_as<T>(), wpe_data,
                                 ids.numel(), seq_len, channels, wte.dim(0), out.data_as<T>(),
                                 stream);
    });
  }

  void embedding_backward(DeviceContext& device, const Tensor& ids, const Tensor& dout,
                          const Tensor& dwte, const Tensor& dwpe) const override {
    void* stream = stream_of(device);
    dispatch_cuda_floating(dout.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::embedding_backward<T>(ids.data_as<std::int32_t>(), dout.data_as<T>(), ids.numel(),
                                  ids.dim(1), dwte.dim(1), dwte.dim(0), dwte.data_as<float>(),
                                  dwpe.defined() ? dwpe.data_as<float>() : nullptr, stream);
    });
  }

  void softmax_cross_entropy(DeviceContext& device, const Tensor& logits, const Tensor& targets,
                             std::int64_t classes, float grad_scale, const Tensor& dlogits,
                             double* loss_sum) const override {
    void* stream = stream_of(device);
    const std::int64_t columns = logits.dim(logits.rank() - 1);
    const std::int64_t rows = logits.numel() / columns;
    ZT_CHECK(classes > 0 && classes <= columns, "cross-entropy over " + std::to_string(classes) +
                                                    " of " + std::to_string(columns) + " columns");
    // Per-row losses (f32) and their double sum stay on the device; only the sum's 8 bytes
    // are copied to the host, asynchronously.
    const CrossEntropyWorkspace workspace = cross_entropy_workspace(device, rows);
    const Tensor& losses = workspace.losses;
    const Tensor& device_sum = workspace.device_sum;
    dispatch_cuda_floating(logits.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::softmax_cross_entropy<T>(logits.data_as<T>(), targets.data_as<std::int32_t>(), rows,
                                     classes, columns, grad_scale, losses.data_as<float>(),
                                     dlogits.data_as<T>(), stream);
    });
    auto* sum = static_cast<double*>(device_sum.data());
    cuda::sum_losses(losses.data_as<float>(), rows, sum, stream);
    ZT_CUDA_CHECK(cudaMemcpyAsync(loss_sum, sum, sizeof(double), cudaMemcpyDeviceToHost,
                                  static_cast<cudaStream_t>(stream)),
                  "the cross-entropy loss sum to the host");
  }

  void select_tokens(DeviceContext& device, const Tensor& logits, std::int64_t classes,
                     const math::TokenSampling& sampling, const Tensor& ids) const override {
    const LastLogitRows rows = last_logit_rows(logits, classes, ids);
    void* stream = stream_of(device);
    dispatch_cuda_floating(logits.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::select_tokens<T>(logits.data_as<T>(), rows.rows, rows.row_stride, rows.first_offset,
                             classes, sampling, ids.data_as<std::int32_t>(), stream);
    });
  }

  // The quantization kernels read and write f16 too (the collectives' buffers may be f16);
  // they need no workspace (the dry backend replays none).
  void quantize_blocks(DeviceContext& device, const math::BlockQuantFormat& format, const Tensor& x,
                       const Tensor& payload, const Tensor& scales) const override {
    void* stream = stream_of(device);
    check_block_quant_operands(format, x, payload, scales, "quantize_blocks");
    dispatch_quant_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::quantize_blocks<T>(x.data_as<T>(), x.numel(), format,
                               static_cast<std::uint8_t*>(payload.data()), scales.data_as<float>(),
                               stream);
    });
  }
  void dequantize_blocks(DeviceContext& device, const math::BlockQuantFormat& format,
                         const Tensor& payload, const Tensor& scales,
                         const Tensor& y) const override {
    void* stream = stream_of(device);
    check_block_quant_operands(format, y, payload, scales, "dequantize_blocks");
    dispatch_quant_floating(y.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::dequantize_blocks<T>(static_cast<const std::uint8_t*>(payload.data()),
                                 scales.data_as<float>(), y.numel(), format, y.data_as<T>(),
                                 stream);
    });
  }

 private:
  template <typename Fn>
  static void dispatch_quant_floating(DType dtype, Fn&& fn) {
    if (dtype == DType::kF16) return fn(F16{});
    dispatch_cuda_floating(dtype, std::forward<Fn>(fn));
  }

  static std::size_t workspace_bytes(const Allocation& workspace) {
    return static_cast<std::size_t>(workspace.bytes());
  }

  // dx = dy · W, with x_pre_gelu: dx = gelu'(x_pre_gelu) ⊙ (dy · W) and its column sums
  // (DGELU_BGRAD, written in f32 into scratch) added into x_pre_gelu_dbias.
  template <typename T>
  void backward_input(WorkspaceAllocator& op_workspace, void* stream, const Allocation& workspace,
                      std::int64_t rows, std::int64_t in_features, std::int64_t out_features,
                      const Tensor& weight, const Tensor& dy, const Tensor& dx,
                      const Tensor& x_pre_gelu, const Tensor& x_pre_gelu_dbias) const {
    const bool fused_gelu = x_pre_gelu.defined() && gelu_fuses_into_gemm(in_features);
    LtEpilogue epilogue;
    const Tensor dbias_scratch =
        fused_gelu && x_pre_gelu_dbias.defined()
            ? op_workspace.next_f32(WorkspaceUse::kPreGeluBiasGrad, Shape{in_features})
            : Tensor();
    if (fused_gelu) {
      epilogue = {LtEpilogue::Kind::kGeluBackward, nullptr,
                  dbias_scratch.defined() ? dbias_scratch.data_as<float>() : nullptr,
                  x_pre_gelu.data_as<T>()};
    }
    cublas_.with_workspace(stream, workspace, [&](CublasHandle& handle) {
      gemm_lt<T, T>(handle, lt_plans_, stream, false, false, rows, in_features, out_features, 1.0f,
                    dy.data_as<T>(), out_features, weight.data_as<T>(), in_features, 0.0f,
                    dx.data_as<T>(), in_features, epilogue, workspace.data(),
                    workspace_bytes(workspace));
    });
    if (fused_gelu) {
      if (dbias_scratch.defined()) {
        bias_backward<float>(dbias_scratch.data_as<float>(), x_pre_gelu_dbias.data_as<float>(), 1,
                             in_features, stream);
      }
    } else if (x_pre_gelu.defined()) {
      // The aux row stride cuBLASLt needs is a multiple of 8: other widths run the kernels.
      cuda::gelu_backward<T>(x_pre_gelu.data_as<T>(), dx.data_as<T>(), dx.data_as<T>(), dx.numel(),
                             stream);
      if (x_pre_gelu_dbias.defined()) {
        bias_backward<T>(dx.data_as<T>(), x_pre_gelu_dbias.data_as<float>(), rows, in_features,
                         stream);
      }
    }
  }

  void rope_rotate(DeviceContext& device, const AttentionHeads& heads, std::int64_t start_position,
                   float theta, bool inverse) const {
    void* stream = stream_of(device);
    dispatch_cuda_floating(heads.base.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::rope_rotate<T>(heads.base.data_as<T>(), heads.strides, heads.batch, heads.seq_len,
                           heads.n_heads, heads.head_dim, start_position, theta, inverse, stream);
    });
  }

  void* stream_of(DeviceContext& device) const {
    return detail::compute_stream_of(device, device_);
  }

#if defined(ZT_HAVE_CUDNN)
  // cuDNN's SDPA for bf16 operands when chosen; f32 stays on the rows kernels (cuDNN's flash
  // attention has no fp32 path), and so does decoding over a KV cache (more keys than
  // queries: the graphs are built with the causal mask of equal lengths).
  bool runs_cudnn(const AttentionHeads& q, const AttentionHeads& k) const {
    return cudnn_ != nullptr &&
           attention_path(CudaAttention::kCudnn, q, k) == AttentionPath::kCudnn;
  }
#endif

#if defined(ZT_HAVE_CUDNN)
 public:
  // The cuDNN attention of a backend built with it (kCudnn).
  CudnnAttention& cudnn() const {
    ZT_CHECK(cudnn_ != nullptr, "the cuDNN attention of a backend that runs rows");
    return *cudnn_;
  }

 private:
#endif
  Device device_;
  detail::SharedCublasHandle cublas_;
  // Fused or unfused per Linear GEMM geometry (Note [Fused when offered]); used inside
  // cublas_.with_workspace only, so its plans are bound under the handle's lock.
  mutable LtPlans lt_plans_;
#if defined(ZT_HAVE_CUDNN)
  std::unique_ptr<CudnnAttention> cudnn_;  // set when runtime.attention chose cuDNN
#endif
};

CudaKernelBackend& backend_of(int device_index, CudaAttention attention) {
  ZT_CHECK(device_index >= 0, "a negative GPU index");
  static std::mutex mutex;
  // guarded by mutex
  static std::map<std::pair<int, CudaAttention>, std::unique_ptr<CudaKernelBackend>> backends;
  const std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<CudaKernelBackend>& backend = backends[{device_index, attention}];
  if (backend == nullptr) backend = std::make_unique<CudaKernelBackend>(device_index, attention);
  return *backend;
}

}  // namespace

const KernelBackend& cuda_kernel_backend(int device_index, CudaAttention attention) {
  return backend_of(device_index, attention);
}

#if defined(ZT_HAVE_CUDNN)
std::optional<std::string> cudnn_attention_check(int device_index, const AttentionShape& shape,
                                                 DType dtype) {
  // The backend the run will use, so that the graphs built here are the ones its steps find.
  return backend_of(device_index, CudaAttention::kCudnn).cudnn().check(shape, dtype);
}
#endif

}  // namespace zt::nn::cuda

// Note [Dry kernels]: on a meta device every CPU kernel makes the workspace allocations it
// makes on the CPU, so the estimator's workspace is the run's. Each op runs once on real CPU
// tensors and once on meta tensors of the same shapes, in f32 and bf16, and the tracker's
// workspace peak (and what is left live) must agree. A meta device standing for a GPU
// replays the CUDA backend's workspace instead, checked here in closed form.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include "core/device/device_context.h"
#include "core/device/meta_device.h"
#include "nn/kernels/cuda_workspace.h"
#include "nn/kernels/kernel_backend.h"

namespace zt::nn {
namespace {

using Op = std::function<void(DeviceContext&, const KernelBackend&, DType)>;

std::int64_t workspace_peak(DeviceContext& device, const Op& op, DType dtype) {
  const KernelBackend& kernels = kernel_backend_for(device.device());
  device.tracker().reset_peaks();
  op(device, kernels, dtype);
  EXPECT_EQ(device.tracker().current_bytes(MemoryCategory::kWorkspace), 0);
  return device.tracker().peak_bytes(MemoryCategory::kWorkspace);
}

Tensor make(DeviceContext& device, Shape shape, DType dtype) {
  return Tensor::zeros(shape, dtype, device.tracker(), MemoryCategory::kActivations);
}

void expect_same_workspace(const char* name, const Op& op) {
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    const auto cpu = make_cpu_device_context();
    const auto meta = make_meta_device_context(Device::cpu());
    const std::int64_t real = workspace_peak(*cpu, op, dtype);
    const std::int64_t dry = workspace_peak(*meta, op, dtype);
    EXPECT_EQ(dry, real) << name << " in " << dtype_name(dtype);
    if (dtype == DType::kBF16 && std::string(name) != "embedding_backward") {
      EXPECT_GT(real, 0) << name << ": the bf16 case should need f32 workspace";
    }
  }
}

TEST(DryKernels, LinearForwardAndBackward) {
  expect_same_workspace("linear", [](DeviceContext& d, const KernelBackend& k, DType t) {
    const Tensor x = make(d, Shape{6, 5}, t), w = make(d, Shape{3, 5}, t), b = make(d, Shape{3}, t);
    const Tensor y = make(d, Shape{6, 3}, t), dx = make(d, Shape{6, 5}, t);
    const Tensor dw = make(d, Shape{3, 5}, DType::kF32), db = make(d, Shape{3}, DType::kF32);
    k.linear_forward(d, x, w, b, y, Tensor());
    k.linear_backward(d, x, w, y, dx, dw, db, Tensor(), Tensor());
    k.gemm(d, false, true, 1.0f, x, w, 0.5f, y);
  });
}

TEST(DryKernels, LinearWithFusedGelu) {
  expect_same_workspace("linear_gelu", [](DeviceContext& d, const KernelBackend& k, DType t) {
    const Tensor x = make(d, Shape{6, 5}, t), w = make(d, Shape{3, 5}, t), b = make(d, Shape{3}, t);
    const Tensor pre = make(d, Shape{6, 3}, t), h = make(d, Shape{6, 3}, t);
    const Tensor w2 = make(d, Shape{4, 3}, t), y = make(d, Shape{6, 4}, t);
    const Tensor dpre = make(d, Shape{6, 3}, t);
    const Tensor dw = make(d, Shape{4, 3}, DType::kF32), db = make(d, Shape{3}, DType::kF32);
    k.linear_forward(d, x, w, b, h, pre);
    k.linear_backward(d, h, w2, y, dpre, dw, Tensor(), pre, db);
  });
}

TEST(DryKernels, ElementwiseAndLayerNorm) {
  expect_same_workspace("layer_norm", [](DeviceContext& d, const KernelBackend& k, DType t) {
    const Tensor x = make(d, Shape{4, 8}, t), y = make(d, Shape{4, 8}, t);
    const Tensor w = make(d, Shape{8}, t), b = make(d, Shape{8}, t);
    const Tensor mean = make(d, Shape{4}, DType::kF32), rstd = make(d, Shape{4}, DType::kF32);
    const Tensor dw = make(d, Shape{8}, DType::kF32), db = make(d, Shape{8}, DType::kF32);
    k.gelu_forward(d, x, y);
    k.gelu_backward(d, x, y, y);
    k.add(d, x, y, y);
    k.layer_norm_forward(d, x, w, b, 1e-5f, y, mean, rstd);
    k.layer_norm_backward(d, x, w, mean, rstd, y, x, dw, db);
  });
}

TEST(DryKernels, RmsNormRopeAndSwiglu) {
  expect_same_workspace("llama", [](DeviceContext& d, const KernelBackend& k, DType t) {
    const Tensor x = make(d, Shape{4, 8}, t), y = make(d, Shape{4, 8}, t), w = make(d, Shape{8}, t);
    const Tensor rstd = make(d, Shape{4}, DType::kF32), dw = make(d, Shape{8}, DType::kF32);
    k.rms_norm_forward(d, x, w, 1e-5f, y, rstd);
    k.rms_norm_backward(d, x, w, rstd, y, x, dw);
    const Tensor qkv = make(d, Shape{2, 5, 32}, t);
    const QkvHeads heads = split_qkv(qkv, 4, 2);
    k.rope_forward(d, heads.q, 3, 10000.0f);
    k.rope_backward(d, heads.k, 3, 10000.0f);
    const Tensor gate_up = make(d, Shape{4, 16}, t);
    k.swiglu_forward(d, gate_up, y);
    k.swiglu_backward(d, gate_up, y, gate_up);
  });
}

TEST(DryKernels, Attention) {
  // grouped-query: 4 query heads over 2 kv heads of 3 elements, read from one fused qkv
  expect_same_workspace("attention", [](DeviceContext& d, const KernelBackend& k, DType t) {
    const Tensor qkv = make(d, Shape{2, 5, 24}, t), dqkv = make(d, Shape{2, 5, 24}, t);
    const Tensor y = make(d, Shape{2, 5, 12}, t), lse = make(d, Shape{2, 4, 5}, DType::kF32);
    const QkvHeads x = split_qkv(qkv, 4, 2), dx = split_qkv(dqkv, 4, 2);
    const AttentionHeads o = AttentionHeads::packed(y, 4);
    k.attention_forward(d, x.q, x.k, x.v, o, lse);
    k.attention_backward(d, x.q, x.k, x.v, o, lse, o, dx.q, dx.k, dx.v);
  });
}

TEST(DryKernels, EmbeddingAndCrossEntropy) {
  expect_same_workspace("embedding", [](DeviceContext& d, const KernelBackend& k, DType t) {
    const Tensor ids = make(d, Shape{2, 3}, DType::kI32);
    const Tensor wte = make(d, Shape{7, 4}, t), wpe = make(d, Shape{3, 4}, t);
    const Tensor out = make(d, Shape{2, 3, 4}, t);
    const Tensor logits = make(d, Shape{6, 7}, t), dlogits = make(d, Shape{6, 7}, t);
    k.embedding_forward(d, ids, wte, wpe, out);
    double loss_sum = 0.0;
    k.softmax_cross_entropy(d, logits, ids.view(0, Shape{6}), logits.dim(1), 1.0f, dlogits,
                            &loss_sum);
  });
}

// A meta device standing for a GPU replays the CUDA backend's workspace, not the CPU's: one
// cuBLAS workspace per group of GEMMs (Note [cuBLAS workspace]), attention's f32 copies of its
// bf16 operands and its scores (forward) or P, dS and D (backward), the cross-entropy's per-row
// losses, and nothing for the rest. tests/gpu/dry_kernels_cuda_test.cpp holds the same ops to the
// real CUDA backend.
TEST(DryKernels, GpuMetaDeviceReplaysTheCudaBackendsWorkspace) {
  const auto meta = make_meta_device_context(Device::cuda(0));
  DeviceContext& d = *meta;
  const KernelBackend& k = kernel_backend_for(d.device());
  EXPECT_NE(&k, &kernel_backend_for(Device::meta_of(Device::cpu())));
  const auto peak = [&](const std::function<void()>& op) {
    d.tracker().reset_peaks();
    op();
    EXPECT_EQ(d.tracker().current_bytes(MemoryCategory::kWorkspace), 0);
    return d.tracker().peak_bytes(MemoryCategory::kWorkspace);
  };
  const std::int64_t cublas = cuda::kCublasWorkspaceBytes;
  for (DType t : {DType::kF32, DType::kBF16}) {
    SCOPED_TRACE(dtype_name(t));
    const bool bf16 = t == DType::kBF16;
    const Tensor x = make(d, Shape{6, 5}, t), w = make(d, Shape{3, 5}, t), b = make(d, Shape{3}, t);
    const Tensor y = make(d, Shape{6, 3}, t), dx = make(d, Shape{6, 5}, t);
    const Tensor dw = make(d, Shape{3, 5}, DType::kF32), db = make(d, Shape{3}, DType::kF32);
    EXPECT_EQ(peak([&] { k.linear_forward(d, x, w, b, y, Tensor()); }), cublas);
    EXPECT_EQ(peak([&] { k.linear_backward(d, x, w, y, dx, dw, Tensor(), Tensor(), Tensor()); }),
              cublas);
    // BGRADB writes the bias gradient into (out) f32 scratch while the workspace lives.
    EXPECT_EQ(peak([&] { k.linear_backward(d, x, w, y, dx, dw, db, Tensor(), Tensor()); }),
              cublas + 3 * 4);
    EXPECT_EQ(peak([&] { k.gemm(d, false, true, 1.0f, x, w, 0.5f, y); }), cublas);
    const Tensor mean = make(d, Shape{6}, DType::kF32), rstd = make(d, Shape{6}, DType::kF32);
    EXPECT_EQ(peak([&] {
                k.gelu_forward(d, x, dx);
                k.add(d, x, dx, dx);
                k.layer_norm_forward(d, x, w.view(0, Shape{5}), b, 1e-5f, dx, mean, rstd);
              }),
              0);
    // Grouped-query attention, 4 query heads over 2 kv heads of 3 elements: qkv (2, 5, 24),
    // y and dy (2, 5, 12), scores (2, 4, 5, 5) and D (2, 4, 5) are 960, 480, 800 and 160
    // bytes in f32. bf16 operands get one f32 copy per base tensor (q, k and v share qkv's);
    // forward holds the scores, backward P, dS and D.
    const Tensor qkv = make(d, Shape{2, 5, 24}, t), dqkv = make(d, Shape{2, 5, 24}, t);
    const Tensor ay = make(d, Shape{2, 5, 12}, t), day = make(d, Shape{2, 5, 12}, t);
    const Tensor lse = make(d, Shape{2, 4, 5}, DType::kF32);
    const QkvHeads x3 = split_qkv(qkv, 4, 2), dx3 = split_qkv(dqkv, 4, 2);
    const AttentionHeads o = AttentionHeads::packed(ay, 4), d_o = AttentionHeads::packed(day, 4);
    EXPECT_EQ(peak([&] { k.attention_forward(d, x3.q, x3.k, x3.v, o, lse); }),
              (bf16 ? 960 + 480 : 0) + 800 + cublas);
    EXPECT_EQ(
        peak([&] { k.attention_backward(d, x3.q, x3.k, x3.v, o, lse, d_o, dx3.q, dx3.k, dx3.v); }),
        (bf16 ? 480 + 480 + 960 + 960 : 0) + 800 + 800 + 160 + cublas);
    // RMSNorm, rotary embedding and SwiGLU: row and element kernels, no workspace.
    const Tensor gate_up = make(d, Shape{6, 10}, t), rope_qkv = make(d, Shape{2, 5, 32}, t);
    const QkvHeads rope_heads = split_qkv(rope_qkv, 4, 2);
    EXPECT_EQ(peak([&] {
                k.rms_norm_forward(d, x, w.view(0, Shape{5}), 1e-5f, dx, rstd);
                k.rms_norm_backward(d, x, w.view(0, Shape{5}), rstd, dx, dx, dw.view(0, Shape{5}));
                k.rope_forward(d, rope_heads.q, 7, 10000.0f);
                k.rope_backward(d, rope_heads.k, 7, 10000.0f);
                k.swiglu_forward(d, gate_up, dx);
                k.swiglu_backward(d, gate_up, dx, gate_up);
              }),
              0);
    const Tensor ids = make(d, Shape{6}, DType::kI32);
    double loss_sum = 0.0;
    // Per-row losses (6 f32) and their double sum on the device (8 bytes).
    EXPECT_EQ(peak([&] { k.softmax_cross_entropy(d, x, ids, x.dim(1), 1.0f, dx, &loss_sum); }),
              6 * 4 + 8);
  }
}

// The fused GELU MLP's Linear ops on a meta device standing for a GPU: one cuBLAS workspace
// per op (cuBLASLt's, Note [cuBLAS workspace]) and, while it lives, the bias-gradient scratch
// each epilogue writes: DGELU_BGRAD's (in), then BGRADB's (out), both f32 whatever the
// compute dtype (the bias gradient is an f32 sum).
// Widths cuBLASLt's GELU aux cannot take (not a multiple of 8) run kernels and need no
// pre-GELU scratch.
TEST(DryKernels, GpuMetaDeviceReplaysTheFusedGeluLinearWorkspace) {
  const auto meta = make_meta_device_context(Device::cuda(0));
  DeviceContext& d = *meta;
  const KernelBackend& k = kernel_backend_for(d.device());
  const std::int64_t cublas = cuda::kCublasWorkspaceBytes;
  const auto peak = [&](const std::function<void()>& op) {
    d.tracker().reset_peaks();
    op();
    EXPECT_EQ(d.tracker().current_bytes(MemoryCategory::kWorkspace), 0);
    return d.tracker().peak_bytes(MemoryCategory::kWorkspace);
  };
  for (DType t : {DType::kF32, DType::kBF16}) {
    for (const std::int64_t hidden : {std::int64_t{16}, std::int64_t{12}}) {
      SCOPED_TRACE(std::string(dtype_name(t)) + ", hidden " + std::to_string(hidden));
      const bool fuses = hidden % 8 == 0;
      const std::int64_t pre_gelu_scratch = fuses ? hidden * 4 : 0;
      // fc (6, 5) -> (6, hidden) with GELU, proj (6, hidden) -> (6, 3).
      const Tensor x = make(d, Shape{6, 5}, t), w_fc = make(d, Shape{hidden, 5}, t);
      const Tensor b_fc = make(d, Shape{hidden}, t);
      const Tensor pre = make(d, Shape{6, hidden}, t), h = make(d, Shape{6, hidden}, t);
      const Tensor w_proj = make(d, Shape{3, hidden}, t), dy = make(d, Shape{6, 3}, t);
      const Tensor dw = make(d, Shape{3, hidden}, DType::kF32), db = make(d, Shape{3}, DType::kF32);
      const Tensor db_fc = make(d, Shape{hidden}, DType::kF32);
      EXPECT_EQ(peak([&] { k.linear_forward(d, x, w_fc, b_fc, h, pre); }), cublas);
      EXPECT_EQ(peak([&] { k.linear_backward(d, h, w_proj, dy, pre, dw, db, pre, db_fc); }),
                cublas + std::max<std::int64_t>(pre_gelu_scratch, 3 * 4));
      EXPECT_EQ(peak([&] { k.linear_backward(d, h, w_proj, dy, pre, dw, Tensor(), pre, db_fc); }),
                cublas + pre_gelu_scratch);
      EXPECT_EQ(
          peak([&] { k.linear_backward(d, h, w_proj, dy, pre, dw, Tensor(), pre, Tensor()); }),
          cublas);
    }
  }
}

// Note [cuDNN attention workspace]: with runtime.attention = "cudnn" a meta device standing
// for a GPU replays one allocation per bf16 attention op, the bound computed from the shapes
// (the real backend allocates the same unless its built graph asks for more), and no f32
// copies or scores; f32 operands still replay the rows kernels' workspace.
TEST(DryKernels, GpuMetaDeviceReplaysTheCudnnAttentionWorkspaceBound) {
  const auto meta = make_meta_device_context(Device::cuda(0));
  DeviceContext& d = *meta;
  const KernelBackend& cudnn = kernel_backend_for(d.device(), CudaAttention::kCudnn);
  const KernelBackend& rows = kernel_backend_for(d.device(), CudaAttention::kRows);
  EXPECT_NE(&cudnn, &rows);
  const auto peak = [&](const std::function<void()>& op) {
    d.tracker().reset_peaks();
    op();
    EXPECT_EQ(d.tracker().current_bytes(MemoryCategory::kWorkspace), 0);
    return d.tracker().peak_bytes(MemoryCategory::kWorkspace);
  };
  const std::int64_t batch = 2, seq = 65, n_head = 4, n_kv_head = 2, hs = 16;
  const AttentionShape shape{batch, seq, n_head, n_kv_head, hs, seq};
  for (DType t : {DType::kBF16, DType::kF32}) {
    SCOPED_TRACE(dtype_name(t));
    const Tensor qkv = make(d, Shape{batch, seq, (n_head + 2 * n_kv_head) * hs}, t);
    const Tensor dqkv = make(d, qkv.shape(), t);
    const Tensor y = make(d, Shape{batch, seq, n_head * hs}, t), dy = make(d, y.shape(), t);
    const Tensor lse = make(d, shape.lse_shape(), DType::kF32);
    const QkvHeads x = split_qkv(qkv, n_head, n_kv_head), dx = split_qkv(dqkv, n_head, n_kv_head);
    const AttentionHeads o = AttentionHeads::packed(y, n_head);
    const AttentionHeads d_o = AttentionHeads::packed(dy, n_head);
    const auto forward = [&](const KernelBackend& k) {
      return peak([&] { k.attention_forward(d, x.q, x.k, x.v, o, lse); });
    };
    const auto backward = [&](const KernelBackend& k) {
      return peak([&] { k.attention_backward(d, x.q, x.k, x.v, o, lse, d_o, dx.q, dx.k, dx.v); });
    };
    if (t == DType::kBF16) {
      // forward: the plan allowance; backward: the f32 dQ accumulator and softmax sum too
      const std::int64_t rows_of_q = batch * n_head * seq;
      EXPECT_EQ(forward(cudnn), cuda::kCudnnPlanWorkspaceBytes);
      EXPECT_EQ(backward(cudnn),
                rows_of_q * hs * 4 + rows_of_q * 4 + cuda::kCudnnPlanWorkspaceBytes);
      EXPECT_EQ(cuda::cudnn_attention_workspace_bytes(shape, false), forward(cudnn));
      EXPECT_EQ(cuda::cudnn_attention_workspace_bytes(shape, true), backward(cudnn));
    } else {
      EXPECT_EQ(forward(cudnn), forward(rows));
      EXPECT_EQ(backward(cudnn), backward(rows));
    }
    // The rows kernels hold (B, nh, T, T) f32 scores at least, and a cuBLAS workspace.
    EXPECT_GE(forward(rows), batch * n_head * seq * seq * 4 + cuda::kCublasWorkspaceBytes);
  }
}

TEST(MetaDevice, AllocatesDistinctAlignedAddressesWithoutMemory) {
  MetaAllocator allocator(Device::cuda(1));
  EXPECT_TRUE(allocator.device().meta);
  EXPECT_EQ(allocator.device().to_string(), "meta(cuda:1)");
  // A terabyte each: nothing is reserved, only counted.
  void* a = allocator.allocate(std::size_t{1} << 40);
  void* b = allocator.allocate(std::size_t{1} << 40);
  EXPECT_NE(a, b);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % DeviceAllocator::kMinAlignment, 0u);
  EXPECT_GE(reinterpret_cast<std::uintptr_t>(b) - reinterpret_cast<std::uintptr_t>(a),
            std::uintptr_t{1} << 40);
  EXPECT_EQ(allocator.stats().allocated_bytes, std::int64_t{2} << 40);
  allocator.deallocate(a, std::size_t{1} << 40);
  allocator.deallocate(b, std::size_t{1} << 40);
  EXPECT_EQ(allocator.stats().allocated_bytes, 0);
}

TEST(MetaDevice, TrackerCountsWhatNoMemoryHolds) {
  const auto meta = make_meta_device_context(Device::cpu(), 0);
  // Past any host's physical memory: a meta tracker refuses nothing it has no capacity for.
  const Tensor huge = Tensor::zeros(Shape{std::int64_t{1} << 40}, DType::kF32, meta->tracker(),
                                    MemoryCategory::kParameters);
  EXPECT_EQ(meta->tracker().current_bytes(MemoryCategory::kParameters), std::int64_t{4} << 40);
  EXPECT_EQ(meta->ops().sum_of_squares(huge), 0.0);
  float host = 3.0f;
  meta->ops().copy(huge.view(0, Shape{1}), Tensor::wrap(&host, Shape{1}, DType::kF32));
  EXPECT_EQ(host, 3.0f);  // a copy from meta memory leaves the host side as it was
}

// Block quantization needs no workspace on either backend, so the dry runs allocate nothing,
// and they refuse a payload sized for another count as the real backends do.
TEST(DryKernels, BlockQuantizationAllocatesNoWorkspace) {
  for (const Device& device : {Device::cpu(), Device::cuda(0)}) {
    SCOPED_TRACE(device.to_string());
    const auto meta = make_meta_device_context(device);
    DeviceContext& d = *meta;
    const KernelBackend& k = kernel_backend_for(d.device());
    const math::BlockQuantFormat format{math::QuantBits::kInt4, 2048};
    const Tensor x = make(d, Shape{5000}, DType::kBF16);
    const Tensor payload = make(d, Shape{math::quant_payload_words(5000, format)}, DType::kI32);
    const Tensor scales = make(d, Shape{3}, DType::kF32);
    d.tracker().reset_peaks();
    k.quantize_blocks(d, format, x, payload, scales);
    k.dequantize_blocks(d, format, payload, scales, x);
    EXPECT_EQ(d.tracker().peak_bytes(MemoryCategory::kWorkspace), 0);
    const Tensor short_scales = make(d, Shape{2}, DType::kF32);
    EXPECT_ANY_THROW(k.quantize_blocks(d, format, x, payload, short_scales));
  }
}

}  // namespace
}  // namespace zt::nn

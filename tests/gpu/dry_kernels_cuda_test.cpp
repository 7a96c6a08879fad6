// Note [Dry kernels] on the GPU: every CUDA kernel-backend op runs once on the GPU and once on
// the meta device standing for it, on tensors of the same shapes, in f32 and bf16, and the
// tracker's workspace peak (and what is left live) must agree, so the estimate of a GPU run
// sees the CUDA backend's workspace, cuBLAS's included. Skips without a GPU.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/device/device_context.h"
#include "core/device/meta_device.h"
#include "nn/kernels/attention_heads.h"
#include "nn/kernels/cuda_workspace.h"
#include "nn/kernels/kernel_backend.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt::nn {
namespace {

using Op = std::function<void(DeviceContext&, const KernelBackend&, DType)>;

std::int64_t workspace_peak(DeviceContext& device, const Op& op, DType dtype) {
  const KernelBackend& kernels = kernel_backend_for(device.device());
  device.tracker().reset_peaks();
  op(device, kernels, dtype);
  device.synchronize();
  EXPECT_EQ(device.tracker().current_bytes(MemoryCategory::kWorkspace), 0);
  return device.tracker().peak_bytes(MemoryCategory::kWorkspace);
}

Tensor make(DeviceContext& device, Shape shape, DType dtype) {
  return Tensor::zeros(shape, dtype, device.tracker(), MemoryCategory::kActivations);
}

void expect_same_workspace(const char* name, const Op& op) {
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    const auto gpu = make_device_context(Device::cuda(0));
    const auto meta = make_meta_device_context(Device::cuda(0));
    const std::int64_t real = workspace_peak(*gpu, op, dtype);
    const std::int64_t dry = workspace_peak(*meta, op, dtype);
    EXPECT_EQ(dry, real) << name << " in " << dtype_name(dtype);
  }
}

TEST(DryCudaKernels, LinearAndGemmHoldOneCublasWorkspace) {
  ZT_SKIP_WITHOUT_GPU();
  expect_same_workspace("linear", [](DeviceContext& d, const KernelBackend& k, DType t) {
    const Tensor x = make(d, Shape{6, 5}, t), w = make(d, Shape{3, 5}, t), b = make(d, Shape{3}, t);
    const Tensor y = make(d, Shape{6, 3}, t), dx = make(d, Shape{6, 5}, t);
    const Tensor dw = make(d, Shape{3, 5}, DType::kF32), db = make(d, Shape{3}, DType::kF32);
    k.linear_forward(d, x, w, b, y, Tensor());
    k.linear_backward(d, x, w, y, dx, dw, db, Tensor(), Tensor());
    k.gemm(d, false, true, 1.0f, x, w, 0.5f, y);
    // One workspace for cuBLAS and cuBLASLt, plus BGRADB's (out) f32 scratch.
    EXPECT_EQ(d.tracker().peak_bytes(MemoryCategory::kWorkspace),
              cuda::kCublasWorkspaceBytes + 3 * 4);
  });
}

// The fused GELU MLP's Linear ops: GELU_AUX_BIAS forward, DGELU_BGRAD and BGRADB backward
// with their bias-gradient scratch (hidden 16), and the kernels after the GEMM for a width
// cuBLASLt's GELU aux does not take (hidden 12).
TEST(DryCudaKernels, LinearWithFusedGelu) {
  ZT_SKIP_WITHOUT_GPU();
  for (const std::int64_t hidden : {std::int64_t{16}, std::int64_t{12}}) {
    SCOPED_TRACE("hidden " + std::to_string(hidden));
    expect_same_workspace("linear_gelu", [hidden](DeviceContext& d, const KernelBackend& k,
                                                  DType t) {
      const Tensor x = make(d, Shape{6, 5}, t), w_fc = make(d, Shape{hidden, 5}, t);
      const Tensor b_fc = make(d, Shape{hidden}, t);
      const Tensor pre = make(d, Shape{6, hidden}, t), h = make(d, Shape{6, hidden}, t);
      const Tensor w_proj = make(d, Shape{3, hidden}, t), dy = make(d, Shape{6, 3}, t);
      const Tensor dw = make(d, Shape{3, hidden}, DType::kF32), db = make(d, Shape{3}, DType::kF32);
      const Tensor db_fc = make(d, Shape{hidden}, DType::kF32);
      const Tensor dpre = make(d, Shape{6, hidden}, t);
      const Tensor dw_fc = make(d, Shape{hidden, 5}, DType::kF32), dx = make(d, Shape{6, 5}, t);
      k.linear_forward(d, x, w_fc, b_fc, h, pre);
      k.linear_backward(d, h, w_proj, dy, dpre, dw, db, pre, db_fc);
      k.linear_backward(d, x, w_fc, dpre, dx, dw_fc, Tensor(), Tensor(), Tensor());
    });
  }
}

TEST(DryCudaKernels, ElementwiseAndLayerNorm) {
  ZT_SKIP_WITHOUT_GPU();
  expect_same_workspace("layer_norm", [](DeviceContext& d, const KernelBackend& k, DType t) {
    const Tensor x = make(d, Shape{4, 8}, t), y = make(d, Shape{4, 8}, t);
    const Tensor w = make(d, Shape{8}, t), b = make(d, Shape{8}, t);
    const Tensor mean = make(d, Shape{4}, DType::kF32), rstd = make(d, Shape{4}, DType::kF32);
    const Tensor dw = make(d, Shape{8}, DType::kF32), db = make(d, Shape{8}, DType::kF32);
    k.gelu_forward(d, x, y);
    k.gelu_backward(d, x, y, y);
    k.relu_forward(d, x, y);
    k.relu_backward(d, x, y, y);
    k.add(d, x, y, y);
    k.layer_norm_forward(d, x, w, b, 1e-5f, y, mean, rstd);
    k.layer_norm_backward(d, x, w, mean, rstd, y, x, dw, db);
  });
}

TEST(DryCudaKernels, Attention) {
  ZT_SKIP_WITHOUT_GPU();
  expect_same_workspace("attention", [](DeviceContext& d, const KernelBackend& k, DType t) {
    // grouped-query: 4 query heads over 2 kv heads of 3 elements, read from one fused qkv
    const Tensor qkv = make(d, Shape{2, 5, 24}, t), dqkv = make(d, Shape{2, 5, 24}, t);
    const Tensor y = make(d, Shape{2, 5, 12}, t), dy = make(d, Shape{2, 5, 12}, t);
    const Tensor lse = make(d, Shape{2, 4, 5}, DType::kF32);
    const QkvHeads x = split_qkv(qkv, 4, 2), dx = split_qkv(dqkv, 4, 2);
    const AttentionHeads o = AttentionHeads::packed(y, 4), d_o = AttentionHeads::packed(dy, 4);
    k.attention_forward(d, x.q, x.k, x.v, o, lse);
    k.attention_backward(d, x.q, x.k, x.v, o, lse, d_o, dx.q, dx.k, dx.v);
  });
}

TEST(DryCudaKernels, EmbeddingAndCrossEntropy) {
  ZT_SKIP_WITHOUT_GPU();
  expect_same_workspace("embedding", [](DeviceContext& d, const KernelBackend& k, DType t) {
    const Tensor ids = make(d, Shape{2, 3}, DType::kI32);
    const Tensor wte = make(d, Shape{7, 4}, t), wpe = make(d, Shape{3, 4}, t);
    const Tensor out = make(d, Shape{2, 3, 4}, t);
    const Tensor dwte = make(d, Shape{7, 4}, DType::kF32), dwpe = make(d, Shape{3, 4}, DType::kF32);
    const Tensor logits = make(d, Shape{6, 7}, t), dlogits = make(d, Shape{6, 7}, t);
    k.embedding_forward(d, ids, wte, wpe, out);
    k.embedding_backward(d, ids, out, dwte, dwpe);
    double loss_sum = 0.0;
    k.softmax_cross_entropy(d, logits, ids.view(0, Shape{6}), logits.dim(1), 1.0f, dlogits,
                            &loss_sum);
  });
}

}  // namespace
}  // namespace zt::nn

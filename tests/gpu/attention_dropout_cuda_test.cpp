// Dropout on the attention probabilities (Note [Attention dropout]) on CUDA against the CPU
// kernel on the same inputs and the same hash mask, forward and backward, multi-head and
// grouped-query, f32 and bf16; and the cuDNN backend given a mask runs the rows kernels
// rather than drop nothing. Skips without a GPU.
#include <gtest/gtest.h>

#include <string>

#include "nn/layers/dropout.h"
#include "tests/gpu/kernel_backend_test_util.h"

namespace zt::gpu_test {
namespace {

using AttentionDropoutCuda = BackendPair;

struct Heads {
  std::int64_t batch, seq_len, n_head, n_kv_head, head_dim;
};

const nn::math::DropoutMask kMask =
    nn::dropout_mask(nn::DropoutDraw{1234, 7, 5}, 0.3f, 2, nn::math::DropoutSite::kAttentionProbs);

TEST_P(AttentionDropoutCuda, ForwardAndBackwardMatchCpuUnderTheSameMask) {
  // GPT-shaped (T one past a warp) and grouped-query (3 query heads per kv head, two CPU
  // query blocks).
  for (const Heads c : {Heads{2, 33, 4, 4, 8}, Heads{2, 70, 6, 2, 4}}) {
    SCOPED_TRACE("T " + std::to_string(c.seq_len) + ", " + std::to_string(c.n_head) + " / " +
                 std::to_string(c.n_kv_head) + " heads");
    const Shape fused{c.batch, c.seq_len, (c.n_head + 2 * c.n_kv_head) * c.head_dim};
    const Shape out{c.batch, c.seq_len, c.n_head * c.head_dim};
    const Shape lse_shape{c.batch, c.n_head, c.seq_len};
    const Tensor qkv = host(fused, dtype(), 41), qkv_gpu = to_gpu(qkv);
    const Tensor dy = host(out, dtype(), 42), dy_gpu = to_gpu(dy);
    const Tensor y_cpu = host_zeros(out, dtype()), y_gpu = to_gpu(y_cpu);
    const Tensor lse_cpu = host_zeros(lse_shape, DType::kF32), lse_gpu = to_gpu(lse_cpu);
    const nn::QkvHeads x_cpu = nn::split_qkv(qkv, c.n_head, c.n_kv_head);
    const nn::QkvHeads x_gpu = nn::split_qkv(qkv_gpu, c.n_head, c.n_kv_head);
    const auto o_cpu = nn::AttentionHeads::packed(y_cpu, c.n_head);
    const auto o_gpu = nn::AttentionHeads::packed(y_gpu, c.n_head);
    cpu_kernels().attention_forward(cpu(), x_cpu.q, x_cpu.k, x_cpu.v, o_cpu, lse_cpu, &kMask);
    gpu_kernels().attention_forward(gpu(), x_gpu.q, x_gpu.k, x_gpu.v, o_gpu, lse_gpu, &kMask);
    expect_same(y_cpu, y_gpu, dtype(), "o");
    expect_same(lse_cpu, lse_gpu, DType::kF32, "lse");

    const Tensor dqkv_cpu = host_zeros(fused, dtype()), dqkv_gpu = to_gpu(dqkv_cpu);
    const nn::QkvHeads dx_cpu = nn::split_qkv(dqkv_cpu, c.n_head, c.n_kv_head);
    const nn::QkvHeads dx_gpu = nn::split_qkv(dqkv_gpu, c.n_head, c.n_kv_head);
    cpu_kernels().attention_backward(cpu(), x_cpu.q, x_cpu.k, x_cpu.v, o_cpu, lse_cpu,
                                     nn::AttentionHeads::packed(dy, c.n_head), dx_cpu.q, dx_cpu.k,
                                     dx_cpu.v, &kMask);
    gpu_kernels().attention_backward(gpu(), x_gpu.q, x_gpu.k, x_gpu.v, o_gpu, lse_gpu,
                                     nn::AttentionHeads::packed(dy_gpu, c.n_head), dx_gpu.q,
                                     dx_gpu.k, dx_gpu.v, &kMask);
    expect_same(dqkv_cpu, dqkv_gpu, dtype(), "dqkv");
  }
}

// Note [Dropout keeps the project's attention]: the cuDNN backend given a mask runs the rows
// kernels, the same bits as the rows backend's.
TEST_P(AttentionDropoutCuda, TheCudnnBackendRunsRowsForAMask) {
  if (dtype() != DType::kBF16) GTEST_SKIP() << "cuDNN's attention is bf16's";
  if (!nn::cudnn_attention_built()) GTEST_SKIP() << "built without the cuDNN attention";
  const Heads c{2, 64, 4, 4, 16};
  const Shape fused{c.batch, c.seq_len, 3 * c.n_head * c.head_dim};
  const Shape out{c.batch, c.seq_len, c.n_head * c.head_dim};
  const Tensor qkv = to_gpu(host(fused, dtype(), 43));
  const nn::QkvHeads x = nn::split_qkv(qkv, c.n_head, c.n_kv_head);
  const auto forward = [&](const nn::KernelBackend& kernels) {
    const Tensor y = to_gpu(host_zeros(out, dtype()));
    const Tensor lse = to_gpu(host_zeros(Shape{c.batch, c.n_head, c.seq_len}, DType::kF32));
    kernels.attention_forward(gpu(), x.q, x.k, x.v, nn::AttentionHeads::packed(y, c.n_head), lse,
                              &kMask);
    return floats(y);
  };
  EXPECT_EQ(forward(nn::kernel_backend_for(gpu().device(), nn::CudaAttention::kCudnn)),
            forward(gpu_kernels()));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, AttentionDropoutCuda, ::testing::Values(DType::kF32, DType::kBF16),
                         dtype_param_name);

}  // namespace
}  // namespace zt::gpu_test

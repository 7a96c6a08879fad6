// Every KernelBackend op on the CUDA backend against the CPU backend on the same inputs, in
// f32 (tight: summation order only) and bf16 (a stated one-to-two-rounding tolerance, see
// kernel_backend_test_util.h). Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "core/device/host_scalar.h"
#include "nn/layers/embedding.h"
#include "tests/gpu/kernel_backend_test_util.h"

namespace zt::gpu_test {
namespace {

constexpr std::int64_t kBatch = 2, kSeq = 5, kChannels = 8, kHeads = 2, kOut = 12, kVocab = 11;
const Shape kActivation{kBatch, kSeq, kChannels};

using CudaKernelBackend = BackendPair;

TEST_P(CudaKernelBackend, GemmMatchesCpuForEveryTranspose) {
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      SCOPED_TRACE(std::string(ta ? "A^T " : "A ") + (tb ? "B^T" : "B"));
      const Tensor a = host(ta ? Shape{9, 5} : Shape{5, 9}, dtype(), 1);
      const Tensor b = host(tb ? Shape{7, 9} : Shape{9, 7}, dtype(), 2);
      const Tensor c_cpu = host(Shape{5, 7}, DType::kF32, 3);
      const Tensor c_gpu = to_gpu(c_cpu);
      cpu_kernels().gemm(cpu(), ta, tb, 0.5f, a, b, 0.25f, c_cpu);
      gpu_kernels().gemm(gpu(), ta, tb, 0.5f, to_gpu(a), to_gpu(b), 0.25f, c_gpu);
      expect_same(c_cpu, c_gpu, dtype(), "c");
    }
  }
}

TEST_P(CudaKernelBackend, LinearForwardAndBackwardMatchCpu) {
  const Tensor x = host(kActivation, dtype(), 4);
  const Tensor w = host(Shape{kOut, kChannels}, dtype(), 5, 0.3f);
  const Tensor bias = host(Shape{kOut}, dtype(), 6);
  const Tensor dy = host(Shape{kBatch, kSeq, kOut}, dtype(), 7);
  const Tensor y_cpu = host_zeros(Shape{kBatch, kSeq, kOut}, dtype());
  const Tensor y_gpu = to_gpu(y_cpu);
  cpu_kernels().linear_forward(cpu(), x, w, bias, y_cpu, Tensor());
  gpu_kernels().linear_forward(gpu(), to_gpu(x), to_gpu(w), to_gpu(bias), y_gpu, Tensor());
  expect_same(y_cpu, y_gpu, dtype(), "y");

  const Tensor dx_cpu = host_zeros(kActivation, dtype());
  const Tensor dw_cpu = host(Shape{kOut, kChannels}, DType::kF32, 8);  // accumulated into
  const Tensor db_cpu = host(Shape{kOut}, DType::kF32, 9);
  const Tensor dx_gpu = to_gpu(dx_cpu), dw_gpu = to_gpu(dw_cpu), db_gpu = to_gpu(db_cpu);
  cpu_kernels().linear_backward(cpu(), x, w, dy, dx_cpu, dw_cpu, db_cpu, Tensor(), Tensor());
  gpu_kernels().linear_backward(gpu(), to_gpu(x), to_gpu(w), to_gpu(dy), dx_gpu, dw_gpu, db_gpu,
                                Tensor(), Tensor());
  expect_same(dx_cpu, dx_gpu, dtype(), "dx");
  expect_same(dw_cpu, dw_gpu, dtype(), "dweight");
  expect_same(db_cpu, db_gpu, dtype(), "dbias");
}

TEST_P(CudaKernelBackend, ActivationsAndResidualAddMatchCpu) {
  const Tensor x = host(kActivation, dtype(), 10);
  const Tensor dy = host(kActivation, dtype(), 11);
  const Tensor x_gpu = to_gpu(x), dy_gpu = to_gpu(dy);
  for (const bool gelu : {true, false}) {
    SCOPED_TRACE(gelu ? "gelu" : "relu");
    const Tensor y_cpu = host_zeros(kActivation, dtype()),
                 dx_cpu = host_zeros(kActivation, dtype());
    const Tensor y_gpu = to_gpu(y_cpu), dx_gpu = to_gpu(dx_cpu);
    if (gelu) {
      cpu_kernels().gelu_forward(cpu(), x, y_cpu);
      gpu_kernels().gelu_forward(gpu(), x_gpu, y_gpu);
      cpu_kernels().gelu_backward(cpu(), x, dy, dx_cpu);
      gpu_kernels().gelu_backward(gpu(), x_gpu, dy_gpu, dx_gpu);
    } else {
      cpu_kernels().relu_forward(cpu(), x, y_cpu);
      gpu_kernels().relu_forward(gpu(), x_gpu, y_gpu);
      cpu_kernels().relu_backward(cpu(), x, dy, dx_cpu);
      gpu_kernels().relu_backward(gpu(), x_gpu, dy_gpu, dx_gpu);
    }
    expect_same(y_cpu, y_gpu, dtype(), "y");
    expect_same(dx_cpu, dx_gpu, dtype(), "dx");
  }
  const Tensor sum_cpu = host_zeros(kActivation, dtype()), sum_gpu = to_gpu(sum_cpu);
  cpu_kernels().add(cpu(), x, dy, sum_cpu);
  gpu_kernels().add(gpu(), x_gpu, dy_gpu, sum_gpu);
  expect_same(sum_cpu, sum_gpu, dtype(), "x + dy");
}

TEST_P(CudaKernelBackend, LayerNormForwardAndBackwardMatchCpu) {
  const std::int64_t rows = kBatch * kSeq;
  const Tensor x = host(kActivation, dtype(), 12, 2.0f);
  const Tensor w = host(Shape{kChannels}, dtype(), 13);
  const Tensor b = host(Shape{kChannels}, dtype(), 14);
  const Tensor dy = host(kActivation, dtype(), 15);
  const Tensor y_cpu = host_zeros(kActivation, dtype()), y_gpu = to_gpu(y_cpu);
  const Tensor mean_cpu = host_zeros(Shape{rows}, DType::kF32), mean_gpu = to_gpu(mean_cpu);
  const Tensor rstd_cpu = host_zeros(Shape{rows}, DType::kF32), rstd_gpu = to_gpu(rstd_cpu);
  cpu_kernels().layer_norm_forward(cpu(), x, w, b, 1e-5f, y_cpu, mean_cpu, rstd_cpu);
  gpu_kernels().layer_norm_forward(gpu(), to_gpu(x), to_gpu(w), to_gpu(b), 1e-5f, y_gpu, mean_gpu,
                                   rstd_gpu);
  expect_same(y_cpu, y_gpu, dtype(), "y");
  expect_same(mean_cpu, mean_gpu, DType::kF32, "mean");
  expect_same(rstd_cpu, rstd_gpu, DType::kF32, "rstd");

  const Tensor dx_cpu = host_zeros(kActivation, dtype()), dx_gpu = to_gpu(dx_cpu);
  const Tensor dw_cpu = host(Shape{kChannels}, DType::kF32, 16), dw_gpu = to_gpu(dw_cpu);
  const Tensor db_cpu = host(Shape{kChannels}, DType::kF32, 17), db_gpu = to_gpu(db_cpu);
  cpu_kernels().layer_norm_backward(cpu(), x, w, mean_cpu, rstd_cpu, dy, dx_cpu, dw_cpu, db_cpu);
  gpu_kernels().layer_norm_backward(gpu(), to_gpu(x), to_gpu(w), mean_gpu, rstd_gpu, to_gpu(dy),
                                    dx_gpu, dw_gpu, db_gpu);
  expect_same(dx_cpu, dx_gpu, dtype(), "dx");
  expect_same(dw_cpu, dw_gpu, dtype(), "dweight");
  expect_same(db_cpu, db_gpu, dtype(), "dbias");
}

TEST_P(CudaKernelBackend, AttentionForwardAndBackwardMatchCpu) {
  // q, k, v read in place from one fused projection; multi-head and grouped-query (4 query
  // heads over 2 kv heads), T = 33 (one past a warp).
  struct Heads {
    std::int64_t seq_len, n_head, n_kv_head, head_dim;
  };
  for (const Heads c : {Heads{kSeq, kHeads, kHeads, kChannels / kHeads}, Heads{33, 4, 2, 3}}) {
    SCOPED_TRACE("T " + std::to_string(c.seq_len) + ", " + std::to_string(c.n_head) + " / " +
                 std::to_string(c.n_kv_head) + " heads");
    const Shape fused{kBatch, c.seq_len, (c.n_head + 2 * c.n_kv_head) * c.head_dim};
    const Shape out{kBatch, c.seq_len, c.n_head * c.head_dim};
    const Shape lse_shape{kBatch, c.n_head, c.seq_len};
    const Tensor qkv = host(fused, dtype(), 18), qkv_gpu = to_gpu(qkv);
    const Tensor dy = host(out, dtype(), 19), dy_gpu = to_gpu(dy);
    const Tensor y_cpu = host_zeros(out, dtype()), y_gpu = to_gpu(y_cpu);
    const Tensor lse_cpu = host_zeros(lse_shape, DType::kF32), lse_gpu = to_gpu(lse_cpu);
    const nn::QkvHeads x_cpu = nn::split_qkv(qkv, c.n_head, c.n_kv_head);
    const nn::QkvHeads x_gpu = nn::split_qkv(qkv_gpu, c.n_head, c.n_kv_head);
    const auto o_cpu = nn::AttentionHeads::packed(y_cpu, c.n_head);
    const auto o_gpu = nn::AttentionHeads::packed(y_gpu, c.n_head);
    cpu_kernels().attention_forward(cpu(), x_cpu.q, x_cpu.k, x_cpu.v, o_cpu, lse_cpu);
    gpu_kernels().attention_forward(gpu(), x_gpu.q, x_gpu.k, x_gpu.v, o_gpu, lse_gpu);
    expect_same(y_cpu, y_gpu, dtype(), "o");
    expect_same(lse_cpu, lse_gpu, DType::kF32, "lse");

    const Tensor dqkv_cpu = host_zeros(fused, dtype()), dqkv_gpu = to_gpu(dqkv_cpu);
    const nn::QkvHeads dx_cpu = nn::split_qkv(dqkv_cpu, c.n_head, c.n_kv_head);
    const nn::QkvHeads dx_gpu = nn::split_qkv(dqkv_gpu, c.n_head, c.n_kv_head);
    cpu_kernels().attention_backward(cpu(), x_cpu.q, x_cpu.k, x_cpu.v, o_cpu, lse_cpu,
                                     nn::AttentionHeads::packed(dy, c.n_head), dx_cpu.q, dx_cpu.k,
                                     dx_cpu.v);
    gpu_kernels().attention_backward(gpu(), x_gpu.q, x_gpu.k, x_gpu.v, o_gpu, lse_gpu,
                                     nn::AttentionHeads::packed(dy_gpu, c.n_head), dx_gpu.q,
                                     dx_gpu.k, dx_gpu.v);
    expect_same(dqkv_cpu, dqkv_gpu, dtype(), "dqkv");
  }
}

TEST_P(CudaKernelBackend, AttentionOverLongerKeysMatchesCpu) {
  // The KV cache's case (Note [Longer key sequence]): the last T_q of T_kv = 37 positions as
  // queries over every key; one decode step and a chunk, grouped-query heads.
  constexpr std::int64_t kKvLen = 37, kNHead = 4, kNKvHead = 2, kHeadDim = 3;
  for (const std::int64_t query_len : {std::int64_t{1}, std::int64_t{5}}) {
    SCOPED_TRACE("T_q " + std::to_string(query_len));
    const Shape fused{kBatch, kKvLen, (kNHead + 2 * kNKvHead) * kHeadDim};
    const Shape out{kBatch, query_len, kNHead * kHeadDim};
    const Tensor qkv = host(fused, dtype(), 28), qkv_gpu = to_gpu(qkv);
    const Tensor y_cpu = host_zeros(out, dtype()), y_gpu = to_gpu(y_cpu);
    const Tensor lse_cpu = host_zeros(Shape{kBatch, kNHead, query_len}, DType::kF32);
    const Tensor lse_gpu = to_gpu(lse_cpu);
    const nn::QkvHeads x_cpu = nn::split_qkv(qkv, kNHead, kNKvHead);
    const nn::QkvHeads x_gpu = nn::split_qkv(qkv_gpu, kNHead, kNKvHead);
    const std::int64_t first = kKvLen - query_len;
    cpu_kernels().attention_forward(cpu(), x_cpu.q.positions(first, query_len), x_cpu.k, x_cpu.v,
                                    nn::AttentionHeads::packed(y_cpu, kNHead), lse_cpu);
    gpu_kernels().attention_forward(gpu(), x_gpu.q.positions(first, query_len), x_gpu.k, x_gpu.v,
                                    nn::AttentionHeads::packed(y_gpu, kNHead), lse_gpu);
    expect_same(y_cpu, y_gpu, dtype(), "o");
    expect_same(lse_cpu, lse_gpu, DType::kF32, "lse");
  }
}

TEST_P(CudaKernelBackend, EmbeddingForwardAndBackwardMatchCpu) {
  const Tensor ids = host_ids(Shape{kBatch, kSeq}, kVocab, 20);
  const Tensor wte = host(Shape{kVocab, kChannels}, dtype(), 21);
  const Tensor wpe = host(Shape{kSeq + 2, kChannels}, dtype(), 22);
  const Tensor out_cpu = host_zeros(kActivation, dtype()), out_gpu = to_gpu(out_cpu);
  const Tensor ids_gpu = to_gpu(ids);
  cpu_kernels().embedding_forward(cpu(), ids, wte, wpe, out_cpu);
  gpu_kernels().embedding_forward(gpu(), ids_gpu, to_gpu(wte), to_gpu(wpe), out_gpu);
  expect_same(out_cpu, out_gpu, dtype(), "out");

  const Tensor dout = host(kActivation, dtype(), 23);
  const Tensor dwte_cpu = host_zeros(wte.shape(), DType::kF32), dwte_gpu = to_gpu(dwte_cpu);
  const Tensor dwpe_cpu = host_zeros(wpe.shape(), DType::kF32), dwpe_gpu = to_gpu(dwpe_cpu);
  cpu_kernels().embedding_backward(cpu(), ids, dout, dwte_cpu, dwpe_cpu);
  gpu_kernels().embedding_backward(gpu(), ids_gpu, to_gpu(dout), dwte_gpu, dwpe_gpu);
  expect_same(dwte_cpu, dwte_gpu, DType::kF32, "dwte");
  expect_same(dwpe_cpu, dwpe_gpu, DType::kF32, "dwpe");
}

// A token embedding only (Llama): no wpe read forward, no dwpe written backward.
TEST_P(CudaKernelBackend, EmbeddingWithoutPositionsMatchesCpu) {
  const Tensor ids = host_ids(Shape{kBatch, kSeq}, kVocab, 25);
  const Tensor wte = host(Shape{kVocab, kChannels}, dtype(), 26);
  const Tensor out_cpu = host_zeros(kActivation, dtype()), out_gpu = to_gpu(out_cpu);
  const Tensor ids_gpu = to_gpu(ids);
  cpu_kernels().embedding_forward(cpu(), ids, wte, Tensor(), out_cpu);
  gpu_kernels().embedding_forward(gpu(), ids_gpu, to_gpu(wte), Tensor(), out_gpu);
  expect_same(out_cpu, out_gpu, dtype(), "out");
  const Tensor dout = host(kActivation, dtype(), 27);
  const Tensor dwte_cpu = host_zeros(wte.shape(), DType::kF32), dwte_gpu = to_gpu(dwte_cpu);
  cpu_kernels().embedding_backward(cpu(), ids, dout, dwte_cpu, Tensor());
  gpu_kernels().embedding_backward(gpu(), ids_gpu, to_gpu(dout), dwte_gpu, Tensor());
  expect_same(dwte_cpu, dwte_gpu, DType::kF32, "dwte");
}

TEST_P(CudaKernelBackend, EmbeddingIdsAreCheckedOnTheHostSoTheDeviceReadsNoneBack) {
  // The device embedding no longer copies ids back to check them: the host batch is checked
  // by the first block's module (the trainer does so when it reads a batch).
  Tensor ids = host_ids(Shape{kBatch, kSeq}, kVocab, 24);
  ids.data_as<std::int32_t>()[7] = kVocab;
  const nn::Embedding embedding(kVocab, kSeq, kChannels);
  EXPECT_THROW(embedding.check_input(ids), FormatError);
}

TEST_P(CudaKernelBackend, SoftmaxCrossEntropyMatchesCpu) {
  const Tensor logits = host(Shape{kBatch, kSeq, kVocab}, dtype(), 27, 3.0f);
  const Tensor targets = host_ids(Shape{kBatch, kSeq}, kVocab, 28);
  const Tensor dz_cpu = host_zeros(logits.shape(), dtype()), dz_gpu = to_gpu(dz_cpu);
  double loss_cpu = 0.0;
  cpu_kernels().softmax_cross_entropy(cpu(), logits, targets, kVocab, 0.1f, dz_cpu, &loss_cpu);
  // The GPU writes its sum into pinned staging memory without the host waiting.
  HostScalar loss_gpu = HostScalar::staged(gpu());
  gpu_kernels().softmax_cross_entropy(gpu(), to_gpu(logits), to_gpu(targets), kVocab, 0.1f, dz_gpu,
                                      loss_gpu.data());
  gpu().compute_stream().synchronize();
  EXPECT_NEAR(static_cast<double>(loss_gpu), loss_cpu, 1e-5 * std::fabs(loss_cpu));
  expect_same(dz_cpu, dz_gpu, dtype(), "dlogits");
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaKernelBackend, ::testing::Values(DType::kF32, DType::kBF16),
                         dtype_param_name);

}  // namespace
}  // namespace zt::gpu_test

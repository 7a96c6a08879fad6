// The CUDA Linear's cuBLASLt epilogues (Note [GELU in the GEMMs]) against the CPU backend's
// fused loops on the same inputs: BIAS and GELU_AUX_BIAS forward, DGELU_BGRAD and BGRADB
// backward, and the kernel path for widths cuBLASLt's GELU aux does not take (not a multiple
// of 8). Tolerances (kernel_backend_test_util.h): f32 2e-5 (summation order, and cuBLASLt's
// own tanh); bf16 1/32 relative + 2e-2 absolute: the GEMM result and the GELU output are each
// one bf16 rounding apart from the CPU's f32-rounded-once values (the bias gradients are f32
// sums, held tighter in gemm_cublaslt_cuda_test.cpp). Skips without a GPU.
#include <gtest/gtest.h>

#include "nn/kernels/cuda_workspace.h"
#include "tests/gpu/kernel_backend_test_util.h"

namespace zt::gpu_test {
namespace {

constexpr std::int64_t kRows = 10, kIn = 24, kOut = 16;

using CudaLinearEpilogue = BackendPair;

// fc (kIn -> hidden) with GELU, then proj (hidden -> kOut) backward with the GELU's derivative
// and fc's bias gradient, on both backends; hidden 32 takes cuBLASLt's GELU epilogues, 12 the
// kernels after the GEMM.
TEST_P(CudaLinearEpilogue, FusedGeluForwardAndBackwardMatchCpu) {
  for (const std::int64_t hidden : {std::int64_t{32}, std::int64_t{12}}) {
    SCOPED_TRACE("hidden " + std::to_string(hidden));
    const Tensor x = host(Shape{kRows, kIn}, dtype(), 1);
    const Tensor w_fc = host(Shape{hidden, kIn}, dtype(), 2, 0.3f);
    const Tensor b_fc = host(Shape{hidden}, dtype(), 3);
    const Tensor w_proj = host(Shape{kOut, hidden}, dtype(), 4, 0.3f);
    const Tensor dy = host(Shape{kRows, kOut}, dtype(), 5);

    const Tensor pre_cpu = host_zeros(Shape{kRows, hidden}, dtype());
    const Tensor h_cpu = host_zeros(Shape{kRows, hidden}, dtype());
    const Tensor pre_gpu = to_gpu(pre_cpu), h_gpu = to_gpu(h_cpu);
    cpu_kernels().linear_forward(cpu(), x, w_fc, b_fc, h_cpu, pre_cpu);
    gpu_kernels().linear_forward(gpu(), to_gpu(x), to_gpu(w_fc), to_gpu(b_fc), h_gpu, pre_gpu);
    expect_same(pre_cpu, pre_gpu, dtype(), "pre_gelu");
    expect_same(h_cpu, h_gpu, dtype(), "gelu output");

    // Backward from the CPU's forward values on both sides, so only backward differs.
    const Tensor dpre_cpu = host_zeros(Shape{kRows, hidden}, dtype()), dpre_gpu = to_gpu(dpre_cpu);
    const Tensor dw_cpu = host(Shape{kOut, hidden}, DType::kF32, 6);  // accumulated into
    const Tensor db_cpu = host(Shape{kOut}, DType::kF32, 7);
    const Tensor db_fc_cpu = host(Shape{hidden}, DType::kF32, 8);
    const Tensor dw_gpu = to_gpu(dw_cpu), db_gpu = to_gpu(db_cpu), db_fc_gpu = to_gpu(db_fc_cpu);
    cpu_kernels().linear_backward(cpu(), h_cpu, w_proj, dy, dpre_cpu, dw_cpu, db_cpu, pre_cpu,
                                  db_fc_cpu);
    gpu_kernels().linear_backward(gpu(), to_gpu(h_cpu), to_gpu(w_proj), to_gpu(dy), dpre_gpu,
                                  dw_gpu, db_gpu, to_gpu(pre_cpu), db_fc_gpu);
    expect_same(dpre_cpu, dpre_gpu, dtype(), "dpre");
    expect_same(dw_cpu, dw_gpu, dtype(), "dweight");
    expect_same(db_cpu, db_gpu, dtype(), "dbias (BGRADB), accumulated");
    expect_same(db_fc_cpu, db_fc_gpu, dtype(), "pre-GELU dbias (DGELU_BGRAD), accumulated");
  }
}

// Each Linear op holds one kCublasWorkspaceBytes of tracked workspace while it runs, shared by
// its GEMMs (Note [cuBLAS workspace]), and frees it (with the bias-gradient scratch) before it
// returns.
TEST_P(CudaLinearEpilogue, WorkspaceIsTheFixedSizeAndFreed) {
  const Tensor x = to_gpu(host(Shape{kRows, kIn}, dtype(), 9));
  const Tensor w = to_gpu(host(Shape{kOut, kIn}, dtype(), 10));
  const Tensor b = to_gpu(host(Shape{kOut}, dtype(), 11));
  const Tensor y = to_gpu(host_zeros(Shape{kRows, kOut}, dtype()));
  const Tensor dx = to_gpu(host_zeros(Shape{kRows, kIn}, dtype()));
  const Tensor dw = to_gpu(host_zeros(Shape{kOut, kIn}, DType::kF32));
  const Tensor db = to_gpu(host_zeros(Shape{kOut}, DType::kF32));
  MemoryTracker& tracker = gpu().tracker();
  tracker.reset_peaks();
  gpu_kernels().linear_forward(gpu(), x, w, b, y, Tensor());
  EXPECT_EQ(tracker.peak_bytes(MemoryCategory::kWorkspace), nn::cuda::kCublasWorkspaceBytes);
  gpu_kernels().linear_backward(gpu(), x, w, y, dx, dw, db, Tensor(), Tensor());
  EXPECT_EQ(tracker.peak_bytes(MemoryCategory::kWorkspace),
            nn::cuda::kCublasWorkspaceBytes + kOut * 4);
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kWorkspace), 0);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaLinearEpilogue, ::testing::Values(DType::kF32, DType::kBF16),
                         dtype_param_name);

}  // namespace
}  // namespace zt::gpu_test

// The CUDA backend's RMSNorm, rotary embedding and SwiGLU ops against the CPU backend's on the
// same inputs, in f32 (summation order and the libraries' cosf/sinf only) and bf16 (a
// rounding apart at most), for narrow, odd and wide rows. Skips without a GPU.
#include <gtest/gtest.h>

#include "nn/kernels/attention_heads.h"
#include "tests/gpu/kernel_backend_test_util.h"

namespace zt::gpu_test {
namespace {

using LlamaKernelsCuda = BackendPair;

// (13, 13000) is past the backward kernel's 12288-channel shared-memory limit.
TEST_P(LlamaKernelsCuda, RmsNormForwardAndBackwardMatchCpu) {
  for (const Shape& shape : {Shape{1, 1}, Shape{3, 22}, Shape{2, 33, 768}, Shape{13, 13000}}) {
    SCOPED_TRACE(shape.to_string());
    const std::int64_t channels = shape[shape.rank() - 1];
    const std::int64_t rows = shape.numel() / channels;
    const Tensor x = host(shape, dtype(), 1, 2.0f);
    const Tensor w = host(Shape{channels}, dtype(), 2);
    const Tensor dy = host(shape, dtype(), 3);
    const Tensor y_cpu = host_zeros(shape, dtype()), y_gpu = to_gpu(y_cpu);
    const Tensor rstd_cpu = host_zeros(Shape{rows}, DType::kF32), rstd_gpu = to_gpu(rstd_cpu);
    cpu_kernels().rms_norm_forward(cpu(), x, w, 1e-5f, y_cpu, rstd_cpu);
    gpu_kernels().rms_norm_forward(gpu(), to_gpu(x), to_gpu(w), 1e-5f, y_gpu, rstd_gpu);
    expect_same(y_cpu, y_gpu, dtype(), "y");
    expect_same(rstd_cpu, rstd_gpu, DType::kF32, "rstd");

    const Tensor dx_cpu = host_zeros(shape, dtype()), dx_gpu = to_gpu(dx_cpu);
    const Tensor dw_cpu = host(Shape{channels}, DType::kF32, 4);  // accumulated into
    const Tensor dw_gpu = to_gpu(dw_cpu);
    cpu_kernels().rms_norm_backward(cpu(), x, w, rstd_cpu, dy, dx_cpu, dw_cpu);
    gpu_kernels().rms_norm_backward(gpu(), to_gpu(x), to_gpu(w), rstd_gpu, to_gpu(dy), dx_gpu,
                                    dw_gpu);
    expect_same(dx_cpu, dx_gpu, dtype(), "dx");
    // f32 sums over up to 66 rows in atomic order: a few ulps of the sum's terms.
    EXPECT_TRUE(all_near(floats(dw_gpu), floats(dw_cpu), 1e-4, 1e-4)) << "dweight";
  }
}

// q and k of a grouped-query qkv with head_dim 64 (and an odd number of pairs, head_dim 6),
// turned in place from start positions 0, 1000 and 100000 and back; the whole fused tensor
// is compared, so v (left alone) is checked too.
TEST_P(LlamaKernelsCuda, RopeForwardAndBackwardMatchCpuOnStridedHeads) {
  for (const std::int64_t head_dim : {std::int64_t{6}, std::int64_t{64}}) {
    for (const std::int64_t start : {std::int64_t{0}, std::int64_t{1000}, std::int64_t{100000}}) {
      SCOPED_TRACE("head_dim " + std::to_string(head_dim) + ", start " + std::to_string(start));
      const Shape shape{2, 9, (4 + 2 * 2) * head_dim};
      const Tensor qkv_cpu = host(shape, dtype(), 5), qkv_gpu = to_gpu(qkv_cpu);
      const nn::QkvHeads on_cpu = nn::split_qkv(qkv_cpu, 4, 2);
      const nn::QkvHeads on_gpu = nn::split_qkv(qkv_gpu, 4, 2);
      for (const bool backward : {false, true}) {
        for (const auto& [heads_cpu, heads_gpu] :
             {std::pair{on_cpu.q, on_gpu.q}, std::pair{on_cpu.k, on_gpu.k}}) {
          if (backward) {
            cpu_kernels().rope_backward(cpu(), heads_cpu, start, 500000.0f);
            gpu_kernels().rope_backward(gpu(), heads_gpu, start, 500000.0f);
          } else {
            cpu_kernels().rope_forward(cpu(), heads_cpu, start, 500000.0f);
            gpu_kernels().rope_forward(gpu(), heads_gpu, start, 500000.0f);
          }
        }
        expect_same(qkv_cpu, qkv_gpu, dtype(), backward ? "turned back" : "turned");
      }
    }
  }
}

TEST_P(LlamaKernelsCuda, SwigluForwardAndBackwardMatchCpu) {
  for (const std::int64_t hidden : {std::int64_t{1}, std::int64_t{37}, std::int64_t{2048}}) {
    SCOPED_TRACE("hidden " + std::to_string(hidden));
    const Shape wide{3, 5, 2 * hidden};
    const Shape narrow{3, 5, hidden};
    const Tensor gate_up = host(wide, dtype(), 6, 3.0f);
    const Tensor dh = host(narrow, dtype(), 7);
    const Tensor h_cpu = host_zeros(narrow, dtype()), h_gpu = to_gpu(h_cpu);
    cpu_kernels().swiglu_forward(cpu(), gate_up, h_cpu);
    gpu_kernels().swiglu_forward(gpu(), to_gpu(gate_up), h_gpu);
    expect_same(h_cpu, h_gpu, dtype(), "h");
    const Tensor d_cpu = host_zeros(wide, dtype()), d_gpu = to_gpu(d_cpu);
    cpu_kernels().swiglu_backward(cpu(), gate_up, dh, d_cpu);
    gpu_kernels().swiglu_backward(gpu(), to_gpu(gate_up), to_gpu(dh), d_gpu);
    expect_same(d_cpu, d_gpu, dtype(), "d_gate_up");
    // Written over gate_up itself, as SwiGluMlp's backward does.
    const Tensor in_place = to_gpu(gate_up);
    gpu_kernels().swiglu_backward(gpu(), in_place, to_gpu(dh), in_place);
    expect_same(d_cpu, in_place, dtype(), "d_gate_up over gate_up");
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, LlamaKernelsCuda, ::testing::Values(DType::kF32, DType::kBF16),
                         dtype_param_name);

}  // namespace
}  // namespace zt::gpu_test

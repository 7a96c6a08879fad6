// The tiny GPT's forward, loss and backward on the CUDA backend against the CPU backend with
// the same parameters and tokens: logits, the loss and every parameter gradient. Skips
// without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "nn/loss/softmax_cross_entropy.h"
#include "nn/models/gpt.h"
#include "tests/gpu/kernel_backend_test_util.h"

namespace zt::gpu_test {
namespace {

constexpr nn::GptShape kTiny{2, 2, 16, 23, 8, false};
constexpr std::int64_t kBatch = 2;

struct GptRun {
  Tensor logits;
  double loss_sum = 0;
  std::vector<std::vector<Tensor>> grads;  // [block][parameter], f32
};

using CudaGpt = BackendPair;

TEST_P(CudaGpt, ForwardLossAndBackwardMatchTheCpuBackend) {
  nn::Model model = nn::make_gpt(kTiny);
  // Parameters: seeded, 0.05 normal (the scale of GPT-2's init, a little wider).
  std::vector<std::vector<Tensor>> host_params(model.num_blocks());
  std::uint64_t key = 100;
  for (std::size_t b = 0; b < model.num_blocks(); ++b) {
    for (const auto& spec : model.block(b).module->parameter_specs()) {
      host_params[b].push_back(host(spec.shape, dtype(), key++, 0.05f));
    }
  }
  const Tensor ids = host_ids(Shape{kBatch, kTiny.seq_len}, kTiny.vocab_size, 7);
  const Tensor targets = host_ids(Shape{kBatch, kTiny.seq_len}, kTiny.vocab_size, 8);

  const auto run = [&](DeviceContext& device, const nn::KernelBackend& kernels, bool on_gpu) {
    const auto place = [&](const Tensor& t) { return on_gpu ? to_gpu(t) : t; };
    std::vector<std::vector<Tensor>> params(model.num_blocks());
    GptRun result;
    result.grads.resize(model.num_blocks());
    for (std::size_t b = 0; b < model.num_blocks(); ++b) {
      for (const Tensor& p : host_params[b]) {
        params[b].push_back(place(p));
        result.grads[b].push_back(
            Tensor::zeros(p.shape(), DType::kF32, device.tracker(), MemoryCategory::kGradients));
      }
    }
    std::vector<nn::SavedActivations> saved(model.num_blocks());
    Tensor x = place(ids);
    for (std::size_t b = 0; b < model.num_blocks(); ++b) {
      nn::ModuleContext ctx{device, kernels, saved[b]};
      x = model.block(b).module->forward(params[b], x, ctx);
    }
    result.logits = x;
    nn::LossResult loss = nn::softmax_cross_entropy(
        x, place(targets), 1.0f / static_cast<float>(targets.numel()), device, kernels);
    result.loss_sum = loss.loss_sum;
    Tensor dy = loss.grad_logits;
    for (std::size_t b = model.num_blocks(); b-- > 0;) {
      nn::ModuleContext ctx{device, kernels, saved[b]};
      dy = model.block(b).module->backward(params[b], result.grads[b], dy, ctx);
    }
    return result;
  };
  const GptRun on_cpu = run(cpu(), cpu_kernels(), false);
  const GptRun on_gpu = run(gpu(), gpu_kernels(), true);

  expect_same(on_cpu.logits, on_gpu.logits, dtype(), "logits");
  EXPECT_NEAR(on_gpu.loss_sum, on_cpu.loss_sum,
              (dtype() == DType::kF32 ? 1e-5 : 1e-2) * std::fabs(on_cpu.loss_sum));
  for (std::size_t b = 0; b < model.num_blocks(); ++b) {
    const auto specs = model.block(b).module->parameter_specs();
    for (std::size_t p = 0; p < specs.size(); ++p) {
      // Gradients pass through every layer: in f32 they differ by summation order; in bf16
      // by the roundings of each activation on the way, so a looser absolute bound.
      const std::vector<float> want = floats(on_cpu.grads[b][p]);
      const std::vector<float> got = floats(on_gpu.grads[b][p]);
      const Tolerance tol = dtype() == DType::kF32 ? Tolerance{1e-4, 1e-5} : Tolerance{0.1, 2e-3};
      EXPECT_TRUE(all_near(got, want, tol.rel, tol.abs)) << specs[p].name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaGpt, ::testing::Values(DType::kF32, DType::kBF16),
                         dtype_param_name);

}  // namespace
}  // namespace zt::gpu_test

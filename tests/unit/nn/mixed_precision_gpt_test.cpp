// The whole GPT (make_gpt, a tiny shape) forward, loss and backward in bf16 and f16 against
// f32 on the same representable weights: logits, loss and every block's f32 gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cpu_test_context.h"
#include "nn/loss/softmax_cross_entropy.h"
#include "nn/models/gpt.h"
#include "precision_check.h"

namespace zt::nn {
namespace {

constexpr GptShape kTiny{/*n_layer=*/2,  /*n_head=*/2,
                         /*d_model=*/32, /*vocab_size=*/37,
                         /*seq_len=*/8,  /*tie_embeddings=*/false};
constexpr std::int64_t kBatch = 3;

using BlockValues = std::vector<std::vector<float>>;  // one block's parameters or gradients

// The model's own initialization, rounded to `dtype` so both runs start from the same numbers.
std::vector<BlockValues> representable_weights(const Model& model, DType dtype) {
  std::vector<BlockValues> weights;
  std::uint64_t key = 500;
  for (std::size_t b = 0; b < model.num_blocks(); ++b) {
    BlockValues block;
    for (const auto& spec : model.block(b).module->parameter_specs()) {
      std::vector<float> values(static_cast<std::size_t>(spec.shape.numel()));
      initialize_parameter(spec.init, key++, 0, values);
      for (float& v : values) v = testing::representable(v, dtype);
      block.push_back(std::move(values));
    }
    weights.push_back(std::move(block));
  }
  return weights;
}

struct GptRun {
  std::vector<float> logits;
  double loss_sum = 0;
  std::vector<BlockValues> grads;
};

GptRun run_gpt(Model& model, DType dtype, const std::vector<BlockValues>& weights) {
  MemoryTracker tracker(Device::cpu());
  std::vector<std::int32_t> ids(kBatch * kTiny.seq_len);
  std::vector<std::int32_t> targets(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ids[i] = static_cast<std::int32_t>((7 * i + 3) % kTiny.vocab_size);
    targets[i] = static_cast<std::int32_t>((5 * i + 1) % kTiny.vocab_size);
  }
  std::vector<std::vector<Tensor>> params(model.num_blocks());
  std::vector<std::vector<Tensor>> grads(model.num_blocks());
  for (std::size_t b = 0; b < model.num_blocks(); ++b) {
    const auto specs = model.block(b).module->parameter_specs();
    for (std::size_t p = 0; p < specs.size(); ++p) {
      params[b].push_back(testing::make_tensor(weights[b][p], specs[p].shape, dtype, tracker,
                                               MemoryCategory::kParameters));
      grads[b].push_back(
          Tensor::zeros(specs[p].shape, DType::kF32, tracker, MemoryCategory::kGradients));
    }
  }
  GptRun run;
  {
    SavedActivations saved;
    testing::CpuTestContext cpu_context(tracker);
    ModuleContext ctx = cpu_context.module(saved);
    Tensor x = Tensor::wrap(ids.data(), Shape{kBatch, kTiny.seq_len}, DType::kI32);
    for (std::size_t b = 0; b < model.num_blocks(); ++b) {
      x = model.block(b).module->forward(params[b], x, ctx);
      EXPECT_EQ(x.dtype(), dtype) << model.block(b).name;
    }
    run.logits = testing::to_floats(x);
    const Tensor t = Tensor::wrap(targets.data(), Shape{kBatch, kTiny.seq_len}, DType::kI32);
    const LossResult loss = softmax_cross_entropy(x, t, 1.0f / static_cast<float>(targets.size()),
                                                  cpu_context.device(), ctx.kernels);
    run.loss_sum = loss.loss_sum;
    Tensor dy = loss.grad_logits;
    for (std::size_t b = model.num_blocks(); b-- > 0;) {
      dy = model.block(b).module->backward(params[b], grads[b], dy, ctx);
    }
    EXPECT_TRUE(saved.empty());
    EXPECT_EQ(tracker.current_bytes(MemoryCategory::kWorkspace), 0);
  }
  for (const auto& block : grads) {
    run.grads.emplace_back();
    for (const Tensor& g : block) run.grads.back().push_back(testing::to_floats(g));
  }
  return run;
}

class MixedPrecisionGpt : public ::testing::TestWithParam<DType> {};

// Note [Composite bounds] again, over the whole model: the longest forward path rounds about
// 20 activations (embedding; per block ln, qkv, y, proj, residual, ln, fc, gelu, proj,
// residual; ln_f, logits) and backward as many again. Measured normwise the errors stay
// under ~1.6 u on the logits and ~3 u on any block's gradients (bf16: 0.6% / 1.2%), as
// independent roundings partly cancel; we allow 8 u and 16 u, below the 20 u and 40 u a
// worst-case sum over the stages would give (a bf16 accumulation inside the GEMMs would add
// up to K u / 2 per stage and push past them). The
// loss is a mean of log-probabilities, ~log(V) = 3.6: its relative error is far below the
// logits' (their rounding errors average out over rows and classes).
TEST_P(MixedPrecisionGpt, ForwardAndBackwardStayCloseToF32) {
  const DType dtype = GetParam();
  const double u = testing::unit_roundoff(dtype);
  Model model = make_gpt(kTiny);
  const auto weights = representable_weights(model, dtype);
  const GptRun ref = run_gpt(model, DType::kF32, weights);
  const GptRun low = run_gpt(model, dtype, weights);
  testing::expect_normwise_close(low.logits, ref.logits, 8 * u, "logits");
  EXPECT_NEAR(low.loss_sum, ref.loss_sum, 2 * u * ref.loss_sum);
  for (std::size_t b = 0; b < model.num_blocks(); ++b) {
    const auto specs = model.block(b).module->parameter_specs();
    for (std::size_t p = 0; p < specs.size(); ++p) {
      testing::expect_normwise_close(low.grads[b][p], ref.grads[b][p], 16 * u,
                                     model.block(b).name + "/" + specs[p].name);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(LowPrecision, MixedPrecisionGpt,
                         ::testing::Values(DType::kBF16, DType::kF16), testing::dtype_test_name);

}  // namespace
}  // namespace zt::nn

// Weight tying through the flat layout: the tied head reads the embedding's wte storage,
// and wte's gradient collects both uses; checked against finite differences of the loss.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "core/device/device_context.h"
#include "core/random.h"
#include "nn/loss/softmax_cross_entropy.h"
#include "nn/models/gpt.h"
#include "sharding/flat_layout.h"

namespace zt::zero {
namespace {

struct TiedGpt {
  nn::Model model = nn::make_gpt({2, 2, 8, 11, 6, true});
  FlatLayout layout = make_flat_layout(model, 1);
  MemoryTracker tracker{Device::cpu()};
  std::unique_ptr<DeviceContext> device = make_cpu_device_context(tracker);
  const nn::KernelBackend& kernels = nn::kernel_backend_for(device->device());
  Tensor params =
      Tensor::zeros(Shape{layout.padded_numel}, DType::kF32, tracker, MemoryCategory::kParameters);
  Tensor grads =
      Tensor::zeros(Shape{layout.padded_numel}, DType::kF32, tracker, MemoryCategory::kGradients);
  Tensor tokens = Tensor::zeros(Shape{2, 6}, DType::kI32, tracker, MemoryCategory::kActivations);
  Tensor targets = Tensor::zeros(Shape{2, 6}, DType::kI32, tracker, MemoryCategory::kActivations);

  TiedGpt() {
    initialize_parameters(layout, 5, params, *device);
    for (std::int64_t i = 0; i < 12; ++i) {
      tokens.data_as<std::int32_t>()[i] = static_cast<std::int32_t>(mix64(i) % 11);
      targets.data_as<std::int32_t>()[i] = static_cast<std::int32_t>(mix64(i + 100) % 11);
    }
  }

  // Mean loss; with `backward`, also accumulates gradients into `grads`.
  double loss(bool backward) {
    std::vector<nn::SavedActivations> saved(model.num_blocks());
    Tensor x = tokens;
    for (std::size_t b = 0; b < model.num_blocks(); ++b) {
      nn::ModuleContext ctx{*device, kernels, saved[b]};
      x = model.block(b).module->forward(block_views(layout, b, params), x, ctx);
    }
    nn::LossResult result = nn::softmax_cross_entropy(x, targets, 1.0f / 12.0f, *device, kernels);
    if (backward) {
      Tensor dy = result.grad_logits;
      for (std::size_t b = model.num_blocks(); b-- > 0;) {
        nn::ModuleContext ctx{*device, kernels, saved[b]};
        dy = model.block(b).module->backward(block_views(layout, b, params),
                                             block_views(layout, b, grads), dy, ctx);
      }
    }
    return result.loss_sum / 12.0;
  }
};

TEST(TiedParameters, HeadViewsAliasTheEmbeddingAndTakeNoStorage) {
  TiedGpt gpt;
  const auto head = gpt.layout.blocks.size() - 1;
  const auto head_views = block_views(gpt.layout, head, gpt.params);
  const auto embedding_views = block_views(gpt.layout, 0, gpt.params);
  EXPECT_EQ(head_views[2].data(), embedding_views[0].data());
  EXPECT_EQ(gpt.layout.numel, gpt.model.parameter_count());
  EXPECT_EQ(tie_sources(gpt.layout, head), std::vector<std::size_t>{0});
}

TEST(TiedParameters, SharedWeightGradientMatchesFiniteDifferences) {
  TiedGpt gpt;
  gpt.loss(true);
  const std::int64_t wte = gpt.layout.blocks[0].parameters[0].offset;
  float* p = gpt.params.data_as<float>();
  // Rows of wte that the batch's tokens use (both uses) and rows only the head reads.
  for (std::int64_t element :
       {std::int64_t{0}, std::int64_t{9}, std::int64_t{30}, std::int64_t{8 * 10 + 3}}) {
    const std::int64_t i = wte + element;
    const float original = p[i];
    const float h = 1e-2f;
    p[i] = original + h;
    const double plus = gpt.loss(false);
    p[i] = original - h;
    const double minus = gpt.loss(false);
    p[i] = original;
    const double numeric = (plus - minus) / (2.0 * h);
    EXPECT_NEAR(gpt.grads.data_as<float>()[i], numeric, 2e-3 * std::max(1.0, std::fabs(numeric)))
        << "wte element " << element;
  }
}

}  // namespace
}  // namespace zt::zero

// The MLP model: its blocks, parameter count, and the saved-activation bookkeeping.
#include "nn/models/mlp.h"

#include <gtest/gtest.h>

#include "cpu_test_context.h"
#include "gradient_check.h"

namespace zt::nn {
namespace {

TEST(Mlp, HasHiddenAndHeadBlocksWithExpectedParameterCount) {
  Model model = make_mlp({32, 128, 10});
  ASSERT_EQ(model.num_blocks(), 2u);
  EXPECT_EQ(model.block(0).name, "hidden");
  EXPECT_EQ(model.block(1).name, "head");
  EXPECT_EQ(model.parameter_count(), 32 * 128 + 128 + 128 * 10 + 10);
}

TEST(Mlp, WholeModelGradientsMatchFiniteDifferences) {
  Model model = make_mlp({4, 6, 3});
  for (std::size_t b = 0; b < model.num_blocks(); ++b) {
    SCOPED_TRACE(model.block(b).name);
    testing::expect_gradients_match(*model.block(b).module, Shape{3, b == 0 ? 4 : 6}, 20 + b, 5e-2);
  }
}

TEST(Mlp, ActivationsAreFreedAfterBackward) {
  MemoryTracker tracker(Device::cpu());
  Model model = make_mlp({4, 6, 3});
  testing::ModuleState state = testing::make_state(*model.block(0).module, tracker, 3);
  {
    Tensor x = Tensor::zeros(Shape{2, 4}, DType::kF32, tracker, MemoryCategory::kActivations);
    SavedActivations saved;
    testing::CpuTestContext cpu_context(tracker);
    ModuleContext ctx = cpu_context.module(saved);
    Tensor y = model.block(0).module->forward(state.params, x, ctx);
    EXPECT_GT(tracker.current_bytes(MemoryCategory::kActivations), x.nbytes());
    Tensor dx = model.block(0).module->backward(state.params, state.grads, y, ctx);
    EXPECT_TRUE(saved.empty());
  }
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kActivations), 0);
}

}  // namespace
}  // namespace zt::nn

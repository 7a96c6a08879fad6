// Dropout: the hash mask keeps about 1 - p of the elements, gives the same bit for the same
// coordinates on every call and whatever rows a micro-batch holds, its backward equals finite
// differences under the fixed mask, and without a draw (evaluation) it passes the input through.
#include "nn/layers/dropout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/random.h"
#include "cpu_test_context.h"
#include "nn/kernels/math/dropout_math.h"

namespace zt::nn {
namespace {

using math::DropoutSite;

TEST(DropoutMask, KeepsAboutOneMinusPOfTheElements) {
  constexpr std::int64_t kElements = 1 << 20;
  for (float p : {0.1f, 0.5f, 0.9f}) {
    const std::uint64_t stream = math::dropout_stream(1234, 7, 3, DropoutSite::kMlpOutput);
    const std::uint32_t threshold = math::dropout_threshold(p);
    std::int64_t kept = 0;
    for (std::int64_t sample = 0; sample < 4; ++sample) {
      const std::uint64_t row = math::dropout_row(stream, sample);
      for (std::int64_t i = 0; i < kElements / 4; ++i)
        kept += math::dropout_keep(row, i, threshold);
    }
    const double fraction = static_cast<double>(kept) / kElements;
    // The binomial's standard deviation is at most 0.5 / 2^10 here; 5 of them.
    EXPECT_NEAR(fraction, 1.0 - p, 5 * 0.5 / 1024) << "p = " << p;
  }
  EXPECT_EQ(math::dropout_threshold(0.0f), 0u);  // p = 0 keeps every element
}

TEST(DropoutMask, TheSameCoordinatesGiveTheSameBitAndOthersAnUnrelatedOne) {
  const std::uint32_t threshold = math::dropout_threshold(0.5f);
  const auto bits = [&](std::uint64_t seed, std::int64_t step, std::int64_t sample,
                        std::int64_t layer, DropoutSite site) {
    const std::uint64_t row =
        math::dropout_row(math::dropout_stream(seed, step, layer, site), sample);
    std::vector<bool> mask;
    for (std::int64_t i = 0; i < 256; ++i) mask.push_back(math::dropout_keep(row, i, threshold));
    return mask;
  };
  const std::vector<bool> reference = bits(42, 3, 5, 1, DropoutSite::kAttentionOutput);
  EXPECT_EQ(bits(42, 3, 5, 1, DropoutSite::kAttentionOutput), reference);
  // A change in any one coordinate gives another mask.
  EXPECT_NE(bits(43, 3, 5, 1, DropoutSite::kAttentionOutput), reference);
  EXPECT_NE(bits(42, 4, 5, 1, DropoutSite::kAttentionOutput), reference);
  EXPECT_NE(bits(42, 3, 6, 1, DropoutSite::kAttentionOutput), reference);
  EXPECT_NE(bits(42, 3, 5, 2, DropoutSite::kAttentionOutput), reference);
  EXPECT_NE(bits(42, 3, 5, 1, DropoutSite::kMlpOutput), reference);
}

Tensor ramp(Shape shape, MemoryTracker& tracker) {
  Tensor x = Tensor::zeros(shape, DType::kF32, tracker, MemoryCategory::kActivations);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = 0.25f + 0.01f * i;
  return x;
}

TEST(Dropout, KeepsScaledOrZeroesAndAMicroBatchDrawsItsGlobalSamplesMasks) {
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext cpu_context(tracker);
  Dropout dropout(0.25f, 2, DropoutSite::kMlpOutput);
  const Tensor x = ramp(Shape{4, 3, 8}, tracker);
  SavedActivations saved;
  ModuleContext ctx = cpu_context.module(saved);
  const DropoutDraw whole{9, 5, 0};
  ctx.dropout = &whole;
  const Tensor y = dropout.forward({}, x, ctx);
  std::int64_t zeros = 0;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const float out = y.data_as<float>()[i];
    if (out == 0.0f) {
      ++zeros;
    } else {
      EXPECT_EQ(out, x.data_as<float>()[i] * (1.0f / 0.75f)) << i;
    }
  }
  EXPECT_GT(zeros, 0);
  EXPECT_LT(zeros, x.numel() / 2);
  // Samples 2 and 3 as a micro-batch of their own (another rank's, or a later micro-batch).
  const Tensor tail = x.slice_rows(2, 4);
  const DropoutDraw second_half{9, 5, 2};
  ctx.dropout = &second_half;
  const Tensor y_tail = dropout.forward({}, tail, ctx);
  for (std::int64_t i = 0; i < tail.numel(); ++i) {
    EXPECT_EQ(y_tail.data_as<float>()[i], y.data_as<float>()[tail.numel() + i]) << i;
  }
}

TEST(Dropout, BackwardMatchesFiniteDifferencesUnderTheFixedMask) {
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext cpu_context(tracker);
  Dropout dropout(0.3f, 1, DropoutSite::kEmbedding);
  Tensor x = ramp(Shape{2, 5, 4}, tracker);
  const DropoutDraw draw{77, 2, 6};
  std::vector<float> weights(static_cast<std::size_t>(x.numel()));
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = standard_normal(5, i);
  const auto loss = [&]() {
    SavedActivations saved;
    ModuleContext ctx = cpu_context.module(saved);
    ctx.dropout = &draw;
    const Tensor y = dropout.forward({}, x, ctx);
    double sum = 0.0;
    for (std::int64_t i = 0; i < y.numel(); ++i)
      sum += double{weights[static_cast<std::size_t>(i)]} * y.data_as<float>()[i];
    return sum;
  };
  SavedActivations saved;
  ModuleContext ctx = cpu_context.module(saved);
  ctx.dropout = &draw;
  (void)dropout.forward({}, x, ctx);
  Tensor dy = Tensor::zeros(x.shape(), DType::kF32, tracker, MemoryCategory::kActivations);
  for (std::int64_t i = 0; i < dy.numel(); ++i)
    dy.data_as<float>()[i] = weights[static_cast<std::size_t>(i)];
  const Tensor dx = dropout.backward({}, {}, dy, ctx);
  EXPECT_TRUE(saved.empty());
  constexpr float kStep = 1e-2f;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    float& xi = x.data_as<float>()[i];
    const float original = xi;
    xi = original + kStep;
    const double up = loss();
    xi = original - kStep;
    const double down = loss();
    xi = original;
    EXPECT_NEAR(dx.data_as<float>()[i], (up - down) / (2.0 * kStep), 1e-3) << "element " << i;
  }
}

TEST(Dropout, WithoutADrawPassesTheInputThrough) {
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext cpu_context(tracker);
  Dropout dropout(0.5f, 0, DropoutSite::kAttentionOutput);
  const Tensor x = ramp(Shape{2, 3}, tracker);
  SavedActivations saved;
  ModuleContext ctx = cpu_context.module(saved);
  const Tensor y = dropout.forward({}, x, ctx);
  EXPECT_EQ(y.data_as<float>(), x.data_as<float>());
  const Tensor dx = dropout.backward({}, {}, x, ctx);
  EXPECT_EQ(dx.data_as<float>(), x.data_as<float>());
}

}  // namespace
}  // namespace zt::nn

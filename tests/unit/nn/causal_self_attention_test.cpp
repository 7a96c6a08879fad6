// CausalSelfAttention: gradients against finite differences, the forward against a naive
// double-precision reference, causality, and activation bookkeeping.
#include "nn/layers/causal_self_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cpu_test_context.h"
#include "gradient_check.h"

namespace zt::nn {
namespace {

constexpr std::int64_t kBatch = 2;
constexpr std::int64_t kSeq = 5;
constexpr std::int64_t kChannels = 8;
constexpr std::int64_t kHeads = 2;

Tensor random_input(MemoryTracker& tracker, std::uint64_t seed) {
  Tensor x = Tensor::zeros(Shape{kBatch, kSeq, kChannels}, DType::kF32, tracker,
                           MemoryCategory::kActivations);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    x.data_as<float>()[i] = standard_normal(seed, static_cast<std::uint64_t>(i));
  }
  return x;
}

// out = proj(concat_h softmax_causal(q_h k_h^T / sqrt(hs)) v_h), all in double.
std::vector<double> reference_attention(const std::vector<Tensor>& params, const Tensor& x) {
  const std::int64_t c = kChannels;
  const std::int64_t hs = c / kHeads;
  const float* wqkv = params[0].data_as<float>();
  const float* bqkv = params[1].data_as<float>();
  const float* wp = params[2].data_as<float>();
  const float* bp = params[3].data_as<float>();
  const float* xs = x.data_as<float>();
  std::vector<double> qkv(static_cast<std::size_t>(kBatch * kSeq * 3 * c));
  for (std::int64_t n = 0; n < kBatch * kSeq; ++n) {
    for (std::int64_t o = 0; o < 3 * c; ++o) {
      double sum = bqkv[o];
      for (std::int64_t i = 0; i < c; ++i) sum += double{wqkv[o * c + i]} * xs[n * c + i];
      qkv[static_cast<std::size_t>(n * 3 * c + o)] = sum;
    }
  }
  const auto at = [&](std::int64_t b, std::int64_t t, std::int64_t col) {
    return qkv[static_cast<std::size_t>((b * kSeq + t) * 3 * c + col)];
  };
  std::vector<double> y(static_cast<std::size_t>(kBatch * kSeq * c), 0.0);
  for (std::int64_t b = 0; b < kBatch; ++b) {
    for (std::int64_t h = 0; h < kHeads; ++h) {
      for (std::int64_t t = 0; t < kSeq; ++t) {
        std::vector<double> s(static_cast<std::size_t>(t + 1));
        double total = 0.0;
        for (std::int64_t j = 0; j <= t; ++j) {
          double dot = 0.0;
          for (std::int64_t d = 0; d < hs; ++d)
            dot += at(b, t, h * hs + d) * at(b, j, c + h * hs + d);
          s[static_cast<std::size_t>(j)] = std::exp(dot / std::sqrt(static_cast<double>(hs)));
          total += s[static_cast<std::size_t>(j)];
        }
        for (std::int64_t j = 0; j <= t; ++j) {
          for (std::int64_t d = 0; d < hs; ++d) {
            y[static_cast<std::size_t>((b * kSeq + t) * c + h * hs + d)] +=
                s[static_cast<std::size_t>(j)] / total * at(b, j, 2 * c + h * hs + d);
          }
        }
      }
    }
  }
  std::vector<double> out(y.size());
  for (std::int64_t n = 0; n < kBatch * kSeq; ++n) {
    for (std::int64_t o = 0; o < c; ++o) {
      double sum = bp[o];
      for (std::int64_t i = 0; i < c; ++i)
        sum += wp[o * c + i] * y[static_cast<std::size_t>(n * c + i)];
      out[static_cast<std::size_t>(n * c + o)] = sum;
    }
  }
  return out;
}

TEST(CausalSelfAttentionGradients, MatchFiniteDifferences) {
  CausalSelfAttention attention("attn", kChannels, kHeads, 0.01f);
  testing::expect_gradients_match(attention, Shape{kBatch, kSeq, kChannels}, 71);
}

TEST(CausalSelfAttention, ForwardMatchesDoubleReference) {
  MemoryTracker tracker(Device::cpu());
  CausalSelfAttention attention("attn", kChannels, kHeads, 0.01f);
  const testing::ModuleState state = testing::make_state(attention, tracker, 72);
  const Tensor x = random_input(tracker, 73);
  SavedActivations saved;
  testing::CpuTestContext cpu_context(tracker);
  ModuleContext ctx = cpu_context.module(saved);
  const Tensor y = attention.forward(state.params, x, ctx);
  const std::vector<double> expected = reference_attention(state.params, x);
  ASSERT_EQ(y.numel(), static_cast<std::int64_t>(expected.size()));
  for (std::int64_t i = 0; i < y.numel(); ++i) {
    EXPECT_NEAR(y.data_as<float>()[i], expected[static_cast<std::size_t>(i)], 1e-4) << i;
  }
}

TEST(CausalSelfAttention, LaterTokensDoNotChangeEarlierOutputs) {
  MemoryTracker tracker(Device::cpu());
  CausalSelfAttention attention("attn", kChannels, kHeads, 0.01f);
  const testing::ModuleState state = testing::make_state(attention, tracker, 74);
  const Tensor x = random_input(tracker, 75);
  SavedActivations saved;
  testing::CpuTestContext cpu_context(tracker);
  ModuleContext ctx = cpu_context.module(saved);
  const Tensor before = attention.forward(state.params, x, ctx);
  const std::int64_t changed_t = 3;
  for (std::int64_t c = 0; c < kChannels; ++c) {
    x.data_as<float>()[(0 * kSeq + changed_t) * kChannels + c] += 1.5f;  // batch row 0 only
  }
  const Tensor after = attention.forward(state.params, x, ctx);
  for (std::int64_t b = 0; b < kBatch; ++b) {
    for (std::int64_t t = 0; t < kSeq; ++t) {
      double diff = 0.0;
      for (std::int64_t c = 0; c < kChannels; ++c) {
        const std::int64_t i = (b * kSeq + t) * kChannels + c;
        diff += std::fabs(after.data_as<float>()[i] - before.data_as<float>()[i]);
      }
      if (b == 0 && t >= changed_t) {
        EXPECT_GT(diff, 1e-3) << "b " << b << " t " << t << " should see the change";
      } else {
        EXPECT_EQ(diff, 0.0) << "b " << b << " t " << t << " saw a later or other-row token";
      }
    }
  }
}

TEST(CausalSelfAttention, FreesActivationsAndWorkspaceAfterBackward) {
  MemoryTracker tracker(Device::cpu());
  CausalSelfAttention attention("attn", kChannels, kHeads, 0.01f);
  const testing::ModuleState state = testing::make_state(attention, tracker, 76);
  {
    const Tensor x = random_input(tracker, 77);
    SavedActivations saved;
    testing::CpuTestContext cpu_context(tracker);
    ModuleContext ctx = cpu_context.module(saved);
    const Tensor y = attention.forward(state.params, x, ctx);
    const Tensor dx = attention.backward(state.params, state.grads, y, ctx);
    EXPECT_TRUE(saved.empty());
    EXPECT_EQ(dx.shape(), x.shape());
  }
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kActivations), 0);
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kWorkspace), 0);
}

TEST(CausalSelfAttention, ScalesOnlyTheOutputProjectionInit) {
  const auto specs = CausalSelfAttention("attn", 8, 2, 0.005f).parameter_specs();
  ASSERT_EQ(specs.size(), 4u);
  EXPECT_EQ(specs[0].name, "attn.qkv.weight");
  EXPECT_EQ(specs[0].shape, (Shape{24, 8}));
  EXPECT_FLOAT_EQ(specs[0].init.scale, 0.02f);
  EXPECT_EQ(specs[2].name, "attn.proj.weight");
  EXPECT_FLOAT_EQ(specs[2].init.scale, 0.005f);
}

}  // namespace
}  // namespace zt::nn

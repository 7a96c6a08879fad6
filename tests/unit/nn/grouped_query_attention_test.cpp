// GroupedQueryAttention: gradients against finite differences, grouped heads against the
// same heads repeated, and decoding through a KV cache against the full forward.
#include "nn/layers/grouped_query_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cpu_test_context.h"
#include "gradient_check.h"
#include "nn/decode_state.h"

namespace zt::nn {
namespace {

constexpr std::int64_t kBatch = 2;
constexpr std::int64_t kSeq = 6;
constexpr std::int64_t kChannels = 16;
constexpr std::int64_t kHeads = 4;
constexpr std::int64_t kHeadDim = kChannels / kHeads;

GroupedQueryAttentionShape shape_with(std::int64_t n_kv_head) {
  return {kChannels, kHeads, n_kv_head, 10000.0f};
}

Tensor random_input(MemoryTracker& tracker, std::uint64_t seed) {
  Tensor x = Tensor::zeros(Shape{kBatch, kSeq, kChannels}, DType::kF32, tracker,
                           MemoryCategory::kActivations);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    x.data_as<float>()[i] = standard_normal(seed, static_cast<std::uint64_t>(i));
  }
  return x;
}

std::vector<float> forward_values(GroupedQueryAttention& attention,
                                  const std::vector<Tensor>& params, const Tensor& x,
                                  MemoryTracker& tracker) {
  SavedActivations saved;
  testing::CpuTestContext cpu_context(tracker);
  ModuleContext ctx = cpu_context.module(saved);
  const Tensor y = attention.forward(params, x, ctx);
  return {y.data_as<float>(), y.data_as<float>() + y.numel()};
}

// Narrower than the other tests' layer (8 channels): with 16 the softmax is sharp enough for
// the finite differences' step to leave their second-order error above the tolerance.
TEST(GroupedQueryAttentionGradients, MatchFiniteDifferencesWithTwoQueryHeadsPerKvHead) {
  GroupedQueryAttention attention("attn", {8, 2, 1, 10000.0f}, 0.01f);
  testing::expect_gradients_match(attention, Shape{kBatch, kSeq, 8}, 81);
}

TEST(GroupedQueryAttentionGradients, MatchFiniteDifferencesWithAsManyKvHeadsAsQueryHeads) {
  GroupedQueryAttention attention("attn", {8, 2, 2, 500000.0f}, 0.01f);
  testing::expect_gradients_match(attention, Shape{kBatch, kSeq, 8}, 82);
}

// One kv head read by every query head gives what n_head kv heads that are copies of it give.
TEST(GroupedQueryAttention, OneKvHeadEqualsItsCopiesAsSeparateHeads) {
  MemoryTracker tracker(Device::cpu());
  GroupedQueryAttention grouped("attn", shape_with(1), 0.01f);
  GroupedQueryAttention repeated("attn", shape_with(kHeads), 0.01f);
  const testing::ModuleState state = testing::make_state(grouped, tracker, 83);
  testing::ModuleState copies = testing::make_state(repeated, tracker, 84);
  // qkv rows: q's kHeads heads, then k's heads, then v's; each head kHeadDim rows of C.
  const float* w = state.params[0].data_as<float>();
  float* w_copies = copies.params[0].data_as<float>();
  const std::int64_t head_rows = kHeadDim * kChannels;
  for (std::int64_t i = 0; i < kHeads * head_rows; ++i) w_copies[i] = w[i];
  for (std::int64_t kv = 0; kv < 2; ++kv) {  // k, then v
    const float* source = w + (kHeads + kv) * head_rows;
    for (std::int64_t h = 0; h < kHeads; ++h) {
      float* target = w_copies + (kHeads + kv * kHeads + h) * head_rows;
      for (std::int64_t i = 0; i < head_rows; ++i) target[i] = source[i];
    }
  }
  for (std::int64_t i = 0; i < state.params[1].numel(); ++i)
    copies.params[1].data_as<float>()[i] = state.params[1].data_as<float>()[i];
  const Tensor x = random_input(tracker, 85);
  const std::vector<float> expected = forward_values(repeated, copies.params, x, tracker);
  const std::vector<float> actual = forward_values(grouped, state.params, x, tracker);
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-5) << i;
}

// Positions [begin, end) of every batch row of x (B, T, C).
Tensor positions_of(const Tensor& x, std::int64_t begin, std::int64_t end, MemoryTracker& tracker) {
  Tensor part = Tensor::zeros(Shape{kBatch, end - begin, kChannels}, DType::kF32, tracker,
                              MemoryCategory::kActivations);
  for (std::int64_t b = 0; b < kBatch; ++b) {
    for (std::int64_t t = begin; t < end; ++t) {
      for (std::int64_t c = 0; c < kChannels; ++c) {
        part.data_as<float>()[(b * (end - begin) + t - begin) * kChannels + c] =
            x.data_as<float>()[(b * kSeq + t) * kChannels + c];
      }
    }
  }
  return part;
}

// Note [Decoding with a KV cache]: a prompt of 3 positions, then 1, then 2 at a time give
// every position the output the full forward gives it (q and k rotated at absolute positions).
TEST(GroupedQueryAttention, DecodingThroughTheCacheEqualsTheFullForward) {
  MemoryTracker tracker(Device::cpu());
  GroupedQueryAttention attention("attn", shape_with(2), 0.01f);
  const testing::ModuleState state = testing::make_state(attention, tracker, 86);
  const Tensor x = random_input(tracker, 87);
  const std::vector<float> full = forward_values(attention, state.params, x, tracker);

  DecodeState decode(kBatch, kSeq);
  testing::CpuTestContext cpu_context(tracker);
  const std::vector<std::int64_t> steps = {3, 1, 2};
  std::int64_t begin = 0;
  for (const std::int64_t count : steps) {
    SavedActivations saved;
    ModuleContext ctx = cpu_context.module(saved);
    ctx.decode = &decode;
    const Tensor part = positions_of(x, begin, begin + count, tracker);
    const Tensor y = attention.forward(state.params, part, ctx);
    for (std::int64_t b = 0; b < kBatch; ++b) {
      for (std::int64_t t = 0; t < count; ++t) {
        for (std::int64_t c = 0; c < kChannels; ++c) {
          const float expected =
              full[static_cast<std::size_t>((b * kSeq + begin + t) * kChannels + c)];
          EXPECT_NEAR(y.data_as<float>()[(b * count + t) * kChannels + c], expected, 1e-5)
              << "b " << b << " position " << begin + t << " channel " << c;
        }
      }
    }
    decode.advance(count);
    begin += count;
  }
}

// out = proj(concat_h softmax_causal(rope(q_h) rope(k_g)^T / sqrt(hs)) v_g), g = h / group,
// all in double; rope turns pair (d, d + hs/2) of position t by t theta^(-2d / hs).
std::vector<double> reference_attention(const std::vector<Tensor>& params, const Tensor& x,
                                        std::int64_t n_kv_head, double theta) {
  const std::int64_t c = kChannels;
  const std::int64_t hs = kHeadDim;
  const std::int64_t width = (kHeads + 2 * n_kv_head) * hs;
  const float* wqkv = params[0].data_as<float>();
  const float* wp = params[1].data_as<float>();
  const float* xs = x.data_as<float>();
  std::vector<double> qkv(static_cast<std::size_t>(kBatch * kSeq * width));
  for (std::int64_t n = 0; n < kBatch * kSeq; ++n) {
    for (std::int64_t o = 0; o < width; ++o) {
      double sum = 0.0;
      for (std::int64_t i = 0; i < c; ++i) sum += double{wqkv[o * c + i]} * xs[n * c + i];
      qkv[static_cast<std::size_t>(n * width + o)] = sum;
    }
    const std::int64_t t = n % kSeq;
    for (std::int64_t head = 0; head < kHeads + n_kv_head; ++head) {  // q's heads, then k's
      double* h = &qkv[static_cast<std::size_t>(n * width + head * hs)];
      for (std::int64_t d = 0; d < hs / 2; ++d) {
        const double angle =
            static_cast<double>(t) * std::pow(theta, -2.0 * static_cast<double>(d) / hs);
        const double a = h[d];
        const double b = h[d + hs / 2];
        h[d] = a * std::cos(angle) - b * std::sin(angle);
        h[d + hs / 2] = a * std::sin(angle) + b * std::cos(angle);
      }
    }
  }
  const auto at = [&](std::int64_t b, std::int64_t t, std::int64_t col) {
    return qkv[static_cast<std::size_t>((b * kSeq + t) * width + col)];
  };
  const std::int64_t group = kHeads / n_kv_head;
  std::vector<double> y(static_cast<std::size_t>(kBatch * kSeq * c), 0.0);
  for (std::int64_t b = 0; b < kBatch; ++b) {
    for (std::int64_t h = 0; h < kHeads; ++h) {
      const std::int64_t k_col = (kHeads + h / group) * hs;
      const std::int64_t v_col = (kHeads + n_kv_head + h / group) * hs;
      for (std::int64_t t = 0; t < kSeq; ++t) {
        std::vector<double> s(static_cast<std::size_t>(t + 1));
        double total = 0.0;
        for (std::int64_t j = 0; j <= t; ++j) {
          double dot = 0.0;
          for (std::int64_t d = 0; d < hs; ++d) dot += at(b, t, h * hs + d) * at(b, j, k_col + d);
          s[static_cast<std::size_t>(j)] = std::exp(dot / std::sqrt(static_cast<double>(hs)));
          total += s[static_cast<std::size_t>(j)];
        }
        for (std::int64_t j = 0; j <= t; ++j) {
          for (std::int64_t d = 0; d < hs; ++d) {
            y[static_cast<std::size_t>((b * kSeq + t) * c + h * hs + d)] +=
                s[static_cast<std::size_t>(j)] / total * at(b, j, v_col + d);
          }
        }
      }
    }
  }
  std::vector<double> out(y.size());
  for (std::int64_t n = 0; n < kBatch * kSeq; ++n) {
    for (std::int64_t o = 0; o < c; ++o) {
      double sum = 0.0;
      for (std::int64_t i = 0; i < c; ++i)
        sum += wp[o * c + i] * y[static_cast<std::size_t>(n * c + i)];
      out[static_cast<std::size_t>(n * c + o)] = sum;
    }
  }
  return out;
}

TEST(GroupedQueryAttention, ForwardMatchesDoubleReferenceWithRotaryEmbeddings) {
  MemoryTracker tracker(Device::cpu());
  GroupedQueryAttention attention("attn", {kChannels, kHeads, 2, 100.0f}, 0.01f);
  const testing::ModuleState state = testing::make_state(attention, tracker, 88);
  const Tensor x = random_input(tracker, 89);
  const std::vector<float> actual = forward_values(attention, state.params, x, tracker);
  const std::vector<double> expected = reference_attention(state.params, x, 2, 100.0);
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-4) << i;
}

TEST(GroupedQueryAttention, HasNoBiasesAndAQkvOfTheGroupedWidth) {
  const auto specs = GroupedQueryAttention("attn", shape_with(2), 0.005f).parameter_specs();
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "attn.qkv.weight");
  EXPECT_EQ(specs[0].shape, (Shape{(kHeads + 2 * 2) * kHeadDim, kChannels}));
  EXPECT_EQ(specs[1].name, "attn.proj.weight");
  EXPECT_EQ(specs[1].shape, (Shape{kChannels, kChannels}));
  EXPECT_FLOAT_EQ(specs[1].init.scale, 0.005f);
}

TEST(GroupedQueryAttention, FreesActivationsAndWorkspaceAfterBackward) {
  MemoryTracker tracker(Device::cpu());
  GroupedQueryAttention attention("attn", shape_with(2), 0.01f);
  const testing::ModuleState state = testing::make_state(attention, tracker, 90);
  {
    const Tensor x = random_input(tracker, 91);
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

}  // namespace
}  // namespace zt::nn

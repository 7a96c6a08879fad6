// Generation's pieces: decoding through the KV cache (a prefill, then one token at a time)
// gives the logits of full forwards over the whole sequence, for the tiny GPT and the tiny
// Llama (rotary positions, grouped-query attention) with and without tied embeddings; and the token
// sampler: greedy is argmax, padded ids are never drawn, a seed repeats its draws, top-k keeps only
// the most likely ids.
#include "runtime/generate/decoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "core/device/device_context.h"
#include "core/random.h"
#include "nn/kernels/kernel_backend.h"
#include "nn/models/gpt.h"
#include "nn/models/llama.h"
#include "runtime/generate/token_sampler.h"
#include "sharding/flat_layout.h"

namespace zt::generate {
namespace {

// The model's parameters as initialization gives them (seed 5), real elements only.
std::vector<float> initial_values(const nn::Model& model, DeviceContext& device) {
  const zero::FlatLayout layout = zero::make_flat_layout(model, 1);
  const Tensor flat = Tensor::zeros(Shape{layout.padded_numel}, DType::kF32, device.tracker(),
                                    MemoryCategory::kParameters);
  zero::initialize_parameters(layout, 5, flat, device);
  return zero::unpadded_parameters(layout, flat, device);
}

struct DecoderCase {
  bool llama = false;
  bool tied = false;
};

constexpr std::int32_t kVocab = 23;
constexpr std::int32_t kSeqLen = 12;

// 2 blocks of width 16 over 23 tokens and 12 positions; the Llama with 4 query heads sharing
// 2 key/value heads.
nn::Model tiny_model(const DecoderCase& c) {
  if (!c.llama) return nn::make_gpt({2, 2, 16, kVocab, kSeqLen, c.tied});
  return nn::make_llama({2, 4, 2, 16, 24, kVocab, kSeqLen, 10000.0f, 1e-5f, c.tied});
}

class DecoderKvCache : public ::testing::TestWithParam<DecoderCase> {};

TEST_P(DecoderKvCache, PrefillThenOneTokenAtATimeEqualsFullForwards) {
  nn::Model model = tiny_model(GetParam());
  MemoryTracker tracker(Device::cpu());
  const std::unique_ptr<DeviceContext> device = make_cpu_device_context(tracker);
  const ModelWeights weights(model, initial_values(model, *device), DType::kF32, *device);
  Decoder decoder(model, weights, *device, kSeqLen);
  std::vector<std::int32_t> tokens;
  for (std::int32_t i = 0; i < kSeqLen; ++i) tokens.push_back((7 * i + 3) % kVocab);

  constexpr std::size_t kPrompt = 4;
  std::vector<float> cached = decoder.feed(std::span(tokens).first(kPrompt));
  for (std::size_t length = kPrompt; length <= tokens.size(); ++length) {
    SCOPED_TRACE("after " + std::to_string(length) + " tokens");
    const std::vector<float> full = decoder.full_forward(std::span(tokens).first(length));
    ASSERT_EQ(cached.size(), static_cast<std::size_t>(kVocab));
    for (std::size_t v = 0; v < full.size(); ++v) {
      ASSERT_NEAR(cached[v], full[v], 1e-5) << "logit " << v;
    }
    if (length < tokens.size()) cached = decoder.feed(std::span(tokens).subspan(length, 1));
  }
  EXPECT_EQ(decoder.position(), kSeqLen);
  EXPECT_THROW(decoder.feed(std::span(tokens).first(1)), Error) << "past model.seq_len";
  // The cache is reused after a reset: the prompt again gives its logits again.
  decoder.reset();
  const std::vector<float> again = decoder.feed(std::span(tokens).first(kPrompt));
  const std::vector<float> full = decoder.full_forward(std::span(tokens).first(kPrompt));
  for (std::size_t v = 0; v < full.size(); ++v) EXPECT_NEAR(again[v], full[v], 1e-5);
}

INSTANTIATE_TEST_SUITE_P(GptAndLlamaTiedAndUntied, DecoderKvCache,
                         ::testing::Values(DecoderCase{false, false}, DecoderCase{false, true},
                                           DecoderCase{true, false}, DecoderCase{true, true}),
                         [](const auto& test) {
                           return std::string(test.param.llama ? "Llama" : "Gpt") +
                                  (test.param.tied ? "Tied" : "Untied");
                         });

TEST(TokenSampler, GreedyIsTheFirstLargestLogitBelowTheVocabulary) {
  TokenSampler greedy({0.0, 0, 1}, 4);
  // id 5 is larger but a padded row past the tokenizer's 4 ids
  EXPECT_EQ(greedy.sample(std::vector<float>{0.5f, 2.0f, 2.0f, -1.0f, 0.0f, 9.0f}), 1);
}

TEST(TokenSampler, NeverDrawsPaddedIdsAndASeedRepeatsItsDraws) {
  const std::vector<float> logits{0.1f, 0.3f, -0.2f, 0.0f, 50.0f, 50.0f};
  const auto draws = [&](std::uint64_t seed) {
    TokenSampler sampler({1.0, 0, seed}, 4);
    std::vector<std::int32_t> ids;
    for (int i = 0; i < 200; ++i) ids.push_back(sampler.sample(logits));
    return ids;
  };
  const std::vector<std::int32_t> first = draws(7);
  EXPECT_EQ(draws(7), first);
  EXPECT_NE(draws(8), first);
  EXPECT_EQ(std::set<std::int32_t>(first.begin(), first.end()),
            (std::set<std::int32_t>{0, 1, 2, 3}))
      << "every real id drawn over 200 draws, no padded one";
}

// Note [A stream per row]: stream 0 is the sampler's default, another stream draws otherwise.
TEST(TokenSampler, StreamZeroIsTheDefaultAndAnotherStreamDrawsOtherwise) {
  const std::vector<float> logits(8, 0.0f);  // uniform: each draw is the stream's number
  TokenSampler plain({1.0, 0, 5}, 8);
  TokenSampler zero({1.0, 0, 5}, 8, 0);
  TokenSampler one({1.0, 0, 5}, 8, 1);
  std::vector<std::int32_t> plain_ids, zero_ids, one_ids;
  for (int i = 0; i < 32; ++i) {
    plain_ids.push_back(plain.sample(logits));
    zero_ids.push_back(zero.sample(logits));
    one_ids.push_back(one.sample(logits));
  }
  EXPECT_EQ(zero_ids, plain_ids);
  EXPECT_NE(one_ids, plain_ids);
}

TEST(TokenSampler, TopKDrawsOnlyTheKMostLikely) {
  TokenSampler sampler({2.0, 2, 3}, 5);
  const std::vector<float> logits{0.0f, 1.0f, 0.5f, 3.0f, 0.9f};
  std::set<std::int32_t> seen;
  for (int i = 0; i < 200; ++i) seen.insert(sampler.sample(logits));
  EXPECT_EQ(seen, (std::set<std::int32_t>{1, 3}));
}

TEST(TokenSampler, FrequenciesFollowTheSoftmax) {
  // p = softmax(log [1, 3] / 1) = [0.25, 0.75]; 4000 draws: sd of the count ~ 27
  TokenSampler sampler({1.0, 0, 11}, 2);
  const std::vector<float> logits{0.0f, std::log(3.0f)};
  int ones = 0;
  for (int i = 0; i < 4000; ++i) ones += sampler.sample(logits);
  EXPECT_NEAR(ones, 3000, 150);
}

// The host sampler and the kernels' select_tokens share one row function: stream b's n-th
// draw on the host is row b's id at step n on the CPU backend, sampled and greedy.
TEST(TokenSampler, CallNOfStreamBIsSelectTokensRowBAtStepN) {
  constexpr std::int64_t kRows = 2, kIds = 30, kColumns = 32;
  std::vector<float> logits(static_cast<std::size_t>(kRows * kColumns));
  for (std::size_t i = 0; i < logits.size(); ++i) logits[i] = 1.5f * standard_normal(4, i);
  const std::unique_ptr<DeviceContext> device = make_cpu_device_context();
  const nn::KernelBackend& kernels = nn::kernel_backend_for(Device::cpu());
  const Tensor z = Tensor::wrap(logits.data(), Shape{kRows, kColumns}, DType::kF32);
  std::vector<std::int32_t> ids(kRows);
  const Tensor out = Tensor::wrap(ids.data(), Shape{kRows}, DType::kI32);
  for (const SamplingOptions options :
       {SamplingOptions{0.0, 0, 3}, SamplingOptions{0.9, 0, 3}, SamplingOptions{1.2, 4, 3}}) {
    std::vector<TokenSampler> samplers;
    for (std::uint64_t b = 0; b < kRows; ++b) samplers.emplace_back(options, kIds, b);
    for (std::uint64_t step = 0; step < 40; ++step) {
      kernels.select_tokens(
          *device, z, kIds,
          {static_cast<float>(options.temperature), options.top_k, options.seed, step}, out);
      for (std::size_t b = 0; b < samplers.size(); ++b) {
        const std::span<const float> row(logits.data() + b * kColumns, kColumns);
        ASSERT_EQ(samplers[b].sample(row), ids[b])
            << "row " << b << " step " << step << " temperature " << options.temperature;
      }
    }
  }
}

}  // namespace
}  // namespace zt::generate

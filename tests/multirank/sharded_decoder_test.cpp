// ShardedDecoder on 2 ranks as threads: at temperature 0 it writes the tokens that
// generate::Decoder writes from the full gathered weights (the old sampling path), for GPT
// and Llama at stages 0 and 3, every rank the same; a batch of prompts of different lengths
// gives each row what decoding it alone gives (Note [Decoding the sharded model]).
#include "runtime/engine/sharded_decoder.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "nn/kernels/math/token_select_math.h"
#include "rank_threads.h"
#include "runtime/engine/model_factory.h"
#include "runtime/engine/trainer.h"
#include "runtime/generate/decoder.h"
#include "runtime/generate/model_weights.h"
#include "sharding/compute_dtype.h"
#include "tiny_gpt_overrides.h"

namespace zt {
namespace {

using Tokens = std::vector<std::vector<std::int32_t>>;

constexpr int kWorld = 2;
constexpr std::int64_t kNewTokens = 4;
constexpr std::int64_t kVocab = 16;
// Lengths 3, 1 and 2: the prefill is 1 position, then rows 0 and 2 are teacher-forced; the
// longest prompt and its new tokens fill 7 of the model's 8 positions.
const Tokens kPrompts = {{5, 1, 7}, {3}, {2, 9}};

struct Decoded {
  Tokens batch;      // the three prompts in one batch
  Tokens alone;      // each prompt in a batch of its own
  Tokens reference;  // generate::Decoder over full_parameters (rank 0 only)
};

// The old path: the full weights on a device context of its own, one prompt at a time, the
// tokens selected on the host (prompt b draws as row b does in the batch: Note [A stream per
// row]; greedy is generate::TokenSampler's).
Tokens decode_from_full_weights(const Config& config, const std::vector<float>& full,
                                const generate::SamplingOptions& sampling) {
  nn::Model model = engine::make_model(config);
  const std::unique_ptr<DeviceContext> device = make_cpu_device_context();
  const generate::ModelWeights weights(model, full, zero::compute_dtype(config), *device);
  generate::Decoder decoder(model, weights, *device, config.model.seq_len);
  generate::TokenSampler greedy({.temperature = 0.0, .top_k = 0, .seed = 0}, kVocab);
  Tokens tokens;
  for (std::size_t b = 0; b < kPrompts.size(); ++b) {
    const std::vector<std::int32_t>& prompt = kPrompts[b];
    decoder.reset();
    std::vector<float> logits = decoder.feed(prompt);
    std::vector<std::int32_t>& row = tokens.emplace_back();
    for (std::int64_t i = 0; i < kNewTokens; ++i) {
      const nn::math::TokenSampling at{static_cast<float>(sampling.temperature), sampling.top_k,
                                       sampling.seed, prompt.size() + row.size()};
      row.push_back(sampling.temperature == 0.0
                        ? greedy.sample(logits)
                        : nn::math::select_token(logits.data(), kVocab, at, b));
      if (i + 1 < kNewTokens) logits = decoder.feed(std::span(&row.back(), 1));
    }
  }
  return tokens;
}

// Trains 2 steps on every rank, then decodes with the trained, sharded model; each prompt
// alone too when greedy (sampled, a prompt alone is row 0, another stream).
std::vector<Decoded> decode_on_ranks(const Config& config,
                                     const generate::SamplingOptions& sampling) {
  nn::cpu::set_blas_threads(1);
  comm::MemoryStore store;
  std::vector<Decoded> decoded(kWorld);
  testing::run_ranks(kWorld, [&](int rank) {
    MemoryTracker tracker(Device::cpu(rank));
    const std::unique_ptr<DeviceContext> device = make_cpu_device_context(tracker);
    comm::CommOptions options;
    options.timeout = std::chrono::seconds(60);
    auto comm = comm::create_cpu_communicator(store, rank, kWorld, options);
    engine::Trainer trainer(config, engine::training_parts_from_config(config),
                            comm::CommLanes::single(*comm), *device,
                            engine::quiet_trainer_options());
    trainer.run();
    const std::vector<float> full = trainer.strategy().full_parameters();
    engine::ShardedDecoder decoder({trainer.model(), trainer.strategy(), *device, *comm},
                                   config.model.seq_len);
    Decoded& mine = decoded[static_cast<std::size_t>(rank)];
    mine.batch = decoder.generate(kPrompts, kNewTokens, sampling, kVocab);
    for (const std::vector<std::int32_t>& prompt : kPrompts) {
      if (sampling.temperature != 0.0) break;
      mine.alone.push_back(decoder.generate({prompt}, kNewTokens, sampling, kVocab).front());
    }
    if (rank == 0) mine.reference = decode_from_full_weights(config, full, sampling);
    comm->barrier()->wait();
  });
  return decoded;
}

struct Case {
  std::string model;
  int stage;
  friend void PrintTo(const Case& c, std::ostream* out) { *out << c.model << " stage " << c.stage; }
};

class ShardedDecoder : public ::testing::TestWithParam<Case> {};

TEST_P(ShardedDecoder, GreedyTokensEqualTheFullWeightDecoderForEveryRowOfABatch) {
  const Case c = GetParam();
  std::vector<std::string> overrides =
      c.model == "llama" ? testing::tiny_llama_overrides() : testing::tiny_gpt_overrides();
  overrides.insert(overrides.end(),
                   {"train.steps=2", "train.global_batch_size=4", "train.micro_batch_size=2",
                    "zero.stage=" + std::to_string(c.stage), "zero.prefetch_blocks=1",
                    "zero.param_persistence_threshold=0"});
  const Config config = parse_config_text("", "sharded_decoder_test.toml", overrides);
  const std::vector<Decoded> decoded =
      decode_on_ranks(config, {.temperature = 0.0, .top_k = 0, .seed = 0});
  const Decoded& rank0 = decoded[0];
  ASSERT_EQ(rank0.reference.size(), kPrompts.size());
  for (const auto& row : rank0.reference) ASSERT_EQ(std::ssize(row), kNewTokens);
  // The rows differ, so a row fed another's tokens would show.
  EXPECT_TRUE(rank0.reference[0] != rank0.reference[1] || rank0.reference[0] != rank0.reference[2]);
  EXPECT_EQ(rank0.batch, rank0.reference);
  EXPECT_EQ(rank0.alone, rank0.reference);
  for (int rank = 1; rank < kWorld; ++rank) {
    EXPECT_EQ(decoded[static_cast<std::size_t>(rank)].batch, rank0.batch) << "rank " << rank;
    EXPECT_EQ(decoded[static_cast<std::size_t>(rank)].alone, rank0.alone) << "rank " << rank;
  }
}

INSTANTIATE_TEST_SUITE_P(ModelsAndStages, ShardedDecoder,
                         ::testing::Values(Case{"gpt", 0}, Case{"gpt", 3}, Case{"llama", 0},
                                           Case{"llama", 3}),
                         [](const auto& param_info) {
                           return param_info.param.model + "Stage" +
                                  std::to_string(param_info.param.stage);
                         });

// Sampled on the device (top-k with a temperature), every row of the batch draws what the
// host draws from the full weights' logits at the same position and stream, every rank the same.
TEST(ShardedDecoderSampling, EveryRowDrawsWhatTheHostDrawsFromTheFullWeights) {
  std::vector<std::string> overrides = testing::tiny_gpt_overrides();
  overrides.insert(
      overrides.end(),
      {"train.steps=2", "train.global_batch_size=4", "train.micro_batch_size=2", "zero.stage=3",
       "zero.prefetch_blocks=1", "zero.param_persistence_threshold=0"});
  const Config config = parse_config_text("", "sharded_decoder_test.toml", overrides);
  const std::vector<Decoded> decoded =
      decode_on_ranks(config, {.temperature = 1.5, .top_k = 6, .seed = 21});
  const Decoded& rank0 = decoded[0];
  EXPECT_EQ(rank0.batch, rank0.reference) << "seed 21";
  for (int rank = 1; rank < kWorld; ++rank) {
    EXPECT_EQ(decoded[static_cast<std::size_t>(rank)].batch, rank0.batch) << "rank " << rank;
  }
}

TEST(ShardedDecoderLimits, APromptAndItsTokensPastSeqLenAreRefused) {
  const Config config = parse_config_text("", "sharded_decoder_test.toml", [] {
    std::vector<std::string> o = testing::tiny_gpt_overrides();
    o.insert(o.end(), {"train.steps=1", "train.global_batch_size=1", "zero.stage=0"});
    return o;
  }());
  MemoryTracker tracker(Device::cpu());
  const std::unique_ptr<DeviceContext> device = make_cpu_device_context(tracker);
  comm::MemoryStore store;
  auto comm = comm::create_cpu_communicator(store, 0, 1, comm::CommOptions{});
  engine::Trainer trainer(config, engine::training_parts_from_config(config),
                          comm::CommLanes::single(*comm), *device, engine::quiet_trainer_options());
  engine::ShardedDecoder decoder({trainer.model(), trainer.strategy(), *device, *comm}, 8);
  const generate::SamplingOptions greedy{.temperature = 0.0, .top_k = 0, .seed = 0};
  try {
    decoder.generate({{1, 2, 3, 4, 5}}, 4, greedy, kVocab);
    FAIL() << "5 prompt tokens and 4 new ones do not fit in 8 positions";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.seq_len"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zt

// ShardedDecoder on 2 ranks as threads: at temperature 0 it writes the tokens that
// generate::Decoder writes from the full gathered weights (the old sampling path), for GPT
// and Llama at stages 0 and 3, every rank the same; a batch of prompts of different lengths
// gives each row what decoding it alone gives (Note [Decoding the sharded model]); and its
// attention runs on the kernels it is given (the run's), the prompt's prefill included.
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
    engine::ShardedDecoder decoder(trainer.sharded_model(), config.model.seq_len);
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
  engine::ShardedDecoder decoder(trainer.sharded_model(), 8);
  const generate::SamplingOptions greedy{.temperature = 0.0, .top_k = 0, .seed = 0};
  try {
    decoder.generate({{1, 2, 3, 4, 5}}, 4, greedy, kVocab);
    FAIL() << "5 prompt tokens and 4 new ones do not fit in 8 positions";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.seq_len"), std::string::npos) << e.what();
  }
}

// The CPU backend, with every attention_forward's query and key lengths recorded.
class AttentionRecordingBackend final : public nn::KernelBackend {
 public:
  explicit AttentionRecordingBackend(const nn::KernelBackend& inner) : inner_(inner) {}
  struct Call {
    std::int64_t queries, keys;
    bool operator==(const Call&) const = default;
  };
  const std::vector<Call>& attention_calls() const { return calls_; }

  const Device& device() const override { return inner_.device(); }
  void gemm(DeviceContext& d, bool ta, bool tb, float alpha, const Tensor& a, const Tensor& b,
            float beta, const Tensor& c) const override {
    inner_.gemm(d, ta, tb, alpha, a, b, beta, c);
  }
  void linear_forward(DeviceContext& d, const Tensor& x, const Tensor& w, const Tensor& bias,
                      const Tensor& y, const Tensor& pre_gelu) const override {
    inner_.linear_forward(d, x, w, bias, y, pre_gelu);
  }
  void linear_backward(DeviceContext& d, const Tensor& x, const Tensor& w, const Tensor& dy,
                       const Tensor& dx, const Tensor& dw, const Tensor& db, const Tensor& pre,
                       const Tensor& pre_db) const override {
    inner_.linear_backward(d, x, w, dy, dx, dw, db, pre, pre_db);
  }
  void gelu_forward(DeviceContext& d, const Tensor& x, const Tensor& y) const override {
    inner_.gelu_forward(d, x, y);
  }
  void gelu_backward(DeviceContext& d, const Tensor& x, const Tensor& dy,
                     const Tensor& dx) const override {
    inner_.gelu_backward(d, x, dy, dx);
  }
  void relu_forward(DeviceContext& d, const Tensor& x, const Tensor& y) const override {
    inner_.relu_forward(d, x, y);
  }
  void relu_backward(DeviceContext& d, const Tensor& x, const Tensor& dy,
                     const Tensor& dx) const override {
    inner_.relu_backward(d, x, dy, dx);
  }
  void add(DeviceContext& d, const Tensor& a, const Tensor& b, const Tensor& out) const override {
    inner_.add(d, a, b, out);
  }
  void dropout(DeviceContext& d, const nn::math::DropoutMask& mask, const Tensor& x,
               const Tensor& y) const override {
    inner_.dropout(d, mask, x, y);
  }
  void layer_norm_forward(DeviceContext& d, const Tensor& x, const Tensor& w, const Tensor& b,
                          float eps, const Tensor& y, const Tensor& mean,
                          const Tensor& rstd) const override {
    inner_.layer_norm_forward(d, x, w, b, eps, y, mean, rstd);
  }
  void layer_norm_backward(DeviceContext& d, const Tensor& x, const Tensor& w, const Tensor& mean,
                           const Tensor& rstd, const Tensor& dy, const Tensor& dx, const Tensor& dw,
                           const Tensor& db) const override {
    inner_.layer_norm_backward(d, x, w, mean, rstd, dy, dx, dw, db);
  }
  void rms_norm_forward(DeviceContext& d, const Tensor& x, const Tensor& w, float eps,
                        const Tensor& y, const Tensor& rstd) const override {
    inner_.rms_norm_forward(d, x, w, eps, y, rstd);
  }
  void rms_norm_backward(DeviceContext& d, const Tensor& x, const Tensor& w, const Tensor& rstd,
                         const Tensor& dy, const Tensor& dx, const Tensor& dw) const override {
    inner_.rms_norm_backward(d, x, w, rstd, dy, dx, dw);
  }
  void rope_forward(DeviceContext& d, const nn::AttentionHeads& heads, std::int64_t start,
                    float theta) const override {
    inner_.rope_forward(d, heads, start, theta);
  }
  void rope_backward(DeviceContext& d, const nn::AttentionHeads& heads, std::int64_t start,
                     float theta) const override {
    inner_.rope_backward(d, heads, start, theta);
  }
  void swiglu_forward(DeviceContext& d, const Tensor& gate_up, const Tensor& h) const override {
    inner_.swiglu_forward(d, gate_up, h);
  }
  void swiglu_backward(DeviceContext& d, const Tensor& gate_up, const Tensor& dh,
                       const Tensor& d_gate_up) const override {
    inner_.swiglu_backward(d, gate_up, dh, d_gate_up);
  }
  void attention_forward(DeviceContext& d, const nn::AttentionHeads& q, const nn::AttentionHeads& k,
                         const nn::AttentionHeads& v, const nn::AttentionHeads& o,
                         const Tensor& lse,
                         const nn::math::DropoutMask* probs_dropout) const override {
    calls_.push_back({q.seq_len, k.seq_len});
    inner_.attention_forward(d, q, k, v, o, lse, probs_dropout);
  }
  void attention_backward(DeviceContext& d, const nn::AttentionHeads& q,
                          const nn::AttentionHeads& k, const nn::AttentionHeads& v,
                          const nn::AttentionHeads& o, const Tensor& lse,
                          const nn::AttentionHeads& d_o, const nn::AttentionHeads& dq,
                          const nn::AttentionHeads& dk, const nn::AttentionHeads& dv,
                          const nn::math::DropoutMask* probs_dropout) const override {
    inner_.attention_backward(d, q, k, v, o, lse, d_o, dq, dk, dv, probs_dropout);
  }
  void embedding_forward(DeviceContext& d, const Tensor& ids, const Tensor& wte, const Tensor& wpe,
                         const Tensor& out) const override {
    inner_.embedding_forward(d, ids, wte, wpe, out);
  }
  void embedding_backward(DeviceContext& d, const Tensor& ids, const Tensor& dout,
                          const Tensor& dwte, const Tensor& dwpe) const override {
    inner_.embedding_backward(d, ids, dout, dwte, dwpe);
  }
  void softmax_cross_entropy(DeviceContext& d, const Tensor& logits, const Tensor& targets,
                             std::int64_t classes, float grad_scale, const Tensor& dlogits,
                             double* loss_sum) const override {
    inner_.softmax_cross_entropy(d, logits, targets, classes, grad_scale, dlogits, loss_sum);
  }
  void select_tokens(DeviceContext& d, const Tensor& logits, std::int64_t classes,
                     const nn::math::TokenSampling& sampling, const Tensor& ids) const override {
    inner_.select_tokens(d, logits, classes, sampling, ids);
  }
  void quantize_blocks(DeviceContext& d, const nn::math::BlockQuantFormat& format, const Tensor& x,
                       const Tensor& payload, const Tensor& scales) const override {
    inner_.quantize_blocks(d, format, x, payload, scales);
  }
  void dequantize_blocks(DeviceContext& d, const nn::math::BlockQuantFormat& format,
                         const Tensor& payload, const Tensor& scales,
                         const Tensor& y) const override {
    inner_.dequantize_blocks(d, format, payload, scales, y);
  }

 private:
  const nn::KernelBackend& inner_;
  mutable std::vector<Call> calls_;  // one decoder on one thread calls it
};

// The decoder runs its attention on the kernels its ShardedModel names (the run's, so that the
// prompt's prefill is cuDNN's fused attention where training's is): every call goes through
// them, the first of each layer over the prompts' common length as queries and keys, the rest
// one query over the cache; and recording changes no token.
TEST(ShardedDecoderKernels, ThePromptAndEveryStepRunOnTheKernelsItIsGiven) {
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
  trainer.run();
  const Tokens prompts = {{5, 1, 7}, {3, 4, 2, 6}};
  const generate::SamplingOptions greedy{.temperature = 0.0, .top_k = 0, .seed = 0};
  const Tokens plain =
      engine::ShardedDecoder(trainer.sharded_model(), 8).generate(prompts, 3, greedy, kVocab);

  const AttentionRecordingBackend recording(nn::kernel_backend_for(device->device()));
  engine::ShardedModel model = trainer.sharded_model();
  const Tokens recorded =
      engine::ShardedDecoder({model.model, model.strategy, model.device, recording, model.comm}, 8)
          .generate(prompts, 3, greedy, kVocab);
  EXPECT_EQ(recorded, plain);

  const std::vector<AttentionRecordingBackend::Call>& calls = recording.attention_calls();
  const auto layers = static_cast<std::size_t>(config.model.n_layer);
  ASSERT_GT(calls.size(), layers) << "the decoder's attention ran on other kernels";
  ASSERT_EQ(calls.size() % layers, 0u);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const std::int64_t step = static_cast<std::int64_t>(i / layers);
    const AttentionRecordingBackend::Call want = step == 0
                                                     ? AttentionRecordingBackend::Call{3, 3}
                                                     : AttentionRecordingBackend::Call{1, 3 + step};
    EXPECT_EQ(calls[i].queries, want.queries) << "call " << i;
    EXPECT_EQ(calls[i].keys, want.keys) << "call " << i;
  }
}

}  // namespace
}  // namespace zt

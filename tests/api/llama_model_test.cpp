// A Llama-style decoder through the public API alone: zerotrain::nn::make_llama, the user's
// own token batches through Engine::step, softmax cross-entropy: the model learns a fixed
// sequence at ZeRO stage 3 (one rank, no launcher variables).
#include <gtest/gtest.h>
#include <unistd.h>
#include <zerotrain/zerotrain.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace {

constexpr std::int64_t kVocab = 64;
constexpr std::int64_t kSeq = 16;
constexpr std::int64_t kBatch = 4;

zerotrain::nn::Model tiny_llama() {
  zerotrain::nn::LlamaShape shape;
  shape.n_layer = 2;
  shape.n_head = 4;
  shape.n_kv_head = 2;
  shape.d_model = 32;
  shape.ffn_dim = 64;
  shape.vocab_size = kVocab;
  shape.seq_len = kSeq;
  return zerotrain::nn::make_llama(shape);
}

// Rows of a sequence whose next token is a fixed function of the current one, each row
// starting elsewhere: inputs and the next tokens as targets.
zerotrain::Batch sequence_batch(zerotrain::MemoryTracker& tracker) {
  const auto token = [](std::int64_t i) { return static_cast<std::int32_t>((i * 7 + 3) % kVocab); };
  zerotrain::Batch batch;
  batch.samples = kBatch;
  batch.inputs = zerotrain::Tensor::zeros({kBatch, kSeq}, zerotrain::DType::kI32, tracker,
                                          zerotrain::MemoryCategory::kActivations);
  batch.targets = zerotrain::Tensor::zeros({kBatch, kSeq}, zerotrain::DType::kI32, tracker,
                                           zerotrain::MemoryCategory::kActivations);
  auto* inputs = static_cast<std::int32_t*>(batch.inputs.data());
  auto* targets = static_cast<std::int32_t*>(batch.targets.data());
  for (std::int64_t row = 0; row < kBatch; ++row) {
    for (std::int64_t t = 0; t < kSeq; ++t) {
      inputs[row * kSeq + t] = token(row * 5 + t);
      targets[row * kSeq + t] = token(row * 5 + t + 1);
    }
  }
  return batch;
}

TEST(PublicLlama, MakeLlamaTrainsOnTheUsersTokenBatchesAtStage3) {
  const std::filesystem::path run_dir = std::filesystem::path(::testing::TempDir()) /
                                        ("zt_public_llama_" + std::to_string(::getpid()));
  std::filesystem::remove_all(run_dir);
  const zerotrain::Config config = zerotrain::parse_config(
      "train.steps = 40\ntrain.micro_batch_size = 4\nzero.stage = 3\noptimizer.lr = 0.01\n",
      {"run.dir=" + run_dir.string()});
  zerotrain::MemoryTracker tracker(zerotrain::Device::cpu());
  const zerotrain::Batch batch = sequence_batch(tracker);
  zerotrain::EngineOptions options;
  options.write_run_dir = false;
  options.show_progress = false;
  options.targets_are_tokens = true;
  zerotrain::Engine engine(config, tiny_llama(), nullptr,
                           zerotrain::make_softmax_cross_entropy_loss(), options);
  std::vector<double> losses;
  for (int step = 0; step < 40; ++step) losses.push_back(engine.step(batch).loss);
  engine.finish();
  std::filesystem::remove_all(run_dir);
  // A uniform guess costs ln 64 = 4.16; the sequence is a function of the current token, so
  // a model that learns it drives the loss far below that.
  EXPECT_GT(losses.front(), 3.5);
  EXPECT_LT(losses.back(), 0.5 * losses.front())
      << "first " << losses.front() << " last " << losses.back();
}

}  // namespace

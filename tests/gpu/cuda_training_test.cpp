// Training on CUDA against the CPU, the numbers scripts/gpu-check prints: the tiny GPT on
// cuda:0 follows the CPU's losses (fp32: within 1e-4 relative over 20 steps; bf16: within
// 3e-2, as bf16 rounds each activation to 8 significant bits and the two backends' GEMMs
// sum in different orders), the tracker counts the model states as device bytes, and ZeRO
// stages 0-3 at world 2 on ONE GPU (Gloo staging through pinned host memory, as NCCL
// refuses two ranks on one device) follow one rank on the GPU to fp32 round-off.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "core/device/device_context.h"
#include "core/error.h"
#include "gpu_test_util.h"
#include "multirank/rank_threads.h"
#include "runtime/engine/trainer.h"

namespace zt {
namespace {

constexpr int kSteps = 20;

Config tiny_gpt(std::vector<std::string> extra) {
  std::vector<std::string> overrides{
      "model.type=gpt",           "model.n_layer=2",     "model.n_head=4",
      "model.d_model=64",         "model.vocab_size=32", "model.seq_len=32",
      "train.micro_batch_size=8", "optimizer.lr=0.004",  "train.steps=" + std::to_string(kSteps)};
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return parse_config_text("", "cuda_training_test.toml", overrides);
}

std::vector<double> train_on_cpu(const Config& config) {
  comm::MemoryStore store;
  MemoryTracker tracker(Device::cpu());
  auto comm = comm::create_cpu_communicator(store, 0, 1);
  engine::Trainer trainer(config, *comm, tracker, engine::quiet_trainer_options());
  return trainer.run().losses;
}

struct CudaRun {
  std::vector<double> losses;
  MemorySnapshot memory;
};

// `world_size` ranks as threads, each with its own context on cuda:0.
CudaRun train_on_gpu(const Config& config, int world_size) {
  comm::MemoryStore store;
  CudaRun run;
  testing::run_ranks(world_size, [&](int rank) {
    const auto device = make_device_context(Device::cuda(0));
    comm::CommOptions options;
    options.device = device.get();
    options.timeout = std::chrono::seconds(60);
    auto comm = comm::create_communicator(store, rank, world_size, options);
    engine::Trainer trainer(config, comm::CommLanes::single(*comm), *device,
                            engine::quiet_trainer_options());
    const auto losses = trainer.run().losses;
    if (rank == 0) {
      run.losses = losses;
      run.memory = device->tracker().snapshot();
    }
  });
  return run;
}

double max_relative_difference(const std::vector<double>& got, const std::vector<double>& want) {
  EXPECT_EQ(got.size(), want.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    worst = std::max(worst, std::fabs(got[i] - want[i]) / std::fabs(want[i]));
  }
  return worst;
}

TEST(CudaTraining, TinyGptFp32FollowsTheCpu) {
  ZT_SKIP_WITHOUT_GPU();
  const std::vector<double> cpu = train_on_cpu(tiny_gpt({}));
  const CudaRun cuda = train_on_gpu(tiny_gpt({"runtime.device=cuda"}), 1);
  const double difference = max_relative_difference(cuda.losses, cpu);
  std::printf(
      "[figure] tiny GPT fp32, %d steps: cuda:0 vs cpu losses, max relative difference "
      "%.3g (loss %.4f -> %.4f)\n",
      kSteps, difference, cuda.losses.front(), cuda.losses.back());
  EXPECT_LE(difference, 1e-4);
  EXPECT_GT(cuda.memory.peak_bytes[static_cast<std::size_t>(MemoryCategory::kParameters)], 0);
  EXPECT_GT(cuda.memory.peak_bytes[static_cast<std::size_t>(MemoryCategory::kActivations)], 0);
}

// The tiny Llama (the Llama family's ops: RMSNorm, rotary embeddings, grouped-query attention,
// SwiGLU, an embedding without wpe) on cuda:0 against the CPU, fp32, at stage 0 on one rank
// and stage 3 on two.
TEST(CudaTraining, TinyLlamaFp32FollowsTheCpu) {
  ZT_SKIP_WITHOUT_GPU();
  const std::vector<std::string> llama = {"model.type=llama", "model.n_kv_head=2",
                                          "model.ffn_dim=128", "model.tie_embeddings=true"};
  const std::vector<double> cpu = train_on_cpu(tiny_gpt(llama));
  std::vector<std::string> on_gpu = llama;
  on_gpu.push_back("runtime.device=cuda");
  const CudaRun cuda = train_on_gpu(tiny_gpt(on_gpu), 1);
  const double difference = max_relative_difference(cuda.losses, cpu);
  on_gpu.push_back("zero.stage=3");
  on_gpu.push_back("train.micro_batch_size=4");
  const CudaRun sharded = train_on_gpu(tiny_gpt(on_gpu), 2);
  const double sharded_difference = max_relative_difference(sharded.losses, cpu);
  std::printf(
      "[figure] tiny Llama fp32, %d steps: cuda:0 vs cpu losses, max relative difference "
      "%.3g (loss %.4f -> %.4f); stage 3 on 2 ranks %.3g\n",
      kSteps, difference, cuda.losses.front(), cuda.losses.back(), sharded_difference);
  EXPECT_LE(difference, 1e-4);
  EXPECT_LE(sharded_difference, 1e-4);
  EXPECT_LT(cuda.losses.back(), cuda.losses.front());
}

TEST(CudaTraining, TinyGptBf16FollowsTheCpuWithinBf16Rounding) {
  ZT_SKIP_WITHOUT_GPU();
  const std::vector<double> cpu = train_on_cpu(tiny_gpt({"precision.dtype=bf16"}));
  const CudaRun cuda = train_on_gpu(tiny_gpt({"precision.dtype=bf16", "runtime.device=cuda"}), 1);
  const double difference = max_relative_difference(cuda.losses, cpu);
  std::printf(
      "[figure] tiny GPT bf16, %d steps: cuda:0 vs cpu losses, max relative difference "
      "%.3g\n",
      kSteps, difference);
  EXPECT_LE(difference, 3e-2);
  EXPECT_LT(cuda.losses.back(), cuda.losses.front());
}

TEST(CudaTraining, ZeroStagesAtWorldTwoOnOneGpuFollowOneRank) {
  ZT_SKIP_WITHOUT_GPU();
  const std::vector<double> one =
      train_on_gpu(tiny_gpt({"runtime.device=cuda", "train.micro_batch_size=8"}), 1).losses;
  for (int stage = 0; stage <= 3; ++stage) {
    const CudaRun two =
        train_on_gpu(tiny_gpt({"runtime.device=cuda", "comm.backend=gloo",
                               "train.micro_batch_size=4", "zero.stage=" + std::to_string(stage)}),
                     2);
    const double difference = max_relative_difference(two.losses, one);
    std::printf(
        "[figure] tiny GPT fp32 on cuda:0, stage %d at world 2 (gloo) vs one rank: max "
        "relative loss difference %.3g\n",
        stage, difference);
    EXPECT_LE(difference, 1e-5) << "stage " << stage;
  }
}

// The loss sums of four micro-batches stay on the device until the step's one read, and the
// stage 2 norm is read once for all slices (Note [One host wait per step]): the per-step
// losses still follow the CPU's.
TEST(CudaTraining, FourMicroBatchesReadOncePerStepFollowTheCpu) {
  ZT_SKIP_WITHOUT_GPU();
  const std::vector<std::string> accumulated{"train.micro_batch_size=2", "train.grad_accum_steps=4",
                                             "zero.stage=2", "optimizer.max_grad_norm=1.0"};
  const std::vector<double> cpu = train_on_cpu(tiny_gpt(accumulated));
  std::vector<std::string> on_gpu = accumulated;
  on_gpu.push_back("runtime.device=cuda");
  const CudaRun cuda = train_on_gpu(tiny_gpt(on_gpu), 1);
  const double difference = max_relative_difference(cuda.losses, cpu);
  std::printf(
      "[figure] tiny GPT fp32, 4 micro-batches: cuda:0 vs cpu max relative difference %.3g\n",
      difference);
  EXPECT_LE(difference, 1e-4);
}

// Token ids are checked on the host when the batch is read: a bad one is a FormatError naming
// its row and position, and the GPU (which no longer copies ids back) never sees it, so the
// next good batch trains.
TEST(CudaTraining, ABadTokenIdIsRefusedOnTheHostBeforeTheGpuSeesIt) {
  ZT_SKIP_WITHOUT_GPU();
  comm::MemoryStore store;
  const auto device = make_device_context(Device::cuda(0));
  comm::CommOptions options;
  options.device = device.get();
  auto comm = comm::create_communicator(store, 0, 1, options);
  engine::Trainer trainer(tiny_gpt({"runtime.device=cuda"}), comm::CommLanes::single(*comm),
                          *device, engine::quiet_trainer_options());
  const auto source = engine::training_parts_from_config(trainer.config()).source;
  data::Batch bad = trainer.load_step_batch(*source, 1);
  bad.inputs.data_as<std::int32_t>()[3 * 32 + 9] = 32;
  try {
    trainer.step(bad);
    ADD_FAILURE() << "a token id outside the vocabulary was accepted";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("batch row 3, position 9"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::isfinite(trainer.step(trainer.load_step_batch(*source, 1)).loss));
}

// Note [Batches in staging memory]: batches are read into pinned memory, so their copies to
// the GPU do not make the host wait for the compute stream.
TEST(CudaTraining, BatchesAreReadIntoPinnedMemory) {
  ZT_SKIP_WITHOUT_GPU();
  comm::MemoryStore store;
  const auto device = make_device_context(Device::cuda(0));
  comm::CommOptions options;
  options.device = device.get();
  auto comm = comm::create_communicator(store, 0, 1, options);
  engine::Trainer trainer(tiny_gpt({"runtime.device=cuda"}), comm::CommLanes::single(*comm),
                          *device, engine::quiet_trainer_options());
  const auto source = engine::training_parts_from_config(trainer.config()).source;
  const data::Batch batch = trainer.load_step_batch(*source, 1);
  for (const Tensor* tensor : {&batch.inputs, &batch.targets}) {
    cudaPointerAttributes attributes{};
    ASSERT_EQ(cudaPointerGetAttributes(&attributes, tensor->data()), cudaSuccess);
    EXPECT_EQ(attributes.type, cudaMemoryTypeHost) << "a batch tensor in pageable memory";
  }
  EXPECT_TRUE(std::isfinite(trainer.step(batch).loss));
}

}  // namespace
}  // namespace zt

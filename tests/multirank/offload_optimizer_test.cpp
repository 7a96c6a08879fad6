// offload.optimizer = "cpu": every sharded stage at world 1 and 2, fp32 and bf16, AdamW (the
// vectorized CPU Adam) and SGD (its own loop) trains like the optimizer on the device, within
// fp32 round-off (1e-6 relative on every loss), and the device holds no optimizer state: the
// masters and states are the host tracker's host_offload bytes, exactly as the memory plan
// says.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "rank_threads.h"
#include "runtime/engine/model_factory.h"
#include "runtime/engine/trainer.h"
#include "tiny_gpt_overrides.h"

namespace zt {
namespace {

constexpr int kSteps = 8;

Config gpt_config(int stage, int world, const std::string& dtype, const std::string& optimizer,
                  const std::string& offload, std::vector<std::string> extra = {}) {
  std::vector<std::string> overrides = testing::tiny_gpt_overrides();
  overrides.insert(
      overrides.end(),
      {"optimizer.type=" + optimizer, "train.steps=" + std::to_string(kSteps),
       "zero.stage=" + std::to_string(stage), "train.micro_batch_size=" + std::to_string(8 / world),
       "precision.dtype=" + dtype, "offload.optimizer=" + offload, "offload.sub_group_size=1024"});
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return parse_config_text("", "offload_optimizer_test.toml", overrides);
}

struct Outcome {
  std::vector<double> losses;
  MemorySnapshot device;  // rank 0's device tracker at the end
  MemorySnapshot host;    // rank 0's host tracker (offload only)
  int skipped = 0;        // fp16 steps skipped for overflow
};

Outcome train(const Config& config, int world) {
  nn::cpu::set_blas_threads(1);
  comm::MemoryStore store;
  Outcome outcome;
  testing::run_ranks(world, [&](int rank) {
    MemoryTracker tracker(Device::cpu(rank));
    auto comm = comm::create_cpu_communicator(store, rank, world);
    engine::Trainer trainer(config, *comm, tracker, engine::quiet_trainer_options());
    const engine::TrainResult result = trainer.run();
    if (rank == 0) {
      outcome.losses = result.losses;
      for (const auto& metrics : result.metrics) outcome.skipped += metrics.skipped ? 1 : 0;
      outcome.device = tracker.snapshot();
      if (const MemoryTracker* host = trainer.strategy().host_offload_tracker()) {
        outcome.host = host->snapshot();
      }
    }
    comm->barrier()->wait();
  });
  return outcome;
}

class OptimizerOffload
    : public ::testing::TestWithParam<std::tuple<int, int, std::string, std::string>> {};

TEST_P(OptimizerOffload, TrainsLikeTheDeviceOptimizerWithNoStateOnTheDevice) {
  const auto [stage, world, dtype, optimizer] = GetParam();
  const Outcome on_device = train(gpt_config(stage, world, dtype, optimizer, "none"), world);
  const Outcome offloaded = train(gpt_config(stage, world, dtype, optimizer, "cpu"), world);
  ASSERT_EQ(offloaded.losses.size(), on_device.losses.size());
  for (std::size_t i = 0; i < on_device.losses.size(); ++i) {
    EXPECT_NEAR(offloaded.losses[i], on_device.losses[i], 1e-6 * std::abs(on_device.losses[i]))
        << "step " << i + 1;
  }
  const auto category = [](MemoryCategory c) { return static_cast<std::size_t>(c); };
  EXPECT_GT(on_device.device.peak_bytes[category(MemoryCategory::kOptimizerStates)], 0);
  EXPECT_EQ(offloaded.device.peak_bytes[category(MemoryCategory::kOptimizerStates)], 0);
  EXPECT_EQ(offloaded.device.peak_bytes[category(MemoryCategory::kHostOffload)], 0);
  // The host holds masters and states (what the device held as optimizer states, plus the
  // fp32 master that fp32 stages otherwise share with the parameters), the gradients brought
  // over and, in bf16, the copy going back.
  const std::int64_t host = offloaded.host.peak_bytes[category(MemoryCategory::kHostOffload)];
  const std::int64_t device_states =
      on_device.device.peak_bytes[category(MemoryCategory::kOptimizerStates)];
  const int states = optimizer == "sgd" ? 1 : 2;
  const std::int64_t shard_bytes = device_states / (states + (dtype == "fp32" ? 0 : 1));
  const std::int64_t expected =
      shard_bytes * (states + 2) + (dtype == "fp32" ? 0 : shard_bytes / 2);
  EXPECT_EQ(host, expected);
  EXPECT_EQ(offloaded.host.total_peak_bytes, host) << "only host_offload lives there";
  // What moved off the device is the optimizer states, and nothing else grew but, with
  // gradients narrower than f32, the workspace that widens a slice of them on its way to the
  // host's f32 copy (the device optimizer reads them as they are: Note [The optimizer in one
  // pass]); a slice is at most the shard.
  const std::int64_t widening = offloaded.device.peak_bytes[category(MemoryCategory::kWorkspace)] -
                                on_device.device.peak_bytes[category(MemoryCategory::kWorkspace)];
  if (dtype == "fp32") {
    EXPECT_EQ(widening, 0);
  }
  EXPECT_LE(widening, shard_bytes);
  EXPECT_LE(offloaded.device.total_peak_bytes,
            on_device.device.total_peak_bytes - device_states + widening);
}

// The global norm is all-reduced from the device's shard while the host copies arrive; the
// clipping factor and fp16's unscaling then apply to the host's gradients. An fp16 run whose
// first steps overflow (initial scale 2^24) skips them on every rank exactly as without
// offload.
TEST(OptimizerOffloadScaling, ClippingAndFp16LossScalingMatchTheDeviceOptimizer) {
  const std::vector<std::string> extra{"optimizer.max_grad_norm=0.05",
                                       "precision.initial_loss_scale=16777216"};
  for (int stage : {1, 3}) {
    const Outcome on_device = train(gpt_config(stage, 2, "fp16", "adamw", "none", extra), 2);
    const Outcome offloaded = train(gpt_config(stage, 2, "fp16", "adamw", "cpu", extra), 2);
    ASSERT_EQ(offloaded.losses.size(), on_device.losses.size());
    for (std::size_t i = 0; i < on_device.losses.size(); ++i) {
      EXPECT_NEAR(offloaded.losses[i], on_device.losses[i], 1e-6 * std::abs(on_device.losses[i]))
          << "stage " << stage << " step " << i + 1;
    }
    EXPECT_EQ(offloaded.skipped, on_device.skipped) << "stage " << stage;
    EXPECT_GT(on_device.skipped, 0) << "the initial scale overflows the first steps";
  }
}

// offload.overlap_step: the update of step t runs during step t+1, so step t+1's forward sees
// the parameters after t-1 updates. Step 2's loss is batch 2's loss at the initial
// parameters, step 3's is batch 3's after one update on batch 1 (a trainer without overlap,
// evaluated between steps, gives both), and training still converges.
TEST(OptimizerOffloadOverlapStep, TheForwardRunsOneUpdateBehind) {
  for (int stage : {1, 3}) {
    const Config overlapped =
        gpt_config(stage, 2, "fp32", "adamw", "cpu", {"offload.overlap_step=true"});
    const Config plain = gpt_config(stage, 2, "fp32", "adamw", "cpu");
    const Outcome delayed = train(overlapped, 2);
    comm::MemoryStore store;
    double batch2_at_start = 0;
    double batch3_after_one = 0;
    testing::run_ranks(2, [&](int rank) {
      MemoryTracker tracker(Device::cpu(rank));
      auto comm = comm::create_cpu_communicator(store, rank, 2);
      engine::Trainer trainer(plain, *comm, tracker, engine::quiet_trainer_options());
      const auto source = engine::make_batch_source(plain);
      const double at_start = trainer.evaluate(trainer.load_step_batch(*source, 2));
      trainer.step(trainer.load_step_batch(*source, 1));
      const double after_one = trainer.evaluate(trainer.load_step_batch(*source, 3));
      if (rank == 0) {
        batch2_at_start = at_start;
        batch3_after_one = after_one;
      }
      comm->barrier()->wait();
    });
    ASSERT_EQ(delayed.losses.size(), static_cast<std::size_t>(kSteps));
    EXPECT_NEAR(delayed.losses[1], batch2_at_start, 1e-6 * batch2_at_start) << "stage " << stage;
    EXPECT_NEAR(delayed.losses[2], batch3_after_one, 1e-6 * batch3_after_one) << "stage " << stage;
    EXPECT_LT(delayed.losses.back(), delayed.losses.front()) << "stage " << stage;
  }
}

// offload.params = "cpu" at stage 3: the parameter shard is the host's compute-dtype copy of
// the masters, each block's slices brought over for its gather. The math is that of optimizer
// offload, bit for bit; the device holds no parameter shard.
class ParameterOffload
    : public ::testing::TestWithParam<std::tuple<int, std::string, std::string>> {};

TEST_P(ParameterOffload, TrainsLikeOptimizerOffloadWithNoParameterShardOnTheDevice) {
  const auto [world, dtype, optimizer] = GetParam();
  const Outcome optimizer_only = train(gpt_config(3, world, dtype, optimizer, "cpu"), world);
  const Outcome both =
      train(gpt_config(3, world, dtype, optimizer, "cpu", {"offload.params=cpu"}), world);
  EXPECT_EQ(both.losses, optimizer_only.losses);
  const auto parameters = static_cast<std::size_t>(MemoryCategory::kParameters);
  EXPECT_GT(optimizer_only.device.peak_bytes[parameters], 0);
  EXPECT_EQ(both.device.peak_bytes[parameters], 0);
  EXPECT_EQ(both.host.peak_bytes, optimizer_only.host.peak_bytes) << "no second host copy";
  EXPECT_LT(both.device.total_peak_bytes, optimizer_only.device.total_peak_bytes);
}

INSTANTIATE_TEST_SUITE_P(WorldsPrecisions, ParameterOffload,
                         ::testing::Combine(::testing::Values(1, 2),
                                            ::testing::Values("fp32", "bf16"),
                                            ::testing::Values("adamw", "sgd")),
                         [](const auto& param_info) {
                           return "World" + std::to_string(std::get<0>(param_info.param)) +
                                  std::get<1>(param_info.param) + std::get<2>(param_info.param);
                         });

INSTANTIATE_TEST_SUITE_P(StagesWorldsPrecisions, OptimizerOffload,
                         ::testing::Combine(::testing::Values(1, 2, 3), ::testing::Values(1, 2),
                                            ::testing::Values("fp32", "bf16"),
                                            ::testing::Values("adamw", "sgd")),
                         [](const auto& param_info) {
                           return "Stage" + std::to_string(std::get<0>(param_info.param)) +
                                  "World" + std::to_string(std::get<1>(param_info.param)) +
                                  std::get<2>(param_info.param) + std::get<3>(param_info.param);
                         });

}  // namespace
}  // namespace zt

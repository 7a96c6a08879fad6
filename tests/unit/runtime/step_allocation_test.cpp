// A training step's allocations once the first step has run: the host pool obtains no new
// block from the system, and every step allocates the same bytes per category, which the
// tracker still counts one by one (Note [Live slots], Note [Allocation-free reuse]).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "core/device/cpu_allocator.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "runtime/engine/trainer.h"

namespace zt::engine {
namespace {

constexpr int kSteps = 5;

TEST(StepAllocation, SteadyStateStepsObtainNoHostBlocksAndCountTheSameBytes) {
  if (!host_allocator_pools_blocks()) GTEST_SKIP() << "the host pool is off (AddressSanitizer)";
  nn::cpu::set_blas_threads(1);
  const Config config =
      parse_config_text("", "step_allocation_test.toml",
                        {"model.type=gpt", "model.n_layer=2", "model.n_head=4", "model.d_model=64",
                         "model.vocab_size=64", "model.seq_len=32", "train.micro_batch_size=4",
                         "train.steps=" + std::to_string(kSteps), "optimizer.lr=0.001"});
  comm::MemoryStore store;
  MemoryTracker tracker{Device::cpu()};
  auto comm = comm::create_cpu_communicator(store, 0, 1);
  std::vector<std::int64_t> blocks_obtained;  // after each step
  std::vector<CategoryBytes> live_after;      // after each step
  TrainerOptions options = quiet_trainer_options();
  options.on_step = [&](const StepMetrics&) {
    blocks_obtained.push_back(tracker.allocator().stats().blocks_obtained);
    live_after.push_back(tracker.snapshot().current_bytes);
  };
  Trainer trainer(config, *comm, tracker, options);
  tracker.start_timeline(1'000'000);
  trainer.run();
  tracker.stop_timeline();
  ASSERT_EQ(blocks_obtained.size(), static_cast<std::size_t>(kSteps));
  ASSERT_FALSE(tracker.timeline_truncated());

  // What each step allocated per category, event by event: the profile still sees them all.
  std::vector<CategoryBytes> allocated(kSteps + 1);
  std::vector<std::int64_t> allocations(kSteps + 1);
  for (const MemoryEvent& event : tracker.timeline()) {
    if (event.step < 1 || event.step > kSteps || event.delta_bytes <= 0) continue;
    allocated[event.step][static_cast<std::size_t>(event.category)] += event.delta_bytes;
    ++allocations[event.step];
  }
  EXPECT_GT(allocations[2], 20) << "a GPT step allocates its activations through the tracker";
  EXPECT_GT(allocated[2][static_cast<std::size_t>(MemoryCategory::kActivations)], 0);
  for (int step = 3; step <= kSteps; ++step) {
    EXPECT_EQ(allocations[step], allocations[2]) << "step " << step;
    EXPECT_EQ(allocated[step], allocated[2]) << "step " << step;
  }
  for (int step = 2; step <= kSteps; ++step) {
    const auto index = static_cast<std::size_t>(step - 1);
    EXPECT_EQ(blocks_obtained[index], blocks_obtained[1])
        << "step " << step << " obtained host blocks the steps before had freed";
    EXPECT_EQ(live_after[index], live_after[1]) << "step " << step;
  }
}

}  // namespace
}  // namespace zt::engine

// Overlap that a test can see: a RecordingCommunicator on a lane holds chosen ops back
// until the rank's compute phase (the memory tracker's label) reaches a point; if the
// training loop waited for such an op before that point, the hold could never end and the
// op is marked held_past_bound. Each claim is checked both with separate lanes (it must
// hold) and, where the claim is about lanes, with one shared queue (it must then fail, so
// the test can tell the difference).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "comm/comm_lanes.h"
#include "comm/recording_communicator.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "rank_threads.h"
#include "runtime/engine/trainer.h"

namespace zt {
namespace {

using comm::CollectiveKind;
using comm::RecordedOp;
using comm::RecordingCommunicator;

constexpr int kWorld = 2;
constexpr int kSteps = 3;

Config config_for(int stage) {
  return parse_config_text(
      "", "overlap_test.toml",
      {"model.type=gpt", "model.n_layer=2", "model.n_head=2", "model.d_model=32",
       "model.vocab_size=32", "model.seq_len=8", "train.steps=" + std::to_string(kSteps),
       "zero.stage=" + std::to_string(stage), "zero.reduce_bucket_size=4KiB",
       "train.micro_batch_size=" + std::to_string(8 / kWorld)});
}

enum class Lanes { kSeparate, kOneQueue };

struct RankRecord {
  std::vector<RecordedOp> ops;  // of the recorded lane(s)
  std::vector<double> losses;
};

// Trains `stage` on kWorld ranks; `hold` is installed on the recorded parameter and
// gradient lanes (with kOneQueue, on the one queue every lane shares).
std::vector<RankRecord> train(int stage, Lanes lanes_kind,
                              const RecordingCommunicator::HoldCondition& hold,
                              std::chrono::milliseconds bound) {
  nn::cpu::set_blas_threads(1);
  comm::MemoryStore store;
  std::vector<RankRecord> records(kWorld);
  testing::run_ranks(kWorld, [&](int rank) {
    MemoryTracker tracker(Device::cpu(rank));
    comm::OwnedCommLanes owned = comm::create_cpu_comm_lanes(store, rank, kWorld);
    const comm::CommLanes real = owned.lanes();
    const auto phase = [&tracker] { return tracker.phase(); };
    std::vector<std::unique_ptr<RecordingCommunicator>> recorders;
    std::optional<comm::CommLanes> lanes;
    if (lanes_kind == Lanes::kSeparate) {
      recorders.push_back(std::make_unique<RecordingCommunicator>(real.parameters, phase));
      recorders.push_back(std::make_unique<RecordingCommunicator>(real.gradients, phase));
      lanes.emplace(comm::CommLanes{real.control, *recorders[0], *recorders[1]});
    } else {
      recorders.push_back(std::make_unique<RecordingCommunicator>(real.control, phase));
      lanes.emplace(comm::CommLanes::single(*recorders[0]));
    }
    for (auto& recorder : recorders) recorder->hold_until(hold, bound);
    engine::Trainer trainer(config_for(stage), *lanes, tracker, engine::quiet_trainer_options());
    RankRecord& record = records[static_cast<std::size_t>(rank)];
    record.losses = trainer.run().losses;
    // The last step's refresh or prefetch waits for a forward that never comes.
    for (auto& recorder : recorders) recorder->release_holds();
    real.control.barrier()->wait();
    for (auto& recorder : recorders) {
      for (const RecordedOp& op : recorder->ops()) record.ops.push_back(op);
    }
  });
  return records;
}

bool any_held_past_bound(const std::vector<RankRecord>& records) {
  for (const auto& record : records) {
    for (const auto& op : record.ops) {
      if (op.held_past_bound) return true;
    }
  }
  return false;
}

// Rank 0's losses with separate lanes, or with every lane one communicator.
std::vector<double> plain_losses(const Config& config, Lanes lanes_kind = Lanes::kSeparate) {
  comm::MemoryStore store;
  std::vector<double> losses;
  testing::run_ranks(kWorld, [&](int rank) {
    MemoryTracker tracker(Device::cpu(rank));
    comm::OwnedCommLanes owned = comm::create_cpu_comm_lanes(store, rank, kWorld);
    const comm::CommLanes lanes = lanes_kind == Lanes::kSeparate
                                      ? owned.lanes()
                                      : comm::CommLanes::single(owned.lanes().control);
    engine::Trainer trainer(config, lanes, tracker, engine::quiet_trainer_options());
    auto result = trainer.run();
    if (rank == 0) losses = result.losses;
    owned.lanes().control.barrier()->wait();
  });
  return losses;
}

std::vector<double> plain_losses(int stage) { return plain_losses(config_for(stage)); }

// Lanes change when ops run, never what they compute: bitwise the same losses as one queue.
TEST(CommLanesNumerics, SeparateLanesGiveTheLossesOfOneQueue) {
  for (const std::string dtype : {"fp32", "bf16"}) {
    for (int stage = 0; stage <= 3; ++stage) {
      Config config = config_for(stage);
      config.precision.dtype = dtype == "fp32" ? PrecisionDType::kFp32 : PrecisionDType::kBf16;
      const auto separate = plain_losses(config, Lanes::kSeparate);
      const auto one_queue = plain_losses(config, Lanes::kOneQueue);
      ASSERT_EQ(separate.size(), one_queue.size());
      for (std::size_t i = 0; i < separate.size(); ++i) {
        EXPECT_EQ(separate[i], one_queue[i]) << dtype << " stage " << stage << " step " << i + 1;
      }
    }
  }
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

// Stages 1-2: the all-gather after a step may start only once the next forward has begun.
RecordingCommunicator::HoldCondition refresh_after_next_forward_starts() {
  return [](const RecordedOp& op, const std::string& phase) {
    return op.kind != CollectiveKind::kAllGather || starts_with(phase, "forward block");
  };
}

class RefreshOverlap : public ::testing::TestWithParam<int> {};

TEST_P(RefreshOverlap, NextForwardStartsWhileTheAllGatherIsPending) {
  const int stage = GetParam();
  const auto records =
      train(stage, Lanes::kSeparate, refresh_after_next_forward_starts(), std::chrono::seconds(20));
  EXPECT_FALSE(any_held_past_bound(records))
      << "the loop waited for a refresh all-gather before the next forward began";
  int refreshes_into_forward = 0;
  for (const auto& op : records[0].ops) {
    if (op.kind == CollectiveKind::kAllGather && op.submitted_in == "optimizer step" &&
        starts_with(op.started_in, "forward block")) {
      ++refreshes_into_forward;
    }
  }
  EXPECT_GT(refreshes_into_forward, 0);
  const auto losses = plain_losses(stage);
  for (int rank = 0; rank < kWorld; ++rank) {
    ASSERT_EQ(records[rank].losses.size(), losses.size());
    for (std::size_t i = 0; i < losses.size(); ++i) {
      EXPECT_DOUBLE_EQ(records[rank].losses[i], losses[i]) << "step " << i + 1;
    }
  }
}

// The control: with one queue, the loss all-reduce waits behind the refresh all-gathers, so
// the next forward cannot begin and the hold runs out.
TEST_P(RefreshOverlap, OneQueueMakesTheLossWaitBehindTheAllGather) {
  const auto records = train(GetParam(), Lanes::kOneQueue, refresh_after_next_forward_starts(),
                             std::chrono::milliseconds(500));
  EXPECT_TRUE(any_held_past_bound(records));
}

INSTANTIATE_TEST_SUITE_P(Stages, RefreshOverlap, ::testing::Values(1, 2),
                         [](const auto& param_info) {
                           return "Stage" + std::to_string(param_info.param);
                         });

// Stage 3: reduce-scatters may start only once backward reaches block 0, so every other
// block's backward (and its gather) must proceed while they are pending.
RecordingCommunicator::HoldCondition reductions_until_backward_block_zero() {
  return [](const RecordedOp& op, const std::string& phase) {
    return op.kind != CollectiveKind::kReduceScatter || phase == "backward block 0";
  };
}

TEST(StageThreeOverlap, BackwardGathersDoNotWaitBehindReduceScatters) {
  const auto records =
      train(3, Lanes::kSeparate, reductions_until_backward_block_zero(), std::chrono::seconds(20));
  EXPECT_FALSE(any_held_past_bound(records)) << "a backward gather waited behind a reduce-scatter";
}

TEST(StageThreeOverlap, OneQueuePutsBackwardGathersBehindReduceScatters) {
  const auto records = train(3, Lanes::kOneQueue, reductions_until_backward_block_zero(),
                             std::chrono::milliseconds(500));
  EXPECT_TRUE(any_held_past_bound(records));
}

// Stage 3: every gather may start only after the phase it was submitted in has ended, so a
// block gathered synchronously, when it is needed, would hold forever; and the first block
// of the next step is submitted during the optimizer step.
TEST(StageThreeOverlap, EveryGatherIsPrefetchedBeforeTheBlockThatNeedsIt) {
  const auto records = train(
      3, Lanes::kSeparate,
      [](const RecordedOp& op, const std::string& phase) {
        return op.kind != CollectiveKind::kAllGather || phase != op.submitted_in;
      },
      std::chrono::seconds(20));
  EXPECT_FALSE(any_held_past_bound(records)) << "a block was gathered when it was needed";
  int prefetched_by_the_step = 0;
  for (const auto& op : records[0].ops) {
    if (op.kind == CollectiveKind::kAllGather && op.submitted_in == "optimizer step") {
      ++prefetched_by_the_step;
    }
  }
  EXPECT_GE(prefetched_by_the_step, kSteps);
  const auto losses = plain_losses(3);
  for (std::size_t i = 0; i < losses.size(); ++i) {
    EXPECT_DOUBLE_EQ(records[0].losses[i], losses[i]) << "step " << i + 1;
  }
}

}  // namespace
}  // namespace zt

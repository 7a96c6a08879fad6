// What each ZeRO stage sends per step, against the ring arithmetic: bytes communicated per
// step from the metrics, for a GPT whose padding is well under 1% of its parameters. (The
// model-state bytes are pinned by zero_model_state_bytes_test.cpp.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "rank_threads.h"
#include "runtime/engine/model_factory.h"
#include "runtime/engine/trainer.h"

namespace zt {
namespace {

Config config_for(int stage, int world_size) {
  return parse_config_text(
      "", "memory_test.toml",
      {"model.type=gpt", "model.n_layer=2", "model.n_head=4", "model.d_model=64",
       "model.vocab_size=64", "model.seq_len=16", "train.steps=3",
       "zero.stage=" + std::to_string(stage), "zero.reduce_bucket_size=64KiB",
       "train.micro_batch_size=" + std::to_string(8 / world_size)});
}

struct RankReport {
  engine::StepMetrics last_step;
};

std::vector<RankReport> run(int stage, int world_size) {
  nn::cpu::set_blas_threads(1);
  comm::MemoryStore store;
  std::vector<RankReport> reports(static_cast<std::size_t>(world_size));
  testing::run_ranks(world_size, [&](int rank) {
    MemoryTracker tracker(Device::cpu(rank));
    auto comm = comm::create_cpu_communicator(store, rank, world_size);
    engine::Trainer trainer(config_for(stage, world_size), *comm, tracker,
                            engine::quiet_trainer_options());
    const auto result = trainer.run();
    RankReport& report = reports[static_cast<std::size_t>(rank)];
    report.last_step = result.metrics.back();
    comm->barrier()->wait();
  });
  return reports;
}

double psi() { return static_cast<double>(engine::make_model(config_for(0, 1)).parameter_count()); }

class ZeroCommVolume : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(ZeroCommVolume, BytesPerStepMatchTheRingArithmetic) {
  const auto [stage, world_size] = GetParam();
  const auto reports = run(stage, world_size);
  // Per step each rank sends (n-1)/n of the model per ring pass: stages 1-2 reduce-scatter
  // gradients and all-gather parameters once (2Ψ), stage 3 gathers twice (forward and
  // backward; the last block stays gathered between them) and reduce-scatters once (3Ψ).
  const double ring = 4.0 * psi() * (world_size - 1) / world_size;  // bytes of one pass
  const auto& step = reports[0].last_step;
  const double moved = static_cast<double>(step.reduce_scatter_bytes + step.all_gather_bytes);
  if (stage == 0) {
    EXPECT_EQ(moved, 0.0);
    EXPECT_NEAR(static_cast<double>(step.all_reduce_bytes), 2 * ring, 0.05 * 2 * ring + 16);
  } else {
    const double passes = stage == 3 ? 3.0 : 2.0;
    EXPECT_NEAR(moved, passes * ring, 0.05 * passes * ring) << "stage " << stage;
    EXPECT_NEAR(static_cast<double>(step.reduce_scatter_bytes), ring, 0.05 * ring);
  }
}

INSTANTIATE_TEST_SUITE_P(StagesAndWorlds, ZeroCommVolume,
                         ::testing::Combine(::testing::Values(0, 1, 2, 3), ::testing::Values(2, 4)),
                         [](const auto& param_info) {
                           return "Stage" + std::to_string(std::get<0>(param_info.param)) +
                                  "World" + std::to_string(std::get<1>(param_info.param));
                         });

}  // namespace
}  // namespace zt

// What each ZeRO stage costs a rank, against the ZeRO paper's arithmetic (DESIGN §6):
// model-state bytes from the memory tracker, and bytes communicated per step from the
// metrics, for a GPT whose padding is well under 1% of its parameters.
//
// Note [Model-state formulas, fp32 compute]: with Ψ parameters and N ranks, zerotrain keeps
//   stage 0: params 4Ψ + grads 4Ψ + Adam m, v 8Ψ                     = 16Ψ
//   stage 1: params 4Ψ + grads 4Ψ + grad shard 4Ψ/N + master, m, v 12Ψ/N = 8Ψ + 16Ψ/N
//   stage 2: params 4Ψ + grad shard 4Ψ/N + 12Ψ/N                     = 4Ψ + 16Ψ/N
//   stage 3: param shard 4Ψ/N + grad shard 4Ψ/N + 12Ψ/N              = 20Ψ/N
// The paper's mixed-precision figures (16Ψ, 4Ψ + 12Ψ/N, 2Ψ + 14Ψ/N, 16Ψ/N) assume 2-byte
// parameters and gradients and 12 bytes of fp32 master + moments; here parameters are fp32,
// gradients accumulate in fp32 (4 bytes, as the issue requires), and the fp32 master shard
// is kept apart from the compute copy. Gathered stage-3 blocks and transient per-block
// gradients are communication buffers, not model states.
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
  std::int64_t model_state_bytes = 0;  // peak parameters + gradients + optimizer_states
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
    for (MemoryCategory category : {MemoryCategory::kParameters, MemoryCategory::kGradients,
                                    MemoryCategory::kOptimizerStates}) {
      report.model_state_bytes += tracker.peak_bytes(category);
    }
    report.last_step = result.metrics.back();
    comm->barrier()->wait();
  });
  return reports;
}

double psi() { return static_cast<double>(engine::make_model(config_for(0, 1)).parameter_count()); }

double expected_model_state_bytes(int stage, int n) {
  const double p = psi();
  switch (stage) {
    case 0:
      return 16 * p;
    case 1:
      return 8 * p + 16 * p / n;
    case 2:
      return 4 * p + 16 * p / n;
    default:
      return 20 * p / n;
  }
}

class ZeroMemoryAndVolume : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(ZeroMemoryAndVolume, ModelStatesMatchTheFormulaWithinTwoPercent) {
  const auto [stage, world_size] = GetParam();
  const auto reports = run(stage, world_size);
  const double expected = expected_model_state_bytes(stage, world_size);
  for (const auto& report : reports) {
    EXPECT_NEAR(static_cast<double>(report.model_state_bytes), expected, 0.02 * expected)
        << "stage " << stage << ", world " << world_size << " (Ψ = " << psi() << ")";
  }
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

INSTANTIATE_TEST_SUITE_P(StagesAndWorlds, ZeroMemoryAndVolume,
                         ::testing::Combine(::testing::Values(0, 1, 2, 3), ::testing::Values(2, 4)),
                         [](const auto& param_info) {
                           return "Stage" + std::to_string(std::get<0>(param_info.param)) +
                                  "World" + std::to_string(std::get<1>(param_info.param));
                         });

}  // namespace
}  // namespace zt

// zero.max_live_parameters in a whole stage-3 training run: with a deep prefetch, the
// gathered parameter bytes live at once never pass the cap (a block is gathered past it only
// when compute needs it, so the cap here leaves room for the largest block), and without the
// cap the same prefetch gathers more than the cap would allow, so the bound is not vacuous.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "comm/comm_lanes.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "rank_threads.h"
#include "runtime/engine/trainer.h"

namespace zt {
namespace {

constexpr int kWorld = 2;

Config stage_three(const std::string& max_live) {
  return parse_config_text(
      "", "live_parameters_test.toml",
      {"model.type=gpt", "model.n_layer=4", "model.n_head=2", "model.d_model=32",
       "model.vocab_size=32", "model.seq_len=8", "train.steps=3", "zero.stage=3",
       "zero.prefetch_blocks=4", "zero.param_persistence_threshold=0",
       "zero.max_live_parameters=" + max_live, "train.micro_batch_size=2"});
}

struct RankFigures {
  std::int64_t peak_gathered = 0;
  std::int64_t largest_block = 0;
};

std::vector<RankFigures> run(const Config& config) {
  nn::cpu::set_blas_threads(1);
  comm::MemoryStore store;
  std::vector<RankFigures> figures(kWorld);
  testing::run_ranks(kWorld, [&](int rank) {
    MemoryTracker tracker(Device::cpu(rank));
    comm::OwnedCommLanes lanes = comm::create_cpu_comm_lanes(store, rank, kWorld);
    engine::Trainer trainer(config, lanes.lanes(), tracker, engine::quiet_trainer_options());
    trainer.run();
    RankFigures& mine = figures[static_cast<std::size_t>(rank)];
    mine.peak_gathered = trainer.strategy().peak_gathered_parameter_bytes();
    for (const auto& block : trainer.strategy().layout().blocks) {
      mine.largest_block = std::max(mine.largest_block, block.padded_numel * 4);  // fp32
    }
    lanes.lanes().control.barrier()->wait();
  });
  return figures;
}

TEST(ZeroLiveParameters, GatheredBytesStayUnderTheCapThroughTraining) {
  const std::vector<RankFigures> uncapped = run(stage_three("1GiB"));
  const std::int64_t largest = uncapped[0].largest_block;
  ASSERT_GT(largest, 0);
  const std::int64_t cap = 2 * largest;
  for (const RankFigures& rank : uncapped) {
    EXPECT_GT(rank.peak_gathered, cap) << "a deep prefetch without a cap should pass 2 blocks";
  }
  const std::vector<RankFigures> capped = run(stage_three(std::to_string(cap) + "B"));
  for (std::size_t r = 0; r < capped.size(); ++r) {
    EXPECT_LE(capped[r].peak_gathered, cap) << "rank " << r;
    EXPECT_GE(capped[r].peak_gathered, largest) << "rank " << r;
  }
}

}  // namespace
}  // namespace zt

// The estimate report: the table's shape, the cheapest choice under a limit, its advice, and
// the estimator on a world and model it is given (the table's simulations run on several
// threads at once: this suite also runs under TSan).
#include <gtest/gtest.h>

#include "core/config/config_loader.h"
#include "runtime/estimate/estimate_table.h"

namespace zt::estimate {
namespace {

Config tiny(std::vector<std::string> overrides = {}) {
  overrides.insert(overrides.begin(),
                   {"model.type=gpt", "model.n_layer=2", "model.n_head=2", "model.d_model=32",
                    "model.vocab_size=16", "model.seq_len=8", "train.micro_batch_size=2"});
  return parse_config_text("", "estimate_test.toml", overrides);
}

std::int64_t peak(const CandidateResult& r) { return r.estimate->memory.total_peak_bytes; }

TEST(EstimateReport, TableCoversStagesOffloadAndWorlds) {
  const EstimateReport report = estimate_report(tiny(), 2);
  EXPECT_EQ(report.ranks.size(), 2u);
  EXPECT_EQ(report.table_worlds, (std::vector<int>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(report.table.size(), 7u * 8u);
  for (const CandidateResult& r : report.table) {
    ASSERT_TRUE(r.estimate) << r.candidate.describe() << ": " << r.not_runnable;
    EXPECT_FALSE(r.fits) << "no limit, nothing is said to fit";
  }
  EXPECT_FALSE(report.cheapest);
  EXPECT_TRUE(report.other_checkpointing);
  EXPECT_EQ(fitting_advice(report), "");
}

TEST(EstimateReport, TheAskedConfigIsItsOwnTableCell) {
  const EstimateReport report = estimate_report(tiny({"zero.stage=2"}), 4);
  for (const CandidateResult& r : report.table) {
    if (r.candidate.stage == 2 && r.candidate.world_size == 4 &&
        r.candidate.offload == OffloadChoice::kNone) {
      EXPECT_EQ(peak(r), report.ranks[0].memory.total_peak_bytes);
      return;
    }
  }
  FAIL() << "no stage 2 cell at world 4";
}

TEST(EstimateReport, CheapestFitsAndMovesTheFewestBytesAtTheAskedWorld) {
  // A limit between the smallest and the largest peak at world 2.
  const EstimateReport open = estimate_report(tiny(), 2);
  std::int64_t low = INT64_MAX, high = 0;
  for (const CandidateResult& r : open.table) {
    if (r.candidate.world_size != 2) continue;
    low = std::min(low, peak(r));
    high = std::max(high, peak(r));
  }
  const std::int64_t limit = (low + high) / 2;
  const EstimateReport report =
      estimate_report(tiny({"runtime.device_memory_limit=" + std::to_string(limit)}), 2);
  ASSERT_TRUE(report.cheapest);
  EXPECT_EQ(report.cheapest->candidate.world_size, 2);
  EXPECT_LE(peak(*report.cheapest), limit);
  for (const CandidateResult& r : report.table) {
    if (r.candidate.world_size != 2) continue;
    EXPECT_EQ(r.fits, peak(r) <= limit) << r.candidate.describe();
    if (r.fits) {
      EXPECT_GE(r.estimate->bytes_moved_per_step(),
                report.cheapest->estimate->bytes_moved_per_step())
          << r.candidate.describe();
    }
  }
  EXPECT_NE(fitting_advice(report).find(report.cheapest->candidate.settings()), std::string::npos);
}

TEST(EstimateReport, NothingFittingNamesTheSmallestRequirement) {
  const EstimateReport report = estimate_report(tiny({"runtime.device_memory_limit=1KiB"}), 1);
  EXPECT_FALSE(report.cheapest);
  ASSERT_TRUE(report.smallest);
  for (const CandidateResult& r : report.table) EXPECT_GE(peak(r), peak(*report.smallest));
  EXPECT_NE(fitting_advice(report).find("the smallest requirement is"), std::string::npos);
}

TEST(EstimateReport, BatchSizesThatDoNotDivideMakeACellNotRunnable) {
  // A global batch of 4 samples of 2 per rank: worlds beyond 2 cannot take it.
  const EstimateReport report = estimate_report(tiny({"train.global_batch_size=4"}), 1);
  for (const CandidateResult& r : report.table) {
    EXPECT_EQ(r.estimate.has_value(), r.candidate.world_size <= 2) << r.candidate.describe();
    if (!r.estimate) {
      EXPECT_NE(r.not_runnable.find("global_batch_size"), std::string::npos) << r.not_runnable;
    }
  }
}

// With ranks per node (zerotrain estimate --nproc-per-node) the bytes per step split by node:
// on 2 nodes of 2, rank 0's ring neighbour shares its node and rank 1's does not, and the
// report says so; on one node nothing crosses and the report says nothing of nodes.
TEST(EstimateReport, RanksPerNodeSplitTheBytesPerStepByNode) {
  const Config config = tiny({"zero.stage=3", "train.global_batch_size=8"});
  EstimateOptions two_per_node;
  two_per_node.ranks_per_node = 2;
  const EstimateReport report = estimate_report(config, 4, two_per_node);
  ASSERT_EQ(report.ranks.size(), 4u);
  for (const RankEstimate& r : report.ranks) {
    EXPECT_EQ(r.node_count, 2);
    EXPECT_GT(r.comm_bytes_per_step, 0);
    EXPECT_EQ(r.intra_node_bytes_per_step + r.cross_node_bytes_per_step, r.comm_bytes_per_step);
    const bool last_of_its_node = r.rank % 2 == 1;
    EXPECT_EQ(r.cross_node_bytes_per_step, last_of_its_node ? r.comm_bytes_per_step : 0)
        << "rank " << r.rank;
  }
  const std::string text = report_text(report, config);
  EXPECT_NE(text.find("across nodes; 2 nodes)"), std::string::npos) << text;
  // Ranks 1 and 3 send across; padding may make either the larger.
  const int most =
      report.ranks[3].cross_node_bytes_per_step > report.ranks[1].cross_node_bytes_per_step ? 3 : 1;
  EXPECT_NE(text.find("across nodes, rank " + std::to_string(most) + " sends the most"),
            std::string::npos)
      << text;
  EXPECT_NE(report_json(report, config).find("\"cross_node_bytes_per_step\": "), std::string::npos);

  const EstimateReport one_node = estimate_report(config, 4);
  EXPECT_EQ(one_node.ranks[1].node_count, 1);
  EXPECT_EQ(one_node.ranks[1].cross_node_bytes_per_step, 0);
  EXPECT_EQ(report_text(one_node, config).find("across nodes"), std::string::npos);
}

TEST(EstimateRank, StageThreeShardsShrinkWithTheWorld) {
  const Config config = tiny({"zero.stage=3"});
  const auto states = [&](int world) {
    return estimate_rank(config, world, 0)
        .memory.peak_bytes[static_cast<std::size_t>(MemoryCategory::kOptimizerStates)];
  };
  EXPECT_NEAR(static_cast<double>(states(4)), states(1) / 4.0, states(1) * 0.05);
}

}  // namespace
}  // namespace zt::estimate

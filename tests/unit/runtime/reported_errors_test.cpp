// merge_reported_errors: equal messages once, messages differing only in a rank's own
// numbers (device, rank, GPU) merged with the values listed, anything else kept apart.
#include "runtime/launch/reported_errors.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace zt::launch::testing {
namespace {

std::vector<RankErrors> one_each(const std::vector<std::string>& messages) {
  std::vector<RankErrors> by_rank;
  for (std::size_t r = 0; r < messages.size(); ++r) {
    by_rank.push_back(RankErrors{static_cast<int>(r), {messages[r]}});
  }
  return by_rank;
}

TEST(MergeReportedErrors, EqualMessagesAreOneWithEveryRank) {
  const auto errors = merge_reported_errors(one_each({"cfg.toml:2:5: bad", "cfg.toml:2:5: bad"}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "cfg.toml:2:5: bad");
  EXPECT_EQ(errors[0].ranks, (std::vector<int>{0, 1}));
}

TEST(MergeReportedErrors, MessagesDifferingOnlyInTheDeviceAreMergedWithTheDevicesListed) {
  const auto errors = merge_reported_errors(
      one_each({"out of memory on cuda:0 (64 MiB)", "out of memory on cuda:1 (64 MiB)"}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "out of memory on cuda:{0,1} (64 MiB)");
  EXPECT_EQ(errors[0].ranks, (std::vector<int>{0, 1}));
}

TEST(MergeReportedErrors, CpuDevicesAreMergedToo) {
  const auto errors = merge_reported_errors(
      one_each({"out of memory on cpu:0: 12 MiB", "out of memory on cpu:1: 12 MiB"}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "out of memory on cpu:{0,1}: 12 MiB");
}

TEST(MergeReportedErrors, RankAndGpuNumbersAreMergedAndRunsWrittenAsTheirEnds) {
  const auto errors = merge_reported_errors(one_each({
      "rank 0 on GPU 4: see memory/rank-0.json",
      "rank 1 on GPU 5: see memory/rank-1.json",
      "rank 2 on GPU 6: see memory/rank-2.json",
      "rank 3 on GPU 7: see memory/rank-3.json",
  }));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "rank {0..3} on GPU {4..7}: see memory/rank-{0..3}.json");
  EXPECT_EQ(errors[0].ranks, (std::vector<int>{0, 1, 2, 3}));
}

TEST(MergeReportedErrors, APerRankNumberAllRanksShareIsWrittenPlainly) {
  const auto errors = merge_reported_errors(
      one_each({"peer rank 3 is gone (cuda:0)", "peer rank 3 is gone (cuda:1)"}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "peer rank 3 is gone (cuda:{0,1})");
}

TEST(MergeReportedErrors, OtherNumbersMustMatch) {
  // A size or a step is the error's own content, not the rank's name: keep them apart.
  const auto errors = merge_reported_errors(
      one_each({"cuda:0: asked for 12 MiB", "cuda:1: asked for 14 MiB", "frank 2 said no"}));
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].message, "cuda:0: asked for 12 MiB");
  EXPECT_EQ(errors[1].message, "cuda:1: asked for 14 MiB");
  EXPECT_EQ(errors[2].message, "frank 2 said no") << "'rank' inside a word is no rank";
}

TEST(MergeReportedErrors, OrderedByFirstRankAndSparseRanksListedApart) {
  std::vector<RankErrors> by_rank = {
      RankErrors{2, {"beta on cuda:2"}},
      RankErrors{0, {"alpha on cuda:0", "beta on cuda:0"}},
      RankErrors{1, {}},
  };
  const auto errors = merge_reported_errors(by_rank);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].message, "alpha on cuda:0");
  EXPECT_EQ(errors[0].ranks, (std::vector<int>{0}));
  EXPECT_EQ(errors[1].message, "beta on cuda:{0,2}");
  EXPECT_EQ(errors[1].ranks, (std::vector<int>{0, 2}));
  EXPECT_EQ(describe_ranks(errors[1].ranks, 3), "ranks 0, 2");
}

TEST(MergeReportedErrors, ManyRanksAreListedAsRunsInNumericOrder) {
  std::vector<std::string> messages;
  for (int r = 0; r < 12; ++r) messages.push_back("cuda:" + std::to_string(r) + " failed");
  messages.push_back("cuda:20 failed");
  const auto errors = merge_reported_errors(one_each(messages));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "cuda:{0..11,20} failed");
}

}  // namespace
}  // namespace zt::launch::testing

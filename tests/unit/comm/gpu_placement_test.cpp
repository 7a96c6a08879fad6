// The shared-GPU check NCCL groups run before NCCL initializes: which ranks share a GPU
// (same host, same PCI bus id, whatever index CUDA_VISIBLE_DEVICES gives it), and the
// message saying to use comm.backend = "gloo" to share one.
#include "comm/gpu_placement.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace zt::comm {
namespace {

TEST(GpuPlacement, RanksOnTheirOwnGpusHaveNoProblem) {
  const std::vector<GpuPlacement> placements{{"node-a", "0000:01:00.0", "cuda:0"},
                                             {"node-a", "0000:02:00.0", "cuda:1"},
                                             {"node-b", "0000:01:00.0", "cuda:0"}};
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_EQ(shared_gpu_problem(placements, rank), std::nullopt) << "rank " << rank;
  }
}

TEST(GpuPlacement, TwoRanksOnOneGpuAreNamedWithTheGlooAdvice) {
  // Rank 2 names the same GPU as rank 0 under another index (CUDA_VISIBLE_DEVICES).
  const std::vector<GpuPlacement> placements{{"node-a", "0000:01:00.0", "cuda:0"},
                                             {"node-a", "0000:02:00.0", "cuda:1"},
                                             {"node-a", "0000:01:00.0", "cuda:1"}};
  for (const int rank : {0, 2}) {
    const std::optional<std::string> problem = shared_gpu_problem(placements, rank);
    ASSERT_TRUE(problem) << "rank " << rank;
    EXPECT_NE(problem->find("ranks 0 and 2"), std::string::npos) << *problem;
    EXPECT_NE(problem->find("0000:01:00.0"), std::string::npos) << *problem;
    EXPECT_NE(problem->find("node-a"), std::string::npos) << *problem;
    EXPECT_NE(problem->find("comm.backend = \"gloo\""), std::string::npos) << *problem;
  }
  EXPECT_EQ(shared_gpu_problem(placements, 1), std::nullopt);
}

TEST(GpuPlacement, ThreeRanksOnOneGpuAreAllNamed) {
  const std::vector<GpuPlacement> placements(3, {"h", "0000:01:00.0", "cuda:0"});
  const std::optional<std::string> problem = shared_gpu_problem(placements, 1);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("ranks 0, 1 and 2"), std::string::npos) << *problem;
}

TEST(GpuPlacement, TextRoundTripsAndOtherTextIsRefused) {
  const GpuPlacement placement{"node-a", "0000:01:00.0", "cuda:3"};
  EXPECT_EQ(parse_placement(placement_text(placement)), placement);
  EXPECT_EQ(parse_placement("node-a 0000:01:00.0"), std::nullopt);
  EXPECT_EQ(parse_placement("a b c d"), std::nullopt);
}

}  // namespace
}  // namespace zt::comm

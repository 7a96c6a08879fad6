// The ranks' final error lines merged for the launcher's report: lines every rank wrote
// alike are shown once, and so are lines that differ only in the rank's own numbers
// (its device "cuda:1", "rank 1", "GPU 1"), with the values that vary listed in place.
#pragma once

#include <string>
#include <vector>

namespace zt::launch {

// What one rank held back: its error messages in the order written (a message may span
// lines, its continuation lines joined with '\n').
struct RankErrors {
  int rank = 0;
  std::vector<std::string> messages;
};

// One error message and the ranks that reported it, in rank order. Where the ranks' copies
// differed in a per-rank number, message shows the values in braces: "cuda:{0..3}".
struct ReportedError {
  std::string message;
  std::vector<int> ranks;
};

// "rank 3", "ranks 0, 2" or "all 4 ranks" (when ranks are all world_size of them).
std::string describe_ranks(const std::vector<int>& ranks, int world_size);

// Merges messages equal once the numbers after a per-rank word (Note [Per-rank numbers])
// are set aside; the result is ordered by the first rank that reported each.
std::vector<ReportedError> merge_reported_errors(std::vector<RankErrors> by_rank);

}  // namespace zt::launch

// Communicator::split: learning every rank's color and key, and computing the group each
// rank lands in; the backends make the group's communicator (split_group).
#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

#include "comm/communicator.h"
#include "comm/split_requests_internal.h"
#include "core/error.h"
#include "core/tensor.h"

namespace zt::comm {

// Note [Splitting a communicator]
// A split is MPI_Comm_split's: ranks of one color form a group, ordered by (key, rank in
// the parent). The membership is computed here, once, from every rank's request, so each
// backend only connects the group it is given: Gloo rendezvouses a new context under the
// parent's group name + "/split-<index>/color-<color>" (index: the parent's count of splits,
// the same on every rank since all ranks split in the same order), NCCL calls ncclCommSplit
// on the parent (which every parent rank must join, members or not), the single-rank and
// meta communicators make one of their own kind. split(color, key) learns the requests with
// one all_gather on the parent; split(requests) is given them, as when every rank derives
// them from the Topology (the node's ranks, a shard group), which is also the only way the
// meta communicator can split: it plays one rank and has nobody to ask.

std::vector<SplitRequest> split_requests_from_pairs(const std::vector<std::int32_t>& pairs) {
  std::vector<SplitRequest> requests(pairs.size() / 2);
  for (std::size_t r = 0; r < requests.size(); ++r) requests[r] = {pairs[2 * r], pairs[2 * r + 1]};
  return requests;
}

std::string split_group_name(const std::string& parent_group_name, const SplitGroup& group) {
  return parent_group_name + "/split-" + std::to_string(group.index) + "/color-" +
         std::to_string(group.color);
}

std::vector<std::int32_t> Communicator::all_gather_host_words(
    const std::vector<std::int32_t>& mine) {
  const auto words = static_cast<std::int64_t>(mine.size());
  std::vector<std::int32_t> own = mine;
  std::vector<std::int32_t> all(mine.size() * static_cast<std::size_t>(world_size()));
  // all_gather's input is this rank's shard_range of the output: `words` per rank.
  all_gather(Tensor::wrap(own.data(), Shape{words}, DType::kI32),
             Tensor::wrap(all.data(), Shape{words * world_size()}, DType::kI32))
      ->wait();
  return all;
}

std::vector<SplitRequest> Communicator::gather_split_requests(SplitRequest mine) {
  return split_requests_from_pairs(all_gather_host_words({mine.color, mine.key}));
}

std::unique_ptr<Communicator> Communicator::split(int color, int key) {
  ZT_CHECK(color >= 0 || color == kNoColor,
           "split color " + std::to_string(color) + " (>= 0, or kNoColor)");
  return split(gather_split_requests({color, key}));
}

std::unique_ptr<Communicator> Communicator::split(
    const std::vector<SplitRequest>& requests_by_rank) {
  ZT_CHECK(static_cast<int>(requests_by_rank.size()) == world_size(),
           "split with " + std::to_string(requests_by_rank.size()) + " requests for " +
               std::to_string(world_size()) + " ranks");
  const SplitRequest mine = requests_by_rank[static_cast<std::size_t>(rank())];
  SplitGroup group{mine.color, mine.key, {}, -1, splits_.fetch_add(1), requests_by_rank};
  if (mine.color != kNoColor) {
    for (int r = 0; r < world_size(); ++r) {
      if (requests_by_rank[static_cast<std::size_t>(r)].color == mine.color)
        group.members.push_back(r);
    }
    std::stable_sort(group.members.begin(), group.members.end(), [&](int a, int b) {
      return std::tie(requests_by_rank[static_cast<std::size_t>(a)].key, a) <
             std::tie(requests_by_rank[static_cast<std::size_t>(b)].key, b);
    });
    group.rank = static_cast<int>(std::find(group.members.begin(), group.members.end(), rank()) -
                                  group.members.begin());
  }
  std::unique_ptr<Communicator> sub = split_group(group);
  ZT_CHECK((sub != nullptr) == (group.rank >= 0), "split_group's result does not match membership");
  // The group's ranks run where the parent's members do (Note [Counting bytes by node]).
  const std::vector<int> parent_nodes = rank_nodes();
  if (sub != nullptr && !parent_nodes.empty()) {
    std::vector<int> group_nodes;
    for (int member : group.members)
      group_nodes.push_back(parent_nodes[static_cast<std::size_t>(member)]);
    sub->place_ranks(std::move(group_nodes));
  }
  return sub;
}

}  // namespace zt::comm

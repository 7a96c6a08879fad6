// CheckedCommunicator: the fingerprint of each op compared before it is handed on (kEvery) or
// kept for the step's comparison (kStep).
#include "comm/checked_communicator.h"

#include <algorithm>
#include <utility>

#include "comm/split_requests_internal.h"
#include "core/error.h"

namespace zt::comm {
namespace {

// FNV-1a over the words: the step's window in two words.
std::uint64_t window_hash(const std::vector<OpFingerprint>& window) {
  std::uint64_t hash = 1469598103934665603ull;
  for (const OpFingerprint& op : window) {
    for (std::int32_t word : op.words()) {
      hash ^= static_cast<std::uint32_t>(word);
      hash *= 1099511628211ull;
    }
  }
  return hash;
}

std::int32_t word_of(std::uint64_t value, int half) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(value >> (32 * half)));
}

}  // namespace

CheckedCommunicator::CheckedCommunicator(std::unique_ptr<Communicator> inner,
                                         std::shared_ptr<CollectiveCheck> check, std::string group)
    : inner_(std::move(inner)), check_(std::move(check)), group_(std::move(group)) {
  ZT_CHECK(inner_ != nullptr && check_ != nullptr, "a checked communicator needs both parts");
  if (std::vector<int> nodes = inner_->rank_nodes(); !nodes.empty()) place_ranks(std::move(nodes));
  check_->add(this);
}

CheckedCommunicator::~CheckedCommunicator() { check_->remove(this); }

void CheckedCommunicator::admit(CollectiveKind kind, std::int64_t numel, DType dtype, int root,
                                int reduce) {
  OpFingerprint op;
  op.kind = kind;
  op.numel = numel;
  op.dtype = dtype;
  op.root = root;
  op.reduce = reduce;
  op.step = check_->step();
  {
    const std::lock_guard lock(mutex_);
    op.index = next_index_++;
    if (check_->mode() == CollectiveCheckMode::kStep) {
      window_.push_back(op);
      return;
    }
  }
  const auto mine = op.words();
  const std::vector<std::int32_t> all =
      all_gather_host_words_of(*inner_, {mine.begin(), mine.end()});
  std::vector<OpFingerprint> theirs;
  theirs.reserve(static_cast<std::size_t>(world_size()));
  bool same = true;
  for (int r = 0; r < world_size(); ++r) {
    theirs.push_back(OpFingerprint::from_words(all.data() + r * OpFingerprint::kWords));
    same = same && theirs.back() == op;
  }
  if (same) return;
  std::vector<const OpFingerprint*> by_rank;
  for (const OpFingerprint& other : theirs) by_rank.push_back(&other);
  throw CommError(collective_mismatch_message(group_, CollectiveCheckMode::kEvery, by_rank));
}

void CheckedCommunicator::check_window() {
  std::vector<OpFingerprint> window;
  {
    const std::lock_guard lock(mutex_);
    window.swap(window_);
  }
  const auto count = static_cast<std::uint64_t>(window.size());
  const std::uint64_t hash = window_hash(window);
  const std::vector<std::int32_t> headers = all_gather_host_words_of(
      *inner_, {word_of(count, 0), word_of(count, 1), word_of(hash, 0), word_of(hash, 1)});
  const int n = world_size();
  bool same = true;
  std::uint64_t longest = 0;
  for (int r = 0; r < n; ++r) {
    const std::int32_t* header = headers.data() + 4 * r;
    same = same && std::equal(header, header + 4, headers.data());
    const std::uint64_t their_count =
        (static_cast<std::uint64_t>(static_cast<std::uint32_t>(header[1])) << 32) |
        static_cast<std::uint32_t>(header[0]);
    longest = std::max(longest, their_count);
  }
  if (same) return;
  // The lists themselves, padded to the longest (a kind no op has marks the padding), to name
  // the first op that differs.
  std::vector<std::int32_t> mine;
  mine.reserve(static_cast<std::size_t>(longest) * OpFingerprint::kWords);
  for (std::uint64_t i = 0; i < longest; ++i) {
    if (i < count) {
      const auto words = window[i].words();
      mine.insert(mine.end(), words.begin(), words.end());
    } else {
      mine.insert(mine.end(), OpFingerprint::kWords, -1);
    }
  }
  const std::vector<std::int32_t> lists = all_gather_host_words_of(*inner_, mine);
  const std::size_t stride = static_cast<std::size_t>(longest) * OpFingerprint::kWords;
  for (std::uint64_t i = 0; i < longest; ++i) {
    std::vector<OpFingerprint> ops(static_cast<std::size_t>(n));
    std::vector<const OpFingerprint*> by_rank(static_cast<std::size_t>(n), nullptr);
    bool differs = false;
    for (int r = 0; r < n; ++r) {
      const std::int32_t* words =
          lists.data() + static_cast<std::size_t>(r) * stride + i * OpFingerprint::kWords;
      if (words[2] != -1) {
        ops[static_cast<std::size_t>(r)] = OpFingerprint::from_words(words);
        by_rank[static_cast<std::size_t>(r)] = &ops[static_cast<std::size_t>(r)];
      }
      const OpFingerprint* first = by_rank[0];
      const OpFingerprint* this_one = by_rank[static_cast<std::size_t>(r)];
      if ((first == nullptr) != (this_one == nullptr) ||
          (first != nullptr && this_one != nullptr && !(*first == *this_one))) {
        differs = true;
      }
    }
    if (differs) {
      throw CommError(collective_mismatch_message(group_, CollectiveCheckMode::kStep, by_rank));
    }
  }
  throw CommError("collective check (comm.check_collectives = \"step\"): the ranks of group " +
                  group_ + " disagree on the step's collectives, but no op differs");
}

std::vector<std::int32_t> CheckedCommunicator::all_gather_host_words(
    const std::vector<std::int32_t>& mine) {
  return all_gather_host_words_of(*inner_, mine);
}

std::unique_ptr<Communicator> CheckedCommunicator::split_group(const SplitGroup& group) {
  std::unique_ptr<Communicator> inner_group = inner_->split(group.requests);
  if (inner_group == nullptr) return nullptr;
  return std::make_unique<CheckedCommunicator>(std::move(inner_group), check_,
                                               split_group_name(group_, group));
}

void CheckedCommunicator::begin_group() {
  if (check_->mode() == CollectiveCheckMode::kStep) begin_group_of(*inner_);
}

void CheckedCommunicator::end_group() {
  if (check_->mode() == CollectiveCheckMode::kStep) end_group_of(*inner_);
}

std::shared_ptr<Work> CheckedCommunicator::all_reduce(Tensor tensor, ReduceOp op) {
  admit(CollectiveKind::kAllReduce, tensor.numel(), tensor.dtype(), -1, static_cast<int>(op));
  return inner_->all_reduce(std::move(tensor), op);
}

std::shared_ptr<Work> CheckedCommunicator::reduce_scatter(Tensor input, Tensor output,
                                                          ReduceOp op) {
  admit(CollectiveKind::kReduceScatter, input.numel(), input.dtype(), -1, static_cast<int>(op));
  return inner_->reduce_scatter(std::move(input), std::move(output), op);
}

std::shared_ptr<Work> CheckedCommunicator::all_gather(Tensor input, Tensor output) {
  admit(CollectiveKind::kAllGather, output.numel(), output.dtype(), -1);
  return inner_->all_gather(std::move(input), std::move(output));
}

std::shared_ptr<Work> CheckedCommunicator::all_to_all(Tensor input, Tensor output) {
  admit(CollectiveKind::kAllToAll, input.numel(), input.dtype(), -1);
  return inner_->all_to_all(std::move(input), std::move(output));
}

std::shared_ptr<Work> CheckedCommunicator::broadcast(Tensor tensor, int root) {
  admit(CollectiveKind::kBroadcast, tensor.numel(), tensor.dtype(), root);
  return inner_->broadcast(std::move(tensor), root);
}

std::shared_ptr<Work> CheckedCommunicator::barrier() {
  admit(CollectiveKind::kBarrier, 0, DType::kF32, -1);
  return inner_->barrier();
}

}  // namespace zt::comm

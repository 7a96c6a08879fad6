// CollectiveCheck: fingerprints as words, the rank's checked communicators in order, and the
// message naming who issued what.
#include "comm/collective_check.h"

#include <algorithm>
#include <map>

#include "comm/checked_communicator.h"
#include "comm/gloo/collective_request.h"
#include "core/memory_tracker.h"

namespace zt::comm {
namespace {

std::int32_t low_word(std::uint64_t value) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(value & 0xffffffffu));
}
std::int32_t high_word(std::uint64_t value) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(value >> 32));
}
std::uint64_t from_halves(std::int32_t low, std::int32_t high) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(high)) << 32) |
         static_cast<std::uint64_t>(static_cast<std::uint32_t>(low));
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) text += i + 1 == ranks.size() ? " and " : ", ";
    text += std::to_string(ranks[i]);
  }
  return text;
}

}  // namespace

std::string_view collective_check_mode_name(CollectiveCheckMode mode) {
  switch (mode) {
    case CollectiveCheckMode::kOff:
      return "off";
    case CollectiveCheckMode::kStep:
      return "step";
    case CollectiveCheckMode::kEvery:
      return "every";
  }
  return "unknown";
}

std::array<std::int32_t, OpFingerprint::kWords> OpFingerprint::words() const {
  const auto n = static_cast<std::uint64_t>(numel);
  const auto s = static_cast<std::uint64_t>(step);
  return {low_word(index),
          high_word(index),
          static_cast<std::int32_t>(kind),
          low_word(n),
          high_word(n),
          static_cast<std::int32_t>(dtype),
          root,
          reduce,
          static_cast<std::int32_t>(low_word(s))};
}

OpFingerprint OpFingerprint::from_words(const std::int32_t* words) {
  OpFingerprint op;
  op.index = from_halves(words[0], words[1]);
  op.kind = static_cast<CollectiveKind>(static_cast<std::uint8_t>(words[2]));
  op.numel = static_cast<std::int64_t>(from_halves(words[3], words[4]));
  op.dtype = static_cast<DType>(static_cast<std::uint8_t>(words[5]));
  op.root = words[6];
  op.reduce = words[7];
  op.step = words[8];
  return op;
}

std::string OpFingerprint::describe() const {
  std::string text = std::string(collective_name(kind)) + " #" + std::to_string(index) + " (" +
                     std::to_string(numel) + " " + std::string(dtype_name(dtype));
  if (root >= 0) text += ", root " + std::to_string(root);
  if (reduce >= 0) {
    text += ", " +
            std::string(reduce_op_name(static_cast<ReduceOp>(static_cast<std::uint8_t>(reduce))));
  }
  return text + ", step " + std::to_string(step) + ")";
}

CollectiveCheck::CollectiveCheck(CollectiveCheckMode mode, const MemoryTracker* phases)
    : mode_(mode), phases_(phases) {}

std::int64_t CollectiveCheck::step() const { return phases_ == nullptr ? 0 : phases_->step(); }

void CollectiveCheck::add(CheckedCommunicator* member) {
  const std::lock_guard lock(mutex_);
  members_.push_back(member);
}

void CollectiveCheck::remove(CheckedCommunicator* member) {
  const std::lock_guard lock(mutex_);
  members_.erase(std::remove(members_.begin(), members_.end(), member), members_.end());
}

void CollectiveCheck::end_step() {
  if (mode_ != CollectiveCheckMode::kStep) return;
  std::vector<CheckedCommunicator*> members;
  {
    const std::lock_guard lock(mutex_);
    members = members_;
  }
  for (CheckedCommunicator* member : members) member->check_window();
}

std::string collective_mismatch_message(const std::string& group, CollectiveCheckMode mode,
                                        const std::vector<const OpFingerprint*>& by_rank) {
  // Ranks grouped by what they issued, in the order each kind first appears.
  std::vector<std::pair<const OpFingerprint*, std::vector<int>>> sides;
  for (std::size_t r = 0; r < by_rank.size(); ++r) {
    const OpFingerprint* op = by_rank[r];
    auto same = std::find_if(sides.begin(), sides.end(), [&](const auto& side) {
      return side.first == nullptr ? op == nullptr : op != nullptr && *side.first == *op;
    });
    if (same == sides.end()) {
      sides.push_back({op, {}});
      same = sides.end() - 1;
    }
    same->second.push_back(static_cast<int>(r));
  }
  std::string text = "collective check (comm.check_collectives = \"" +
                     std::string(collective_check_mode_name(mode)) + "\"): the ranks of group " +
                     group + " issued different collectives: ";
  for (std::size_t i = 0; i < sides.size(); ++i) {
    if (i > 0) text += "; ";
    text += ranks_text(sides[i].second) + " " +
            (sides[i].first == nullptr ? std::string("issued nothing more")
                                       : sides[i].first->describe());
  }
  text += mode == CollectiveCheckMode::kEvery
              ? ". Stopped before the op's data moved."
              : ". Found at the end of the step (\"every\" stops before the op runs).";
  return text;
}

}  // namespace zt::comm

// OpCounters: bytes sent to each peer and ops completed per collective kind, written by the
// comm thread and read from any thread while ops run (relaxed atomics: each counter is
// independent). Communicator::counters() sorts the bytes by node (Note [Counting bytes by
// node]).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "core/error.h"

namespace zt::comm {

// Payload bytes one op sent to one peer (its rank in the communicator).
struct PeerBytes {
  int peer = 0;
  std::uint64_t bytes = 0;
};

class OpCounters {
 public:
  explicit OpCounters(int world_size) : bytes_to_rank_(static_cast<std::size_t>(world_size)) {}

  // Called once per completed op, before its Work completes, so a caller that waited on the
  // Work sees the op counted (Work's mutex orders the two). `sent`: what it sent to whom.
  void add(CollectiveKind kind, std::initializer_list<PeerBytes> sent) {
    add(kind, sent.begin(), sent.end());
  }
  void add(CollectiveKind kind, const std::vector<PeerBytes>& sent) {
    add(kind, sent.data(), sent.data() + sent.size());
  }

  PeerCounters snapshot() const {
    PeerCounters counters;
    counters.bytes_to_rank.resize(bytes_to_rank_.size());
    for (std::size_t peer = 0; peer < bytes_to_rank_.size(); ++peer) {
      for (std::size_t k = 0; k < kCollectiveKindCount; ++k) {
        counters.bytes_to_rank[peer][k] = bytes_to_rank_[peer][k].load(std::memory_order_relaxed);
      }
    }
    for (std::size_t k = 0; k < kCollectiveKindCount; ++k) {
      counters.ops[k] = ops_[k].load(std::memory_order_relaxed);
    }
    return counters;
  }

 private:
  void add(CollectiveKind kind, const PeerBytes* begin, const PeerBytes* end) {
    const auto index = static_cast<std::size_t>(kind);
    for (const PeerBytes* sent = begin; sent != end; ++sent) {
      ZT_CHECK(sent->peer >= 0 && static_cast<std::size_t>(sent->peer) < bytes_to_rank_.size(),
               "bytes counted for peer " + std::to_string(sent->peer));
      bytes_to_rank_[static_cast<std::size_t>(sent->peer)][index].fetch_add(
          sent->bytes, std::memory_order_relaxed);
    }
    ops_[index].fetch_add(1, std::memory_order_relaxed);
  }

  // [peer][kind]; sized at construction, never resized (atomics do not move).
  std::vector<std::array<std::atomic<std::uint64_t>, kCollectiveKindCount>> bytes_to_rank_;
  std::array<std::atomic<std::uint64_t>, kCollectiveKindCount> ops_{};
};

}  // namespace zt::comm

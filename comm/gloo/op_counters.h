// OpCounters: bytes sent and ops completed per collective kind, written by the comm thread
// and read from any thread while ops run (relaxed atomics: each counter is independent).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "comm/communicator.h"

namespace zt::comm {

class OpCounters {
 public:
  // Called once per completed op, before its Work completes, so a caller that waited on the
  // Work sees the op counted (Work's mutex orders the two).
  void add(CollectiveKind kind, std::uint64_t bytes_sent) {
    const auto index = static_cast<std::size_t>(kind);
    bytes_sent_[index].fetch_add(bytes_sent, std::memory_order_relaxed);
    ops_[index].fetch_add(1, std::memory_order_relaxed);
  }

  CommCounters snapshot() const {
    CommCounters counters;
    for (std::size_t i = 0; i < kCollectiveKindCount; ++i) {
      counters.bytes_sent[i] = bytes_sent_[i].load(std::memory_order_relaxed);
      counters.ops[i] = ops_[i].load(std::memory_order_relaxed);
    }
    return counters;
  }

 private:
  std::array<std::atomic<std::uint64_t>, kCollectiveKindCount> bytes_sent_{};
  std::array<std::atomic<std::uint64_t>, kCollectiveKindCount> ops_{};
};

}  // namespace zt::comm

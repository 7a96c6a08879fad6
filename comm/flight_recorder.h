// FlightRecorder: the last collectives a rank's communicators were given, in a bounded ring,
// so that a hang or a failure can be read afterwards: which op each rank was in, which it had
// finished, and what the trainer was doing (Note [The flight recorder]).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "core/dtype.h"

namespace zt {
class MemoryTracker;
}

namespace zt::comm {

// Note [The flight recorder]
// Every communicator of a rank (its lanes and their splits share one recorder through
// CommOptions::flight_recorder) records each op when it is submitted, when its queue starts
// it and when it ends, into a ring of the last `capacity` ops of the rank. An entry is what a
// diagnosis compares across ranks: the communicator's group and its sequence number there
// (the same op has the same pair on every member), the kind, element count, dtype and root,
// and the trainer's step and phase when the op was submitted (read from the rank's memory
// tracker, where the trainer keeps them). Recording takes one lock and no allocation but the
// group and phase strings' copies, against a collective's microseconds to seconds; the ring
// is written out (to_json) when the rank stops on a communication error, so the file shows
// the op it was stuck in as "running" or "queued" and the ones before it as "completed".
enum class FlightState : std::uint8_t { kQueued, kRunning, kCompleted, kFailed };
std::string_view flight_state_name(FlightState state);

struct FlightEntry {
  std::uint64_t id = 0;               // the recorder's count of ops before this one
  std::string group;                  // CommOptions::group_name of its communicator
  std::uint64_t sequence_number = 0;  // on that communicator, from 0
  CollectiveKind kind = CollectiveKind::kBarrier;
  std::int64_t numel = 0;  // elements of the op's larger tensor
  DType dtype = DType::kF32;
  int root = -1;          // broadcast's; -1 for the others
  std::int64_t step = 0;  // the trainer's, when submitted (0: initialization)
  std::string phase;      // the trainer's, when submitted
  double enqueued_s = 0;  // seconds since the recorder was made
  double started_s = -1;  // -1: not yet
  double ended_s = -1;    // -1: not yet
  FlightState state = FlightState::kQueued;
  std::string error;  // kFailed: why
};

class FlightRecorder {
 public:
  static constexpr std::size_t kDefaultCapacity = 2048;

  // `rank` is the rank in the world and `world_size` the world's (0: not known), for the
  // dump; `phases` (null: none) is where the step and phase are read from; it must outlive
  // the recorder.
  explicit FlightRecorder(int rank, std::size_t capacity = kDefaultCapacity,
                          const MemoryTracker* phases = nullptr, int world_size = 0);
  FlightRecorder(const FlightRecorder&) = delete;
  FlightRecorder& operator=(const FlightRecorder&) = delete;

  int rank() const { return rank_; }
  std::size_t capacity() const { return capacity_; }

  // Records a submitted op; returns its id for the calls below.
  std::uint64_t enqueued(const std::string& group, std::uint64_t sequence_number,
                         CollectiveKind kind, std::int64_t numel, DType dtype, int root);
  void started(std::uint64_t id);
  // `error` empty: completed; else failed with it.
  void ended(std::uint64_t id, const std::string& error = {});

  // The ops still in the ring, oldest first.
  std::vector<FlightEntry> entries() const;
  // How many ops were recorded in all (those before the ring's oldest were overwritten).
  std::uint64_t recorded() const;
  // The dump: {"rank", "world_size" (when known), "capacity", "recorded", "reason",
  // "entries": [...]} as JSON.
  std::string to_json(const std::string& reason) const;

 private:
  double now_s() const;
  // The entry of `id` if the ring still holds it; null otherwise. Needs mutex_.
  FlightEntry* slot(std::uint64_t id);

  const int rank_;
  const int world_size_;
  const std::size_t capacity_;
  const MemoryTracker* const phases_;
  const std::chrono::steady_clock::time_point epoch_ = std::chrono::steady_clock::now();
  mutable std::mutex mutex_;  // guards ring_ and next_id_
  std::vector<FlightEntry> ring_;
  std::uint64_t next_id_ = 0;
};

}  // namespace zt::comm

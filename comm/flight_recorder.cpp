// The flight recorder's ring and its JSON dump.
#include "comm/flight_recorder.h"

#include <cstdio>

#include "core/error.h"
#include "core/json_string.h"
#include "core/memory_tracker.h"

namespace zt::comm {
namespace {

void append_seconds(std::string& out, double seconds) {
  if (seconds < 0) {
    out += "null";
    return;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.6f", seconds);
  out += text;
}

}  // namespace

std::string_view flight_state_name(FlightState state) {
  switch (state) {
    case FlightState::kQueued:
      return "queued";
    case FlightState::kRunning:
      return "running";
    case FlightState::kCompleted:
      return "completed";
    case FlightState::kFailed:
      return "failed";
  }
  return "?";
}

FlightRecorder::FlightRecorder(int rank, std::size_t capacity, const MemoryTracker* phases,
                               int world_size)
    : rank_(rank), world_size_(world_size), capacity_(capacity), phases_(phases) {
  ZT_CHECK(capacity_ > 0, "a flight recorder holds at least one op");
  ring_.resize(capacity_);
}

double FlightRecorder::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_).count();
}

std::uint64_t FlightRecorder::enqueued(const std::string& group, std::uint64_t sequence_number,
                                       CollectiveKind kind, std::int64_t numel, DType dtype,
                                       int root) {
  // Read before the lock: the tracker has a lock of its own.
  const std::int64_t step = phases_ != nullptr ? phases_->step() : 0;
  std::string phase = phases_ != nullptr ? phases_->phase() : std::string();
  const double now = now_s();
  std::lock_guard lock(mutex_);
  const std::uint64_t id = next_id_++;
  FlightEntry& entry = ring_[id % capacity_];
  entry.id = id;
  entry.group = group;
  entry.sequence_number = sequence_number;
  entry.kind = kind;
  entry.numel = numel;
  entry.dtype = dtype;
  entry.root = root;
  entry.step = step;
  entry.phase = std::move(phase);
  entry.enqueued_s = now;
  entry.started_s = -1;
  entry.ended_s = -1;
  entry.state = FlightState::kQueued;
  entry.error.clear();
  return id;
}

FlightEntry* FlightRecorder::slot(std::uint64_t id) {
  FlightEntry& entry = ring_[id % capacity_];
  return id < next_id_ && entry.id == id ? &entry : nullptr;
}

void FlightRecorder::started(std::uint64_t id) {
  const double now = now_s();
  std::lock_guard lock(mutex_);
  if (FlightEntry* entry = slot(id)) {
    entry->started_s = now;
    entry->state = FlightState::kRunning;
  }
}

void FlightRecorder::ended(std::uint64_t id, const std::string& error) {
  const double now = now_s();
  std::lock_guard lock(mutex_);
  if (FlightEntry* entry = slot(id)) {
    entry->ended_s = now;
    entry->state = error.empty() ? FlightState::kCompleted : FlightState::kFailed;
    entry->error = error;
  }
}

std::vector<FlightEntry> FlightRecorder::entries() const {
  std::lock_guard lock(mutex_);
  std::vector<FlightEntry> out;
  const std::uint64_t first = next_id_ > capacity_ ? next_id_ - capacity_ : 0;
  out.reserve(static_cast<std::size_t>(next_id_ - first));
  for (std::uint64_t id = first; id < next_id_; ++id) out.push_back(ring_[id % capacity_]);
  return out;
}

std::uint64_t FlightRecorder::recorded() const {
  std::lock_guard lock(mutex_);
  return next_id_;
}

std::string FlightRecorder::to_json(const std::string& reason) const {
  const std::vector<FlightEntry> ops = entries();
  std::string out = "{\n  \"rank\": " + std::to_string(rank_);
  if (world_size_ > 0) out += ",\n  \"world_size\": " + std::to_string(world_size_);
  out += ",\n  \"capacity\": " + std::to_string(capacity_) +
         ",\n  \"recorded\": " + std::to_string(recorded()) + ",\n  \"reason\": ";
  out += json_string(reason);
  out += ",\n  \"entries\": [";
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const FlightEntry& e = ops[i];
    out += i == 0 ? "\n    {" : ",\n    {";
    out += "\"id\": " + std::to_string(e.id) + ", \"group\": ";
    out += json_string(e.group);
    out += ", \"seq\": " + std::to_string(e.sequence_number) + ", \"kind\": ";
    out += json_string(collective_name(e.kind));
    out += ", \"numel\": " + std::to_string(e.numel) + ", \"dtype\": ";
    out += json_string(dtype_name(e.dtype));
    out += ", \"root\": " + std::to_string(e.root) + ", \"step\": " + std::to_string(e.step) +
           ", \"phase\": ";
    out += json_string(e.phase);
    out += ", \"enqueued_s\": ";
    append_seconds(out, e.enqueued_s);
    out += ", \"started_s\": ";
    append_seconds(out, e.started_s);
    out += ", \"ended_s\": ";
    append_seconds(out, e.ended_s);
    out += ", \"state\": ";
    out += json_string(flight_state_name(e.state));
    if (!e.error.empty()) {
      out += ", \"error\": ";
      out += json_string(e.error);
    }
    out += "}";
  }
  out += ops.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

}  // namespace zt::comm

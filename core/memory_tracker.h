// MemoryTracker: every byte a rank allocates on a device, by category, current and peak,
// with the phase the peak happened in and an optional capacity. One per device.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/device.h"
#include "core/device/device_allocator.h"
#include "core/error.h"

namespace zt {

enum class MemoryCategory : std::uint8_t {
  kParameters,
  kGradients,
  kOptimizerStates,
  kActivations,
  kCommBuffers,
  kWorkspace,
  kHostOffload,
};
inline constexpr std::size_t kMemoryCategoryCount = 7;
std::string_view memory_category_name(MemoryCategory category);

using CategoryBytes = std::array<std::int64_t, kMemoryCategoryCount>;

struct MemorySnapshot {
  CategoryBytes current_bytes{};
  CategoryBytes peak_bytes{};                                  // each category's own peak
  std::array<std::string, kMemoryCategoryCount> peak_phase{};  // the phase of each peak
  CategoryBytes at_total_peak_bytes{};  // what was live when the total peaked
  std::int64_t total_current_bytes = 0;
  std::int64_t total_peak_bytes = 0;
  std::string total_peak_phase;     // the phase label when the total peaked
  std::int64_t capacity_bytes = 0;  // 0 = unlimited
};

// One change of a tracker's bytes, as the memory-profiling mode records it.
struct MemoryEvent {
  double time_s = 0;      // since start_timeline()
  std::int64_t step = 0;  // 0: initialization; then the step being trained
  std::string phase;      // the tracker's phase label then
  MemoryCategory category = MemoryCategory::kWorkspace;
  std::int64_t delta_bytes = 0;     // + allocated (or recorded), - freed
  std::int64_t category_bytes = 0;  // the category's live bytes after it
  std::int64_t total_bytes = 0;     // every category's live bytes after it
  std::string name;                 // ScopedAllocationName's, "" when none
};

// Names the allocations this thread makes while it lives ("flat parameters", "gradient
// shard"), for the memory profile. Nests: the innermost name wins. `name` must outlive the
// allocations made under it (a string literal): the tracker keeps the pointer, not a copy.
class ScopedAllocationName {
 public:
  explicit ScopedAllocationName(const char* name);
  ~ScopedAllocationName();
  ScopedAllocationName(const ScopedAllocationName&) = delete;
  ScopedAllocationName& operator=(const ScopedAllocationName&) = delete;
  static const char* current();  // "" outside any

 private:
  const char* previous_;
};

class MemoryTracker;
struct LiveAllocationRow;  // core/out_of_memory_report.h

// An allocation made through a tracker; frees and un-records itself when destroyed.
class Allocation {
 public:
  Allocation() = default;
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;
  Allocation(Allocation&& other) noexcept;
  Allocation& operator=(Allocation&& other) noexcept;
  ~Allocation();

  void* data() const { return data_; }
  std::int64_t bytes() const { return bytes_; }
  MemoryCategory category() const { return category_; }

 private:
  friend class MemoryTracker;
  Allocation(MemoryTracker* tracker, void* data, std::int64_t bytes, MemoryCategory category,
             std::uint32_t live_slot)
      : tracker_(tracker), data_(data), bytes_(bytes), category_(category), live_slot_(live_slot) {}
  void release() noexcept;

  MemoryTracker* tracker_ = nullptr;
  void* data_ = nullptr;
  std::int64_t bytes_ = 0;
  MemoryCategory category_ = MemoryCategory::kWorkspace;
  std::uint32_t live_slot_ = 0;  // its row in the tracker's live table (Note [Live slots])
};

// Note [Host memory]
// A CPU allocation is refused before it is made when it would take this tracker past the
// host's physical memory: with Linux's overcommit a huge malloc often succeeds and the
// zero-fill that follows gets the process (or a neighbour) OOM-killed instead of failing
// with a message. What the refusal says is what a device-capacity refusal says: category,
// bytes, phase, live bytes per category, and what to try (ZeRO stage 3 over more ranks or
// a smaller model).

// The host's physical memory in bytes (0 when the system does not say).
std::int64_t host_physical_memory_bytes();

// Whether a new allocation is zero-filled: only where the math reads it before writing.
enum class Fill : std::uint8_t { kZero, kUninitialized };

// Thread-safe: comm and copy threads allocate too. All counters are guarded by mutex_.
class MemoryTracker {
 public:
  // Alignment of every allocation: a cache line, and enough for any SIMD load.
  static constexpr std::size_t kAlignment = 64;

  // A tracker over the process's host allocator (device must be the CPU's).
  explicit MemoryTracker(Device device, std::int64_t capacity_bytes = 0);
  // A tracker over `allocator`'s device; `allocator` outlives the tracker.
  explicit MemoryTracker(DeviceAllocator& allocator, std::int64_t capacity_bytes = 0);
  MemoryTracker(const MemoryTracker&) = delete;
  MemoryTracker& operator=(const MemoryTracker&) = delete;
  ~MemoryTracker();

  // Allocates `bytes` tagged with `category`, zero-filled unless `fill` says otherwise.
  // Throws OutOfMemoryError when the capacity would be exceeded, when host memory would be
  // (Note [Host memory]), or when the allocator refuses, listing what is live per category,
  // the allocator's largest blocks and what to try.
  Allocation allocate(std::int64_t bytes, MemoryCategory category, Fill fill = Fill::kZero);

  // Counts bytes that live elsewhere (e.g. memory a library allocated) against a category.
  void record(MemoryCategory category, std::int64_t bytes);
  void unrecord(MemoryCategory category, std::int64_t bytes) noexcept;

  // Labels what the rank is doing ("forward block 3"), so the peak can say when it happened.
  void set_phase(std::string phase);
  std::string phase() const;

  // The error for a std::bad_alloc from memory outside the tracker (a library, a vector):
  // the same explanation as a tracked refusal, with the phase and what is live.
  OutOfMemoryError untracked_allocation_failed() const;

  // Text appended to out-of-memory errors (the estimator's advice, set by the runtime).
  void set_oom_advice(std::function<std::string()> advice);

  MemorySnapshot snapshot() const;
  std::int64_t current_bytes(MemoryCategory category) const;
  std::int64_t peak_bytes(MemoryCategory category) const;
  std::int64_t total_current_bytes() const;
  std::int64_t total_peak_bytes() const;
  void reset_peaks();  // peaks restart from what is live now

  // The memory profile: from start_timeline() every allocation and free is recorded, up to
  // `max_events` (then timeline_truncated() and recording stops), until stop_timeline().
  // Off by default: then recording costs one branch.
  void start_timeline(std::size_t max_events);
  void stop_timeline();
  std::vector<MemoryEvent> timeline() const;
  bool timeline_truncated() const;
  // The step the events belong to (the trainer sets it as each step starts).
  void set_step(std::int64_t step);
  std::int64_t step() const;

  const Device& device() const { return device_; }
  DeviceAllocator& allocator() const { return allocator_; }
  std::int64_t capacity_bytes() const { return capacity_bytes_; }

 private:
  friend class Allocation;
  void free_allocation(void* data, std::int64_t bytes, MemoryCategory category,
                       std::uint32_t live_slot) noexcept;
  // Throws OutOfMemoryError when `bytes` more would pass the capacity or the host's memory.
  void check_room_locked(MemoryCategory category, std::int64_t bytes) const;
  void add_locked(MemoryCategory category, std::int64_t bytes);
  void subtract_locked(MemoryCategory category, std::int64_t bytes) noexcept;
  std::string out_of_memory_message(MemoryCategory category, std::int64_t bytes) const;
  // "allocating 3 GiB of parameters during 'x'": the start of every refusal.
  std::string allocation_description(MemoryCategory category, std::int64_t bytes) const;
  // The whole error text after `headline` (what failed): what is live, the allocator's
  // blocks, the largest live allocations, the advice. Called with mutex_ held.
  std::string report_locked(std::string headline, bool host_advice) const;

  const Device device_;
  DeviceAllocator& allocator_;
  const std::int64_t capacity_bytes_;
  // The host's physical memory, read once (sysconf costs a system call): 0 when unknown or
  // when the tracker is not the host's (Note [Host memory]).
  const std::int64_t host_memory_bytes_;
  mutable std::mutex mutex_;
  MemorySnapshot state_;  // guarded by mutex_ (capacity_bytes mirrors capacity_bytes_)
  // The phase label, shared with the live allocations made in it: recording one copies a
  // pointer, not the text. Guarded by mutex_; never null.
  std::shared_ptr<const std::string> phase_;
  std::function<std::string()> oom_advice_;  // guarded by mutex_
  // The timeline, guarded by mutex_.
  bool recording_ = false;
  bool truncated_ = false;
  std::size_t max_events_ = 0;
  std::int64_t step_ = 0;
  std::chrono::steady_clock::time_point timeline_start_;
  std::vector<MemoryEvent> events_;
  void record_event_locked(MemoryCategory category, std::int64_t delta);
  // Note [Live slots]
  // Every live allocation, for the largest-tensor list of out-of-memory errors, in a table
  // whose rows are reused: an allocation takes a free row (growing the table only past the
  // most allocations ever live at once) and gives it back when freed, and its Allocation
  // carries the row's index. A training step's allocations therefore reach neither the heap
  // nor a hash map once the first step has sized the table. Guarded by mutex_.
  struct LiveAllocation {
    std::int64_t bytes = -1;  // -1: the row is free
    MemoryCategory category = MemoryCategory::kWorkspace;
    const char* name = "";                     // a ScopedAllocationName's (a literal)
    std::shared_ptr<const std::string> phase;  // phase_ when it was made
  };
  std::vector<LiveAllocation> live_;
  std::vector<std::uint32_t> free_live_slots_;  // rows of live_ that are free
  // The row for a new allocation; throws std::bad_alloc only while the table grows.
  std::uint32_t take_live_slot_locked(std::int64_t bytes, MemoryCategory category);
  void give_back_live_slot_locked(std::uint32_t slot) noexcept;
  std::vector<LiveAllocationRow> largest_live_locked() const;
};

}  // namespace zt

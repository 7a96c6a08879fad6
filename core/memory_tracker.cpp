// MemoryTracker accounting, aligned host allocation and the out-of-memory report.
#include "core/memory_tracker.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "core/config/byte_size.h"
#include "core/device/cpu_allocator.h"
#include "core/error.h"
#include "core/out_of_memory_report.h"

namespace zt {

std::string_view memory_category_name(MemoryCategory category) {
  switch (category) {
    case MemoryCategory::kParameters:
      return "parameters";
    case MemoryCategory::kGradients:
      return "gradients";
    case MemoryCategory::kOptimizerStates:
      return "optimizer_states";
    case MemoryCategory::kActivations:
      return "activations";
    case MemoryCategory::kCommBuffers:
      return "comm_buffers";
    case MemoryCategory::kWorkspace:
      return "workspace";
    case MemoryCategory::kHostOffload:
      return "host_offload";
  }
  return "unknown";
}

Allocation::Allocation(Allocation&& other) noexcept
    : tracker_(std::exchange(other.tracker_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      category_(other.category_),
      live_slot_(other.live_slot_) {}

Allocation& Allocation::operator=(Allocation&& other) noexcept {
  if (this != &other) {
    release();
    tracker_ = std::exchange(other.tracker_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    category_ = other.category_;
    live_slot_ = other.live_slot_;
  }
  return *this;
}

Allocation::~Allocation() { release(); }

void Allocation::release() noexcept {
  if (tracker_ != nullptr) tracker_->free_allocation(data_, bytes_, category_, live_slot_);
  tracker_ = nullptr;
  data_ = nullptr;
  bytes_ = 0;
}

namespace {

std::int64_t host_memory_limit(const Device& device) {
  const bool host = device.kind == DeviceKind::kCpu && !device.meta;  // a meta device holds nothing
  return host ? host_physical_memory_bytes() : 0;
}

}  // namespace

MemoryTracker::MemoryTracker(Device device, std::int64_t capacity_bytes)
    : device_(device),
      allocator_(host_allocator()),
      capacity_bytes_(capacity_bytes),
      host_memory_bytes_(host_memory_limit(device)),
      phase_(std::make_shared<const std::string>()) {
  ZT_CHECK(device.kind == DeviceKind::kCpu,
           "a tracker for " + device.to_string() + " needs its device's allocator");
  ZT_CHECK(capacity_bytes >= 0, "negative memory capacity");
  state_.capacity_bytes = capacity_bytes;
}

MemoryTracker::MemoryTracker(DeviceAllocator& allocator, std::int64_t capacity_bytes)
    : device_(allocator.device()),
      allocator_(allocator),
      capacity_bytes_(capacity_bytes),
      host_memory_bytes_(host_memory_limit(allocator.device())),
      phase_(std::make_shared<const std::string>()) {
  ZT_CHECK(capacity_bytes >= 0, "negative memory capacity");
  state_.capacity_bytes = capacity_bytes;
}

MemoryTracker::~MemoryTracker() = default;

std::int64_t host_physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_bytes = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0) return 0;
  return static_cast<std::int64_t>(pages) * page_bytes;
}

namespace {

constexpr const char* kHostAdvice =
    "Try zero.stage = 3 over more ranks (it divides parameters, gradients and optimizer "
    "states among them), bf16 precision, a smaller model or micro-batch, or a host with "
    "more memory.";

// Physical memory is never a round number: "23.5 GiB", not "24683584 KiB".
std::string approximate_bytes(std::int64_t bytes) {
  if (bytes < (std::int64_t{1} << 30)) return format_byte_size(bytes);
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  return text;
}

}  // namespace

Allocation MemoryTracker::allocate(std::int64_t bytes, MemoryCategory category, Fill fill) {
  ZT_CHECK(bytes >= 0, "negative allocation size");
  // One lock for the checks, the counters, the profile's event and the live row: the
  // allocator, which may reach the system, is asked outside it.
  std::uint32_t slot = 0;
  {
    std::lock_guard lock(mutex_);
    check_room_locked(category, bytes);  // throws before anything is counted or allocated
    add_locked(category, bytes);
    if (recording_) record_event_locked(category, bytes);
    if (bytes == 0) return Allocation(this, nullptr, 0, category, 0);
    try {
      slot = take_live_slot_locked(bytes, category);
    } catch (...) {  // no room for the row: nothing was allocated yet
      subtract_locked(category, bytes);
      throw;
    }
  }
  const auto undo = [&]() noexcept {
    std::lock_guard lock(mutex_);
    give_back_live_slot_locked(slot);
    subtract_locked(category, bytes);
  };
  void* data = allocator_.allocate(static_cast<std::size_t>(bytes));
  if (data == nullptr) {
    allocator_.release_cached();  // cached blocks of other sizes may make room
    data = allocator_.allocate(static_cast<std::size_t>(bytes));
  }
  if (data == nullptr) {
    undo();
    std::lock_guard lock(mutex_);
    const bool host = device_.kind == DeviceKind::kCpu;
    throw OutOfMemoryError(
        report_locked(std::string(host ? "out of host memory on " : "out of memory on ") +
                          device_.to_string() + ": " + allocation_description(category, bytes) +
                          " failed: the device has no memory left to give",
                      host));
  }
  if (fill == Fill::kZero) {
    try {
      allocator_.fill_zero(data, static_cast<std::size_t>(bytes));
    } catch (...) {
      allocator_.deallocate(data, static_cast<std::size_t>(bytes));
      undo();
      throw;
    }
  }
  return Allocation(this, data, bytes, category, slot);
}

void MemoryTracker::check_room_locked(MemoryCategory category, std::int64_t bytes) const {
  const std::int64_t total = state_.total_current_bytes + bytes;
  if (host_memory_bytes_ > 0 && total > host_memory_bytes_) {
    throw OutOfMemoryError(report_locked("out of host memory on " + device_.to_string() + ": " +
                                             allocation_description(category, bytes) +
                                             " would bring this rank to " + readable_bytes(total) +
                                             ", more than the host's physical memory of " +
                                             approximate_bytes(host_memory_bytes_),
                                         true));
  }
  if (capacity_bytes_ > 0 && total > capacity_bytes_) {
    throw OutOfMemoryError(out_of_memory_message(category, bytes));
  }
}

std::uint32_t MemoryTracker::take_live_slot_locked(std::int64_t bytes, MemoryCategory category) {
  std::uint32_t slot = 0;
  if (free_live_slots_.empty()) {
    ZT_CHECK(live_.size() < UINT32_MAX, "more than 2^32 live allocations");
    // Room for the row's index when it is freed, so that giving it back never allocates.
    free_live_slots_.reserve(live_.size() + 1);
    live_.emplace_back();
    slot = static_cast<std::uint32_t>(live_.size() - 1);
  } else {
    slot = free_live_slots_.back();
    free_live_slots_.pop_back();
  }
  live_[slot] = {bytes, category, ScopedAllocationName::current(), phase_};
  return slot;
}

void MemoryTracker::give_back_live_slot_locked(std::uint32_t slot) noexcept {
  live_[slot].bytes = -1;
  live_[slot].phase.reset();
  free_live_slots_.push_back(slot);  // never reallocates: reserved when the row was added
}

void MemoryTracker::free_allocation(void* data, std::int64_t bytes, MemoryCategory category,
                                    std::uint32_t live_slot) noexcept {
  if (data != nullptr) allocator_.deallocate(data, static_cast<std::size_t>(bytes));
  std::lock_guard lock(mutex_);
  if (data != nullptr) give_back_live_slot_locked(live_slot);
  subtract_locked(category, bytes);
}

void MemoryTracker::record(MemoryCategory category, std::int64_t bytes) {
  ZT_CHECK(bytes >= 0, "negative recorded size");
  std::lock_guard lock(mutex_);
  if (capacity_bytes_ > 0 && state_.total_current_bytes + bytes > capacity_bytes_) {
    throw OutOfMemoryError(out_of_memory_message(category, bytes));
  }
  add_locked(category, bytes);
  if (recording_) record_event_locked(category, bytes);
}

void MemoryTracker::add_locked(MemoryCategory category, std::int64_t bytes) {
  const auto index = static_cast<std::size_t>(category);
  state_.current_bytes[index] += bytes;
  state_.total_current_bytes += bytes;
  if (state_.current_bytes[index] > state_.peak_bytes[index]) {
    state_.peak_bytes[index] = state_.current_bytes[index];
    state_.peak_phase[index] = *phase_;  // only when a peak rises: rare after the first step
  }
  if (state_.total_current_bytes > state_.total_peak_bytes) {
    state_.total_peak_bytes = state_.total_current_bytes;
    state_.at_total_peak_bytes = state_.current_bytes;
    state_.total_peak_phase = *phase_;
  }
}

void MemoryTracker::unrecord(MemoryCategory category, std::int64_t bytes) noexcept {
  std::lock_guard lock(mutex_);
  subtract_locked(category, bytes);
}

void MemoryTracker::subtract_locked(MemoryCategory category, std::int64_t bytes) noexcept {
  state_.current_bytes[static_cast<std::size_t>(category)] -= bytes;
  state_.total_current_bytes -= bytes;
  if (recording_) {
    try {
      record_event_locked(category, -bytes);
    } catch (...) {  // no memory for the event: the profile says it is incomplete
      truncated_ = true;
      recording_ = false;
    }
  }
}

namespace {
thread_local const char* current_allocation_name = "";
}  // namespace

ScopedAllocationName::ScopedAllocationName(const char* name)
    : previous_(std::exchange(current_allocation_name, name)) {}
ScopedAllocationName::~ScopedAllocationName() { current_allocation_name = previous_; }
const char* ScopedAllocationName::current() { return current_allocation_name; }

void MemoryTracker::record_event_locked(MemoryCategory category, std::int64_t delta) {
  if (events_.size() >= max_events_) {
    truncated_ = true;
    recording_ = false;
    return;
  }
  const auto index = static_cast<std::size_t>(category);
  events_.push_back(
      {std::chrono::duration<double>(std::chrono::steady_clock::now() - timeline_start_).count(),
       step_, *phase_, category, delta, state_.current_bytes[index], state_.total_current_bytes,
       ScopedAllocationName::current()});
}

void MemoryTracker::start_timeline(std::size_t max_events) {
  std::lock_guard lock(mutex_);
  recording_ = true;
  truncated_ = false;
  max_events_ = max_events;
  events_.clear();
  timeline_start_ = std::chrono::steady_clock::now();
}

void MemoryTracker::stop_timeline() {
  std::lock_guard lock(mutex_);
  recording_ = false;
}

std::vector<MemoryEvent> MemoryTracker::timeline() const {
  std::lock_guard lock(mutex_);
  return events_;
}

bool MemoryTracker::timeline_truncated() const {
  std::lock_guard lock(mutex_);
  return truncated_;
}

void MemoryTracker::set_step(std::int64_t step) {
  std::lock_guard lock(mutex_);
  step_ = step;
}

std::int64_t MemoryTracker::step() const {
  std::lock_guard lock(mutex_);
  return step_;
}

std::string MemoryTracker::allocation_description(MemoryCategory category,
                                                  std::int64_t bytes) const {
  std::string text =
      "allocating " + readable_bytes(bytes) + " of " + std::string(memory_category_name(category));
  if (!phase_->empty()) text += " during '" + *phase_ + "'";
  return text;
}

std::string MemoryTracker::report_locked(std::string headline, bool host_advice) const {
  OutOfMemoryReport report;
  report.headline = std::move(headline);
  report.current_bytes = state_.current_bytes;
  report.total_current_bytes = state_.total_current_bytes;
  report.allocator = allocator_.stats();
  report.process_host_allocator = device_.kind == DeviceKind::kCpu;
  report.largest = largest_live_locked();
  if (oom_advice_) {
    std::string advice = oom_advice_();
    if (!advice.empty()) report.advice.push_back(std::move(advice));
  }
  if (host_advice) report.advice.emplace_back(kHostAdvice);
  return format_out_of_memory_report(report);
}

std::vector<LiveAllocationRow> MemoryTracker::largest_live_locked() const {
  constexpr std::size_t kShown = 5;
  std::vector<LiveAllocationRow> rows;
  for (const LiveAllocation& live : live_) {
    if (live.bytes < 0) continue;  // a free row
    rows.push_back(LiveAllocationRow{live.bytes, live.category, live.name, *live.phase});
  }
  // Ties broken by what the rows say, not by address: ranks that hold the same tensors
  // list them alike (and the launcher shows their errors once).
  const auto larger = [](const LiveAllocationRow& a, const LiveAllocationRow& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    if (a.category != b.category) return a.category < b.category;
    if (a.name != b.name) return a.name < b.name;
    return a.phase < b.phase;
  };
  const std::size_t shown = std::min(kShown, rows.size());
  std::partial_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(shown), rows.end(),
                    larger);
  rows.resize(shown);
  return rows;
}

std::string MemoryTracker::out_of_memory_message(MemoryCategory category,
                                                 std::int64_t bytes) const {
  return report_locked("out of memory on " + device_.to_string() + ": " +
                           allocation_description(category, bytes) +
                           " would exceed the device capacity of " +
                           readable_bytes(capacity_bytes_) + " (runtime.device_memory_limit)",
                       false);
}

OutOfMemoryError MemoryTracker::untracked_allocation_failed() const {
  std::lock_guard lock(mutex_);
  std::string headline = "out of host memory on " + device_.to_string() +
                         ": an allocation outside the memory tracker failed (std::bad_alloc)";
  if (!phase_->empty()) headline += " during '" + *phase_ + "'";
  return OutOfMemoryError(report_locked(std::move(headline), true));
}

void MemoryTracker::set_phase(std::string phase) {
  std::lock_guard lock(mutex_);
  if (phase != *phase_) phase_ = std::make_shared<const std::string>(std::move(phase));
}

std::string MemoryTracker::phase() const {
  std::lock_guard lock(mutex_);
  return *phase_;
}

void MemoryTracker::set_oom_advice(std::function<std::string()> advice) {
  std::lock_guard lock(mutex_);
  oom_advice_ = std::move(advice);
}

MemorySnapshot MemoryTracker::snapshot() const {
  std::lock_guard lock(mutex_);
  return state_;
}

std::int64_t MemoryTracker::current_bytes(MemoryCategory category) const {
  std::lock_guard lock(mutex_);
  return state_.current_bytes[static_cast<std::size_t>(category)];
}

std::int64_t MemoryTracker::peak_bytes(MemoryCategory category) const {
  std::lock_guard lock(mutex_);
  return state_.peak_bytes[static_cast<std::size_t>(category)];
}

std::int64_t MemoryTracker::total_current_bytes() const {
  std::lock_guard lock(mutex_);
  return state_.total_current_bytes;
}

std::int64_t MemoryTracker::total_peak_bytes() const {
  std::lock_guard lock(mutex_);
  return state_.total_peak_bytes;
}

void MemoryTracker::reset_peaks() {
  std::lock_guard lock(mutex_);
  state_.peak_bytes = state_.current_bytes;
  state_.peak_phase.fill(*phase_);
  state_.total_peak_bytes = state_.total_current_bytes;
  state_.at_total_peak_bytes = state_.current_bytes;
  state_.total_peak_phase = *phase_;
}

}  // namespace zt

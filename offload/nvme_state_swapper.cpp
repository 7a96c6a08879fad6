// The NVMe optimizer-state pipeline: read ahead, update, write behind.
#include "offload/nvme_state_swapper.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/error.h"

namespace zt::offload {
namespace {

// Note [NVMe state pipeline]
// Three slots: while sub-group k updates in slot k % 3, k+1 is read into the next slot and
// k-1 is written from the one before. Before k+1 is read into its slot, the write of k-2
// (the slot's last occupant) must be done; nothing else waits on the disk, so a disk at
// least as fast as the CPU Adam hides the I/O behind the update. File layout: sub-group k's
// states are one contiguous region at k x states x region_bytes (each state padded to whole
// 4 KiB blocks), so each sub-group moves in one direct transfer each way. The first step
// reads nothing: the states start at zero, as on the device, and the file is only read
// once the first step has written it.
constexpr std::int64_t kSlots = 3;

std::int64_t sub_group_count(std::int64_t shard_numel, std::int64_t sub_group_size) {
  return sub_group_size > 0 ? (shard_numel + sub_group_size - 1) / sub_group_size : 0;
}

std::int64_t state_region_bytes(std::int64_t shard_numel, std::int64_t sub_group_size) {
  return round_up_to_alignment(std::min(sub_group_size, shard_numel) *
                               static_cast<std::int64_t>(sizeof(float)));
}

// An optimizer without state (SGD without momentum) moves nothing: no slots.
std::int64_t slot_count(std::int64_t sub_groups, int states) {
  return states > 0 ? std::min(kSlots, sub_groups) : 0;
}

}  // namespace

std::int64_t NvmeStateSwapper::in_flight_bytes(std::int64_t shard_numel,
                                               std::int64_t sub_group_size, int states) {
  return slot_count(sub_group_count(shard_numel, sub_group_size), states) * states *
         state_region_bytes(shard_numel, sub_group_size);
}

NvmeStateSwapper::NvmeStateSwapper(const std::string& directory, std::int64_t shard_numel,
                                   std::int64_t sub_group_size, int states,
                                   MemoryTracker& host_tracker, FileIoPath io)
    : states_(states),
      sub_groups_(sub_group_count(shard_numel, sub_group_size)),
      region_bytes_(state_region_bytes(shard_numel, sub_group_size)),
      pointers_(static_cast<std::size_t>(states)),
      file_(directory, sub_groups_ * states * region_bytes_) {
  ZT_CHECK(sub_group_size > 0 && states >= 0, "NVMe states need sub-groups");
  // An optimizer without state (SGD without momentum) still gets its (empty) file, so the
  // directory is checked as for any other, but moves nothing.
  const std::int64_t slots = slot_count(sub_groups_, states);
  for (std::int64_t s = 0; s < slots; ++s) {
    slots_.push_back(
        {AlignedHostBuffer(states_ * region_bytes_, host_tracker, MemoryCategory::kHostOffload),
         std::nullopt, std::nullopt});
  }
  io_ = make_async_file_io(file_.fd(), file_.path(), io);
}

NvmeStateSwapper::~NvmeStateSwapper() { wait_all(); }

std::int64_t NvmeStateSwapper::buffer_bytes() const {
  return static_cast<std::int64_t>(slots_.size()) * states_ * region_bytes_;
}

NvmeStateSwapper::Slot& NvmeStateSwapper::slot_of(std::int64_t sub_group) {
  return slots_[static_cast<std::size_t>(sub_group % kSlots)];
}

std::int64_t NvmeStateSwapper::file_offset(std::int64_t sub_group) const {
  return sub_group * states_ * region_bytes_;
}

void NvmeStateSwapper::bring_in(std::int64_t sub_group) {
  if (slots_.empty()) return;
  Slot& slot = slot_of(sub_group);
  if (slot.write) io_->wait(*std::exchange(slot.write, std::nullopt));
  const auto bytes = static_cast<std::size_t>(states_ * region_bytes_);
  if (states_on_file_) {
    slot.read = io_->start_read(slot.buffer.data(), bytes, file_offset(sub_group));
  } else {
    std::memset(slot.buffer.data(), 0, bytes);
  }
}

void NvmeStateSwapper::begin_step() {
  next_to_bring_in_ = 0;
  if (sub_groups_ > 0) bring_in(next_to_bring_in_++);
}

std::span<float* const> NvmeStateSwapper::acquire(std::int64_t sub_group) {
  ZT_CHECK(sub_group + 1 == next_to_bring_in_, "NVMe sub-groups are acquired in order");
  if (next_to_bring_in_ < sub_groups_) bring_in(next_to_bring_in_++);  // read-ahead
  if (slots_.empty()) return pointers_;
  Slot& slot = slot_of(sub_group);
  if (slot.read) io_->wait(*std::exchange(slot.read, std::nullopt));
  for (int i = 0; i < states_; ++i) {
    pointers_[static_cast<std::size_t>(i)] = slot.buffer.floats() + i * region_bytes_ / 4;
  }
  return pointers_;
}

void NvmeStateSwapper::release(std::int64_t sub_group) {
  if (slots_.empty()) return;
  Slot& slot = slot_of(sub_group);
  slot.write =
      io_->start_write(slot.buffer.data(), static_cast<std::size_t>(states_ * region_bytes_),
                       file_offset(sub_group));
}

void NvmeStateSwapper::end_step() {
  for (Slot& slot : slots_) {
    if (slot.write) io_->wait(*std::exchange(slot.write, std::nullopt));
  }
  states_on_file_ = true;
}

void NvmeStateSwapper::wait_all() noexcept {
  if (!io_) return;
  for (Slot& slot : slots_) {
    for (std::optional<std::uint64_t>* ticket : {&slot.read, &slot.write}) {
      if (!*ticket) continue;
      try {
        io_->wait(**ticket);
      } catch (const Error&) {
        // Going away after a failed step: the error was (or will be) reported by that step.
      }
      ticket->reset();
    }
  }
}

}  // namespace zt::offload

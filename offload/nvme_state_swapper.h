// NvmeStateSwapper (ZeRO-Infinity's optimizer offload to NVMe): one rank's optimizer states
// live in a file under offload.nvme_path, sub-group after sub-group, and come into host
// memory only while their sub-group updates. While sub-group k updates, k+1's states are
// being read and k-1's written back, so at most three sub-groups' states are in host memory
// (counted as host_offload). See Note [NVMe state pipeline].
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/memory_tracker.h"
#include "offload/aligned_host_buffer.h"
#include "offload/async_file_io.h"
#include "offload/nvme_state_file.h"

namespace zt::offload {

class NvmeStateSwapper {
 public:
  // Sub-groups of `sub_group_size` elements (the last may be shorter) of a `shard_numel`
  // shard, each with `states` f32 states. Creates and preallocates the file (errors as
  // NvmeStateFile's) and allocates the in-flight buffers from `host_tracker`.
  NvmeStateSwapper(const std::string& directory, std::int64_t shard_numel,
                   std::int64_t sub_group_size, int states, MemoryTracker& host_tracker,
                   FileIoPath io);
  NvmeStateSwapper(const NvmeStateSwapper&) = delete;
  NvmeStateSwapper& operator=(const NvmeStateSwapper&) = delete;
  ~NvmeStateSwapper();  // waits for the transfers in flight, then removes the file

  std::int64_t sub_groups() const { return sub_groups_; }
  const std::string& file_path() const { return file_.path(); }
  std::string io_name() const { return io_->name(); }
  // Host bytes the in-flight sub-groups take (all of them, whatever the step is doing).
  std::int64_t buffer_bytes() const;
  // The same for a swapper of these sizes, without making one (the estimator's).
  static std::int64_t in_flight_bytes(std::int64_t shard_numel, std::int64_t sub_group_size,
                                      int states);

  // One step visits every sub-group in order:
  //   begin_step(); for k: { auto s = acquire(k); update with s[0..states); release(k); }
  //   end_step();
  // acquire(k) returns each state of sub-group k once it is in memory (zeros on the first
  // step), having started the read of k+1; release(k) starts writing k back; end_step()
  // returns once every write is on the file. I/O errors throw IoError.
  void begin_step();
  std::span<float* const> acquire(std::int64_t sub_group);
  void release(std::int64_t sub_group);
  void end_step();

 private:
  struct Slot {
    AlignedHostBuffer buffer;            // states x region_bytes_
    std::optional<std::uint64_t> read;   // the read into it, until waited for
    std::optional<std::uint64_t> write;  // the write out of it, until waited for
  };

  Slot& slot_of(std::int64_t sub_group);
  std::int64_t file_offset(std::int64_t sub_group) const;
  // Makes sub-group k's slot free (its earlier write done), then reads k into it, or
  // zero-fills it on the first step.
  void bring_in(std::int64_t sub_group);
  void wait_all() noexcept;

  const int states_;
  const std::int64_t sub_groups_;
  const std::int64_t region_bytes_;  // one state of one sub-group, in whole 4 KiB blocks
  bool states_on_file_ = false;      // set by the first step's writes
  std::int64_t next_to_bring_in_ = 0;
  std::vector<float*> pointers_;  // what acquire() returns
  // Destroyed in reverse: the I/O (which drains what is in flight) before the buffers it
  // may still be writing into, and those before the file closes.
  NvmeStateFile file_;
  std::vector<Slot> slots_;
  std::unique_ptr<AsyncFileIo> io_;
};

}  // namespace zt::offload

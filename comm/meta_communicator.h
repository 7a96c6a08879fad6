// MetaCommunicator: the communicator of the memory estimator (Note [Meta devices]). It
// plays one rank of a world of any size without peers: every op completes at once, moves
// nothing, counts the bytes the backend would send to each peer (Gloo's; NCCL's when it
// plays an NCCL rank: Note [Counting bytes by node]), and reserves the scratch that Gloo's
// ring would (when Gloo's scratch is counted, as on a CPU rank).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "comm/communicator.h"
#include "comm/gloo/op_counters.h"
#include "comm/gloo/scratch_buffer.h"
#include "core/memory_tracker.h"
#include "core/tensor.h"

namespace zt::comm {

class MetaCommunicator final : public Communicator {
 public:
  // `scratch_tracker`: where Gloo's scratch would be counted (null: nowhere, as on a GPU
  // rank, whose Gloo staging is the backend's own). `nccl_device_tracker`: on a GPU rank
  // whose collectives run on NCCL, the rank's device, where this holds what an NCCL
  // communicator holds there for its life (kNcclBarrierElements); null otherwise.
  MetaCommunicator(int rank, int world_size, MemoryTracker* scratch_tracker,
                   MemoryTracker* nccl_device_tracker = nullptr,
                   std::size_t segment_bytes = std::size_t{1} << 20);

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  std::shared_ptr<Work> all_reduce(Tensor tensor, ReduceOp op) override;
  std::shared_ptr<Work> reduce_scatter(Tensor input, Tensor output, ReduceOp op) override;
  std::shared_ptr<Work> all_gather(Tensor input, Tensor output) override;
  std::shared_ptr<Work> all_to_all(Tensor input, Tensor output) override;
  std::shared_ptr<Work> broadcast(Tensor tensor, int root) override;
  std::shared_ptr<Work> barrier() override;
  std::chrono::milliseconds timeout() const override { return std::chrono::minutes(1); }

 protected:
  // A meta rank has no peers to learn their words from: split it with every rank's
  // requests (Note [Splitting a communicator]); asking it to gather them is a bug.
  std::vector<std::int32_t> all_gather_host_words(const std::vector<std::int32_t>& mine) override;
  // A meta communicator of the group's size, counting where this one counts.
  std::unique_ptr<Communicator> split_group(const SplitGroup& group) override;
  PeerCounters peer_counters() const override { return counters_.snapshot(); }

 private:
  // A Work already completed, the op counted with `bytes_sent` to the right-hand
  // neighbour (a ring op's), or with `sent` (to whom the op sends).
  std::shared_ptr<Work> completed(CollectiveKind kind, std::uint64_t bytes_sent);
  std::shared_ptr<Work> completed(CollectiveKind kind, const std::vector<PeerBytes>& sent);
  // What one ring pass over `tensor` sends from this rank: every shard but `skipped_owner`'s
  // (Note [Ring collectives]).
  std::uint64_t ring_pass_bytes(const Tensor& tensor, int skipped_owner) const;
  void reserve_scratch(const Tensor& input);
  int right_neighbour() const { return (rank_ + 1) % world_size_; }

  const int rank_;
  const int world_size_;
  const std::size_t segment_bytes_;
  MemoryTracker* const scratch_tracker_;      // as given; for split groups
  MemoryTracker* const nccl_device_tracker_;  // as given; for split groups
  std::mutex scratch_mutex_;                  // ops may be submitted from several threads
  std::unique_ptr<ScratchBuffer> scratch_;    // null when scratch is not counted; scratch_mutex_
  Tensor nccl_barrier_buffer_;                // undefined unless NCCL's device buffer is counted
  std::atomic<std::uint64_t> next_sequence_number_{1};
  OpCounters counters_;
};

}  // namespace zt::comm

// GlooCommunicator: the CPU backend for two or more ranks. Ops run in submission order on
// one communication thread it owns; reduce-scatter and all-gather (and all-reduce, as the
// two in sequence) are our ring algorithms on Gloo's unbound buffers, broadcast and barrier
// are Gloo's new-style ones, all-to-all sends to each peer directly (Note [Pairwise exchange]).
// After an op fails, later ops fail fast. With a device, each op waits on the comm thread for the
// compute stream's event recorded at submission, and tensors on a CUDA device are staged through
// pinned host memory (DeviceStaging).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/communicator_factory.h"
#include "comm/gloo/collective_request.h"
#include "comm/gloo/device_staging.h"
#include "comm/gloo/op_counters.h"
#include "comm/gloo/ring.h"
#include "comm/gloo/scratch_buffer.h"
#include "comm/store/store.h"
#include "core/memory_tracker.h"
#include "core/stream.h"

namespace gloo {
class Context;
}  // namespace gloo

namespace zt::comm {

class GlooCommunicator final : public Communicator {
 public:
  // Rendezvous of all `world_size` ranks through `store` (see create_cpu_communicator),
  // which must outlive the communicator: split() rendezvouses its groups there too.
  GlooCommunicator(Store& store, int rank, int world_size, const CommOptions& options);
  GlooCommunicator(const GlooCommunicator&) = delete;
  GlooCommunicator& operator=(const GlooCommunicator&) = delete;
  // Runs every op already submitted (each bounded by the timeout; after a failure the rest
  // fail fast), then joins the communication thread and closes the connections.
  ~GlooCommunicator() override;

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }

  std::shared_ptr<Work> all_reduce(Tensor tensor, ReduceOp op) override;
  std::shared_ptr<Work> reduce_scatter(Tensor input, Tensor output, ReduceOp op) override;
  std::shared_ptr<Work> all_gather(Tensor input, Tensor output) override;
  std::shared_ptr<Work> all_to_all(Tensor input, Tensor output) override;
  std::shared_ptr<Work> broadcast(Tensor tensor, int root) override;
  std::shared_ptr<Work> barrier() override;

  std::chrono::milliseconds timeout() const override { return options_.timeout; }

 protected:
  // A new context among the group's members, rendezvoused through the parent's store
  // under split_group_name; a group of one is a SingleRankCommunicator.
  std::unique_ptr<Communicator> split_group(const SplitGroup& group) override;
  PeerCounters peer_counters() const override { return counters_.snapshot(); }

 private:
  // Runs on the comm thread with the op's sequence number and its request over host
  // memory (staged when the request's tensors are on a device); returns the payload bytes
  // sent to each peer.
  using OpBody = std::function<std::vector<PeerBytes>(std::uint64_t sequence_number,
                                                      const CollectiveRequest& host)>;

  std::shared_ptr<Work> submit(const CollectiveRequest& request, OpBody body);
  // Runs the op and clears `request` (its tensors) before completing `work`.
  void execute(Work& work, std::uint64_t flight_id, CollectiveRequest& request,
               const DeviceEvent& inputs_ready, const OpBody& body);
  std::vector<PeerBytes> run_body(std::uint64_t sequence_number, const CollectiveRequest& request,
                                  const OpBody& body);
  // A ring op's bytes: all to the right-hand neighbour (Note [Ring collectives]).
  std::vector<PeerBytes> to_right_neighbour(std::uint64_t bytes) const;
  void mark_broken(const Work& failed, const std::exception_ptr& error) noexcept;
  RingOp ring_op(std::uint64_t sequence_number) const;

  const int rank_;
  const int world_size_;
  const CommOptions options_;
  Store& store_;                                  // for the rendezvous of split groups
  std::unique_ptr<MemoryTracker> owned_tracker_;  // when options_ names none
  std::shared_ptr<::gloo::Context> context_;
  OpCounters counters_;  // atomics: written by the comm thread, read anywhere

  std::mutex submit_mutex_;  // guards next_sequence_number_; sequence order = queue order
  std::uint64_t next_sequence_number_ = 1;  // 0 is the rendezvous barrier's tag

  // Confined to the comm thread.
  ScratchBuffer scratch_;
  std::unique_ptr<DeviceStaging> staging_;  // with a CUDA device only
  std::string broken_reason_;               // empty while healthy

  // Last member: destroyed first (drained, joined), so queued ops find everything above
  // alive. Created with the context, with SIGPIPE blocked (see ScopedSigpipeBlock).
  std::unique_ptr<CpuStream> comm_thread_;
};

}  // namespace zt::comm

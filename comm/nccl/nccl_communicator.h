// NcclCommunicator: the CUDA backend. One non-blocking NCCL communicator per group, its own
// comm stream, and two threads it owns: the comm thread issues ops in submission order
// (each ordered after the compute stream's event recorded at submission, a group's ops in
// one ncclGroupStart/End), the watchdog completes their Works as their events complete and
// aborts the communicator on an asynchronous error or a timeout. After an op fails, later
// ops fail fast. No NCCL or CUDA type appears here.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/communicator_factory.h"
#include "comm/gloo/collective_request.h"
#include "comm/gloo/op_counters.h"
#include "comm/store/store.h"
#include "core/stream.h"

struct ncclComm;  // NCCL's communicator (ncclComm_t is ncclComm*)

namespace zt::comm {

class CudaCommStream;
class NcclWatchdog;

// Why NCCL's libnccl.so.2 cannot be used here (the loader's message), or nullopt when it is
// open: the backend opens it at the first call (Note [CUDA libraries opened when used] in
// core/device/cuda_module.h), and later calls return the same answer.
std::optional<std::string> nccl_library_missing();
// Opens it, or throws ConfigError naming libnccl.so.2 and comm.backend.
void require_nccl_library();

class NcclCommunicator final : public Communicator {
 public:
  // Rendezvous of all `world_size` ranks through `store`: rank 0's ncclUniqueId under the
  // group's key namespace, then the communicator's initialization, both bounded by
  // options.timeout. options.device is a CUDA context (create_communicator checks).
  NcclCommunicator(Store& store, int rank, int world_size, const CommOptions& options);
  // Adopts `comm`, an initialized NCCL communicator of `world_size` ranks (a split's).
  NcclCommunicator(ncclComm* comm, int rank, int world_size, const CommOptions& options);
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;
  // Issues what was submitted, waits for what is in flight (each bounded by the timeout),
  // then finalizes the communicator (aborts it when that fails or times out).
  ~NcclCommunicator() override;

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
  void begin_group() override;
  void end_group() override;
  // Through the device: NCCL moves device tensors only.
  std::vector<std::int32_t> all_gather_host_words(const std::vector<std::int32_t>& mine) override;
  // ncclCommSplit on the parent, which every parent rank joins, members or not.
  std::unique_ptr<Communicator> split_group(const SplitGroup& group) override;
  PeerCounters peer_counters() const override { return counters_.snapshot(); }

 private:
  struct PendingOp {
    std::shared_ptr<Work> work;
    CollectiveRequest request;
    DeviceEvent inputs_ready;                // recorded on the compute stream at submission
    std::uint64_t flight_id = kNotRecorded;  // its entry in options_.flight_recorder
  };
  // The op's flight entry ended (completed, or failed with `error`), when it is recorded.
  void record_end(const PendingOp& op, const std::string& error) const;

  std::shared_ptr<Work> submit(CollectiveRequest request);
  void enqueue_batch(std::vector<PendingOp> batch);  // with submit_mutex_ held
  void launch(const std::vector<PendingOp>& batch);  // on the comm thread
  void issue(const PendingOp& op);                   // with nccl_mutex_ held
  void abort(const std::string& broken_reason) noexcept;
  std::exception_ptr async_error();
  void finalize() noexcept;
  // What both constructors do once comm_ is made: buffers, stream, threads.
  void start();

  const int rank_;
  const int world_size_;
  const CommOptions options_;
  DeviceContext& device_;
  const std::string where_;  // "on rank 1 of 4 (group world/gradients, cuda:0)"
  OpCounters counters_;      // atomics: written by the watchdog, read anywhere

  std::mutex nccl_mutex_;  // guards comm_ (null once aborted) and broken_reason_
  ncclComm* comm_ = nullptr;
  std::string broken_reason_;  // empty while healthy

  Tensor barrier_buffer_;  // one f32 on the device: a barrier is an all-reduce of it
  std::unique_ptr<CudaCommStream> stream_;

  std::mutex submit_mutex_;  // guards the three below; sequence order = queue order
  std::uint64_t next_sequence_number_ = 1;
  int group_depth_ = 0;
  std::vector<PendingOp> group_;  // ops submitted while a group is open

  // Destroyed first (the destructor resets them in this order): the comm thread issues
  // what is queued, then the watchdog sees it through.
  std::unique_ptr<NcclWatchdog> watchdog_;
  std::unique_ptr<CpuStream> comm_thread_;
};

}  // namespace zt::comm

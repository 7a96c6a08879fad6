// SingleRankCommunicator: the Gloo backend's communicator of a world of one. Every
// collective is a copy (or nothing) done at once on the caller's thread; no network, no
// thread, no bytes sent. Device tensors are copied on the device's compute stream, which
// orders the copy after their producers and before their readers.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include "comm/communicator.h"
#include "comm/communicator_factory.h"
#include "comm/gloo/collective_request.h"
#include "comm/gloo/op_counters.h"

namespace zt::comm {

class SingleRankCommunicator final : public Communicator {
 public:
  explicit SingleRankCommunicator(const CommOptions& options)
      : timeout_(options.timeout),
        device_(options.device),
        flight_recorder_(options.flight_recorder),
        group_name_(options.group_name) {}

  int rank() const override { return 0; }
  int world_size() const override { return 1; }

  std::shared_ptr<Work> all_reduce(Tensor tensor, ReduceOp op) override;
  std::shared_ptr<Work> reduce_scatter(Tensor input, Tensor output, ReduceOp op) override;
  std::shared_ptr<Work> all_gather(Tensor input, Tensor output) override;
  std::shared_ptr<Work> all_to_all(Tensor input, Tensor output) override;
  std::shared_ptr<Work> broadcast(Tensor tensor, int root) override;
  std::shared_ptr<Work> barrier() override;

  std::chrono::milliseconds timeout() const override { return timeout_; }

 protected:
  // A group of one: another single-rank communicator on the same device.
  std::unique_ptr<Communicator> split_group(const SplitGroup& group) override;
  PeerCounters peer_counters() const override { return counters_.snapshot(); }

 private:
  std::shared_ptr<Work> complete(const CollectiveRequest& request);

  const std::chrono::milliseconds timeout_;
  DeviceContext* const device_;                            // null: host tensors only
  const std::shared_ptr<FlightRecorder> flight_recorder_;  // null: nothing recorded
  const std::string group_name_;
  std::atomic<std::uint64_t> next_sequence_number_{1};  // callers may submit from any thread
  OpCounters counters_{1};                              // ops counted; bytes stay 0
};

}  // namespace zt::comm

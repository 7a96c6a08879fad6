// RecordingCommunicator: a decorator over any Communicator that logs every op (kind, bytes,
// and what the rank was computing when the op was submitted, started and completed, read
// from a phase source such as the memory tracker's phase label), so a test can assert the
// order of communication against compute without timing. It can also hold an op back until
// a condition on the phase holds: the stand-in for a slow link, which shows whether later
// work waits behind it. Ops run one at a time, in submission order, on its own thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "core/stream.h"

namespace zt::comm {

struct RecordedOp {
  std::uint64_t index = 0;  // submission order on this communicator, from 0
  CollectiveKind kind = CollectiveKind::kBarrier;
  std::int64_t bytes = 0;        // of the op's larger tensor
  std::string submitted_in;      // the phase when the op was submitted
  std::string started_in;        // when it was handed to the inner communicator
  std::string completed_in;      // when the inner communicator completed it
  bool held_past_bound = false;  // the hold condition never held within the bound
};

class RecordingCommunicator final : public Communicator {
 public:
  // `phase` names what the rank computes now; it is called from any thread.
  RecordingCommunicator(Communicator& inner, std::function<std::string()> phase);
  // The same over an inner communicator it owns (a split group's).
  RecordingCommunicator(std::unique_ptr<Communicator> inner, std::function<std::string()> phase);
  ~RecordingCommunicator() override;  // runs what is queued, then joins its thread

  // Ops start only once may_start(op, phase now) is true, polled until `bound` has passed;
  // after that the op starts anyway, is marked held_past_bound, and holding stops.
  using HoldCondition = std::function<bool(const RecordedOp& op, const std::string& phase)>;
  void hold_until(HoldCondition may_start, std::chrono::milliseconds bound);
  void release_holds();  // later ops start at once
  std::vector<RecordedOp> ops() const;

  int rank() const override { return inner_.rank(); }
  int world_size() const override { return inner_.world_size(); }
  std::shared_ptr<Work> all_reduce(Tensor tensor, ReduceOp op) override;
  std::shared_ptr<Work> reduce_scatter(Tensor input, Tensor output, ReduceOp op) override;
  std::shared_ptr<Work> all_gather(Tensor input, Tensor output) override;
  std::shared_ptr<Work> all_to_all(Tensor input, Tensor output) override;
  std::shared_ptr<Work> broadcast(Tensor tensor, int root) override;
  std::shared_ptr<Work> barrier() override;
  std::chrono::milliseconds timeout() const override { return inner_.timeout(); }

 protected:
  // The inner communicator exchanges the requests (unrecorded) and splits; the group's
  // communicator is recorded too, with the same phase source and no hold.
  std::vector<std::int32_t> all_gather_host_words(const std::vector<std::int32_t>& mine) override;
  std::unique_ptr<Communicator> split_group(const SplitGroup& group) override;
  // The inner communicator's; sorted by node as this one is placed (as the inner one was
  // when the decorator was made, and as place_ranks says after).
  PeerCounters peer_counters() const override { return peer_counters_of(inner_); }

 private:
  using Launch = std::function<std::shared_ptr<Work>()>;
  std::shared_ptr<Work> submit(CollectiveKind kind, std::int64_t bytes, Launch launch);
  void run(std::size_t index, const Launch& launch, Work& outer);
  void wait_for_hold(std::size_t index);
  void place_as_inner();  // this decorator's nodes from the inner communicator's

  std::unique_ptr<Communicator> owned_inner_;  // null unless constructed with ownership
  Communicator& inner_;
  const std::function<std::string()> phase_;
  mutable std::mutex mutex_;  // guards ops_, may_start_, bound_
  std::vector<RecordedOp> ops_;
  HoldCondition may_start_;
  std::chrono::milliseconds bound_{0};
  CpuStream stream_;  // last: joined first, while the members above still live
};

}  // namespace zt::comm

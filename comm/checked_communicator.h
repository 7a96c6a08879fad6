// CheckedCommunicator: a decorator that fingerprints every op and has its members compare
// them, before each op or at each step's end (Note [The collective check] in
// comm/collective_check.h). create_communicator wraps the backend's communicator in one when
// CommOptions::collective_check asks for a check; its splits are checked alike.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "comm/collective_check.h"
#include "comm/communicator.h"

namespace zt::comm {

class CheckedCommunicator final : public Communicator {
 public:
  // `check`'s mode is kStep or kEvery; `group` names the communicator in errors.
  CheckedCommunicator(std::unique_ptr<Communicator> inner, std::shared_ptr<CollectiveCheck> check,
                      std::string group);
  ~CheckedCommunicator() override;
  CheckedCommunicator(const CheckedCommunicator&) = delete;
  CheckedCommunicator& operator=(const CheckedCommunicator&) = delete;

  int rank() const override { return inner_->rank(); }
  int world_size() const override { return inner_->world_size(); }
  std::shared_ptr<Work> all_reduce(Tensor tensor, ReduceOp op) override;
  std::shared_ptr<Work> reduce_scatter(Tensor input, Tensor output, ReduceOp op) override;
  std::shared_ptr<Work> all_gather(Tensor input, Tensor output) override;
  std::shared_ptr<Work> all_to_all(Tensor input, Tensor output) override;
  std::shared_ptr<Work> broadcast(Tensor tensor, int root) override;
  std::shared_ptr<Work> barrier() override;
  std::chrono::milliseconds timeout() const override { return inner_->timeout(); }

  // kStep: the members compare the ops since the last call (CollectiveCheck::end_step).
  void check_window();

 protected:
  std::vector<std::int32_t> all_gather_host_words(const std::vector<std::int32_t>& mine) override;
  std::unique_ptr<Communicator> split_group(const SplitGroup& group) override;
  PeerCounters peer_counters() const override { return peer_counters_of(*inner_); }
  // kStep: the inner communicator's groups. kEvery: none, as each op waits for its check.
  void begin_group() override;
  void end_group() override;

 private:
  // The op's fingerprint, checked now (kEvery) or kept for the step's check (kStep).
  void admit(CollectiveKind kind, std::int64_t numel, DType dtype, int root, int reduce = -1);

  std::unique_ptr<Communicator> inner_;
  std::shared_ptr<CollectiveCheck> check_;
  const std::string group_;
  std::mutex mutex_;  // guards next_index_ and window_
  std::uint64_t next_index_ = 0;
  std::vector<OpFingerprint> window_;  // kStep: the ops since the last check
};

}  // namespace zt::comm

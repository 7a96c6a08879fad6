// FullParameters (ZeRO stages 1-2): every parameter in the compute dtype on every rank. After
// an update the rank's own slices are all-gathered in place, and each block's forward waits
// only for its own part of that refresh.
#pragma once

#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "sharding/flat_layout.h"
#include "sharding/parameter_residency.h"
#include "sharding/shard_plan.h"

namespace zt::zero {

class FullParameters final : public ParameterResidency {
 public:
  // `full_params` is (padded_numel) in the compute dtype; `comm` carries the refreshes.
  FullParameters(comm::Communicator& comm, const FlatLayout& layout, const ShardPlan& plan,
                 Tensor full_params);

  const std::vector<Tensor>& parameters(std::size_t block) override {
    return param_views_.at(block);
  }
  void before_forward(std::size_t block) override;
  void after_forward(std::size_t) override {}
  void end_forward_only() override {}
  void before_backward(std::size_t) override {}
  void after_backward(std::size_t, bool) override {}

  const ShardBuffer& own_shard() const override { return own_; }
  void wait_for_readers() override;
  void before_update() override { wait_for_readers(); }
  void publish() override;
  void start_next_forward() override {}
  std::int64_t peak_gathered_bytes() const override { return 0; }

 private:
  void wait_for_refresh(std::size_t block);

  comm::Communicator& comm_;
  const FlatLayout& layout_;
  const ShardPlan& plan_;
  Tensor full_params_;                            // (padded_numel) compute dtype
  ShardBuffer own_;                               // the rank's slices, in place in full_params_
  std::vector<std::vector<Tensor>> param_views_;  // per block
  std::vector<std::vector<std::shared_ptr<comm::Work>>> refresh_works_;  // per block
};

}  // namespace zt::zero

// Stages 1-2's full parameters: the in-place refresh after an update, waited for per block.
#include "sharding/full_parameters.h"

#include "sharding/all_gather_block.h"

namespace zt::zero {

FullParameters::FullParameters(comm::Communicator& comm, const FlatLayout& layout,
                               const ShardPlan& plan, Tensor full_params)
    : comm_(comm),
      layout_(layout),
      plan_(plan),
      full_params_(std::move(full_params)),
      own_(ShardBuffer::in_place(plan, full_params_)),
      refresh_works_(layout.blocks.size()) {
  for (std::size_t b = 0; b < layout_.blocks.size(); ++b) {
    param_views_.push_back(block_views(layout_, b, full_params_));
  }
}

void FullParameters::before_forward(std::size_t block) {
  wait_for_refresh(block);  // the all-gather after the last step, overlapped until now
}

void FullParameters::wait_for_refresh(std::size_t block) {
  for (const auto& work : refresh_works_[block]) work->wait();
  refresh_works_[block].clear();
}

void FullParameters::wait_for_readers() {
  for (std::size_t b = 0; b < layout_.blocks.size(); ++b) wait_for_refresh(b);
}

void FullParameters::publish() {
  // The rank's own slices of the full parameters hold the compute-dtype image of its masters
  // (in fp32 they are the masters; otherwise the step or the strategy rounded them there),
  // and each segment is all-gathered in place: the wire carries the compute dtype, and no
  // staging copy exists.
  wait_for_readers();
  for (std::size_t b = 0; b < layout_.blocks.size(); ++b) {
    refresh_works_[b] = all_gather_block(comm_, plan_, b, own_, full_params_);
  }
}

}  // namespace zt::zero

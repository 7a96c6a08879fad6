// One block's per-segment all-gathers, shared by the refresh and the parameter export.
#include "sharding/all_gather_block.h"

namespace zt::zero {

std::vector<std::shared_ptr<comm::Work>> all_gather_block(comm::Communicator& comm,
                                                          const ShardPlan& plan, std::size_t block,
                                                          const ShardBuffer& shard,
                                                          const Tensor& flat) {
  std::vector<std::shared_ptr<comm::Work>> works;
  for (const Segment& segment : plan.segments(block)) {
    works.push_back(
        comm.all_gather(shard.slice(segment), flat.view(segment.offset, Shape{segment.numel})));
  }
  return works;
}

}  // namespace zt::zero

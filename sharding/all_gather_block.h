// all_gather_block: one block's segments all-gathered from every rank's shard slices into a
// full flat buffer, one collective per segment (Note [Shards by segment]).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "sharding/shard_buffer.h"
#include "sharding/shard_plan.h"

namespace zt::zero {

// All-gathers block `block`'s segments from `shard` (this rank's slices) into `flat`.
std::vector<std::shared_ptr<comm::Work>> all_gather_block(comm::Communicator& comm,
                                                          const ShardPlan& plan, std::size_t block,
                                                          const ShardBuffer& shard,
                                                          const Tensor& flat);

}  // namespace zt::zero

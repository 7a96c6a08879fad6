// SecondaryShard (ZeRO++ hpZ, zero.hpz_partition_size): a second copy of stage 3's
// parameters in the compute dtype, cut over a small group of contiguous ranks (a node), so
// that the all-gathers after a block's first one stay inside that group.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "core/device/device_context.h"
#include "sharding/shard_plan.h"

namespace zt::zero {

// Note [The secondary shard]: under stage 3 each rank owns 1/G of the parameters (its
// primary shard, G = the shard group). With hpZ partition size H (H divides G; its groups are
// H contiguous ranks, split from the world's parameter lane, so they lie inside a shard group)
// every rank also keeps 1/H of them: its slice of every segment as the plan over H ranks cuts
// it. The secondary shard is filled from the forward's all-gathers, not by extra traffic:
// when a block's gather from the primary shards completes, the rank copies its H-slices out
// of the gathered block. From then until the parameters change (the next optimizer step or a
// loaded checkpoint), every all-gather of that block (the backward's, and the forwards of
// later micro-batches) reads the secondary shard over the H-rank group: on a node-sized
// group none of those bytes cross nodes. The values are the compute-dtype parameters
// themselves, so training is exact: the same losses as without hpZ. Blocks that stay
// gathered for the whole step (persistent, tie sources) are never gathered twice and get no
// secondary slices. Cost: (compute-dtype bytes of the other blocks) / H per rank, counted
// as parameters; nothing of it is saved in checkpoints (it is rebuilt by the next forward).
class SecondaryShard {
 public:
  // `comm` is the rank's hpZ group; `kept[b]` says whether block b gets secondary slices.
  // Allocates the secondary shard from `device`'s tracker.
  SecondaryShard(comm::Communicator& comm, const FlatLayout& layout,
                 std::int64_t max_segment_elements, DType dtype, std::vector<bool> kept,
                 DeviceContext& device);
  SecondaryShard(const SecondaryShard&) = delete;
  SecondaryShard& operator=(const SecondaryShard&) = delete;

  bool kept(std::size_t block) const { return block_offset_.at(block) >= 0; }
  // Whether the block's secondary slices hold the parameters as they are now.
  bool fresh(std::size_t block) const { return fresh_.at(block); }
  // Copies this rank's secondary slices out of `gathered`, the block's padded region as an
  // all-gather from the primary shards left it; the block is fresh afterwards.
  void keep(std::size_t block, const Tensor& gathered);
  // Starts all-gathering a fresh block from the group's secondary slices into `gathered`
  // (the block's padded region).
  std::vector<std::shared_ptr<comm::Work>> all_gather(std::size_t block, const Tensor& gathered);
  // The parameters changed: no block is fresh until its next gather from the primary shards.
  void invalidate();

  std::int64_t numel() const { return storage_.defined() ? storage_.numel() : 0; }

 private:
  // This rank's secondary slice of `segment` (a segment of the plan over the hpZ group).
  Tensor slice(std::size_t block, const Segment& segment) const;

  comm::Communicator& comm_;
  DeviceContext& device_;  // copies run on its compute stream
  const FlatLayout& layout_;
  ShardPlan plan_;                          // the layout cut over the hpZ group
  std::vector<std::int64_t> block_offset_;  // each kept block's first slice in storage_; -1
  Tensor storage_;                          // (kept blocks' padded elements / H) compute dtype
  std::vector<bool> fresh_;
};

}  // namespace zt::zero

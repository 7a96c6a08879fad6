// hpZ's secondary shard: filled from the forward's gathers, read by the gathers after them.
#include "sharding/secondary_shard.h"

#include "core/error.h"

namespace zt::zero {

SecondaryShard::SecondaryShard(comm::Communicator& comm, const FlatLayout& layout,
                               std::int64_t max_segment_elements, DType dtype,
                               std::vector<bool> kept, DeviceContext& device)
    : comm_(comm),
      device_(device),
      layout_(layout),
      plan_(layout, comm.world_size(), comm.rank(), max_segment_elements),
      block_offset_(layout.blocks.size(), -1),
      fresh_(layout.blocks.size(), false) {
  ZT_CHECK(kept.size() == layout.blocks.size(), "SecondaryShard: one kept flag per block");
  std::int64_t numel = 0;
  for (std::size_t b = 0; b < layout.blocks.size(); ++b) {
    if (!kept[b]) continue;
    block_offset_[b] = numel;
    numel += layout.blocks[b].padded_numel / comm.world_size();
  }
  if (numel > 0) {
    const ScopedAllocationName name("hpZ secondary shard");
    storage_ = Tensor::empty(Shape{numel}, dtype, device.tracker(), MemoryCategory::kParameters);
  }
}

Tensor SecondaryShard::slice(std::size_t block, const Segment& segment) const {
  const std::int64_t first_in_block = plan_.segments(block).front().shard_offset;
  return storage_.view(block_offset_[block] + segment.shard_offset - first_in_block,
                       Shape{plan_.slice_numel(segment)});
}

void SecondaryShard::keep(std::size_t block, const Tensor& gathered) {
  ZT_CHECK(kept(block), "block " + layout_.blocks.at(block).name + " has no secondary slices");
  const std::int64_t block_offset = layout_.blocks[block].offset;
  for (const Segment& segment : plan_.segments(block)) {
    const Tensor own = gathered.view(plan_.slice_offset(segment, plan_.rank()) - block_offset,
                                     Shape{plan_.slice_numel(segment)});
    device_.ops().copy(own, slice(block, segment));
  }
  fresh_[block] = true;
}

std::vector<std::shared_ptr<comm::Work>> SecondaryShard::all_gather(std::size_t block,
                                                                    const Tensor& gathered) {
  ZT_CHECK(fresh(block), "block " + layout_.blocks.at(block).name +
                             ": its secondary slices are older than its parameters");
  const std::int64_t block_offset = layout_.blocks[block].offset;
  std::vector<std::shared_ptr<comm::Work>> works;
  for (const Segment& segment : plan_.segments(block)) {
    works.push_back(comm_.all_gather(
        slice(block, segment), gathered.view(segment.offset - block_offset, Shape{segment.numel})));
  }
  return works;
}

void SecondaryShard::invalidate() { fresh_.assign(fresh_.size(), false); }

}  // namespace zt::zero

// Mapping padded flat ranges to runs of the model's unpadded elements.
#include "sharding/state_shard.h"

#include <algorithm>

namespace zt::zero {

void append_state_runs(const FlatLayout& layout, std::int64_t padded_begin, std::int64_t count,
                       std::int64_t shard_offset, std::vector<StateRun>& runs) {
  const std::int64_t padded_end = padded_begin + count;
  // Only the blocks the range overlaps: the first one ending after padded_begin, on.
  auto block = std::upper_bound(
      layout.blocks.begin(), layout.blocks.end(), padded_begin,
      [](std::int64_t at, const BlockSlots& b) { return at < b.offset + b.padded_numel; });
  for (; block != layout.blocks.end() && block->offset < padded_end; ++block) {
    // Parameter by parameter: aligned parameters have gaps between them (Note [Why parameters
    // are aligned]); a tied one has no storage of its own.
    for (const ParameterSlot& slot : block->parameters) {
      if (slot.tied_to_block) continue;
      const std::int64_t real_begin = std::max(padded_begin, slot.offset);
      const std::int64_t real_end = std::min(padded_end, slot.offset + slot.spec.shape.numel());
      if (real_begin >= real_end) continue;
      const StateRun run{slot.unpadded_offset + (real_begin - slot.offset), real_end - real_begin,
                         shard_offset + (real_begin - padded_begin)};
      // Parameters back to back without padding between them continue one run.
      if (!runs.empty() && runs.back().begin + runs.back().count == run.begin &&
          runs.back().shard_offset + runs.back().count == run.shard_offset) {
        runs.back().count += run.count;
      } else {
        runs.push_back(run);
      }
    }
  }
}

}  // namespace zt::zero

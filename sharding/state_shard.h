// StateShard: the part of the model's training state (fp32 master weights and optimizer
// states) one rank saves and loads, described in terms that do not depend on the world size
// or the stage: runs of the model's real (unpadded) elements, in the order the flat layout
// lays parameters out. Note [Checkpoint state] in docs/ARCHITECTURE.md: a checkpoint stores
// each rank's shard as it lies in memory plus its runs, so a loader at any world size finds
// every element it needs in whichever rank's file holds it.
#pragma once

#include <cstdint>
#include <vector>

#include "sharding/flat_layout.h"

namespace zt::zero {

struct StateRun {
  std::int64_t begin = 0;         // first element in the model's unpadded flat order
  std::int64_t count = 0;         // elements
  std::int64_t shard_offset = 0;  // where the run starts in this rank's state shard
};

struct StateShard {
  std::int64_t numel = 0;      // elements of each state tensor, padding included
  std::vector<StateRun> runs;  // ascending shard_offset; every rank's runs partition the model
};

// Appends to `runs` the real elements among [padded_begin, padded_begin + count) of a flat
// buffer laid out by `layout`, as runs in the unpadded order; the range itself lies in the
// shard from `shard_offset` on (padding keeps its place there, it is just in no run).
void append_state_runs(const FlatLayout& layout, std::int64_t padded_begin, std::int64_t count,
                       std::int64_t shard_offset, std::vector<StateRun>& runs);

}  // namespace zt::zero

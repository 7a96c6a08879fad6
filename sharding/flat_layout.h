// Where each parameter of a model lives in a flat buffer: blocks back to back in model
// order, parameters back to back within a block. Note [Why shards are padded]: the total
// is padded to a multiple of world_size × kShardAlignElements, so every rank's shard has
// the same length and starts on a 64-byte boundary; padding is zero and never read as data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/model.h"

namespace zt::zero {

inline constexpr std::int64_t kShardAlignElements = 16;  // 64 bytes of f32

struct ParameterSlot {
  nn::ParameterSpec spec;
  std::int64_t offset = 0;  // elements from the start of the flat buffer
};

struct BlockSlots {
  std::string name;
  std::int64_t offset = 0;  // first element of the block
  std::int64_t numel = 0;   // elements of the block (no padding)
  std::vector<ParameterSlot> parameters;
};

struct FlatLayout {
  std::vector<BlockSlots> blocks;
  std::int64_t numel = 0;         // real parameters
  std::int64_t padded_numel = 0;  // numel rounded up for even, aligned shards
};

FlatLayout make_flat_layout(const nn::Model& model, int world_size);

// Views of each parameter of block `block` in `flat` (a buffer laid out by `layout`).
std::vector<Tensor> block_views(const FlatLayout& layout, std::size_t block, const Tensor& flat);

// Initializes `flat` (padded_numel f32) from each parameter's init rule; padding stays 0.
void initialize_parameters(const FlatLayout& layout, std::uint64_t seed, const Tensor& flat);

}  // namespace zt::zero

// Where each parameter of a model lives in a flat buffer: blocks in model order, parameters
// in order within a block, each starting on a kParameterAlignElements boundary (Note [Why
// parameters are aligned]). Note [Why shards are padded]: the total is padded to a multiple
// of world_size × kShardAlignElements, so every rank's shard has the same length and starts
// on a 64-byte boundary; padding is zero and never read as data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/device/device_context.h"
#include "nn/model.h"

namespace zt::zero {

inline constexpr std::int64_t kShardAlignElements = 16;  // 64 bytes of f32

// Note [Why parameters are aligned]: a GEMM reads a weight or its gradient as a view into a
// flat buffer, and cuBLASLt picks its fastest kernels (and some epilogues at all) only for
// operands on 16-byte boundaries. Packed back to back, a parameter after one of odd width
// (a d_model of 36, a vocabulary of 50257) starts 2 or 4 bytes aligned. So each parameter
// starts on a multiple of 8 elements: 16 bytes in the bf16 or fp16 compute copy and its
// gradients, 32 in the f32 masters, optimizer states and f32 gradients, in every copy of the
// layout at once. The gaps are padding like the shards' (zero, never data); checkpoints and
// exports hold the model's unpadded order (ParameterSlot::unpadded_offset), so their format
// does not change with the alignment.
inline constexpr std::int64_t kParameterAlignElements = 8;

struct ParameterSlot {
  nn::ParameterSpec spec;
  std::int64_t offset = 0;           // elements from the start of the flat buffer, aligned
  std::int64_t unpadded_offset = 0;  // elements in the model's unpadded order
  // A tied parameter (nn::ParameterTie) has no storage of its own: `offset` is its source's,
  // inside block `*tied_to_block`, so views alias the source and gradients add into it.
  std::optional<std::size_t> tied_to_block;
};

struct BlockSlots {
  std::string name;
  std::int64_t offset = 0;           // first element of the block
  std::int64_t numel = 0;            // real elements of the block (no padding)
  std::int64_t aligned_numel = 0;    // elements its aligned parameters span, gaps included
  std::int64_t padded_numel = 0;     // aligned_numel rounded up when blocks are padded one by one
  std::int64_t unpadded_offset = 0;  // first element in the model's unpadded order
  std::vector<ParameterSlot> parameters;
};

enum class BlockPadding {
  kWholeBuffer,  // blocks back to back, the total padded once (DDP's one flat buffer)
  kEachBlock,    // every block padded on its own, so each block splits into equal shards
};

struct FlatLayout {
  std::vector<BlockSlots> blocks;
  std::int64_t numel = 0;         // real parameters
  std::int64_t padded_numel = 0;  // numel rounded up for even, aligned shards
};

FlatLayout make_flat_layout(const nn::Model& model, int world_size,
                            BlockPadding padding = BlockPadding::kWholeBuffer);

// Views of each parameter of block `block` in `flat` (a buffer laid out by `layout`); a
// tied parameter's view is its source's.
std::vector<Tensor> block_views(const FlatLayout& layout, std::size_t block, const Tensor& flat);
// The same views when each block lives in a buffer of its own (padded_numel):
// `block_buffers[b]` for block b. Tied parameters view their source block's buffer, which
// must be present.
std::vector<Tensor> block_local_views(const FlatLayout& layout, std::size_t block,
                                      std::span<const Tensor> block_buffers);
// Source blocks of block `block`'s tied parameters (empty for most blocks).
std::vector<std::size_t> tie_sources(const FlatLayout& layout, std::size_t block);

// Initializes `flat` (padded_numel f32, on `device`) from each parameter's init rule;
// padding stays 0.
void initialize_parameters(const FlatLayout& layout, std::uint64_t seed, const Tensor& flat,
                           DeviceContext& device);
// Initializes elements [begin, begin + out.size()) of the flat layout only, e.g. one
// rank's shard: exactly the values initialize_parameters gives those elements.
void initialize_parameter_range(const FlatLayout& layout, std::uint64_t seed, std::int64_t begin,
                                std::span<float> out);

// The real (unpadded) parameters of `flat` (f32, on `device`), in the model's unpadded
// order, on the host: what every strategy exports.
std::vector<float> unpadded_parameters(const FlatLayout& layout, const Tensor& flat,
                                       DeviceContext& device);

}  // namespace zt::zero

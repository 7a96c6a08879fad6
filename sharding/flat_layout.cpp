// Flat layout construction, views and deterministic initialization.
#include "sharding/flat_layout.h"

#include <algorithm>

#include "core/error.h"
#include "core/random.h"
#include "sharding/host_transfer.h"
#include "sharding/state_shard.h"

namespace zt::zero {

FlatLayout make_flat_layout(const nn::Model& model, int world_size, BlockPadding padding) {
  FlatLayout layout;
  const std::int64_t multiple = kShardAlignElements * world_size;
  const auto round_up = [multiple](std::int64_t n) {
    return (n + multiple - 1) / multiple * multiple;
  };
  // Note [Why parameters are aligned].
  const auto align = [](std::int64_t n) {
    return (n + kParameterAlignElements - 1) / kParameterAlignElements * kParameterAlignElements;
  };
  std::int64_t offset = 0;
  std::int64_t real = 0;
  for (std::size_t b = 0; b < model.num_blocks(); ++b) {
    BlockSlots block;
    block.name = model.block(b).name;
    block.offset = offset;
    block.unpadded_offset = real;
    const auto specs = model.block(b).module->parameter_specs();
    for (std::size_t p = 0; p < specs.size(); ++p) {
      if (const nn::ParameterTie* tie = model.tie_of(b, p)) {
        const ParameterSlot& source =
            layout.blocks.at(tie->source_block).parameters.at(tie->source_parameter);
        block.parameters.push_back(
            ParameterSlot{specs[p], source.offset, source.unpadded_offset, tie->source_block});
        continue;
      }
      block.parameters.push_back(ParameterSlot{specs[p], offset, real, std::nullopt});
      offset = align(offset + specs[p].shape.numel());
      real += specs[p].shape.numel();
    }
    block.numel = real - block.unpadded_offset;
    block.aligned_numel = offset - block.offset;
    block.padded_numel =
        padding == BlockPadding::kEachBlock ? round_up(block.aligned_numel) : block.aligned_numel;
    offset = block.offset + block.padded_numel;
    layout.blocks.push_back(std::move(block));
  }
  layout.numel = real;
  layout.padded_numel = round_up(offset);
  return layout;
}

std::vector<Tensor> block_local_views(const FlatLayout& layout, std::size_t block,
                                      std::span<const Tensor> block_buffers) {
  std::vector<Tensor> views;
  for (const auto& slot : layout.blocks.at(block).parameters) {
    const std::size_t owner = slot.tied_to_block.value_or(block);
    const Tensor& buffer = block_buffers[owner];
    ZT_CHECK(buffer.defined(), "block " + layout.blocks[owner].name + " is not resident for " +
                                   slot.spec.name + " of " + layout.blocks[block].name);
    views.push_back(buffer.view(slot.offset - layout.blocks[owner].offset, slot.spec.shape));
  }
  return views;
}

std::vector<std::size_t> tie_sources(const FlatLayout& layout, std::size_t block) {
  std::vector<std::size_t> sources;
  for (const auto& slot : layout.blocks.at(block).parameters) {
    if (slot.tied_to_block) sources.push_back(*slot.tied_to_block);
  }
  return sources;
}

void initialize_parameter_range(const FlatLayout& layout, std::uint64_t seed, std::int64_t begin,
                                std::span<float> out) {
  std::fill(out.begin(), out.end(), 0.0f);
  const std::int64_t end = begin + static_cast<std::int64_t>(out.size());
  for (std::size_t b = 0; b < layout.blocks.size(); ++b) {
    const auto& block = layout.blocks[b];
    for (std::size_t p = 0; p < block.parameters.size(); ++p) {
      const auto& slot = block.parameters[p];
      if (slot.tied_to_block) continue;  // its source initializes the shared storage
      // The key names the parameter, not its place, so any shard fills the same values.
      const std::int64_t first = std::max(begin, slot.offset);
      const std::int64_t last = std::min(end, slot.offset + slot.spec.shape.numel());
      if (first >= last) continue;
      nn::initialize_parameter(slot.spec.init, random_key(seed, b + 1, p + 1), first - slot.offset,
                               out.subspan(static_cast<std::size_t>(first - begin),
                                           static_cast<std::size_t>(last - first)));
    }
  }
}

std::vector<float> unpadded_parameters(const FlatLayout& layout, const Tensor& flat,
                                       DeviceContext& device) {
  std::vector<float> values(static_cast<std::size_t>(layout.numel));
  std::vector<StateRun> runs;
  append_state_runs(layout, 0, layout.padded_numel, 0, runs);
  for (const StateRun& run : runs) {
    read_to_host(device, flat.view(run.shard_offset, Shape{run.count}),
                 std::span<float>(values).subspan(static_cast<std::size_t>(run.begin),
                                                  static_cast<std::size_t>(run.count)));
  }
  return values;
}

std::vector<Tensor> block_views(const FlatLayout& layout, std::size_t block, const Tensor& flat) {
  std::vector<Tensor> views;
  for (const auto& slot : layout.blocks.at(block).parameters) {
    views.push_back(flat.view(slot.offset, slot.spec.shape));
  }
  return views;
}

void initialize_parameters(const FlatLayout& layout, std::uint64_t seed, const Tensor& flat,
                           DeviceContext& device) {
  write_from_host(device, flat, [&](std::int64_t first, std::span<float> out) {
    initialize_parameter_range(layout, seed, first, out);
  });
}

}  // namespace zt::zero

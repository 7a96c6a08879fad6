// Flat layout construction, views and deterministic initialization.
#include "sharding/flat_layout.h"

#include "core/random.h"

namespace zt::zero {

FlatLayout make_flat_layout(const nn::Model& model, int world_size) {
  FlatLayout layout;
  std::int64_t offset = 0;
  for (std::size_t b = 0; b < model.num_blocks(); ++b) {
    BlockSlots block;
    block.name = model.block(b).name;
    block.offset = offset;
    for (auto& spec : model.block(b).module->parameter_specs()) {
      const std::int64_t numel = spec.shape.numel();
      block.parameters.push_back(ParameterSlot{std::move(spec), offset});
      offset += numel;
    }
    block.numel = offset - block.offset;
    layout.blocks.push_back(std::move(block));
  }
  layout.numel = offset;
  const std::int64_t multiple = kShardAlignElements * world_size;
  layout.padded_numel = (offset + multiple - 1) / multiple * multiple;
  return layout;
}

std::vector<Tensor> block_views(const FlatLayout& layout, std::size_t block, const Tensor& flat) {
  std::vector<Tensor> views;
  for (const auto& slot : layout.blocks.at(block).parameters) {
    views.push_back(flat.view(slot.offset, slot.spec.shape));
  }
  return views;
}

void initialize_parameters(const FlatLayout& layout, std::uint64_t seed, const Tensor& flat) {
  float* data = flat.data_as<float>();
  for (std::size_t b = 0; b < layout.blocks.size(); ++b) {
    const auto& block = layout.blocks[b];
    for (std::size_t p = 0; p < block.parameters.size(); ++p) {
      const auto& slot = block.parameters[p];
      // The key names the parameter, not its place, so any shard fills the same values.
      const std::uint64_t key = random_key(seed, b + 1, p + 1);
      nn::initialize_parameter(slot.spec.init, key, 0,
                               {data + slot.offset, static_cast<std::size_t>(slot.spec.shape.numel())});
    }
  }
}

}  // namespace zt::zero

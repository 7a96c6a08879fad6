// Model block list and parameter counting.
#include "nn/model.h"

namespace zt::nn {

void Model::add_block(std::string block_name, std::unique_ptr<Module> module) {
  blocks_.push_back(Block{std::move(block_name), std::move(module)});
}

std::int64_t Model::parameter_count() const {
  std::int64_t count = 0;
  for (const auto& block : blocks_) {
    for (const auto& spec : block.module->parameter_specs()) count += spec.shape.numel();
  }
  return count;
}

}  // namespace zt::nn

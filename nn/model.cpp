// Model block list and parameter counting.
#include "nn/model.h"

#include "core/error.h"

namespace zt::nn {

void Model::add_block(std::string block_name, std::unique_ptr<Module> module) {
  blocks_.push_back(Block{std::move(block_name), std::move(module)});
}

std::int64_t Model::parameter_count() const {
  std::int64_t count = 0;
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    const auto specs = blocks_[b].module->parameter_specs();
    for (std::size_t p = 0; p < specs.size(); ++p) {
      if (tie_of(b, p) == nullptr) count += specs[p].shape.numel();
    }
  }
  return count;
}

void Model::tie(const ParameterTie& tie) {
  ZT_CHECK(tie.source_block < tie.block && tie.block < blocks_.size(),
           "a tie's source block must come before the tied block");
  const auto tied = blocks_[tie.block].module->parameter_specs().at(tie.parameter);
  const auto source = blocks_[tie.source_block].module->parameter_specs().at(tie.source_parameter);
  ZT_CHECK(tied.shape == source.shape, "tied parameters " + tied.name + " " +
                                           tied.shape.to_string() + " and " + source.name + " " +
                                           source.shape.to_string() + " differ in shape");
  ties_.push_back(tie);
}

const ParameterTie* Model::tie_of(std::size_t block, std::size_t parameter) const {
  for (const auto& tie : ties_) {
    if (tie.block == block && tie.parameter == parameter) return &tie;
  }
  return nullptr;
}

}  // namespace zt::nn

// Model: an ordered list of blocks. A block is the unit the sharding layer
// gathers, releases, reduces and checkpoints; the loss follows the last block.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/module.h"

namespace zt::nn {

// Parameter `parameter` of block `block` is the same tensor as parameter `source_parameter`
// of the earlier block `source_block` (weight tying: a GPT head reading the token
// embedding). The module still declares it; storage and gradient belong to the source.
struct ParameterTie {
  std::size_t block = 0;
  std::size_t parameter = 0;
  std::size_t source_block = 0;
  std::size_t source_parameter = 0;
};

struct Block {
  std::string name;  // "embedding", "block.3", "head"
  std::unique_ptr<Module> module;
};

class Model {
 public:
  explicit Model(std::string name) : name_(std::move(name)) {}
  void add_block(std::string block_name, std::unique_ptr<Module> module);

  const std::string& name() const { return name_; }
  std::size_t num_blocks() const { return blocks_.size(); }
  Block& block(std::size_t index) { return blocks_.at(index); }
  const Block& block(std::size_t index) const { return blocks_.at(index); }
  // Distinct parameters: a tied parameter counts once.
  std::int64_t parameter_count() const;

  // Declares a tie; both parameters must have the same shape and the source block must come
  // first (its gradient is complete only after its own backward, which runs last).
  void tie(const ParameterTie& tie);
  const std::vector<ParameterTie>& ties() const { return ties_; }
  // The tie whose tied side is (block, parameter), if any.
  const ParameterTie* tie_of(std::size_t block, std::size_t parameter) const;

 private:
  std::string name_;
  std::vector<Block> blocks_;
  std::vector<ParameterTie> ties_;
};

}  // namespace zt::nn

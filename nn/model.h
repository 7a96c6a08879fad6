// Model: an ordered list of blocks (DESIGN §2). A block is the unit the sharding layer
// gathers, releases, reduces and checkpoints; the loss follows the last block.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/module.h"

namespace zt::nn {

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
  std::int64_t parameter_count() const;

 private:
  std::string name_;
  std::vector<Block> blocks_;
};

}  // namespace zt::nn

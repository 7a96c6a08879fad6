// Folding each block's transient f32 gradients into the standing (narrower) ones, the first
// fold of a step writing instead of adding (Note [The first fold writes] in block_folds.cpp).
// Used by DdpStrategy and by ShardedStrategy's full gradients.
#pragma once

#include <cstddef>
#include <vector>

#include "core/device/device_ops.h"
#include "core/tensor.h"

namespace zt::zero {

class BlockFolds {
 public:
  // Until the first start_step every fold adds: the standing gradients start as zeros.
  explicit BlockFolds(std::size_t blocks) : unwritten_(blocks, false) {}

  // A step begins: every block's next fold writes its region (nothing needs zeroing first).
  void start_step();
  // Folds `block`'s f32 gradients into `region` of the standing gradients: rounds them in on
  // the block's first fold of the step, adds them after.
  void fold(DeviceOps& ops, std::size_t block, const Tensor& block_gradients, const Tensor& region);
  // Checks that every block folded since start_step (otherwise its region holds the last
  // step's gradients).
  void check_all_folded() const;

 private:
  std::vector<bool> unwritten_;  // per block: no fold since start_step
};

}  // namespace zt::zero

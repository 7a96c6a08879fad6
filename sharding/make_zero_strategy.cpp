// Chooses the ZeRO strategy for zero.stage.
#include "core/error.h"
#include "sharding/ddp_strategy.h"
#include "sharding/sharded_strategy.h"

namespace zt::zero {

std::unique_ptr<ZeroStrategy> make_zero_strategy(const StrategyInputs& inputs) {
  const std::int64_t stage = inputs.config.zero.stage;
  if (stage == 0) return std::make_unique<DdpStrategy>(inputs);
  return std::make_unique<ShardedStrategy>(inputs, static_cast<int>(stage));
}

}  // namespace zt::zero

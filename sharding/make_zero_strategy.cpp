// Chooses the ZeRO strategy for zero.stage.
#include "core/error.h"
#include "sharding/ddp_strategy.h"

namespace zt::zero {

std::unique_ptr<ZeroStrategy> make_zero_strategy(const StrategyInputs& inputs) {
  const std::int64_t stage = inputs.config.zero.stage;
  if (stage == 0) return std::make_unique<DdpStrategy>(inputs);
  throw ConfigError(inputs.config.source + ": zero.stage = " + std::to_string(stage) +
                    ": ZeRO stages 1-3 are not implemented in this version yet; use "
                    "zero.stage = 0 (DDP)");
}

}  // namespace zt::zero

// The batch-size rule, global = micro × accumulation × world: any two of
// train.micro_batch_size, train.grad_accum_steps and train.global_batch_size determine the
// third (0 = not given). It needs the world size, so it is applied at start, not at load.
#pragma once

#include <cstdint>
#include <string>

#include "core/config/config.h"

namespace zt {

struct BatchSizes {
  std::int64_t micro_batch_size = 0;   // samples per rank per micro-batch
  std::int64_t grad_accum_steps = 0;   // micro-batches per optimizer step
  std::int64_t global_batch_size = 0;  // samples per optimizer step over all ranks
  std::string inferred;                // what was inferred and how, for the run log
};

// Default micro-batch when neither it nor the global batch is given.
inline constexpr std::int64_t kDefaultMicroBatchSize = 32;

// Resolves the three sizes for `world_size` ranks. Throws ConfigError showing the
// arithmetic and which value to change when the given values disagree or do not divide.
BatchSizes resolve_batch_sizes(const Config& config, std::int64_t world_size);

}  // namespace zt

// Checks train.global_batch_size against the other batch keys and the world size.
#include "core/config/batch_size.h"

#include <string>

#include "core/error.h"

namespace zt {

std::int64_t resolve_global_batch_size(const Config& config, std::int64_t world_size) {
  ZT_CHECK(world_size >= 1, "world size " + std::to_string(world_size));
  const TrainConfig& train = config.train;
  const std::string product = "train.micro_batch_size (" + std::to_string(train.micro_batch_size) +
                              ") x train.grad_accum_steps (" +
                              std::to_string(train.grad_accum_steps) + ") x world size (" +
                              std::to_string(world_size) + ")";
  std::int64_t per_step = 0;
  if (__builtin_mul_overflow(train.micro_batch_size, train.grad_accum_steps, &per_step) ||
      __builtin_mul_overflow(per_step, world_size, &per_step)) {
    throw ConfigError(config.source + ": " + product + " is too large");
  }
  if (train.global_batch_size != 0 && train.global_batch_size != per_step) {
    throw ConfigError(config.source +
                      ": train.global_batch_size: " + std::to_string(train.global_batch_size) +
                      " does not equal " + product + " = " + std::to_string(per_step) +
                      "; set it to " + std::to_string(per_step) + ", or to 0 to infer it");
  }
  return per_step;
}

}  // namespace zt

// The batch-size rule of DESIGN §8, global = micro x accumulation x world, which needs the
// world size and so is checked at launch rather than when the file is loaded.
#pragma once

#include <cstdint>

#include "core/config/config.h"

namespace zt {

// micro_batch_size x grad_accum_steps x world_size, the samples per optimizer step. Throws
// ConfigError naming train.global_batch_size when it is set (non-zero) to anything else,
// or when the product does not fit in an int64.
std::int64_t resolve_global_batch_size(const Config& config, std::int64_t world_size);

}  // namespace zt

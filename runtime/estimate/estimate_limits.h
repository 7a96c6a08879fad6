// What the memory estimator refuses before it runs: a shape whose element counts do not fit
// in int64, and a model cut into more collectives per pass than the estimate can walk in
// seconds. Each refusal is a ConfigError naming the key to change.
#pragma once

#include <cstdint>

#include "core/config/config.h"
#include "nn/model.h"

namespace zt::estimate {

// The most reduce-scatter / all-gather segments one pass over the model may launch: the
// estimate runs every one of them several times per step, for every cell of its table.
inline constexpr std::int64_t kMaxSegmentsPerPass = std::int64_t{1} << 15;

// Throws ConfigError when `config` at `world_size` with `micro_batch_size` samples per
// micro-batch has an activation or byte count beyond int64 (naming the batch size key), or
// more than kMaxSegmentsPerPass segments (naming zero.reduce_bucket_size and the least size
// that fits).
void check_estimable(const Config& config, const nn::Model& model, int world_size,
                     std::int64_t micro_batch_size);

}  // namespace zt::estimate

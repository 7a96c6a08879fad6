// What a run should hear about its learning-rate schedule before it trains: a warmup longer
// than the run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/config/config.h"

namespace zt::optim {

// When scheduler.warmup_steps > train.steps: the rate never reaches optimizer.lr.
std::optional<std::string> warmup_outlasts_run_warning(const Config& config);

}  // namespace zt::optim

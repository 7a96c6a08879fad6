// What a run should hear about its learning-rate schedule before it trains: a warmup longer
// than the run, and a resume under another train.steps (which reshapes the decay).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/config/config.h"

namespace zt::optim {

// When scheduler.warmup_steps > train.steps: the rate never reaches optimizer.lr.
std::optional<std::string> warmup_outlasts_run_warning(const Config& config);

// When `config` resumes a run that had train.steps = `saved_train_steps` and its own
// train.steps differs under a schedule that decays over train.steps (warmup_cosine,
// warmup_linear): the rest of the run follows another curve than the one it began on.
std::optional<std::string> resumed_schedule_warning(const Config& config,
                                                    std::int64_t saved_train_steps);

}  // namespace zt::optim

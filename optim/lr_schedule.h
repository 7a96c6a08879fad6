// Learning-rate schedules: a pure function of the step, so every rank (and a resumed run)
// computes the same rate without state.
#pragma once

#include <cstdint>

#include "core/config/config.h"

namespace zt::optim {

// The learning rate of optimizer step `step` (counting from 1) of `total_steps`:
//   warmup (steps 1..W):   lr · step / W
//   constant / warmup:     lr afterwards
//   warmup_cosine:         lr · (m + (1 - m) · ½(1 + cos(π p)))   with p = (step - W) / (T - W)
//   warmup_linear:         lr · (m + (1 - m) · (1 - p))
// where m = scheduler.min_lr_ratio. A schedule without warmup has W = 0.
double learning_rate(const SchedulerConfig& scheduler, double base_lr, std::int64_t step,
                     std::int64_t total_steps);

}  // namespace zt::optim

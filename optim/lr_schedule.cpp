// Learning-rate schedule arithmetic.
#include "optim/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace zt::optim {

double learning_rate(const SchedulerConfig& scheduler, double base_lr, std::int64_t step,
                     std::int64_t total_steps) {
  const std::int64_t warmup = scheduler.warmup_steps;
  if (warmup > 0 && step <= warmup) {
    return base_lr * static_cast<double>(step) / static_cast<double>(warmup);
  }
  const double floor = scheduler.min_lr_ratio;
  const std::int64_t decay_steps = std::max<std::int64_t>(1, total_steps - warmup);
  const double progress =
      std::clamp(static_cast<double>(step - warmup) / static_cast<double>(decay_steps), 0.0, 1.0);
  switch (scheduler.type) {
    case SchedulerType::kConstant:
    case SchedulerType::kWarmup:
      return base_lr;
    case SchedulerType::kWarmupCosine:
      return base_lr *
             (floor + (1.0 - floor) * 0.5 * (1.0 + std::cos(std::numbers::pi * progress)));
    case SchedulerType::kWarmupLinear:
      return base_lr * (floor + (1.0 - floor) * (1.0 - progress));
  }
  return base_lr;
}

}  // namespace zt::optim

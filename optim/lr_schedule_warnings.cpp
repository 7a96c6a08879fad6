// The schedule warnings' conditions and wording.
#include "optim/lr_schedule_warnings.h"

namespace zt::optim {

std::optional<std::string> warmup_outlasts_run_warning(const Config& config) {
  const std::int64_t warmup = config.scheduler.warmup_steps;
  const std::int64_t steps = config.train.steps;
  if (warmup <= steps) return std::nullopt;
  return "scheduler.warmup_steps = " + std::to_string(warmup) +
         " is more than train.steps = " + std::to_string(steps) +
         ": the learning rate climbs only to " + std::to_string(steps) + "/" +
         std::to_string(warmup) +
         " of optimizer.lr and never decays; lower scheduler.warmup_steps (or raise "
         "train.steps)";
}

}  // namespace zt::optim

// The schedule warnings' conditions and wording.
#include "optim/lr_schedule_warnings.h"

#include "core/config/config_enums.h"

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

std::optional<std::string> resumed_schedule_warning(const Config& config,
                                                    std::int64_t saved_train_steps) {
  const SchedulerType type = config.scheduler.type;
  const bool decays = type == SchedulerType::kWarmupCosine || type == SchedulerType::kWarmupLinear;
  if (!decays || saved_train_steps == config.train.steps) return std::nullopt;
  return "train.steps = " + std::to_string(config.train.steps) +
         ", but the checkpoint's run had train.steps = " + std::to_string(saved_train_steps) +
         ": scheduler.type = \"" + std::string(config_name(type)) +
         "\" decays over train.steps, so the learning rate from here follows the curve of a " +
         std::to_string(config.train.steps) + "-step run, not the one this run began on";
}

}  // namespace zt::optim

// The loss-scale state machine.
#include "optim/loss_scaler.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace zt::optim {

DynamicLossScaler::DynamicLossScaler(const LossScalerOptions& options)
    : options_(options), scale_(options.initial_scale) {}

bool DynamicLossScaler::update(bool overflow) {
  if (overflow) {
    if (scale_ <= options_.min_scale) {
      throw Error("fp16 gradients overflowed at the minimum loss scale " +
                  std::to_string(options_.min_scale) +
                  " (precision.min_loss_scale): the model diverged; lower optimizer.lr or "
                  "train in bf16");
    }
    scale_ = std::max(options_.min_scale, scale_ * options_.backoff_factor);
    clean_steps_ = 0;
    return true;
  }
  if (++clean_steps_ >= options_.growth_interval) {
    scale_ *= options_.growth_factor;
    clean_steps_ = 0;
  }
  return false;
}

}  // namespace zt::optim

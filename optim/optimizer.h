// Optimizer: updates a flat fp32 span of parameters from a flat fp32 span of gradients and
// its own flat fp32 state spans. It never knows whose shard it updates or where it lives.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "core/config/config.h"

namespace zt::optim {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual std::string_view name() const = 0;
  // fp32 state values kept per parameter element (SGD with momentum 1, Adam 2).
  virtual int states_per_element() const = 0;
  // One update of `params` in place. `states` holds states_per_element() spans, each as
  // long as `params`. `step` counts updates from 1 (Adam's bias correction).
  virtual void step(std::span<float> params, std::span<const float> grads,
                    std::span<const std::span<float>> states, std::int64_t step,
                    float lr) const = 0;
};

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config);

}  // namespace zt::optim

// Builds the optimizer a config names.
#include "optim/adam.h"
#include "optim/sgd.h"

namespace zt::optim {

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config) {
  const auto f = [](double value) { return static_cast<float>(value); };
  switch (config.type) {
    case OptimizerType::kSgd:
      return std::make_unique<Sgd>(f(config.momentum), config.nesterov, f(config.weight_decay));
    case OptimizerType::kAdam:
      return std::make_unique<Adam>(f(config.beta1), f(config.beta2), f(config.eps),
                                    f(config.weight_decay), false);
    case OptimizerType::kAdamW:
      return std::make_unique<Adam>(f(config.beta1), f(config.beta2), f(config.eps),
                                    f(config.weight_decay), true);
  }
  return nullptr;
}

}  // namespace zt::optim

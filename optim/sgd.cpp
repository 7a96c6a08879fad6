// SGD: a loop over optim::math::sgd_update.
#include "optim/sgd.h"

#include "core/error.h"
#include "optim/math/optimizer_math.h"

namespace zt::optim {

Sgd::Sgd(float momentum, bool nesterov, float weight_decay)
    : momentum_(momentum), nesterov_(nesterov), weight_decay_(weight_decay) {}

void Sgd::step(std::span<float> params, std::span<const float> grads,
               std::span<const std::span<float>> states, std::int64_t, float lr) const {
  ZT_CHECK(grads.size() == params.size(), "sgd: gradient span does not match parameters");
  ZT_CHECK(states.size() == static_cast<std::size_t>(states_per_element()),
           "sgd: wrong number of state spans");
  float unused_buffer = 0.0f;
  for (std::size_t i = 0; i < params.size(); ++i) {
    float& buffer = momentum_ == 0.0f ? unused_buffer : states[0][i];
    math::sgd_update(params[i], grads[i], buffer, lr, momentum_, weight_decay_, nesterov_);
  }
}

}  // namespace zt::optim

// Adam/AdamW: per-step scalars once, then a loop over optim::math::adam_update.
#include "optim/adam.h"

#include <cmath>

#include "core/error.h"
#include "optim/math/optimizer_math.h"

namespace zt::optim {

Adam::Adam(float beta1, float beta2, float eps, float weight_decay, bool decoupled_weight_decay)
    : beta1_(beta1),
      beta2_(beta2),
      eps_(eps),
      weight_decay_(weight_decay),
      decoupled_(decoupled_weight_decay) {}

void Adam::step(std::span<float> params, std::span<const float> grads,
                std::span<const std::span<float>> states, std::int64_t step, float lr) const {
  ZT_CHECK(grads.size() == params.size(), "adam: gradient span does not match parameters");
  ZT_CHECK(
      states.size() == 2 && states[0].size() == params.size() && states[1].size() == params.size(),
      "adam: moment spans do not match parameters");
  ZT_CHECK(step >= 1, "adam: steps count from 1");
  const math::AdamStepScalars scalars{
      lr,
      beta1_,
      beta2_,
      eps_,
      weight_decay_,
      static_cast<float>(1.0 - std::pow(double{beta1_}, static_cast<double>(step))),
      static_cast<float>(1.0 - std::pow(double{beta2_}, static_cast<double>(step))),
      decoupled_};
  std::span<float> m = states[0];
  std::span<float> v = states[1];
  for (std::size_t i = 0; i < params.size(); ++i) {
    math::adam_update(params[i], grads[i], m[i], v[i], scalars);
  }
}

}  // namespace zt::optim

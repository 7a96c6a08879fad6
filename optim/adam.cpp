// Adam/AdamW: per-step scalars once, then optim::math::adam_update per element, in one CPU
// pass or one CUDA kernel by where the tensors live.
#include "optim/adam.h"

#include <array>
#include <cmath>

#include "core/error.h"
#include "optim/cuda_optimizer_entries.h"
#include "optim/math/optimizer_math.h"
#include "optim/step_internal.h"

namespace zt::optim {

Adam::Adam(float beta1, float beta2, float eps, float weight_decay, bool decoupled_weight_decay)
    : beta1_(beta1),
      beta2_(beta2),
      eps_(eps),
      weight_decay_(weight_decay),
      decoupled_(decoupled_weight_decay) {}

math::AdamStepScalars Adam::step_scalars(std::int64_t step, float lr) const {
  ZT_CHECK(step >= 1, "adam: steps count from 1");
  // The bias corrections in double, rounded once: the same scalars on every device.
  return {lr,
          beta1_,
          beta2_,
          eps_,
          weight_decay_,
          static_cast<float>(1.0 - std::pow(double{beta1_}, static_cast<double>(step))),
          static_cast<float>(1.0 - std::pow(double{beta2_}, static_cast<double>(step))),
          decoupled_};
}

HostScalar Adam::update(const Tensor& params, const Tensor& grads, std::span<const Tensor> states,
                        const Tensor& compute_params, std::int64_t step, float lr,
                        DeviceContext& device, bool sum_squares) const {
  const bool on_host =
      detail::check_step_operands(name(), params, grads, states, 2, compute_params, device);
  const math::AdamStepScalars scalars = step_scalars(step, lr);
  if (params.device().meta) return 0.0;  // the estimator's meta device: nothing to update
  if (!on_host) {
    cuda_optimizer_entries().get().adam_step(params, grads, states[0], states[1], compute_params,
                                             scalars, device.compute_stream().native_handle());
    return sum_squares ? device.ops().sum_of_squares(grads) : HostScalar();
  }
  const std::array<float*, 2> moments{static_cast<float*>(states[0].data()),
                                      static_cast<float*>(states[1].data())};
  double squares = 0.0;
  detail::with_typed_operands(grads, compute_params, [&](const auto* g, auto* compute) {
    squares = detail::step_elements(
        g, static_cast<float*>(params.data()), moments, compute,
        static_cast<std::size_t>(params.numel()),
        [scalars](float& param, float grad, float& m, float& v) {
          math::adam_update(param, grad, m, v, scalars);
        },
        sum_squares);
  });
  return squares;
}

}  // namespace zt::optim

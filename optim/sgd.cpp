// SGD: one pass of optim::math::sgd_update on the CPU, the same function in one CUDA kernel on
// a GPU.
#include "optim/sgd.h"

#include <array>

#include "core/error.h"
#include "optim/cuda_optimizer_entries.h"
#include "optim/math/optimizer_math.h"
#include "optim/step_internal.h"

namespace zt::optim {

Sgd::Sgd(float momentum, bool nesterov, float weight_decay)
    : momentum_(momentum), nesterov_(nesterov), weight_decay_(weight_decay) {}

HostScalar Sgd::update(const Tensor& params, const Tensor& grads, std::span<const Tensor> states,
                       const Tensor& compute_params, std::int64_t, float lr, DeviceContext& device,
                       bool sum_squares) const {
  const bool on_host = detail::check_step_operands(name(), params, grads, states,
                                                   static_cast<std::size_t>(states_per_element()),
                                                   compute_params, device);
  if (params.device().meta) return 0.0;  // the estimator's meta device: nothing to update
  if (!on_host) {
    cuda_optimizer_entries().get().sgd_step(params, grads, momentum_ == 0.0f ? nullptr : &states[0],
                                            compute_params, lr, momentum_, weight_decay_, nesterov_,
                                            device.compute_stream().native_handle());
    return sum_squares ? device.ops().sum_of_squares(grads) : HostScalar();
  }
  float* p = static_cast<float*>(params.data());
  const auto n = static_cast<std::size_t>(params.numel());
  const float momentum = momentum_;
  const float weight_decay = weight_decay_;
  const bool nesterov = nesterov_;
  double squares = 0.0;
  detail::with_typed_operands(grads, compute_params, [&](const auto* g, auto* compute) {
    if (momentum == 0.0f) {  // plain SGD keeps no buffer
      squares = detail::step_elements(
          g, p, std::array<float*, 0>{}, compute, n,
          [=](float& param, float grad) {
            float unused_buffer = 0.0f;
            math::sgd_update(param, grad, unused_buffer, lr, momentum, weight_decay, nesterov);
          },
          sum_squares);
      return;
    }
    squares = detail::step_elements(
        g, p, std::array<float*, 1>{static_cast<float*>(states[0].data())}, compute, n,
        [=](float& param, float grad, float& buffer) {
          math::sgd_update(param, grad, buffer, lr, momentum, weight_decay, nesterov);
        },
        sum_squares);
  });
  return squares;
}

}  // namespace zt::optim

// The operand check every optimizer step makes before it touches memory.
#include <string>

#include "core/error.h"
#include "optim/step_internal.h"

namespace zt::optim::detail {
namespace {

// The CPU's index only names a rank's slice of it, so any CPU tensor is on a CPU context.
bool on_device(const Tensor& tensor, const Device& device) {
  return tensor.device().kind == device.kind &&
         (device.kind == DeviceKind::kCpu || tensor.device().index == device.index);
}

}  // namespace

bool check_step_operands(std::string_view optimizer, const Tensor& params, const Tensor& grads,
                         std::span<const Tensor> states, std::size_t state_count,
                         const Tensor& compute_params, const DeviceContext& device) {
  const std::string name(optimizer);
  const Device& where = device.device();
  ZT_CHECK(params.dtype() == DType::kF32, name + ": parameters must be f32 master weights");
  ZT_CHECK(is_floating(grads.dtype()), name + ": gradients must be floating");
  ZT_CHECK(grads.numel() == params.numel(), name + ": gradients do not match the parameters");
  ZT_CHECK(states.size() == state_count, name + ": " + std::to_string(states.size()) +
                                             " state tensors given, " +
                                             std::to_string(state_count) + " needed");
  for (const Tensor& state : states) {
    ZT_CHECK(state.dtype() == DType::kF32 && state.numel() == params.numel(),
             name + ": optimizer states must be f32 and as long as the parameters");
    ZT_CHECK(on_device(state, where), name + ": a state tensor is not on " + where.to_string());
  }
  ZT_CHECK(on_device(params, where) && on_device(grads, where),
           name + ": parameters on " + params.device().to_string() + " and gradients on " +
               grads.device().to_string() + " stepped on " + where.to_string());
  if (compute_params.defined()) {
    ZT_CHECK(is_floating(compute_params.dtype()) && compute_params.numel() == params.numel(),
             name + ": the compute-dtype copy must be floating and as long as the parameters");
    // Written after each element's update from a separate read; the same storage would be
    // rounded under the update's feet.
    ZT_CHECK(params.numel() == 0 || params.device().meta || compute_params.data() != params.data(),
             name + ": the compute-dtype copy is the master itself");
    ZT_CHECK(on_device(compute_params, where),
             name + ": the compute-dtype copy is not on " + where.to_string());
  }
  return where.kind == DeviceKind::kCpu;
}

}  // namespace zt::optim::detail

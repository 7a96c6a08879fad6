// The reference loop of the CPU Adam: math::adam_update per element, then the optional
// compute-dtype copy through core's conversions. The vector paths' tails run here too.
#include <cstdint>

#include "core/dtype.h"
#include "optim/cpu_adam/cpu_adam_internal.h"

namespace zt::optim::detail {

void cpu_adam_scalar(const CpuAdamGroup& group, const math::AdamStepScalars& scalars) {
  float* p = group.params;
  const float* g = group.grads;
  float* m = group.exp_avg;
  float* v = group.exp_avg_sq;
  const std::size_t n = group.elements;
  if (group.compute_params == nullptr) {
    for (std::size_t i = 0; i < n; ++i) math::adam_update(p[i], g[i], m[i], v[i], scalars);
    return;
  }
  auto* out = static_cast<std::uint16_t*>(group.compute_params);
  if (group.compute_dtype == DType::kBF16) {
    for (std::size_t i = 0; i < n; ++i) {
      math::adam_update(p[i], g[i], m[i], v[i], scalars);
      out[i] = f32_to_bf16_bits(p[i]);
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      math::adam_update(p[i], g[i], m[i], v[i], scalars);
      out[i] = f32_to_f16_bits(p[i]);
    }
  }
}

}  // namespace zt::optim::detail

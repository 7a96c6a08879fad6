// Deciding the standing model-state buffers of a stage, and the ZeRO paper's arithmetic.
#include "sharding/memory_plan.h"

#include "core/error.h"

namespace zt::zero {

MemoryPlan plan_memory(const MemoryPlanInputs& in) {
  ZT_CHECK(in.stage >= 0 && in.stage <= 3, "memory plan for stage " + std::to_string(in.stage));
  const auto compute_bytes = static_cast<std::int64_t>(dtype_size(in.compute_dtype));
  constexpr std::int64_t kF32Bytes = 4;
  // Stage 0 has no shards: its "shard" is the whole buffer.
  const std::int64_t shard = in.stage == 0 ? in.padded_numel : in.shard_numel;
  MemoryPlan plan;
  plan.full_parameters = in.stage < 3;
  plan.full_gradients = in.stage == 0 || (in.stage == 1 && in.grad_accum_steps > 1);
  plan.transient_block_gradients = !plan.full_gradients || in.gradient_dtype != DType::kF32;
  plan.offloaded_optimizer = in.offload_optimizer && in.stage > 0;
  plan.separate_master = in.compute_dtype != DType::kF32 && !plan.offloaded_optimizer;
  plan.offloaded_parameters = in.offload_parameters && in.stage == 3 && plan.offloaded_optimizer;
  plan.parameter_bytes = plan.offloaded_parameters
                             ? 0
                             : (plan.full_parameters ? in.padded_numel : shard) * compute_bytes;
  plan.gradient_bytes = (plan.full_gradients ? in.padded_numel : shard) *
                        static_cast<std::int64_t>(dtype_size(in.gradient_dtype));
  const std::int64_t state_bytes =
      shard * kF32Bytes * (in.states_per_element + (plan.separate_master ? 1 : 0));
  if (plan.offloaded_optimizer) {
    // Masters, states and the gradients brought over, all f32; the compute-dtype copy going
    // back unless that is f32 (then the master itself goes).
    plan.host_offload_bytes = shard * (kF32Bytes * (in.states_per_element + 2) +
                                       (in.compute_dtype == DType::kF32 ? 0 : compute_bytes));
  } else {
    plan.optimizer_state_bytes = state_bytes;
  }
  return plan;
}

double zero_formula_bytes(int stage, double psi, int n, double p, double g, double k) {
  switch (stage) {
    case 0:
      return (p + g + k) * psi;
    case 1:
      return (p + g) * psi + k * psi / n;
    case 2:
      return p * psi + (g + k) * psi / n;
    default:
      return (p + g + k) * psi / n;
  }
}

double zero_formula_bytes(int stage, double psi, int world_size, DType compute_dtype,
                          int states_per_element) {
  const auto bytes = static_cast<double>(dtype_size(compute_dtype));
  const double master = compute_dtype == DType::kF32 ? 0.0 : 4.0;
  return zero_formula_bytes(stage, psi, world_size, bytes, bytes,
                            4.0 * states_per_element + master);
}

}  // namespace zt::zero

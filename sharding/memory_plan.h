// MemoryPlan: what a ZeRO stage keeps standing on each rank (which model-state buffers exist,
// where the master weights and the gradient shard live, and so how many bytes of parameters,
// gradients and optimizer states), decided once from the stage, the precision, the world and
// the layout. DDP and the sharded strategies allocate by it; tests, the benchmark and the docs
// compare it with the ZeRO paper's arithmetic (zero_formula_bytes). Note [Model-state bytes] in
// docs/ARCHITECTURE.md states the formulas.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace zt::zero {

struct MemoryPlanInputs {
  int stage = 0;
  DType compute_dtype = DType::kF32;
  DType gradient_dtype = DType::kF32;  // of the standing gradients (precision.grad_dtype)
  int world_size = 1;
  std::int64_t padded_numel = 0;  // elements of the flat layout, padding included
  std::int64_t shard_numel = 0;   // elements of this rank's shard (stages 1-3)
  int states_per_element = 0;     // fp32 optimizer states per parameter (Adam: 2)
  std::int64_t grad_accum_steps = 1;
  // offload.optimizer = "cpu": fp32 masters and optimizer states live in host memory.
  bool offload_optimizer = false;
  // offload.params = "cpu" (stage 3, with the optimizer offloaded): the parameter shard is
  // the offloaded optimizer's host copy of the masters in the compute dtype.
  bool offload_parameters = false;
};

struct MemoryPlan {
  // Stages 0-2: every parameter in the compute dtype; stage 3 keeps its shard only.
  bool full_parameters = true;
  // Gradients accumulate in one full fp32 buffer: stage 0, and stage 1 with more than one
  // micro-batch per step (it reduces once, at the boundary). Otherwise each block's backward
  // writes a transient buffer that is reduce-scattered into the standing gradient shard.
  bool full_gradients = true;
  // Backward writes each block's fp32 gradients into a transient buffer (comm_buffers) that
  // is then reduced or folded into the standing gradients: whenever there are no full fp32
  // gradients for it to write into directly.
  bool transient_block_gradients = false;
  // fp32 master weights of their own on the device: only when the compute dtype is not fp32
  // and the optimizer is not offloaded; in fp32 the master is the parameter storage itself
  // (the rank's slices of it in stages 1-2).
  bool separate_master = false;
  // Masters and optimizer states in host memory (category host_offload, host tracker).
  bool offloaded_optimizer = false;
  // Stage 3's parameter shard in host memory (no device parameter shard).
  bool offloaded_parameters = false;

  std::int64_t parameter_bytes = 0;        // category parameters
  std::int64_t gradient_bytes = 0;         // category gradients
  std::int64_t optimizer_state_bytes = 0;  // category optimizer_states (master included)
  // Host memory of an offloaded optimizer: masters, states, gradients and compute copy.
  std::int64_t host_offload_bytes = 0;
  std::int64_t model_state_bytes() const {
    return parameter_bytes + gradient_bytes + optimizer_state_bytes;
  }
};

MemoryPlan plan_memory(const MemoryPlanInputs& inputs);

// The ZeRO paper's model-state bytes per rank for `psi` parameters on `world_size` ranks,
// with `parameter_bytes` and `gradient_bytes` per parameter and `optimizer_bytes` per
// parameter of optimizer states (fp32 master included): stage 0 (P + G + K)Ψ, stage 1
// (P + G)Ψ + KΨ/N, stage 2 PΨ + (G + K)Ψ/N, stage 3 (P + G + K)Ψ/N. Mixed-precision Adam
// is P = G = 2, K = 12 (16Ψ, 4Ψ + 12Ψ/N, 2Ψ + 14Ψ/N, 16Ψ/N); fp32 Adam P = G = 4, K = 8.
double zero_formula_bytes(int stage, double psi, int world_size, double parameter_bytes,
                          double gradient_bytes, double optimizer_bytes);
// The same for an optimizer with `states_per_element` fp32 states in `compute_dtype`, as
// DeepSpeed counts it (gradients in the compute dtype).
double zero_formula_bytes(int stage, double psi, int world_size, DType compute_dtype,
                          int states_per_element);

}  // namespace zt::zero

// Private to optim/cpu_adam/: the per-path loops (one file each) and the slicing of a group
// into chunks, which the checked entry point and the thread pool share.
#pragma once

#include <cstddef>

#include "optim/cpu_adam/cpu_adam.h"

namespace zt::optim::detail {

// Each updates all of `group`, already checked; the vector loops hand their tail (fewer
// elements than one vector) to cpu_adam_scalar, so the tail is the reference semantics.
void cpu_adam_scalar(const CpuAdamGroup& group, const math::AdamStepScalars& scalars);
void cpu_adam_avx2(const CpuAdamGroup& group, const math::AdamStepScalars& scalars);
void cpu_adam_avx512(const CpuAdamGroup& group, const math::AdamStepScalars& scalars);

// Throws an internal error unless `group` can be updated by `path` on this CPU.
void check_cpu_adam_group(CpuAdamPath path, const CpuAdamGroup& group);
// Runs `path` over `group` without checks.
void run_cpu_adam_path(CpuAdamPath path, const CpuAdamGroup& group,
                       const math::AdamStepScalars& scalars);

// Elements [first, first + count) of `group` as a group of their own.
inline CpuAdamGroup slice_cpu_adam_group(const CpuAdamGroup& group, std::size_t first,
                                         std::size_t count) {
  CpuAdamGroup slice = group;
  slice.params += first;
  slice.grads += first;
  slice.exp_avg += first;
  slice.exp_avg_sq += first;
  slice.elements = count;
  if (group.compute_params != nullptr) {
    slice.compute_params =
        static_cast<std::byte*>(group.compute_params) + first * dtype_size(group.compute_dtype);
  }
  return slice;
}

}  // namespace zt::optim::detail

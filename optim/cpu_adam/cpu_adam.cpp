// The CPU Adam's path detection (at run time, so one binary runs on any x86-64) and its
// checked entry point.
#include "optim/cpu_adam/cpu_adam.h"

#include <string>

#include "core/cpu_features.h"
#include "core/error.h"
#include "optim/cpu_adam/cpu_adam_internal.h"

namespace zt::optim {

std::string_view cpu_adam_path_name(CpuAdamPath path) {
  switch (path) {
    case CpuAdamPath::kScalar:
      return "scalar";
    case CpuAdamPath::kAvx2:
      return "avx2";
    case CpuAdamPath::kAvx512:
      return "avx512";
  }
  return "unknown";
}

bool cpu_adam_path_available(CpuAdamPath path) {
  const CpuFeatures& cpu = cpu_features();
  switch (path) {
    case CpuAdamPath::kScalar:
      return true;
    case CpuAdamPath::kAvx2:
      return cpu.avx2 && cpu.fma && cpu.f16c;
    case CpuAdamPath::kAvx512:
      // fma and f16c come with every AVX-512F CPU; the optimizers' step loop, compiled for
      // this path, uses them (Note [The step loop on every vector path]).
      return cpu.avx512f && cpu.fma && cpu.f16c;
  }
  return false;
}

std::vector<CpuAdamPath> available_cpu_adam_paths() {
  std::vector<CpuAdamPath> paths;
  for (CpuAdamPath path : {CpuAdamPath::kScalar, CpuAdamPath::kAvx2, CpuAdamPath::kAvx512}) {
    if (cpu_adam_path_available(path)) paths.push_back(path);
  }
  return paths;
}

CpuAdamPath best_cpu_adam_path() { return available_cpu_adam_paths().back(); }

namespace detail {

void check_cpu_adam_group(CpuAdamPath path, const CpuAdamGroup& group) {
  ZT_CHECK(cpu_adam_path_available(path), "cpu_adam: path " +
                                              std::string(cpu_adam_path_name(path)) +
                                              " is not available on "
                                              "this CPU (ask available_cpu_adam_paths())");
  if (group.elements == 0) return;
  ZT_CHECK(
      group.params != nullptr && group.grads != nullptr && group.exp_avg != nullptr &&
          group.exp_avg_sq != nullptr,
      "cpu_adam: a group of " + std::to_string(group.elements) + " elements has a null buffer");
  ZT_CHECK(group.compute_params == nullptr || group.compute_dtype == DType::kBF16 ||
               group.compute_dtype == DType::kF16,
           "cpu_adam: the compute-dtype copy must be bf16 or f16, got " +
               std::string(dtype_name(group.compute_dtype)));
}

void run_cpu_adam_path(CpuAdamPath path, const CpuAdamGroup& group,
                       const math::AdamStepScalars& scalars) {
  switch (path) {
    case CpuAdamPath::kScalar:
      cpu_adam_scalar(group, scalars);
      return;
    case CpuAdamPath::kAvx2:
      cpu_adam_avx2(group, scalars);
      return;
    case CpuAdamPath::kAvx512:
      cpu_adam_avx512(group, scalars);
      return;
  }
}

}  // namespace detail

void cpu_adam_step(CpuAdamPath path, const CpuAdamGroup& group,
                   const math::AdamStepScalars& scalars) {
  detail::check_cpu_adam_group(path, group);
  detail::run_cpu_adam_path(path, group, scalars);
}

}  // namespace zt::optim

// What this x86-64 CPU runs beyond the build's baseline, read once from CPUID: the facts every
// run-time choice of a vector path (the element loops, the optimizer steps, bf16 conversions)
// starts from. All false on other architectures, whose loops use the baseline.
#pragma once

namespace zt {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bf16 = false;
};

const CpuFeatures& cpu_features();

}  // namespace zt

// The CPU kernel backend: oneDNN GEMMs and loops over the shared math of nn/kernels/math.
#pragma once

#include "nn/kernels/kernel_backend.h"

namespace zt::nn::cpu {

// The one CPU backend (stateless; every CPU slice shares it).
const KernelBackend& cpu_kernel_backend();

}  // namespace zt::nn::cpu

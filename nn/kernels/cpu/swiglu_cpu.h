// SwiGLU on the CPU: row loops over nn/kernels/math/swiglu_math.h (see
// KernelBackend::swiglu_forward).
#pragma once

#include "core/memory_tracker.h"
#include "core/tensor.h"

namespace zt::nn::cpu {

// gate_up (N, 2F) -> h (N, F), written.
void swiglu_forward(const Tensor& gate_up, const Tensor& h, MemoryTracker& tracker);
// d_gate_up (N, 2F) written from gate_up and dh (N, F); d_gate_up may be gate_up.
void swiglu_backward(const Tensor& gate_up, const Tensor& dh, const Tensor& d_gate_up,
                     MemoryTracker& tracker);

}  // namespace zt::nn::cpu

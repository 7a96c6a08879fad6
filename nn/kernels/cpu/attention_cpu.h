// The causal self-attention core on the CPU: per-head GEMMs on strided views of qkv and the
// causal softmax rows shared with CUDA (see KernelBackend::attention_forward).
#pragma once

#include <cstdint>

#include "core/memory_tracker.h"
#include "core/tensor.h"

namespace zt::nn::cpu {

// qkv (B, T, 3C) -> att (B, nh, T, T), y (B, T, C); both written.
void attention_forward(const Tensor& qkv, std::int64_t n_head, const Tensor& att, const Tensor& y,
                       MemoryTracker& tracker);
// dqkv (B, T, 3C) += the gradient at qkv of y, given dy (B, T, C) and att.
void attention_backward(const Tensor& qkv, const Tensor& att, const Tensor& dy, std::int64_t n_head,
                        const Tensor& dqkv, MemoryTracker& tracker);

}  // namespace zt::nn::cpu

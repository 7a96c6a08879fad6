// Causal attention on the CPU: per-head GEMMs on the strided heads and the row arithmetic
// of nn/kernels/math/attention_math.h (see KernelBackend::attention_forward).
#pragma once

#include "core/memory_tracker.h"
#include "core/tensor.h"
#include "core/vector_isa.h"
#include "nn/kernels/attention_heads.h"

namespace zt::nn::cpu {

// How bf16 operands enter the tiles' products: read as they are by oneDNN's bf16 GEMM, with
// the f32 tiles P and dS as two bf16 terms each (Note [bf16 attention on bf16 GEMMs]), where
// that GEMM runs on AMX; or widened to f32 copies and multiplied in f32 (every CPU). f32 and
// f16 operands always take the f32 products.
enum class Bf16AttentionProducts { kBf16WhereAvailable, kWidenedToF32 };

// q (B, T, nh, hs), k, v (B, T, nkv, hs) -> o (B, T, nh, hs), lse (B, nh, T) f32; both written.
// With probs_dropout the probabilities are dropped (Note [Attention dropout] in
// nn/kernels/math/attention_dropout_math.h), by loops compiled for dropout_isa (the widest
// this CPU runs unless a benchmark asks for another).
void attention_forward(const AttentionHeads& q, const AttentionHeads& k, const AttentionHeads& v,
                       const AttentionHeads& o, const Tensor& lse, MemoryTracker& tracker,
                       Bf16AttentionProducts products = Bf16AttentionProducts::kBf16WhereAvailable,
                       const math::DropoutMask* probs_dropout = nullptr,
                       VectorIsa dropout_isa = widest_vector_isa());
// dq, dk, dv (q's, k's, v's shapes) written, given forward's o and lse and d_o = dL/do, and
// forward's probs_dropout.
void attention_backward(const AttentionHeads& q, const AttentionHeads& k, const AttentionHeads& v,
                        const AttentionHeads& o, const Tensor& lse, const AttentionHeads& d_o,
                        const AttentionHeads& dq, const AttentionHeads& dk,
                        const AttentionHeads& dv, MemoryTracker& tracker,
                        Bf16AttentionProducts products = Bf16AttentionProducts::kBf16WhereAvailable,
                        const math::DropoutMask* probs_dropout = nullptr,
                        VectorIsa dropout_isa = widest_vector_isa());

}  // namespace zt::nn::cpu

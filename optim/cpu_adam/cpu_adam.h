// The fused CPU Adam/AdamW over one contiguous fp32 sub-group (ZeRO-Offload's host step):
// one pass reads params, grads and both moments, writes them back and, optionally, the
// updated params in the compute dtype. Scalar, AVX2+FMA and AVX-512F paths, chosen at run time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "optim/math/optimizer_math.h"

namespace zt::optim {

// Which loop runs the update. Note [CPU Adam paths agree bit for bit]: kScalar calls
// math::adam_update per element; the vector paths evaluate the same operations in the same
// order, with the same fused multiply-adds and the same correctly rounded divisions and square
// root (Note [One rounding sequence on every path] in optim/math/optimizer_math.h), so every
// path gives kScalar's bits, step after step. Their tails (fewer elements than a vector) run
// kScalar itself. The compute-dtype copy is bitwise what core's f32_to_bf16_bits /
// f32_to_f16_bits give for the fp32 result.
enum class CpuAdamPath : std::uint8_t { kScalar, kAvx2, kAvx512 };

std::string_view cpu_adam_path_name(CpuAdamPath path);  // "scalar", "avx2", "avx512"
// Whether this CPU runs `path`: AVX2 needs avx2, fma and f16c; AVX-512 needs avx512f, fma
// and f16c.
bool cpu_adam_path_available(CpuAdamPath path);
// The paths this CPU runs, kScalar first, fastest last.
std::vector<CpuAdamPath> available_cpu_adam_paths();
CpuAdamPath best_cpu_adam_path();

// One contiguous sub-group of fp32 optimizer state, `elements` long in every buffer. The
// buffers must not overlap one another. Base pointers aligned to 64 bytes are fastest (the
// loops use unaligned loads, so any float alignment is correct).
struct CpuAdamGroup {
  float* params = nullptr;       // (elements) fp32 master weights, updated in place
  const float* grads = nullptr;  // (elements) fp32 gradients
  float* exp_avg = nullptr;      // (elements) first moment m
  float* exp_avg_sq = nullptr;   // (elements) second moment v
  std::size_t elements = 0;
  // Optional: the updated params written again in `compute_dtype` (kBF16 or kF16, rounded to
  // nearest even) in the same pass, so they need not be read back for the cast.
  void* compute_params = nullptr;  // (elements) of compute_dtype, or null for none
  DType compute_dtype = DType::kBF16;
};

// Checks `group` (internal errors on null buffers, an unsupported compute dtype or a path
// this CPU lacks) and updates it on the calling thread. CpuAdamPool spreads groups over threads.
void cpu_adam_step(CpuAdamPath path, const CpuAdamGroup& group,
                   const math::AdamStepScalars& scalars);

}  // namespace zt::optim

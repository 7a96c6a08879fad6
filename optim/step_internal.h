// What every optimizer's step shares: the check of its operands, the dispatch on the
// gradients' and the compute copy's dtypes, and the CPU's one-pass element loop. Private to
// optim/.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>

#include "core/bf16_convert.h"
#include "core/device/device_context.h"
#include "core/device/square_sums_cpu.h"
#include "core/dtype.h"
#include "core/parallel_for.h"
#include "core/tensor.h"
#include "optim/cpu_step_path.h"

namespace zt::optim::detail {

// Checks (internal errors) that params and states are f32 tensors of one length, grads a
// floating tensor of that length, compute_params (when defined) a floating tensor of that
// length other than params, `states` holds `state_count` tensors, and all live on `device`.
// Returns whether they live on the host (the CPU loop runs) or on a GPU.
bool check_step_operands(std::string_view optimizer, const Tensor& params, const Tensor& grads,
                         std::span<const Tensor> states, std::size_t state_count,
                         const Tensor& compute_params, const DeviceContext& device);

// Calls fn(const G* grads, P* compute_params) with G and P the element types (float, BF16,
// F16) of `grads` and `compute_params`; an undefined compute_params is a null float*.
template <typename Fn>
void with_typed_operands(const Tensor& grads, const Tensor& compute_params, Fn&& fn) {
  const auto with_compute = [&](const auto* g) {
    if (!compute_params.defined()) {
      fn(g, static_cast<float*>(nullptr));
      return;
    }
    switch (compute_params.dtype()) {
      case DType::kBF16:
        fn(g, static_cast<BF16*>(compute_params.data()));
        return;
      case DType::kF16:
        fn(g, static_cast<F16*>(compute_params.data()));
        return;
      default:
        fn(g, static_cast<float*>(compute_params.data()));
        return;
    }
  };
  switch (grads.dtype()) {
    case DType::kBF16:
      with_compute(static_cast<const BF16*>(grads.data()));
      return;
    case DType::kF16:
      with_compute(static_cast<const F16*>(grads.data()));
      return;
    default:
      with_compute(static_cast<const float*>(grads.data()));
      return;
  }
}

// Note [The step loop on every vector path]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The host step is written once (step_blocks below, over the optimizer's per-element math)
// and compiled three times: for the build's baseline, for AVX2 with FMA and for AVX-512F
// (function templates with target attributes, as Note [One loop, three instruction sets] in
// nn/kernels/cpu/gelu_cpu.cpp does for GELU); cpu_step_path() picks one at run time. The
// compiler vectorizes each for its registers. They give the same bits because vectorizing
// never reorders or fuses the scalar operations: the optim library is built with
// -ffp-contract=off (Note [One rounding sequence on every path]), its fused multiply-adds are
// explicit fmaf, which is one vfmadd on AVX2/AVX-512 and an exact libm call on the baseline,
// and division and square root are correctly rounded on every path. optim/CMakeLists.txt adds
// -fno-math-errno and -fno-trapping-math, which change no result: without them GCC keeps
// sqrtf behind a branch to the errno-setting call and does not vectorize the loop.
// The loop runs over blocks of kStepBlockElements copied to the stack: a fixed trip count
// over arrays that cannot alias, which vectorizes without run-time overlap checks (the last
// block is padded with zeros, whose results are dropped). Before this, the AdamW step ran one
// element at a time with every fmaf a libm call on x86-64.
inline constexpr std::size_t kStepBlockElements = 256;

// The optimizer's update of one element: update(param, grad, state...) with kStates float&
// states after the fp32 gradient, updating param and the states in place.
// With `squares`, the widened gradients' squares are summed into it in element order (Note
// [The gradient norm in the update's pass]).
template <std::size_t kStates, typename G, typename P, typename Update>
[[gnu::always_inline]] inline void step_blocks(const G* grads, float* params,
                                               const std::array<float*, kStates>& states,
                                               P* compute, std::size_t begin, std::size_t end,
                                               const Update& update, SquareSumLanes* squares) {
  for (std::size_t start = begin; start < end; start += kStepBlockElements) {
    const std::size_t count = std::min(kStepBlockElements, end - start);
    float param[kStepBlockElements];
    float grad[kStepBlockElements];
    float state[kStates == 0 ? 1 : kStates][kStepBlockElements];
    // Widening a gradient is exact; the padding is zeros.
    for (std::size_t i = 0; i < count; ++i) grad[i] = static_cast<float>(grads[start + i]);
    std::fill(grad + count, grad + kStepBlockElements, 0.0f);
    if (squares != nullptr) accumulate_square_sum_lanes(grad, count, *squares);
    std::memcpy(param, params + start, count * sizeof(float));
    std::fill(param + count, param + kStepBlockElements, 0.0f);
    for (std::size_t s = 0; s < kStates; ++s) {
      std::memcpy(state[s], states[s] + start, count * sizeof(float));
      std::fill(state[s] + count, state[s] + kStepBlockElements, 0.0f);
    }
    for (std::size_t i = 0; i < kStepBlockElements; ++i) {
      if constexpr (kStates == 0) {
        update(param[i], grad[i]);
      } else if constexpr (kStates == 1) {
        update(param[i], grad[i], state[0][i]);
      } else {
        static_assert(kStates == 2, "step_blocks: 0, 1 or 2 states per element");
        update(param[i], grad[i], state[0][i], state[1][i]);
      }
    }
    std::memcpy(params + start, param, count * sizeof(float));
    for (std::size_t s = 0; s < kStates; ++s) {
      std::memcpy(states[s] + start, state[s], count * sizeof(float));
    }
    // Rounding the master to P is correctly rounded, as a cast of the whole tensor would be;
    // a bf16 copy on the CPU's conversion path (Note [bf16 conversion paths]), the same bits.
    if (compute != nullptr) {
      if constexpr (std::is_same_v<P, BF16>) {
        f32_to_bf16(param, compute + start, count);
      } else {
        for (std::size_t i = 0; i < count; ++i) compute[start + i] = P(param[i]);
      }
    }
  }
}

template <std::size_t kStates, typename G, typename P, typename Update>
void step_range_baseline(const G* grads, float* params, const std::array<float*, kStates>& states,
                         P* compute, std::size_t begin, std::size_t end, const Update& update,
                         SquareSumLanes* squares) {
  step_blocks(grads, params, states, compute, begin, end, update, squares);
}

#if defined(__x86_64__)
template <std::size_t kStates, typename G, typename P, typename Update>
[[gnu::target("avx2,fma,f16c")]] void step_range_avx2(const G* grads, float* params,
                                                      const std::array<float*, kStates>& states,
                                                      P* compute, std::size_t begin,
                                                      std::size_t end, const Update& update,
                                                      SquareSumLanes* squares) {
  step_blocks(grads, params, states, compute, begin, end, update, squares);
}

template <std::size_t kStates, typename G, typename P, typename Update>
[[gnu::target("avx512f,fma,f16c")]] void step_range_avx512(
    const G* grads, float* params, const std::array<float*, kStates>& states, P* compute,
    std::size_t begin, std::size_t end, const Update& update, SquareSumLanes* squares) {
  step_blocks(grads, params, states, compute, begin, end, update, squares);
}
#endif

// Note [The gradient norm in the update's pass]
// A step that nothing can veto (no clipping, no loss scaling) needs the gradient norm only
// for the log and the finite check, so the update may read it in its own pass over the
// gradients instead of a pass of its own before (on a 2-core Xeon, AVX-512, 2 threads, the
// fp32 20M GPT step's norm pass and AdamW took 21.4 ms, the AdamW that sums the squares 18.4
// ms: 0.7% of the step). The sum is
// DeviceOps::sum_of_squares's, bit for bit: the step's chunks are parallel_sum's (the same
// grain), each chunk adds its widened gradients into eight lanes in element order (Note
// [Square sums in eight lanes]; the step's blocks of kStepBlockElements are whole multiples
// of eight, so the lanes carry on from block to block), and the chunks are added in order.
// So a norm is the same whichever pass read it, on any path and thread count.

// The CPU step over host operands in one pass: for each element i, update(params[i],
// grads[i] as f32, states[0][i], ...) updates the master and the states, then compute[i]
// (when not null) receives params[i] rounded to P. Widening a gradient and rounding the
// master are exact and correctly rounded, so this is bitwise a cast, an f32 step and a cast.
// `update` must be inlinable (a lambda over optim::math): it is compiled into each path's
// loop (Note [The step loop on every vector path]). Elements are independent: chunks of them
// run on parallel_for's threads, with the same bits on any count and on any path. Returns
// the widened gradients' Σ g² when `sum_squares` (Note [The gradient norm in the update's
// pass]), else 0.
template <std::size_t kStates, typename G, typename P, typename Update>
double step_elements(const G* grads, float* params, const std::array<float*, kStates>& states,
                     P* compute, std::size_t n, const Update& update, bool sum_squares = false) {
  const CpuAdamPath path = cpu_step_path();
  static_assert(kStepBlockElements % kSquareSumLanes == 0);
  return parallel_sum(
      static_cast<std::int64_t>(n), kParallelGrainElements,
      [&](std::int64_t first, std::int64_t last) {
        const auto begin = static_cast<std::size_t>(first);
        const auto end = static_cast<std::size_t>(last);
        SquareSumLanes lanes{};
        SquareSumLanes* squares = sum_squares ? &lanes : nullptr;
        switch (path) {
#if defined(__x86_64__)
          case CpuAdamPath::kAvx512:
            step_range_avx512(grads, params, states, compute, begin, end, update, squares);
            break;
          case CpuAdamPath::kAvx2:
            step_range_avx2(grads, params, states, compute, begin, end, update, squares);
            break;
#endif
          default:
            step_range_baseline(grads, params, states, compute, begin, end, update, squares);
            break;
        }
        return total_of_lanes(lanes);
      });
}

}  // namespace zt::optim::detail

// What every optimizer's step shares: the check of its operands, the dispatch on the
// gradients' and the compute copy's dtypes, and the CPU's one-pass element loop. Private to
// optim/.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>

#include "core/bf16_convert.h"
#include "core/device/device_context.h"
#include "core/dtype.h"
#include "core/parallel_for.h"
#include "core/tensor.h"

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

// The CPU step over host operands: for each element i, update(i, grads[i] as f32) updates the
// master params[i] and the states; then, chunk by chunk, compute[i] (when not null) receives
// params[i] rounded to P. Widening a gradient and rounding the master are exact and
// correctly rounded, so this is bitwise a cast, an f32 step and a cast. Elements are
// independent: chunks of them run on parallel_for's threads, with the same bits on any count.
template <typename G, typename P, typename Update>
void step_elements(const G* grads, const float* params, P* compute, std::size_t n,
                   const Update& update) {
  parallel_for(static_cast<std::int64_t>(n), kParallelGrainElements,
               [&](std::int64_t first, std::int64_t last) {
                 const auto begin = static_cast<std::size_t>(first);
                 const auto end = static_cast<std::size_t>(last);
                 for (std::size_t i = begin; i < end; ++i) update(i, static_cast<float>(grads[i]));
                 if (compute == nullptr) return;
                 // The chunk's masters, still in cache, rounded in one pass: a bf16 copy on
                 // the CPU's vector path (Note [bf16 conversion paths]), the same bits.
                 if constexpr (std::is_same_v<P, BF16>) {
                   f32_to_bf16(params + begin, compute + begin, end - begin);
                 } else {
                   for (std::size_t i = begin; i < end; ++i) compute[i] = P(params[i]);
                 }
               });
}

}  // namespace zt::optim::detail

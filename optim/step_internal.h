// What every optimizer's step shares: the check of its operands, and the CPU loops' view of
// the gradients as fp32 (a narrow dtype is widened a chunk at a time on the stack, so the
// step allocates nothing). Private to optim/.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <string_view>

#include "core/device/device_context.h"
#include "core/tensor.h"

namespace zt::optim::detail {

// Checks (internal errors) that params and states are f32 tensors of one length, grads a
// floating tensor of that length, `states` holds `state_count` tensors, and all live on
// `device`. Returns whether they live on the host (the CPU loop runs) or on a GPU.
bool check_step_operands(std::string_view optimizer, const Tensor& params, const Tensor& grads,
                         std::span<const Tensor> states, std::size_t state_count,
                         const DeviceContext& device);

// Calls fn(first, grads_as_f32) over consecutive runs of host `grads`: the f32 values
// themselves, or up to kChunk of them widened on the stack.
template <typename Fn>
void for_each_f32_gradient_chunk(const Tensor& grads, Fn&& fn) {
  constexpr std::size_t kChunk = 1024;
  const auto total = static_cast<std::size_t>(grads.numel());
  if (grads.dtype() == DType::kF32) {
    fn(std::size_t{0}, std::span<const float>(static_cast<const float*>(grads.data()), total));
    return;
  }
  const std::size_t element_bytes = dtype_size(grads.dtype());
  const auto* bytes = static_cast<const std::byte*>(grads.data());
  std::array<float, kChunk> chunk;
  for (std::size_t first = 0; first < total; first += kChunk) {
    const std::size_t count = std::min(kChunk, total - first);
    convert_elements(bytes + first * element_bytes, grads.dtype(), chunk.data(), DType::kF32,
                     count);
    fn(first, std::span<const float>(chunk.data(), count));
  }
}

}  // namespace zt::optim::detail

// Moving values between host code and model-state buffers on any device: parameter
// initialization runs on the host (counter-based random streams), and full_parameters()
// delivers host values. Everything else the strategies do to buffers goes through DeviceOps.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "core/device/device_context.h"
#include "core/tensor.h"

namespace zt::zero {

// Fills f32 `dst` from host code: produce(first, out) writes elements [first, first +
// out.size()) of dst. A host tensor is written in one call, where it lies; a device tensor
// a bounded host chunk at a time, each copied over before the next is produced.
void write_from_host(DeviceContext& device, const Tensor& dst,
                     const std::function<void(std::int64_t, std::span<float>)>& produce);

// Copies host `in` (in.size() == dst.numel()) into f32 `dst`, done when this returns.
void write_host_values(DeviceContext& device, const Tensor& dst, std::span<const float> in);

// Copies f32 `src` into host `out` (out.size() == src.numel()), done when this returns.
void read_to_host(DeviceContext& device, const Tensor& src, std::span<float> out);

}  // namespace zt::zero

// Host staging for initialization and for exporting parameters.
#include "sharding/host_transfer.h"

#include <algorithm>
#include <vector>

#include "core/error.h"

namespace zt::zero {
namespace {

// Host elements staged at a time for a device buffer: 4 MiB, whatever the model's size.
constexpr std::int64_t kStagingElements = std::int64_t{1} << 20;

Tensor host_view(std::span<float> values) {
  return Tensor::wrap(values.data(), Shape{static_cast<std::int64_t>(values.size())}, DType::kF32,
                      Device::cpu());
}

}  // namespace

void write_from_host(DeviceContext& device, const Tensor& dst,
                     const std::function<void(std::int64_t, std::span<float>)>& produce) {
  ZT_CHECK(dst.dtype() == DType::kF32, "write_from_host into a non-f32 tensor");
  // A meta buffer has no values to produce (Note [Meta devices]).
  if (dst.numel() == 0 || dst.device().meta) return;
  if (dst.device().kind == DeviceKind::kCpu) {
    produce(0, dst.span<float>());
    return;
  }
  std::vector<float> staging(static_cast<std::size_t>(std::min(kStagingElements, dst.numel())));
  for (std::int64_t first = 0; first < dst.numel(); first += kStagingElements) {
    const std::int64_t count = std::min(kStagingElements, dst.numel() - first);
    const std::span<float> chunk(staging.data(), static_cast<std::size_t>(count));
    produce(first, chunk);
    device.ops().copy(host_view(chunk), dst.view(first, Shape{count}));
    // The copy reads the staging memory asynchronously: done before it is overwritten.
    device.compute_stream().synchronize();
  }
}

void write_host_values(DeviceContext& device, const Tensor& dst, std::span<const float> in) {
  ZT_CHECK(static_cast<std::size_t>(dst.numel()) == in.size(),
           "write_host_values from a host span of another length");
  write_from_host(device, dst, [&](std::int64_t first, std::span<float> out) {
    std::copy_n(in.begin() + first, out.size(), out.begin());
  });
}

void read_to_host(DeviceContext& device, const Tensor& src, std::span<float> out) {
  ZT_CHECK(src.dtype() == DType::kF32 && static_cast<std::size_t>(src.numel()) == out.size(),
           "read_to_host of a non-f32 tensor or into a host span of another length");
  if (out.empty()) return;
  device.ops().copy(src, host_view(out));
  device.compute_stream().synchronize();
}

}  // namespace zt::zero

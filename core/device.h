// A device a rank computes on: the CPU (or a slice of it) or one CUDA GPU.
#pragma once

#include <string>

namespace zt {

enum class DeviceKind { kCpu, kCuda };

// Note [Meta devices]
// A meta device stands for a CPU or GPU (kind, index) but holds no memory: its allocator
// hands out addresses that fault when touched, and its ops and kernels do no arithmetic
// while making every allocation the real ones make. The memory estimator trains one step
// on it, so its tracker counts exactly what the real run allocates (zerotrain estimate).
struct Device {
  DeviceKind kind = DeviceKind::kCpu;
  int index = 0;      // CUDA ordinal; for the CPU, the rank's slice (for naming only)
  bool meta = false;  // Note [Meta devices]

  static Device cpu(int index = 0) { return {DeviceKind::kCpu, index}; }
  static Device cuda(int index) { return {DeviceKind::kCuda, index}; }
  // The meta device standing for `device`.
  static Device meta_of(Device device) { return {device.kind, device.index, true}; }
  bool operator==(const Device&) const = default;
  std::string to_string() const;  // "cpu:0", "cuda:1", "meta(cpu:0)"
};

// Whether this binary was built with the CUDA backend.
bool cuda_backend_built();

}  // namespace zt

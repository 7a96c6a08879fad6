// A device a rank computes on: the CPU (or a slice of it) or one CUDA GPU.
#pragma once

#include <string>

namespace zt {

enum class DeviceKind { kCpu, kCuda };

struct Device {
  DeviceKind kind = DeviceKind::kCpu;
  int index = 0;  // CUDA ordinal; for the CPU, the rank's slice (for naming only)

  static Device cpu(int index = 0) { return {DeviceKind::kCpu, index}; }
  static Device cuda(int index) { return {DeviceKind::kCuda, index}; }
  bool operator==(const Device&) const = default;
  std::string to_string() const;  // "cpu:0", "cuda:1"
};

// Whether this binary was built with the CUDA backend.
bool cuda_backend_built();

}  // namespace zt

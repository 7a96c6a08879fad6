// CudaDeviceContext, and the checks that turn a GPU that is not there into a ConfigError.
#include "core/device/cuda/cuda_device_context.h"

#include <cuda_runtime.h>

#include <string>

#include "core/device/cuda/cuda_caching_allocator.h"
#include "core/device/cuda/cuda_check.h"
#include "core/device/cuda/cuda_device_ops.h"
#include "core/device/cuda/cuda_pinned_allocator.h"
#include "core/device/cuda/cuda_streams.h"

namespace zt {
namespace {

// Makes the device current for the constructing thread (the rank's main thread), before
// any other member touches it.
struct SelectedDevice {
  explicit SelectedDevice(const Device& device) {
    ZT_CORE_CUDA_CHECK(cudaSetDevice(device.index), "selecting " + device.to_string());
  }
};

class CudaDeviceContext final : public DeviceContext {
 public:
  CudaDeviceContext(Device device, std::int64_t capacity_bytes)
      : device_(device),
        selected_(device),
        compute_(device, device.to_string() + " compute"),
        copy_(device, device.to_string() + " copy"),
        allocator_(device, compute_.native_handle(), capacity_bytes),
        staging_(make_pinned_host_allocator()),
        ops_(device, compute_, *staging_),
        tracker_(allocator_, capacity_bytes) {}

  const Device& device() const override { return device_; }
  MemoryTracker& tracker() override { return tracker_; }
  DeviceAllocator& allocator() override { return allocator_; }
  DeviceStream& compute_stream() override { return compute_; }
  DeviceStream& copy_stream() override { return copy_; }
  DeviceOps& ops() override { return ops_; }
  DeviceAllocator& host_staging_allocator() override { return *staging_; }
  void synchronize() override {
    compute_.synchronize();
    copy_.synchronize();
  }

 private:
  // Declared in the order they are built; destroyed in reverse: the tracker first, the
  // streams (which the allocator and ops enqueue on) last.
  const Device device_;
  SelectedDevice selected_;
  CudaStream compute_;
  CudaStream copy_;
  CudaCachingAllocator allocator_;
  std::unique_ptr<DeviceAllocator> staging_;
  CudaDeviceOps ops_;
  MemoryTracker tracker_;
};

std::string gpu_count_text(int count) {
  return count == 1 ? "only 1 GPU is visible"
                    : "only " + std::to_string(count) + " GPUs are visible";
}

}  // namespace

std::unique_ptr<DeviceContext> make_cuda_device_context(Device device,
                                                        std::int64_t capacity_bytes) {
  ZT_CHECK(device.kind == DeviceKind::kCuda, "a CUDA context for " + device.to_string());
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    const std::string why = status != cudaSuccess ? std::string(cudaGetErrorString(status))
                                                  : std::string("it found 0 devices");
    cudaGetLastError();  // leave no error behind for the next CUDA call of the process
    throw ConfigError(
        "runtime.device = \"cuda\" but no CUDA GPU is visible (cudaGetDeviceCount: " + why +
        "); check nvidia-smi and CUDA_VISIBLE_DEVICES, or set runtime.device = \"cpu\"");
  }
  if (device.index < 0 || device.index >= count) {
    throw ConfigError("runtime.device = \"cuda\" asks for device index " +
                      std::to_string(device.index) + " but " + gpu_count_text(count) +
                      " (runtime.device_index, or LOCAL_RANK)");
  }
  return std::make_unique<CudaDeviceContext>(device, capacity_bytes);
}

}  // namespace zt

// WorkerComputeContext: the CPU device context with its compute stream replaced by an
// ordered worker thread (CpuWorkerStream), so a test can leave compute work pending when it
// submits a collective and see whether the collective waits for it. Everything else is the
// real CPU context's.
#pragma once

#include <memory>

#include "core/device/cpu_streams.h"
#include "core/device/device_context.h"

namespace zt::testing {

class WorkerComputeContext final : public DeviceContext {
 public:
  WorkerComputeContext() : inner_(make_cpu_device_context()), compute_("worker compute") {}
  ~WorkerComputeContext() override { compute_.synchronize(); }

  const Device& device() const override { return inner_->device(); }
  MemoryTracker& tracker() override { return inner_->tracker(); }
  DeviceAllocator& allocator() override { return inner_->allocator(); }
  DeviceStream& compute_stream() override { return compute_; }
  DeviceStream& copy_stream() override { return inner_->copy_stream(); }
  DeviceOps& ops() override { return inner_->ops(); }
  DeviceAllocator& host_staging_allocator() override { return inner_->host_staging_allocator(); }
  void synchronize() override {
    compute_.synchronize();
    inner_->synchronize();
  }

  CpuWorkerStream& worker() { return compute_; }

 private:
  std::unique_ptr<DeviceContext> inner_;
  CpuWorkerStream compute_;
};

}  // namespace zt::testing

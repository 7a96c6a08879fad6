// OffloadedOptimizer (ZeRO-Offload): one rank's fp32 master weights and optimizer states
// live in host memory (the device's host staging allocator: pinned on CUDA, pooled host
// memory on the CPU), counted as host_offload by a host tracker of their own, so the device
// keeps only compute-dtype parameters and gradients. Each update takes a slice of the
// reduced gradient shard over to the host, runs the optimizer there sub-group by sub-group,
// and sends the updated parameters back in the compute dtype. Adam and AdamW run on the
// vectorized CPU Adam (the best path this CPU has) over offload.cpu_threads threads, fused
// with the conversion to the compute dtype; other optimizers run their own CPU loop.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/device/device_context.h"
#include "core/memory_tracker.h"
#include "core/tensor.h"
#include "optim/adam.h"
#include "optim/cpu_adam/cpu_adam_pool.h"
#include "optim/optimizer.h"

namespace zt::offload {

class OffloadedOptimizer {
 public:
  // `shard_numel`: this rank's shard; `largest_slice`: the most elements one update() or
  // write_parameters() call passes (sizes the transfer buffers).
  OffloadedOptimizer(DeviceContext& device, const optim::Optimizer& optimizer,
                     std::int64_t shard_numel, std::int64_t largest_slice, DType compute_dtype,
                     const OffloadConfig& config);
  ~OffloadedOptimizer();
  OffloadedOptimizer(const OffloadedOptimizer&) = delete;
  OffloadedOptimizer& operator=(const OffloadedOptimizer&) = delete;

  // The host side: its tracker (category host_offload) and a CPU context over it.
  MemoryTracker& host_tracker() { return *host_tracker_; }
  DeviceContext& host() { return *host_; }
  // "avx512 x 2 threads", or the optimizer's own loop ("sgd loop"), for the run log.
  std::string kernel_description() const;
  // (shard_numel) f32 master weights, in host memory.
  const Tensor& master() const { return master_; }

  // Updates master[shard_offset, + n) and its optimizer states from `grads` (n f32 elements
  // on the device), then writes the updated weights in the compute dtype into `params` (n
  // elements on the device). Returns when `params` holds them.
  void update(std::int64_t shard_offset, const Tensor& grads, const Tensor& params,
              std::int64_t step, float lr);
  // Writes master[shard_offset, + n) in the compute dtype into `params` on the device.
  void write_parameters(std::int64_t shard_offset, const Tensor& params);

 private:
  DeviceContext& device_;
  const optim::Optimizer& optimizer_;
  const DType compute_dtype_;
  const std::int64_t sub_group_size_;
  std::unique_ptr<MemoryTracker> host_tracker_;
  std::unique_ptr<DeviceContext> host_;
  Tensor master_;                      // (shard) f32
  std::vector<Tensor> states_;         // (shard) f32 each
  Tensor grad_staging_;                // (largest slice) f32: the gradients, brought over
  Tensor param_staging_;               // (largest slice) compute dtype, unless f32: going back
  const optim::Adam* adam_ = nullptr;  // set for Adam and AdamW: the vectorized CPU Adam
  optim::CpuAdamPath path_ = optim::CpuAdamPath::kScalar;
  std::unique_ptr<optim::CpuAdamPool> pool_;

  // The update of master[offset, + n) on the host, sub-group by sub-group; Adam also writes
  // the compute-dtype copy into param_staging_ (when the compute dtype is not f32).
  // Copies this slice's parameters (the master in f32, else param_staging_) into `params`.
  void send_parameters(std::int64_t shard_offset, const Tensor& params);
  void update_on_host(std::int64_t shard_offset, const Tensor& host_grads, std::int64_t step,
                      float lr);
};

}  // namespace zt::offload

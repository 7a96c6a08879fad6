// The host side of ZeRO-Offload: transfers in, the CPU optimizer, transfers back.
#include "offload/offloaded_optimizer.h"

#include <algorithm>

#include "core/error.h"

namespace zt::offload {

OffloadedOptimizer::OffloadedOptimizer(DeviceContext& device, const optim::Optimizer& optimizer,
                                       std::int64_t shard_numel, std::int64_t largest_slice,
                                       DType compute_dtype, const OffloadConfig& config)
    : device_(device),
      optimizer_(optimizer),
      compute_dtype_(compute_dtype),
      sub_group_size_(config.sub_group_size),
      host_tracker_(std::make_unique<MemoryTracker>(device.host_staging_allocator())),
      host_(make_cpu_device_context(*host_tracker_)) {
  ZT_CHECK(sub_group_size_ > 0, "offload.sub_group_size must be positive");
  host_tracker_->set_phase("initialization");
  const auto host_zeros = [&](std::int64_t numel, DType dtype) {
    return Tensor::zeros(Shape{numel}, dtype, *host_tracker_, MemoryCategory::kHostOffload);
  };
  master_ = host_zeros(shard_numel, DType::kF32);
  for (int i = 0; i < optimizer.states_per_element(); ++i) {
    states_.push_back(host_zeros(shard_numel, DType::kF32));
  }
  grad_staging_ = host_zeros(largest_slice, DType::kF32);
  if (compute_dtype_ != DType::kF32) param_staging_ = host_zeros(largest_slice, compute_dtype_);
}

OffloadedOptimizer::~OffloadedOptimizer() = default;

void OffloadedOptimizer::update(std::int64_t shard_offset, const Tensor& grads,
                                const Tensor& params, std::int64_t step, float lr) {
  const std::int64_t n = grads.numel();
  ZT_CHECK(grads.dtype() == DType::kF32 && n == params.numel() && n <= grad_staging_.numel() &&
               shard_offset + n <= master_.numel(),
           "offloaded update out of its shard");
  const Tensor host_grads = grad_staging_.view(0, Shape{n});
  device_.ops().copy(grads, host_grads);
  device_.compute_stream().synchronize();  // the host reads them next
  // The optimizer is elementwise: sub-groups update exactly what one call over the slice
  // would, in pieces the size of one CPU task.
  std::vector<Tensor> states(states_.size());
  for (std::int64_t first = 0; first < n; first += sub_group_size_) {
    const Shape piece{std::min(sub_group_size_, n - first)};
    for (std::size_t i = 0; i < states_.size(); ++i) {
      states[i] = states_[i].view(shard_offset + first, piece);
    }
    optimizer_.step(master_.view(shard_offset + first, piece), host_grads.view(first, piece),
                    states, step, lr, *host_);
  }
  write_parameters(shard_offset, params);
}

void OffloadedOptimizer::write_parameters(std::int64_t shard_offset, const Tensor& params) {
  const std::int64_t n = params.numel();
  ZT_CHECK(params.dtype() == compute_dtype_ && shard_offset + n <= master_.numel(),
           "offloaded parameters out of their shard");
  const Tensor master = master_.view(shard_offset, Shape{n});
  if (compute_dtype_ == DType::kF32) {
    device_.ops().copy(master, params);
  } else {
    const Tensor staged = param_staging_.view(0, Shape{n});
    host_->ops().cast(master, staged);
    device_.ops().copy(staged, params);
  }
  device_.compute_stream().synchronize();  // the staging buffer is reused by the next call
}

}  // namespace zt::offload

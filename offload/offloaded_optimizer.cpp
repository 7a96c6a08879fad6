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
  adam_ = dynamic_cast<const optim::Adam*>(&optimizer);
  if (adam_ != nullptr) {
    path_ = optim::best_cpu_adam_path();
    pool_ = std::make_unique<optim::CpuAdamPool>(
        static_cast<int>(std::max<std::int64_t>(1, config.cpu_threads)));
  }
}

std::string OffloadedOptimizer::kernel_description() const {
  if (adam_ == nullptr) return std::string(optimizer_.name()) + " loop";
  return std::string(optim::cpu_adam_path_name(path_)) + " x " + std::to_string(pool_->threads()) +
         " thread" + (pool_->threads() == 1 ? "" : "s");
}

void OffloadedOptimizer::update_on_host(std::int64_t shard_offset, const Tensor& host_grads,
                                        std::int64_t step, float lr) {
  const std::int64_t n = host_grads.numel();
  if (adam_ != nullptr) {
    // Sub-groups are the pool's tasks; the compute-dtype copy comes out of the same pass.
    const bool fused_copy = compute_dtype_ != DType::kF32;
    std::vector<optim::CpuAdamGroup> groups;
    for (std::int64_t first = 0; first < n; first += sub_group_size_) {
      const std::int64_t count = std::min(sub_group_size_, n - first);
      const std::int64_t at = shard_offset + first;
      optim::CpuAdamGroup group;
      group.params = master_.data_as<float>() + at;
      group.grads = host_grads.data_as<float>() + first;
      group.exp_avg = states_[0].data_as<float>() + at;
      group.exp_avg_sq = states_[1].data_as<float>() + at;
      group.elements = static_cast<std::size_t>(count);
      if (fused_copy) {
        group.compute_params = static_cast<char*>(param_staging_.data()) +
                               first * static_cast<std::int64_t>(dtype_size(compute_dtype_));
        group.compute_dtype = compute_dtype_;
      }
      groups.push_back(group);
    }
    pool_->step(path_, groups, adam_->step_scalars(step, lr));
    return;
  }
  // The optimizer is elementwise: sub-groups update exactly what one call over the slice
  // would.
  std::vector<Tensor> states(states_.size());
  for (std::int64_t first = 0; first < n; first += sub_group_size_) {
    const Shape piece{std::min(sub_group_size_, n - first)};
    for (std::size_t i = 0; i < states_.size(); ++i) {
      states[i] = states_[i].view(shard_offset + first, piece);
    }
    optimizer_.step(master_.view(shard_offset + first, piece), host_grads.view(first, piece),
                    states, step, lr, *host_);
  }
  if (compute_dtype_ != DType::kF32) {
    host_->ops().cast(master_.view(shard_offset, Shape{n}), param_staging_.view(0, Shape{n}));
  }
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
  update_on_host(shard_offset, host_grads, step, lr);
  send_parameters(shard_offset, params);
}

void OffloadedOptimizer::write_parameters(std::int64_t shard_offset, const Tensor& params) {
  const std::int64_t n = params.numel();
  ZT_CHECK(params.dtype() == compute_dtype_ && shard_offset + n <= master_.numel() &&
               (compute_dtype_ == DType::kF32 || n <= param_staging_.numel()),
           "offloaded parameters out of their shard");
  if (compute_dtype_ != DType::kF32) {
    host_->ops().cast(master_.view(shard_offset, Shape{n}), param_staging_.view(0, Shape{n}));
  }
  send_parameters(shard_offset, params);
}

void OffloadedOptimizer::send_parameters(std::int64_t shard_offset, const Tensor& params) {
  const Shape slice{params.numel()};
  // In f32 the master itself goes over; otherwise the compute-dtype copy staged for it.
  device_.ops().copy(compute_dtype_ == DType::kF32 ? master_.view(shard_offset, slice)
                                                   : param_staging_.view(0, slice),
                     params);
  device_.compute_stream().synchronize();  // the staging buffer is reused by the next call
}

}  // namespace zt::offload

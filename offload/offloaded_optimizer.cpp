// The host side of ZeRO-Offload: gradients in, the CPU optimizer, parameters back.
#include "offload/offloaded_optimizer.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <optional>
#include <span>

#include "core/error.h"

namespace zt::offload {

OffloadedOptimizer::OffloadedOptimizer(DeviceContext& device, const optim::Optimizer& optimizer,
                                       std::int64_t shard_numel, DType compute_dtype,
                                       const OffloadConfig& config, FileIoPath nvme_io)
    : device_(device),
      optimizer_(optimizer),
      compute_dtype_(compute_dtype),
      sub_group_size_(config.sub_group_size),
      host_tracker_(std::make_unique<MemoryTracker>(device.host_staging_allocator())),
      host_(make_cpu_device_context(*host_tracker_)),
      threads_(static_cast<int>(std::max<std::int64_t>(1, config.cpu_threads))) {
  ZT_CHECK(sub_group_size_ > 0, "offload.sub_group_size must be positive");
  host_tracker_->set_phase("initialization");
  const ScopedAllocationName name("offloaded optimizer (host)");
  const auto host_zeros = [&](DType dtype) {
    return Tensor::zeros(Shape{shard_numel}, dtype, *host_tracker_, MemoryCategory::kHostOffload);
  };
  master_ = host_zeros(DType::kF32);
  nvme_states_ = config.optimizer == OffloadTarget::kNvme;
  if (nvme_states_ && host_tracker_->device().meta) {
    // The estimator's meta host: the in-flight sub-groups are counted, no file is opened.
    nvme_meta_buffers_ =
        host_tracker_->allocate(NvmeStateSwapper::in_flight_bytes(shard_numel, sub_group_size_,
                                                                  optimizer.states_per_element()),
                                MemoryCategory::kHostOffload, Fill::kUninitialized);
  } else if (nvme_states_) {
    nvme_ =
        std::make_unique<NvmeStateSwapper>(config.nvme_path, shard_numel, sub_group_size_,
                                           optimizer.states_per_element(), *host_tracker_, nvme_io);
    // Once per process: which I/O path the states take (io_uring may be refused here).
    static std::once_flag said_which_path;
    std::call_once(said_which_path, [&] {
      std::fprintf(
          stderr,
          "zerotrain: offload.optimizer = \"nvme\": states by %s, O_DIRECT files under %s\n",
          nvme_->io_name().c_str(), config.nvme_path.c_str());
    });
  } else {
    for (int i = 0; i < optimizer.states_per_element(); ++i)
      states_.push_back(host_zeros(DType::kF32));
  }
  grads_ = host_zeros(DType::kF32);
  // overlap_step: this step's gradients land in one buffer while the last step's update reads
  // the other.
  if (config.overlap_step) spare_grads_ = host_zeros(DType::kF32);
  if (compute_dtype_ != DType::kF32) compute_params_ = host_zeros(compute_dtype_);
  adam_ = dynamic_cast<const optim::Adam*>(&optimizer);
  if (adam_ != nullptr) {
    path_ = optim::best_cpu_adam_path();
    if (threads_ > 1) pool_ = std::make_unique<optim::CpuAdamPool>(threads_);
  }
}

OffloadedOptimizer::~OffloadedOptimizer() = default;

optim::CpuAdamGroup OffloadedOptimizer::adam_group(std::int64_t first, std::int64_t elements,
                                                   float* exp_avg, float* exp_avg_sq,
                                                   const Tensor* grads) {
  optim::CpuAdamGroup group;
  group.params = master_.data_as<float>() + first;
  group.grads = (grads != nullptr ? *grads : grads_).data_as<float>() + first;
  group.exp_avg = exp_avg;
  group.exp_avg_sq = exp_avg_sq;
  group.elements = static_cast<std::size_t>(elements);
  if (compute_dtype_ != DType::kF32) {
    group.compute_params = static_cast<char*>(compute_params_.data()) +
                           first * static_cast<std::int64_t>(dtype_size(compute_dtype_));
    group.compute_dtype = compute_dtype_;
  }
  return group;
}

void OffloadedOptimizer::stage_gradients(std::int64_t shard_offset, const Tensor& grads,
                                         bool source_reused) {
  ZT_CHECK(grads.dtype() == DType::kF32 && shard_offset + grads.numel() <= grads_.numel(),
           "offloaded gradients out of their shard");
  // After the reduction that produced them (compute-stream order), on the copy stream, so
  // backward goes on while they travel.
  DeviceStream& copies = device_.copy_stream();
  copies.wait(device_.compute_stream().record());
  device_.ops().copy_on(grads, grads_.view(shard_offset, Shape{grads.numel()}), copies);
  if (source_reused) device_.compute_stream().wait(copies.record());
}

void OffloadedOptimizer::wait_for_copies() { device_.copy_stream().synchronize(); }

void OffloadedOptimizer::scale_gradients(float factor) {
  wait_for_copies();  // every staged gradient has arrived
  host_->ops().scale(grads_, factor);
}

void OffloadedOptimizer::update(std::int64_t step, float lr) {
  // Every staged gradient has arrived, and the last step's parameters have left the
  // compute-dtype copy this update rewrites.
  wait_for_copies();
  if (nvme_) {
    update_from_nvme(step, lr);
    return;
  }
  update_host_range(0, master_.numel(), step, lr);
}

void OffloadedOptimizer::update_host_range(std::int64_t begin, std::int64_t count,
                                           std::int64_t step, float lr) {
  update_host_range(grads_, begin, count, step, lr);
}

void OffloadedOptimizer::update_host_range(const Tensor& grads, std::int64_t begin,
                                           std::int64_t count, std::int64_t step, float lr) {
  if (master_.device().meta) return;  // the estimator's host: nothing to update
  const std::int64_t end = begin + count;
  if (adam_ != nullptr) {
    // Sub-groups are the threads' tasks; the compute-dtype copy comes out of the same pass.
    std::vector<optim::CpuAdamGroup> groups;
    for (std::int64_t first = begin; first < end; first += sub_group_size_) {
      groups.push_back(adam_group(first, std::min(sub_group_size_, end - first),
                                  states_[0].data_as<float>() + first,
                                  states_[1].data_as<float>() + first, &grads));
    }
    const optim::math::AdamStepScalars scalars = adam_->step_scalars(step, lr);
    if (pool_) {
      pool_->step(path_, groups, scalars);
    } else {
      for (const optim::CpuAdamGroup& group : groups) optim::cpu_adam_step(path_, group, scalars);
    }
    return;
  }
  // Any other optimizer: its own CPU loop, which is elementwise, so sub-groups update
  // exactly what one call over the range would; the compute-dtype copy comes out of the same
  // pass.
  std::vector<Tensor> states(states_.size());
  for (std::int64_t first = begin; first < end; first += sub_group_size_) {
    const Shape piece{std::min(sub_group_size_, end - first)};
    for (std::size_t i = 0; i < states_.size(); ++i) states[i] = states_[i].view(first, piece);
    optimizer_.step(master_.view(first, piece), grads.view(first, piece), states,
                    compute_copy(first, piece), step, lr, *host_);
  }
}

Tensor OffloadedOptimizer::compute_copy(std::int64_t first, const Shape& piece) const {
  return compute_dtype_ == DType::kF32 ? Tensor() : compute_params_.view(first, piece);
}

void OffloadedOptimizer::update_early(std::int64_t shard_offset, const Tensor& params,
                                      std::int64_t step, float lr) {
  ZT_CHECK(!nvme_states_, "early updates need the states in host memory");
  // After the range's gradients have landed (staged just before on the copy stream), on the
  // update worker, so the caller's backward goes on; the worker then sends the range back.
  update_worker_.wait(device_.copy_stream().record());
  update_worker_.enqueue([this, shard_offset, params, step, lr] {
    update_host_range(shard_offset, params.numel(), step, lr);
    send_parameters(shard_offset, params);
  });
}

void OffloadedOptimizer::start_delayed_update(std::int64_t step, float lr) {
  ZT_CHECK(spare_grads_.defined() && !delayed_pending_, "a delayed update without its buffers");
  wait_for_copies();  // this step's gradients have landed; the last sends have left
  // The update reads this step's buffer; the next step's gradients land in the other one.
  const Tensor grads = grads_;
  std::swap(grads_, spare_grads_);
  update_worker_.enqueue(
      [this, grads, step, lr] { update_host_range(grads, 0, master_.numel(), step, lr); });
  delayed_pending_ = true;
}

bool OffloadedOptimizer::finish_delayed_update() {
  if (!delayed_pending_) return false;
  delayed_pending_ = false;
  update_worker_.synchronize();  // rethrows what failed there
  return true;
}

void OffloadedOptimizer::wait_for_delayed_update() {
  if (delayed_pending_) update_worker_.synchronize();  // rethrows what failed there
}

void OffloadedOptimizer::finish_early_updates() {
  update_worker_.synchronize();  // rethrows what failed there
  wait_for_sends();
}

void OffloadedOptimizer::quiesce() {
  // A delayed update reads the other gradient buffer and may go on.
  if (!delayed_pending_) update_worker_.synchronize();
  wait_for_copies();
}

// The same sub-groups, the same kernels and the same per-element order as update() from host
// memory, so the results are bitwise those of offload.optimizer = "cpu"; only where the
// states are between steps differs.
void OffloadedOptimizer::update_from_nvme(std::int64_t step, float lr) {
  const std::int64_t n = master_.numel();
  std::optional<optim::math::AdamStepScalars> scalars;
  if (adam_ != nullptr) scalars = adam_->step_scalars(step, lr);
  std::vector<Tensor> states(static_cast<std::size_t>(optimizer_.states_per_element()));
  nvme_->begin_step();
  for (std::int64_t k = 0; k < nvme_->sub_groups(); ++k) {
    const std::int64_t first = k * sub_group_size_;
    const std::int64_t elements = std::min(sub_group_size_, n - first);
    const std::span<float* const> swapped = nvme_->acquire(k);
    if (adam_ != nullptr) {
      const optim::CpuAdamGroup group = adam_group(first, elements, swapped[0], swapped[1]);
      if (pool_) {
        pool_->step(path_, group, *scalars);
      } else {
        optim::cpu_adam_step(path_, group, *scalars);
      }
    } else {
      for (std::size_t i = 0; i < states.size(); ++i) {
        states[i] = Tensor::wrap(swapped[i], Shape{elements}, DType::kF32);
      }
      optimizer_.step(master_.view(first, Shape{elements}), grads_.view(first, Shape{elements}),
                      states, compute_copy(first, Shape{elements}), step, lr, *host_);
    }
    nvme_->release(k);
  }
  nvme_->end_step();
}

void OffloadedOptimizer::visit_nvme_states(
    const std::function<void(std::int64_t, std::int64_t, std::span<float* const>)>& fn) {
  const std::int64_t n = master_.numel();
  nvme_->begin_step();
  for (std::int64_t k = 0; k < nvme_->sub_groups(); ++k) {
    const std::int64_t first = k * sub_group_size_;
    fn(first, std::min(sub_group_size_, n - first), nvme_->acquire(k));
    nvme_->release(k);
  }
  nvme_->end_step();
}

void OffloadedOptimizer::export_states(std::span<float* const> out) {
  ZT_CHECK(out.size() == static_cast<std::size_t>(optimizer_.states_per_element()),
           "export_states: one buffer per optimizer state");
  quiesce();
  if (nvme_) {
    visit_nvme_states([&](std::int64_t first, std::int64_t count, std::span<float* const> states) {
      for (std::size_t i = 0; i < out.size(); ++i) std::copy_n(states[i], count, out[i] + first);
    });
    return;
  }
  for (std::size_t i = 0; i < states_.size(); ++i) {
    std::copy_n(states_[i].data_as<float>(), states_[i].numel(), out[i]);
  }
}

void OffloadedOptimizer::import_states(std::span<const float* const> in) {
  ZT_CHECK(in.size() == static_cast<std::size_t>(optimizer_.states_per_element()),
           "import_states: one buffer per optimizer state");
  quiesce();
  if (nvme_) {
    visit_nvme_states([&](std::int64_t first, std::int64_t count, std::span<float* const> states) {
      for (std::size_t i = 0; i < in.size(); ++i) std::copy_n(in[i] + first, count, states[i]);
    });
    return;
  }
  for (std::size_t i = 0; i < states_.size(); ++i) {
    std::copy_n(in[i], states_[i].numel(), states_[i].data_as<float>());
  }
}

void OffloadedOptimizer::convert_masters() {
  if (compute_dtype_ != DType::kF32) host_->ops().cast(master_, compute_params_);
}

void OffloadedOptimizer::send_parameters(std::int64_t shard_offset, const Tensor& params) {
  const Shape slice{params.numel()};
  ZT_CHECK(params.dtype() == compute_dtype_ && shard_offset + params.numel() <= master_.numel(),
           "offloaded parameters out of their shard");
  // In f32 the master itself goes over; otherwise its compute-dtype copy.
  const Tensor& source = compute_dtype_ == DType::kF32 ? master_ : compute_params_;
  device_.ops().copy_on(source.view(shard_offset, slice), params, device_.copy_stream());
}

void OffloadedOptimizer::wait_for_sends() {
  // The compute stream (and so every collective after it) reads the parameters only once
  // they have arrived; on the CPU, whose compute stream is the caller, this blocks.
  device_.compute_stream().wait(device_.copy_stream().record());
}

}  // namespace zt::offload

// The shard's update on the device: one optimizer pass per slice, masters and states there.
#include "sharding/device_update.h"

#include "core/error.h"
#include "sharding/compute_dtype.h"
#include "sharding/host_transfer.h"

namespace zt::zero {

DeviceUpdate::DeviceUpdate(const ShardPlan& plan, DeviceContext& device,
                           const optim::Optimizer& optimizer, ShardBuffer masters,
                           bool separate_masters, ShardBuffer gradients)
    : plan_(plan),
      device_(device),
      optimizer_(optimizer),
      masters_(std::move(masters)),
      separate_masters_(separate_masters),
      gradients_(std::move(gradients)) {
  const ScopedAllocationName name("model states (ZeRO shards)");
  for (int i = 0; i < optimizer_.states_per_element(); ++i) {
    states_.push_back(Tensor::zeros(Shape{plan_.shard_numel()}, DType::kF32, device_.tracker(),
                                    MemoryCategory::kOptimizerStates));
  }
}

void DeviceUpdate::masters_into_own_parameters(ParameterResidency& parameters) {
  // In place, the masters are the parameters.
  if (!separate_masters_) return;
  parameters.wait_for_readers();  // the gathers in flight read the own slices
  masters_.for_each_slice([&](const Segment& segment, const Tensor& master) {
    copy_master_to_compute(device_.ops(), master, parameters.own_parameters(segment));
  });
}

bool DeviceUpdate::step(ParameterResidency& parameters, std::int64_t step, float lr,
                        std::vector<HostScalar>* slice_squares) {
  // The optimizer is elementwise, so one call per slice updates exactly what one call over
  // a contiguous shard would. Each call is one pass (Note [The optimizer in one pass]): the
  // gradients in their stored dtype, and the rank's own compute-dtype parameters rounded
  // from the new masters, ready for the refresh or the next gathers.
  std::vector<Tensor> states(states_.size());
  masters_.for_each_slice([&](const Segment& segment, const Tensor& master) {
    const Shape slice{master.numel()};
    for (std::size_t i = 0; i < states_.size(); ++i) {
      states[i] = states_[i].view(segment.shard_offset, slice);
    }
    const Tensor compute = separate_masters_ ? parameters.own_parameters(segment) : Tensor();
    const Tensor grads = gradients_.slice(segment);
    if (slice_squares != nullptr) {
      slice_squares->push_back(
          optimizer_.step_summing_squares(master, grads, states, compute, step, lr, device_));
    } else {
      optimizer_.step(master, grads, states, compute, step, lr, device_);
    }
  });
  return true;
}

void DeviceUpdate::scale_gradients(float factor) {
  gradients_.for_each_slice(
      [&](const Segment&, const Tensor& slice) { device_.ops().scale(slice, factor); });
}

void DeviceUpdate::export_states(ParameterResidency&, std::span<float* const> out) {
  ZT_CHECK(out.size() == 1 + states_.size(), "export_states: one buffer per state tensor");
  // The slices of every segment tile the shard, padding included (zero in every buffer).
  masters_.for_each_slice([&](const Segment& segment, const Tensor& slice) {
    read_to_host(
        device_, slice,
        std::span<float>(out[0] + segment.shard_offset, static_cast<std::size_t>(slice.numel())));
  });
  for (std::size_t i = 0; i < states_.size(); ++i) {
    read_to_host(device_, states_[i],
                 std::span<float>(out[1 + i], static_cast<std::size_t>(plan_.shard_numel())));
  }
}

void DeviceUpdate::import_states(ParameterResidency& parameters, std::span<const float* const> in) {
  ZT_CHECK(in.size() == 1 + states_.size(), "import_states: one buffer per state tensor");
  masters_.for_each_slice([&](const Segment& segment, const Tensor& slice) {
    write_host_values(device_, slice,
                      std::span<const float>(in[0] + segment.shard_offset,
                                             static_cast<std::size_t>(slice.numel())));
  });
  for (std::size_t i = 0; i < states_.size(); ++i) {
    write_host_values(
        device_, states_[i],
        std::span<const float>(in[1 + i], static_cast<std::size_t>(plan_.shard_numel())));
  }
  masters_into_own_parameters(parameters);
}

}  // namespace zt::zero

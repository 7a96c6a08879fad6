// QuantizedGather (ZeRO++ qwZ, zero.quantized_weights): one segment's all-gather of
// parameters as int8 blocks and their f32 scales instead of compute-dtype values.
//
// Note [Quantized weight gathers]: each rank quantizes its own slice of the segment (blocks
// from the slice's first element, Note [Block quantization format]), the int8 payloads and
// the scales are all-gathered as two messages, and every rank dequantizes every rank's chunk,
// its own included, into the gathered block. So all ranks compute with the same weights,
// each element within half a step of its block of the exact one, while the shard, the f32
// masters, the optimizer states and the gradients stay exact: the update is applied to the
// exact masters (the gradient of the dequantized weights stands in for the exact weights'
// gradient, as in ZeRO++). Quantizing is deterministic, so a block gathered twice in a step
// (forward and backward without hpZ) gets the same values both times; with hpZ the secondary
// shard is filled with the dequantized values, so its exact copies inside the group agree.
#pragma once

#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "core/device/device_context.h"
#include "nn/kernels/kernel_backend.h"
#include "nn/kernels/math/block_quant_math.h"

namespace zt::zero {

class QuantizedGather {
 public:
  // Quantizes `slice` (this rank's slice, on `device`) and starts the all-gathers whose
  // dequantized result fills `output` (world_size * slice elements, compute dtype). The
  // buffers are communication buffers of the device's tracker, held until finish.
  QuantizedGather(comm::Communicator& comm, DeviceContext& device,
                  const nn::math::BlockQuantFormat& format, const Tensor& slice, Tensor output);

  // The all-gathers in flight; wait for them before finish.
  std::vector<std::shared_ptr<comm::Work>>& works() { return works_; }
  // Dequantizes every rank's chunk into the output and frees the buffers.
  void finish();

 private:
  DeviceContext* device_;
  const nn::KernelBackend* kernels_;
  nn::math::BlockQuantFormat format_;
  int world_size_;
  std::int64_t slice_numel_;
  Tensor output_;
  Tensor own_payload_;  // (payload words) i32: this rank's slice, quantized
  Tensor own_scales_;   // (blocks) f32
  Tensor payloads_;     // (world * payload words) i32: every rank's, in rank order
  Tensor scales_;       // (world * blocks) f32
  std::vector<std::shared_ptr<comm::Work>> works_;
};

}  // namespace zt::zero

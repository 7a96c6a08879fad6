// Quantize, all-gather and dequantize one segment of stage-3 parameters (qwZ).
#include "sharding/quantized_gather.h"

#include "core/error.h"

namespace zt::zero {

QuantizedGather::QuantizedGather(comm::Communicator& comm, DeviceContext& device,
                                 const nn::math::BlockQuantFormat& format, const Tensor& slice,
                                 Tensor output)
    : device_(&device),
      kernels_(&nn::kernel_backend_for(device.device())),
      format_(format),
      world_size_(comm.world_size()),
      slice_numel_(slice.numel()),
      output_(std::move(output)) {
  ZT_CHECK(output_.numel() == slice_numel_ * world_size_,
           "QuantizedGather: the output holds " + std::to_string(output_.numel()) +
               " elements, not world_size x " + std::to_string(slice_numel_));
  const ScopedAllocationName name("quantized parameter gather");
  const std::int64_t words = nn::math::quant_payload_words(slice_numel_, format_);
  const std::int64_t blocks = nn::math::quant_block_count(slice_numel_, format_.block_elements);
  MemoryTracker& tracker = device.tracker();
  own_payload_ = Tensor::empty(Shape{words}, DType::kI32, tracker, MemoryCategory::kCommBuffers);
  own_scales_ = Tensor::empty(Shape{blocks}, DType::kF32, tracker, MemoryCategory::kCommBuffers);
  payloads_ =
      Tensor::empty(Shape{words * world_size_}, DType::kI32, tracker, MemoryCategory::kCommBuffers);
  scales_ = Tensor::empty(Shape{blocks * world_size_}, DType::kF32, tracker,
                          MemoryCategory::kCommBuffers);
  // On the compute stream, so the all-gathers (ordered after it) send the finished blocks.
  kernels_->quantize_blocks(device, format_, slice, own_payload_, own_scales_);
  works_.push_back(comm.all_gather(own_payload_, payloads_));
  works_.push_back(comm.all_gather(own_scales_, scales_));
}

void QuantizedGather::finish() {
  const std::int64_t words = own_payload_.numel();
  const std::int64_t blocks = own_scales_.numel();
  for (int rank = 0; rank < world_size_; ++rank) {
    kernels_->dequantize_blocks(*device_, format_, payloads_.view(rank * words, Shape{words}),
                                scales_.view(rank * blocks, Shape{blocks}),
                                output_.view(rank * slice_numel_, Shape{slice_numel_}));
  }
  works_.clear();
  own_payload_ = Tensor();
  own_scales_ = Tensor();
  payloads_ = Tensor();
  scales_ = Tensor();
}

}  // namespace zt::zero

// qgZ's hierarchical reduce-scatter of one block: quantize, all-to-all in the node, sum,
// quantize, all-to-all across nodes, sum.
#include "sharding/quantized_reduce_scatter.h"

#include "core/error.h"

namespace zt::zero {

namespace math = nn::math;

QuantizedChunk::QuantizedChunk(std::vector<std::int64_t> piece_numel,
                               const math::BlockQuantFormat& format)
    : format_(format), numel_(std::move(piece_numel)) {
  for (const std::int64_t numel : numel_) {
    offset_.push_back(total_numel_);
    word_offset_.push_back(total_words_);
    block_offset_.push_back(total_blocks_);
    total_numel_ += numel;
    total_words_ += math::quant_payload_words(numel, format_);
    total_blocks_ += math::quant_block_count(numel, format_.block_elements);
  }
}

std::int64_t QuantizedChunk::piece_words(std::size_t piece) const {
  return math::quant_payload_words(numel_[piece], format_);
}

std::int64_t QuantizedChunk::piece_blocks(std::size_t piece) const {
  return math::quant_block_count(numel_[piece], format_.block_elements);
}

ChunkCoder::ChunkCoder(DeviceContext& device, const math::BlockQuantFormat& format,
                       const QuantizedChunk& chunk)
    : device_(&device),
      kernels_(&nn::kernel_backend_for(device.device())),
      format_(format),
      chunk_(&chunk) {}

void ChunkCoder::quantize(const std::function<Tensor(std::size_t piece)>& piece,
                          const Tensor& payload, const Tensor& scales, std::int64_t index) const {
  for (std::size_t p = 0; p < chunk_->piece_count(); ++p) {
    kernels_->quantize_blocks(*device_, format_, piece(p),
                              payload.view(index * chunk_->words() + chunk_->piece_word_offset(p),
                                           Shape{chunk_->piece_words(p)}),
                              scales.view(index * chunk_->blocks() + chunk_->piece_block_offset(p),
                                          Shape{chunk_->piece_blocks(p)}));
  }
}

void ChunkCoder::dequantize(const Tensor& payload, const Tensor& scales, std::int64_t index,
                            const Tensor& out) const {
  for (std::size_t p = 0; p < chunk_->piece_count(); ++p) {
    kernels_->dequantize_blocks(
        *device_, format_,
        payload.view(index * chunk_->words() + chunk_->piece_word_offset(p),
                     Shape{chunk_->piece_words(p)}),
        scales.view(index * chunk_->blocks() + chunk_->piece_block_offset(p),
                    Shape{chunk_->piece_blocks(p)}),
        out.view(chunk_->piece_offset(p), Shape{chunk_->piece_numel(p)}));
  }
}

namespace {

std::vector<std::int64_t> slice_lengths(const ShardPlan& plan, std::size_t block) {
  std::vector<std::int64_t> lengths;
  for (const Segment& segment : plan.segments(block)) lengths.push_back(plan.slice_numel(segment));
  return lengths;
}

}  // namespace

QuantizedReduceScatter::QuantizedReduceScatter(const GradientExchange& exchange,
                                               DeviceContext& device,
                                               const math::BlockQuantFormat& format,
                                               const ShardPlan& plan, std::size_t block,
                                               Tensor block_grads, Tensor output,
                                               QuantizationResidual residual)
    : exchange_(exchange),
      device_(&device),
      chunk_(slice_lengths(plan, block), format),
      coder_(device, format, chunk_),
      block_grads_(std::move(block_grads)),
      output_(std::move(output)),
      residual_(std::move(residual)),
      plan_(&plan),
      block_(block),
      local_size_(exchange.local_size()),
      node_count_(exchange.node_count()) {
  ZT_CHECK(exchange_.node_local != nullptr || exchange_.cross_node != nullptr,
           "QuantizedReduceScatter needs the gradient group's hops (ShardGroups was built "
           "without the gradient exchange)");
  ZT_CHECK(local_size_ * node_count_ == plan.world_size(),
           "qgZ's hops hold " + std::to_string(local_size_) + " x " + std::to_string(node_count_) +
               " ranks, and the shard group " + std::to_string(plan.world_size()));
  ZT_CHECK(output_.numel() == chunk_.numel() && output_.dtype() == DType::kF32,
           "QuantizedReduceScatter: the output must be this rank's slices of the block, f32");
  const ScopedAllocationName name("quantized gradient reduce-scatter");
  const std::int64_t block_offset = plan.segments(block).front().offset;
  // Rank d's piece of segment p in the block's gradients.
  const auto raw_piece = [this, block_offset](std::int64_t d) {
    return [this, block_offset, d](std::size_t p) {
      const Segment segment = plan_->segments(block_)[static_cast<std::int64_t>(p)];
      return block_grads_.view(plan_->slice_offset(segment, static_cast<int>(d)) - block_offset,
                               Shape{plan_->slice_numel(segment)});
    };
  };
  if (local_size_ == 1) {
    // One rank per node: step 3 on the raw chunks (chunk d goes to node d).
    start_cross_node(raw_piece);
    return;
  }
  // Step 1: position j' * M + m holds the chunk of rank m * L + j', so local rank j' gets
  // its M chunks as one part of the all-to-all.
  node_hop_ = make_hop(plan.world_size());
  for (std::int64_t j = 0; j < local_size_; ++j) {
    for (std::int64_t m = 0; m < node_count_; ++m) {
      const std::int64_t d = m * local_size_ + j;
      quantize_into(node_hop_, j * node_count_ + m, raw_piece(d), chunk_of(residual_.chunks, d));
    }
  }
  hop_ = 1;
  start_exchange(*exchange_.node_local, node_hop_);
}

Tensor QuantizedReduceScatter::chunk_of(const Tensor& buffer, std::int64_t index) const {
  if (!buffer.defined()) return Tensor();
  return buffer.view(index * chunk_.numel(), Shape{chunk_.numel()});
}

void QuantizedReduceScatter::start_exchange(comm::Communicator& comm, const Hop& hop) {
  works_ = {comm.all_to_all(hop.send_payload, hop.recv_payload),
            comm.all_to_all(hop.send_scales, hop.recv_scales)};
}

QuantizedReduceScatter::Hop QuantizedReduceScatter::make_hop(std::int64_t chunks) const {
  MemoryTracker& tracker = device_->tracker();
  const auto buffer = [&](std::int64_t per_chunk, DType dtype) {
    return Tensor::empty(Shape{chunks * per_chunk}, dtype, tracker, MemoryCategory::kCommBuffers);
  };
  return {buffer(chunk_.words(), DType::kI32), buffer(chunk_.blocks(), DType::kF32),
          buffer(chunk_.words(), DType::kI32), buffer(chunk_.blocks(), DType::kF32)};
}

void QuantizedReduceScatter::quantize_into(const Hop& hop, std::int64_t position,
                                           const std::function<Tensor(std::size_t piece)>& piece,
                                           const Tensor& residual) const {
  DeviceOps& ops = device_->ops();
  if (residual.defined()) {
    // x += the error this quantization left last time (the sources are this reducer's own
    // buffers: the block's transient gradients, step 2's partial sums).
    for (std::size_t p = 0; p < chunk_.piece_count(); ++p) {
      ops.axpby(1.0f, residual.view(chunk_.piece_offset(p), Shape{chunk_.piece_numel(p)}), 1.0f,
                piece(p));
    }
  }
  coder_.quantize(piece, hop.send_payload, hop.send_scales, position);
  if (residual.defined()) {
    // The error left now: x - dequantized(q(x)).
    coder_.dequantize(hop.send_payload, hop.send_scales, position, residual);
    for (std::size_t p = 0; p < chunk_.piece_count(); ++p) {
      ops.axpby(1.0f, piece(p), -1.0f,
                residual.view(chunk_.piece_offset(p), Shape{chunk_.piece_numel(p)}));
    }
  }
}

void QuantizedReduceScatter::sum_received(const Hop& hop, int chunks, std::int64_t first,
                                          std::int64_t stride, const Tensor& out) const {
  coder_.dequantize(hop.recv_payload, hop.recv_scales, first, out);
  if (chunks == 1) return;
  const ScopedAllocationName name("quantized gradient reduce-scatter");
  const Tensor addend = Tensor::empty(Shape{chunk_.numel()}, DType::kF32, device_->tracker(),
                                      MemoryCategory::kCommBuffers);
  for (int i = 1; i < chunks; ++i) {
    coder_.dequantize(hop.recv_payload, hop.recv_scales, first + i * stride, addend);
    device_->ops().axpby(1.0f, addend, 1.0f, out);  // in rank order: deterministic
  }
}

bool QuantizedReduceScatter::advance() {
  works_.clear();
  if (hop_ == 1) {
    // Step 2: partial m sums the L local peers' chunks for rank m * L + j.
    block_grads_ = Tensor();
    const bool one_node = node_count_ == 1;
    if (!one_node) {
      const ScopedAllocationName name("quantized gradient reduce-scatter");
      partials_ = Tensor::empty(Shape{node_count_ * chunk_.numel()}, DType::kF32,
                                device_->tracker(), MemoryCategory::kCommBuffers);
    }
    for (std::int64_t m = 0; m < node_count_; ++m) {
      sum_received(node_hop_, local_size_, m, node_count_,
                   one_node ? output_ : chunk_of(partials_, m));
    }
    node_hop_ = Hop();
    if (one_node) {
      hop_ = 0;
      return false;
    }
    start_cross_node([this](std::int64_t m) {
      const Tensor partial = chunk_of(partials_, m);
      return [this, partial](std::size_t p) {
        return partial.view(chunk_.piece_offset(p), Shape{chunk_.piece_numel(p)});
      };
    });
    return true;
  }
  ZT_CHECK(hop_ == 3, "QuantizedReduceScatter advanced past its last hop");
  // Step 4: the M node sums of this rank's chunk.
  block_grads_ = Tensor();
  partials_ = Tensor();  // kept until the all-to-alls that read its quantized copy are done
  sum_received(cross_hop_, node_count_, 0, 1, output_);
  cross_hop_ = Hop();
  hop_ = 0;
  return false;
}

void QuantizedReduceScatter::start_cross_node(const ChunkSource& chunk_for_node) {
  // Step 3: chunk m goes to node m.
  const ScopedAllocationName name("quantized gradient reduce-scatter");
  cross_hop_ = make_hop(node_count_);
  for (std::int64_t m = 0; m < node_count_; ++m) {
    quantize_into(cross_hop_, m, chunk_for_node(m), chunk_of(residual_.partials, m));
  }
  hop_ = 3;
  start_exchange(*exchange_.cross_node, cross_hop_);
}

}  // namespace zt::zero

// Ring all-gather on Gloo unbound buffers (Note [Ring collectives]): every segment is
// received straight into its place in the output and forwarded to the right from there,
// so the op needs no scratch and copies nothing but this rank's own shard.
#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>

#include <cstring>
#include <memory>
#include <vector>

#include "comm/gloo/gloo_errors.h"
#include "comm/gloo/ring.h"
#include "comm/gloo/ring_layout.h"

namespace zt::comm {
namespace {

using ::gloo::transport::UnboundBuffer;

class RingAllGather {
 public:
  RingAllGather(const RingOp& op, const void* input, void* output, std::int64_t count, DType dtype,
                int first_step)
      : op_(op),
        layout_(count, op.world_size, dtype_size(dtype), op.segment_bytes),
        left_((op.rank + op.world_size - 1) % op.world_size),
        right_((op.rank + 1) % op.world_size),
        input_(static_cast<const std::byte*>(input)),
        output_(static_cast<std::byte*>(output)),
        first_step_(first_step),
        units_(layout_.receive_order(op.rank, op.world_size - 1, 1)) {
    buffers_.reserve(units_.size());
  }

  std::uint64_t run() {
    // Output memory is distinct per segment, so every receive can be posted at once.
    for (const RingUnit& unit : units_) post_recv(unit);
    send_own_shard();
    const ShardRange own = layout_.chunk_range(op_.rank);
    std::byte* own_in_output = output_ + layout_.bytes(own.offset);
    if (own_in_output != input_) std::memcpy(own_in_output, input_, layout_.bytes(own.count));
    for (std::size_t i = 0; i < units_.size(); ++i) forward(i);
    wait_all_sends();
    return bytes_sent_;
  }

 private:
  std::size_t unit_bytes(const RingUnit& unit) const {
    return layout_.bytes(layout_.segment_range(unit.chunk, unit.segment).count);
  }

  void post_recv(const RingUnit& unit) {
    const ShardRange range = layout_.segment_range(unit.chunk, unit.segment);
    auto buffer = op_.context.createUnboundBuffer(output_ + layout_.bytes(range.offset),
                                                  layout_.bytes(range.count));
    try {
      buffer->recv(left_, ring_slot(op_.sequence_number, first_step_ + unit.step, unit.segment));
    } catch (...) {
      rethrow_as_comm_error("receiving from rank " + std::to_string(left_));
    }
    buffers_.push_back(std::move(buffer));
  }

  // Step 0 sends this rank's shard from the input (it may still be copied into place).
  void send_own_shard() {
    const ShardRange own = layout_.chunk_range(op_.rank);
    if (own.count == 0) return;
    // Gloo's buffers are not const-correct; the input is only ever sent from.
    input_buffer_ =
        op_.context.createUnboundBuffer(const_cast<std::byte*>(input_), layout_.bytes(own.count));
    for (std::int64_t k = 0; k < layout_.segments(op_.rank); ++k) {
      const ShardRange range = layout_.segment_range(op_.rank, k);
      const std::size_t bytes = layout_.bytes(range.count);
      try {
        input_buffer_->send(right_, ring_slot(op_.sequence_number, first_step_, k),
                            layout_.bytes(range.offset - own.offset), bytes);
      } catch (...) {
        rethrow_as_comm_error("sending to rank " + std::to_string(right_));
      }
      input_label_ = {"sending", right_, bytes, first_step_};
      bytes_sent_ += bytes;
      ++input_sends_;
    }
  }

  // Waits for unit `index` and, unless this is its last hop, passes it on to the right.
  void forward(std::size_t index) {
    const RingUnit& unit = units_[index];
    const std::size_t bytes = unit_bytes(unit);
    wait_recv(*buffers_[index], {"receiving", left_, bytes, first_step_ + unit.step}, op_.timeout);
    if (unit.step == op_.world_size - 2) return;
    try {
      buffers_[index]->send(
          right_, ring_slot(op_.sequence_number, first_step_ + unit.step + 1, unit.segment));
    } catch (...) {
      rethrow_as_comm_error("sending to rank " + std::to_string(right_));
    }
    bytes_sent_ += bytes;
  }

  void wait_all_sends() {
    for (std::size_t i = 0; i < units_.size(); ++i) {
      const RingUnit& unit = units_[i];
      if (unit.step == op_.world_size - 2) continue;
      wait_send(*buffers_[i], {"sending", right_, unit_bytes(unit), first_step_ + unit.step + 1},
                op_.timeout);
    }
    for (std::size_t i = 0; i < input_sends_; ++i) {
      wait_send(*input_buffer_, input_label_, op_.timeout);
    }
  }

  const RingOp& op_;
  const RingLayout layout_;
  const int left_;
  const int right_;
  const std::byte* const input_;
  std::byte* const output_;
  const int first_step_;
  const std::vector<RingUnit> units_;
  std::vector<std::unique_ptr<UnboundBuffer>> buffers_;  // one per unit, in units_ order
  std::unique_ptr<UnboundBuffer> input_buffer_;
  std::size_t input_sends_ = 0;
  TransferLabel input_label_{};
  std::uint64_t bytes_sent_ = 0;
};

}  // namespace

std::uint64_t ring_all_gather(const RingOp& op, const void* input, void* output, std::int64_t count,
                              DType dtype, int first_step) {
  return RingAllGather(op, input, output, count, dtype, first_step).run();
}

}  // namespace zt::comm

// Ring reduce-scatter on Gloo unbound buffers (Note [Ring collectives]): segments arrive
// from the left into scratch lanes, are combined with the local input, and go on to the
// right from the same lane, or into the output on the last step.
#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>

#include <memory>
#include <vector>

#include "comm/gloo/combine_elements.h"
#include "comm/gloo/gloo_errors.h"
#include "comm/gloo/ring.h"
#include "comm/gloo/ring_layout.h"

namespace zt::comm {
namespace {

using ::gloo::transport::UnboundBuffer;

// Note [Scratch lanes]
// A lane is one segment of scratch. A unit's lane is taken when its receive is posted and
// freed when the combined segment has been sent on. Receives are posted `lookahead` units
// ahead and lanes are reused round robin with 2 * lookahead lanes, so a lane is reused only
// lookahead units after its send was posted. With the diagonal order, the right neighbour
// consumes that send within about 2 (n - 1) units (one time unit plus the unevenness of
// chunks), so lookahead = 2n + 2 keeps the wait for a lane's send from ever forming a cycle
// around the ring; memory stays (4n + 4) segments whatever the buffer size.
struct ScratchLanes {
  std::size_t count = 0;
  std::size_t bytes = 0;  // of each lane
};

// Note [Scratch lanes]'s sizes: 2 * lookahead lanes of one segment (fewer for a small op).
ScratchLanes scratch_lanes(const RingLayout& layout, std::size_t units, std::size_t lookahead) {
  return {std::min(units, 2 * lookahead),
          layout.bytes(std::min(layout.segment_elements(), layout.chunk_range(0).count))};
}

std::size_t lookahead_of(int world_size) { return 2 * static_cast<std::size_t>(world_size) + 2; }

class RingReduceScatter {
 public:
  RingReduceScatter(const RingOp& op, const void* input, void* output, std::int64_t count,
                    DType dtype, ReduceOp reduce, ScratchBuffer& scratch, int first_step)
      : op_(op),
        layout_(count, op.world_size, dtype_size(dtype), op.segment_bytes),
        left_((op.rank + op.world_size - 1) % op.world_size),
        right_((op.rank + 1) % op.world_size),
        input_(static_cast<const std::byte*>(input)),
        output_(static_cast<std::byte*>(output)),
        output_offset_(layout_.chunk_range(op.rank).offset),
        dtype_(dtype),
        reduce_(reduce),
        first_step_(first_step),
        units_(layout_.receive_order(op.rank, op.world_size - 1, 2)),
        lookahead_(lookahead_of(op.world_size)) {
    make_lanes(scratch);
  }

  std::uint64_t run() {
    send_first_chunk();
    for (std::size_t i = 0; i < units_.size() && i < lookahead_; ++i) post_recv(i);
    for (std::size_t i = 0; i < units_.size(); ++i) {
      finish_unit(i);
      if (i + lookahead_ < units_.size()) post_recv(i + lookahead_);
    }
    wait_all_sends();
    return bytes_sent_;
  }

 private:
  struct Lane {
    std::unique_ptr<UnboundBuffer> buffer;
    std::byte* data = nullptr;
    bool send_pending = false;
    TransferLabel send_label{};
  };

  void make_lanes(ScratchBuffer& scratch) {
    const ScratchLanes lanes = scratch_lanes(layout_, units_.size(), lookahead_);
    const std::size_t lane_count = lanes.count;
    const std::size_t lane_bytes = lanes.bytes;
    std::byte* memory = scratch.reserve(lane_count * lane_bytes);
    lanes_.resize(lane_count);
    for (std::size_t i = 0; i < lane_count; ++i) {
      lanes_[i].data = memory + i * lane_bytes;
      lanes_[i].buffer = op_.context.createUnboundBuffer(lanes_[i].data, lane_bytes);
    }
  }

  int slot_step(int step) const { return first_step_ + step; }

  // Step 0 sends chunk r-1 of the input as it is; the sends are waited for at the end.
  void send_first_chunk() {
    const int chunk = layout_.chunk(op_.rank - 1);
    const std::int64_t segments = layout_.segments(chunk);
    if (segments == 0) return;
    // Gloo's buffers are not const-correct; the input is only ever sent from.
    input_buffer_ = op_.context.createUnboundBuffer(const_cast<std::byte*>(input_),
                                                    layout_.bytes(layout_.count()));
    for (std::int64_t k = 0; k < segments; ++k) {
      const ShardRange range = layout_.segment_range(chunk, k);
      const std::size_t bytes = layout_.bytes(range.count);
      first_send_label_ = {"sending", right_, bytes, slot_step(0)};
      try {
        input_buffer_->send(right_, ring_slot(op_.sequence_number, slot_step(0), k),
                            layout_.bytes(range.offset), bytes);
      } catch (...) {
        rethrow_as_comm_error("sending to rank " + std::to_string(right_));
      }
      bytes_sent_ += bytes;
      ++input_sends_;
    }
  }

  void post_recv(std::size_t index) {
    const RingUnit& unit = units_[index];
    Lane& lane = lanes_[index % lanes_.size()];
    if (lane.send_pending) {
      wait_send(*lane.buffer, lane.send_label, op_.timeout);
      lane.send_pending = false;
    }
    const std::size_t bytes = layout_.bytes(layout_.segment_range(unit.chunk, unit.segment).count);
    try {
      lane.buffer->recv(left_, ring_slot(op_.sequence_number, slot_step(unit.step), unit.segment),
                        0, bytes);
    } catch (...) {
      rethrow_as_comm_error("receiving from rank " + std::to_string(left_));
    }
  }

  void finish_unit(std::size_t index) {
    const RingUnit& unit = units_[index];
    Lane& lane = lanes_[index % lanes_.size()];
    const ShardRange range = layout_.segment_range(unit.chunk, unit.segment);
    const std::size_t bytes = layout_.bytes(range.count);
    wait_recv(*lane.buffer, {"receiving", left_, bytes, slot_step(unit.step)}, op_.timeout);
    const std::byte* local = input_ + layout_.bytes(range.offset);
    const auto count = static_cast<std::size_t>(range.count);
    if (unit.step == op_.world_size - 2) {  // the last hop: this rank's shard is complete
      std::byte* shard = output_ + layout_.bytes(range.offset - output_offset_);
      const float divisor = reduce_ == ReduceOp::kAvg ? static_cast<float>(op_.world_size) : 1;
      combine_elements(shard, lane.data, local, count, dtype_, reduce_, divisor);
      return;
    }
    combine_elements(lane.data, lane.data, local, count, dtype_, reduce_, 1.0f);
    const int next_step = slot_step(unit.step + 1);
    try {
      lane.buffer->send(right_, ring_slot(op_.sequence_number, next_step, unit.segment), 0, bytes);
    } catch (...) {
      rethrow_as_comm_error("sending to rank " + std::to_string(right_));
    }
    lane.send_pending = true;
    lane.send_label = {"sending", right_, bytes, next_step};
    bytes_sent_ += bytes;
  }

  void wait_all_sends() {
    for (Lane& lane : lanes_) {
      if (lane.send_pending) wait_send(*lane.buffer, lane.send_label, op_.timeout);
      lane.send_pending = false;
    }
    for (std::size_t i = 0; i < input_sends_; ++i) {
      wait_send(*input_buffer_, first_send_label_, op_.timeout);
    }
  }

  const RingOp& op_;
  const RingLayout layout_;
  const int left_;
  const int right_;
  const std::byte* const input_;
  std::byte* const output_;
  const std::int64_t output_offset_;  // element offset of this rank's shard in the buffer
  const DType dtype_;
  const ReduceOp reduce_;
  const int first_step_;
  const std::vector<RingUnit> units_;
  const std::size_t lookahead_;
  std::vector<Lane> lanes_;
  std::unique_ptr<UnboundBuffer> input_buffer_;
  std::size_t input_sends_ = 0;
  TransferLabel first_send_label_{};
  std::uint64_t bytes_sent_ = 0;
};

}  // namespace

std::uint64_t ring_reduce_scatter(const RingOp& op, const void* input, void* output,
                                  std::int64_t count, DType dtype, ReduceOp reduce,
                                  ScratchBuffer& scratch, int first_step) {
  return RingReduceScatter(op, input, output, count, dtype, reduce, scratch, first_step).run();
}

std::size_t ring_reduce_scatter_scratch_bytes(std::int64_t count, int world_size, int rank,
                                              DType dtype, std::size_t segment_bytes) {
  const RingLayout layout(count, world_size, dtype_size(dtype), segment_bytes);
  const std::size_t units = layout.receive_order(rank, world_size - 1, 2).size();
  const ScratchLanes lanes = scratch_lanes(layout, units, lookahead_of(world_size));
  return lanes.count * lanes.bytes;
}

}  // namespace zt::comm

// QuantizedReduceScatter (ZeRO++ qgZ, zero.quantized_gradients): one block's gradient
// reduce-scatter as int4 or int8 blocks over two all-to-alls, inside the node and across.
//
// Note [Quantized gradient reduce-scatters]: the shard group's G ranks form M nodes of L
// (GradientExchange in sharding/shard_groups.h); group rank g = n * L + j is local rank j of
// node n. The block's gradients on every rank are G chunks, chunk d being what rank d owns
// of the block: its slice of each segment, back to back (the order of the reducer's scratch).
//   1. Each rank quantizes every chunk and sends, with one all-to-all among the L ranks of
//      its node, to local rank j' the M chunks of the ranks {m * L + j'} (one per node).
//   2. Each rank dequantizes what its L peers sent and sums it in f32: M partial sums, the
//      node's part of the gradient of ranks {m * L + j} (its own local index on every node).
//   3. It quantizes those M partial sums again and sends partial m, with one all-to-all
//      among the M ranks of local index j, to node m.
//   4. It dequantizes the M node sums of its own chunk and adds them up in f32: its slice
//      of the reduced gradient, the sum over the group.
// Only step 3 crosses nodes, carrying (M - 1) / M of one chunk per rank in low bits: at int4
// with L ranks per node about 1/(8 L) of what a flat fp32 reduce-scatter sends across. One
// node (M = 1) is steps 1-2; one rank per node (L = 1) is steps 3-4 on the raw chunks.
// Every sum runs in f32 in rank order, so a run is deterministic.
// - Quantization blocks start at every piece (a chunk's slice of one segment) and run over
//   it (Note [Block quantization format]): any slice length, no divisibility rule.
// - Error feedback (zero.quantized_gradients_error_feedback): each rank keeps, per
//   quantization it makes, the f32 rounding error of its last use (x - dequantized(q(x))),
//   and adds it to what it quantizes there next, so the errors cancel over steps instead of
//   biasing the update (as LoCo, and 1-bit Adam's compensation, do). Step 1's error is kept
//   for the whole block, step 3's for its M partials.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "core/device/device_context.h"
#include "nn/kernels/kernel_backend.h"
#include "nn/kernels/math/block_quant_math.h"
#include "sharding/shard_groups.h"
#include "sharding/shard_plan.h"

namespace zt::zero {

// A chunk's pieces (one per segment of the block) and where each one's quantized words and
// scales start in the chunk's payload and scales.
class QuantizedChunk {
 public:
  QuantizedChunk(std::vector<std::int64_t> piece_numel, const nn::math::BlockQuantFormat& format);

  std::size_t piece_count() const { return numel_.size(); }
  std::int64_t piece_numel(std::size_t piece) const { return numel_[piece]; }
  std::int64_t piece_offset(std::size_t piece) const { return offset_[piece]; }
  std::int64_t numel() const { return total_numel_; }    // elements
  std::int64_t words() const { return total_words_; }    // payload i32 words
  std::int64_t blocks() const { return total_blocks_; }  // scales
  std::int64_t piece_words(std::size_t piece) const;
  std::int64_t piece_blocks(std::size_t piece) const;
  std::int64_t piece_word_offset(std::size_t piece) const { return word_offset_[piece]; }
  std::int64_t piece_block_offset(std::size_t piece) const { return block_offset_[piece]; }

 private:
  nn::math::BlockQuantFormat format_;
  std::vector<std::int64_t> numel_, offset_, word_offset_, block_offset_;
  std::int64_t total_numel_ = 0, total_words_ = 0, total_blocks_ = 0;
};

// Quantizes and dequantizes whole chunks with the device's kernels.
class ChunkCoder {
 public:
  ChunkCoder(DeviceContext& device, const nn::math::BlockQuantFormat& format,
             const QuantizedChunk& chunk);
  // Chunk `index` of `payload` / `scales` from piece views `piece(p)` (f32).
  void quantize(const std::function<Tensor(std::size_t piece)>& piece, const Tensor& payload,
                const Tensor& scales, std::int64_t index) const;
  // Chunk `index` of `payload` / `scales` into `out` (chunk.numel() f32).
  void dequantize(const Tensor& payload, const Tensor& scales, std::int64_t index,
                  const Tensor& out) const;

 private:
  DeviceContext* device_;
  const nn::KernelBackend* kernels_;
  nn::math::BlockQuantFormat format_;
  const QuantizedChunk* chunk_;
};

// The f32 rounding errors one rank carries for one block (error feedback): step 1's for the
// G chunks, step 3's for the M partials; views into the strategy's buffers.
struct QuantizationResidual {
  Tensor chunks;    // (G * chunk) f32, chunk d at d * chunk; undefined: no error feedback
  Tensor partials;  // (M * chunk) f32; undefined when M = 1 or without error feedback
};

class QuantizedReduceScatter {
 public:
  // Starts step 1 (or, with one rank per node, step 3) for `block`: `block_grads` is its
  // padded f32 region, `output` (its slices' elements, f32) receives this rank's reduced
  // slices back to back. Buffers are the device tracker's communication buffers.
  QuantizedReduceScatter(const GradientExchange& exchange, DeviceContext& device,
                         const nn::math::BlockQuantFormat& format, const ShardPlan& plan,
                         std::size_t block, Tensor block_grads, Tensor output,
                         QuantizationResidual residual = {});
  QuantizedReduceScatter(const QuantizedReduceScatter&) = delete;
  QuantizedReduceScatter& operator=(const QuantizedReduceScatter&) = delete;

  // The all-to-alls of the current hop; wait for them before advance().
  std::vector<std::shared_ptr<comm::Work>>& works() { return works_; }
  // Sums what the hop delivered. Returns true when that started the next hop (wait for its
  // works, then advance again), false when the output holds the result.
  bool advance();

 private:
  struct Hop {
    Tensor send_payload, send_scales, recv_payload, recv_scales;
  };
  Hop make_hop(std::int64_t chunks) const;
  // Quantizes chunk sources into `hop`'s send buffers at `position`, with error feedback
  // from `residual` (a chunk-sized view, undefined: none).
  void quantize_into(const Hop& hop, std::int64_t position,
                     const std::function<Tensor(std::size_t piece)>& piece,
                     const Tensor& residual) const;
  // out = sum over `chunks` received chunks at positions first, first + stride, ...
  void sum_received(const Hop& hop, int chunks, std::int64_t first, std::int64_t stride,
                    const Tensor& out) const;
  // Chunk m's pieces, for the chunk that goes to rank or node m.
  using ChunkSource = std::function<std::function<Tensor(std::size_t piece)>(std::int64_t m)>;
  // Step 3: quantizes chunk_for_node(m) for each node m and starts the cross-node exchange.
  void start_cross_node(const ChunkSource& chunk_for_node);
  // Chunk `index` of a buffer of chunks; undefined when `buffer` is.
  Tensor chunk_of(const Tensor& buffer, std::int64_t index) const;
  // Starts the hop's two all-to-alls (payload, scales) on `comm` as works_.
  void start_exchange(comm::Communicator& comm, const Hop& hop);

  GradientExchange exchange_;
  DeviceContext* device_;
  QuantizedChunk chunk_;
  ChunkCoder coder_;
  Tensor block_grads_;
  Tensor output_;
  QuantizationResidual residual_;
  const ShardPlan* plan_;
  std::size_t block_;
  int local_size_, node_count_;
  Hop node_hop_, cross_hop_;
  Tensor partials_;  // (M * chunk) f32: step 2's sums
  int hop_ = 0;      // 1: node hop in flight, 3: cross-node hop in flight
  std::vector<std::shared_ptr<comm::Work>> works_;
};

}  // namespace zt::zero

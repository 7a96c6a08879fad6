// Reduce-scatter launch, bounded in-flight queue and accumulation into the shard.
#include "sharding/gradient_reducer.h"

#include "core/error.h"

namespace zt::zero {

GradientReducer::GradientReducer(comm::Communicator& comm, comm::Communicator* replicas,
                                 const ShardPlan& plan, ShardBuffer grad_shard,
                                 DeviceContext& device)
    : comm_(comm),
      replicas_(replicas),
      plan_(plan),
      grad_shard_(std::move(grad_shard)),
      device_(device) {}

void GradientReducer::quantize(const GradientExchange& exchange,
                               const nn::math::BlockQuantFormat& format,
                               std::vector<QuantizationResidual> residuals) {
  ZT_CHECK(in_flight_.empty(), "qgZ must be set before the first reduction");
  ZT_CHECK(residuals.empty() || residuals.size() == plan_.block_count(),
           "qgZ's error feedback needs one residual per block");
  exchange_ = &exchange;
  format_ = format;
  residuals_ = std::move(residuals);
}

void GradientReducer::reduce_block(std::size_t block, Tensor block_grads, bool accumulate,
                                   bool last_micro_batch) {
  const ScopedAllocationName name("reduce-scatter output");
  // Note [Replicas all-reduce behind the backward]: under hybrid sharding the previous
  // block's reduce-scatter (inside the group, quick) is waited for here, so its all-reduce
  // across the replicas (over the slow link) starts now, while this block's reduce-scatter and
  // the next blocks' backward run, instead of when the in-flight queue fills or at drain().
  const std::size_t max_in_flight = replicas_ != nullptr ? 1 : kMaxInFlight;
  while (in_flight_.size() >= max_in_flight) complete_oldest();
  const auto& segments = plan_.segments(block);
  InFlight flight;
  flight.block = block;
  flight.accumulate = accumulate;
  flight.last_micro_batch = last_micro_batch;
  // A shard in another dtype than the reduced gradients (bf16 standing gradients) takes
  // the fp32 result through scratch too, rounded once on completion.
  // qgZ sums what arrives into scratch, in f32.
  flight.via_scratch =
      accumulate || block_grads.dtype() != grad_shard_.dtype() || exchange_ != nullptr;
  std::int64_t slices = 0;
  for (const Segment& segment : segments) slices += plan_.slice_numel(segment);
  if (flight.via_scratch) {
    flight.scratch =
        Tensor::zeros(Shape{slices}, DType::kF32, device_.tracker(), MemoryCategory::kCommBuffers);
  }
  if (exchange_ != nullptr) {
    flight.quantized = std::make_unique<QuantizedReduceScatter>(
        *exchange_, device_, format_, plan_, block, std::move(block_grads), flight.scratch,
        residuals_.empty() ? QuantizationResidual{} : residuals_[block]);
    flight.works = flight.quantized->works();
    in_flight_.push_back(std::move(flight));
    return;
  }
  const std::int64_t block_offset = segments.front().offset;
  std::int64_t scratch_offset = 0;
  for (const Segment& segment : segments) {
    const std::int64_t slice = plan_.slice_numel(segment);
    Tensor input = block_grads.view(segment.offset - block_offset, Shape{segment.numel});
    Tensor output = flight.via_scratch ? flight.scratch.view(scratch_offset, Shape{slice})
                                       : grad_shard_.slice(segment);
    flight.works.push_back(comm_.reduce_scatter(input, output, comm::ReduceOp::kSum));
    scratch_offset += slice;
  }
  flight.input = std::move(block_grads);
  in_flight_.push_back(std::move(flight));
}

void GradientReducer::complete_oldest() {
  InFlight flight = std::move(in_flight_.front());
  in_flight_.pop_front();
  for (const auto& work : flight.works) work->wait();
  if (flight.quantized && flight.quantized->advance()) {
    // Its cross-node hop runs while the next blocks' backward and first hops go on.
    flight.works = flight.quantized->works();
    exchanging_.push_back(std::move(flight));
    if (exchanging_.size() > kMaxExchanging) finish_oldest_exchanging();
    return;
  }
  reduced_in_group(std::move(flight));
}

void GradientReducer::finish_oldest_exchanging() {
  InFlight flight = std::move(exchanging_.front());
  exchanging_.pop_front();
  for (const auto& work : flight.works) work->wait();
  ZT_CHECK(!flight.quantized->advance(), "qgZ's reduction has two hops at most");
  reduced_in_group(std::move(flight));
}

void GradientReducer::reduced_in_group(InFlight flight) {
  flight.quantized.reset();
  flight.works.clear();
  if (replicas_ == nullptr) {
    apply(flight);
    return;
  }
  flight.input = Tensor();  // the reduce-scatters are done with it; the all-reduce is not
  flight.works = reduce_across_replicas(flight);
  replicating_.push_back(std::move(flight));
  if (replicating_.size() > kMaxReplicating) finish_oldest_replicating();
}

void GradientReducer::finish_oldest_replicating() {
  InFlight flight = std::move(replicating_.front());
  replicating_.pop_front();
  for (const auto& work : flight.works) work->wait();
  apply(flight);
}

void GradientReducer::apply(const InFlight& flight) {
  if (flight.via_scratch) {
    std::int64_t scratch_offset = 0;
    for (const Segment& segment : plan_.segments(flight.block)) {
      const std::int64_t slice = plan_.slice_numel(segment);
      // shard = reduced (+ shard when accumulating), rounded once into the shard's dtype.
      device_.ops().axpby(1.0f, flight.scratch.view(scratch_offset, Shape{slice}),
                          flight.accumulate ? 1.0f : 0.0f, grad_shard_.slice(segment));
      scratch_offset += slice;
    }
  }
  if (flight.last_micro_batch && on_block_reduced_) on_block_reduced_(flight.block);
}

std::vector<std::shared_ptr<comm::Work>> GradientReducer::reduce_across_replicas(
    const InFlight& flight) {
  // The reduce-scatters ran on another queue: they are waited for first (above), so the
  // all-reduce reads their result (a device wait orders the compute stream, which the
  // all-reduce's submission follows: Note [Waiting on a collective] in comm/work.h). The
  // result is the sum over the world, as a flat reduce-scatter's, in fp32 where it went
  // through scratch. It is waited for once the next block's reduce-scatter completes, so the
  // link's round trip overlaps that block's backward instead of stalling it.
  // Note [One all-reduce per block]: the block's reduced slices lie back to back in scratch
  // and in a shard of its own, so they cross the replicas as one message. Per segment
  // (zero.reduce_bucket_size, 64 KiB in configs/tiny.toml) they were ~200 all-reduces a step,
  // each paying the link's round trips; on the two-node testbed that, not bandwidth, made
  // hybrid steps slower than flat stage 3 (docs/BENCHMARKS.md, two nodes).
  const auto& segments = plan_.segments(flight.block);
  std::int64_t slices = 0;
  for (const Segment& segment : segments) slices += plan_.slice_numel(segment);
  if (flight.via_scratch) return {replicas_->all_reduce(flight.scratch, comm::ReduceOp::kSum)};
  if (!grad_shard_.is_in_place()) {
    const Tensor reduced = grad_shard_.storage().view(segments.front().shard_offset, Shape{slices});
    return {replicas_->all_reduce(reduced, comm::ReduceOp::kSum)};
  }
  // A shard in place in the full gradients (stage 1) has its slices apart, one per segment.
  std::vector<std::shared_ptr<comm::Work>> works;
  for (const Segment& segment : segments) {
    works.push_back(replicas_->all_reduce(grad_shard_.slice(segment), comm::ReduceOp::kSum));
  }
  return works;
}

void GradientReducer::drain() {
  while (!in_flight_.empty()) complete_oldest();
  while (!exchanging_.empty()) finish_oldest_exchanging();
  while (!replicating_.empty()) finish_oldest_replicating();
}

}  // namespace zt::zero

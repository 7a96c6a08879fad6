// All-gather, prefetch and release of stage-3 parameter blocks.
#include "sharding/parameter_gatherer.h"

#include <algorithm>

#include "core/error.h"

namespace zt::zero {
namespace {

std::int64_t block_bytes(const BlockSlots& block, DType dtype) {
  return block.padded_numel * static_cast<std::int64_t>(dtype_size(dtype));
}

}  // namespace

ParameterGatherer::ParameterGatherer(comm::Communicator& comm, const FlatLayout& layout,
                                     const ShardPlan& plan, Tensor param_shard,
                                     DeviceContext& device, const ZeroConfig& config,
                                     bool shard_on_host, comm::Communicator* secondary)
    : comm_(comm),
      layout_(layout),
      plan_(plan),
      param_shard_(std::move(param_shard)),
      device_(device),
      config_(config),
      shard_on_host_(shard_on_host),
      gathered_(layout.blocks.size()),
      tie_source_(layout.blocks.size(), false),
      resident_(layout.blocks.size()) {
  for (std::size_t b = 0; b < layout.blocks.size(); ++b) {
    for (std::size_t source : tie_sources(layout, b)) tie_source_[source] = true;
  }
  if (secondary != nullptr) {
    // Blocks that stay gathered for the step are gathered once: nothing to keep twice.
    std::vector<bool> kept(layout.blocks.size());
    for (std::size_t b = 0; b < layout.blocks.size(); ++b) kept[b] = !persistent(b);
    // Segments as long as the primary plan's (zero.reduce_bucket_size), cut over the group.
    const std::int64_t segment_elements =
        config.reduce_bucket_size_bytes / static_cast<std::int64_t>(sizeof(float));
    secondary_ = std::make_unique<SecondaryShard>(*secondary, layout, segment_elements,
                                                  param_shard_.dtype(), std::move(kept), device);
  }
}

ParameterGatherer::~ParameterGatherer() {
  for (auto& gathered : gathered_) {
    if (!gathered) continue;
    for (const auto& work : gathered->works) {
      try {
        work->wait();
      } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor never throws; the
        // failed op broke the communicator, so its next op reports the failure
      }
    }
  }
}

// A block that lends a tied parameter to a later block (the token embedding to a tied
// head) is read from both, so it stays gathered for the whole step.
bool ParameterGatherer::persistent(std::size_t block) const {
  return tie_source_.at(block) || block_bytes(layout_.blocks.at(block), param_shard_.dtype()) <=
                                      config_.param_persistence_threshold_bytes;
}

void ParameterGatherer::start(std::size_t block) {
  const ScopedAllocationName name("gathered parameters");
  const BlockSlots& slots = layout_.blocks.at(block);
  // Persistent blocks are part of this rank's standing parameter memory; transient gathered
  // copies are communication buffers (Note [What the categories count] in ARCHITECTURE.md).
  const MemoryCategory category =
      persistent(block) ? MemoryCategory::kParameters : MemoryCategory::kCommBuffers;
  Gathered gathered;
  gathered.buffer =
      Tensor::zeros(Shape{slots.padded_numel}, param_shard_.dtype(), device_.tracker(), category);
  const auto& segments = plan_.segments(block);
  if (shard_on_host_) {
    // The block's slices come over just before their gather (ordered before it on the
    // compute stream) and go when it is done.
    std::int64_t slices = 0;
    for (const Segment& segment : segments) slices += plan_.slice_numel(segment);
    gathered.staged = Tensor::empty(Shape{slices}, param_shard_.dtype(), device_.tracker(),
                                    MemoryCategory::kCommBuffers);
  }
  if (secondary_ && secondary_->fresh(block)) {
    // Inside the hpZ group; the shard is not read, so nothing is staged from the host.
    gathered.works = secondary_->all_gather(block, gathered.buffer);
    finish_start(block, std::move(gathered));
    return;
  }
  gathered.fills_secondary = secondary_ && secondary_->kept(block);
  std::int64_t staged_offset = 0;
  for (const Segment& segment : segments) {
    const Shape slice{plan_.slice_numel(segment)};
    Tensor input = param_shard_.view(segment.shard_offset, slice);
    if (shard_on_host_) {
      const Tensor on_device = gathered.staged.view(staged_offset, slice);
      device_.ops().copy(input, on_device);
      input = on_device;
      staged_offset += slice.numel();
    }
    Tensor output = gathered.buffer.view(segment.offset - slots.offset, Shape{segment.numel});
    if (config_.quantized_weights) {
      const nn::math::BlockQuantFormat format{nn::math::QuantBits::kInt8,
                                              config_.quantization_block};
      QuantizedGather& quantized =
          gathered.quantized.emplace_back(comm_, device_, format, input, std::move(output));
      for (const auto& work : quantized.works()) gathered.works.push_back(work);
      continue;
    }
    gathered.works.push_back(comm_.all_gather(input, std::move(output)));
  }
  finish_start(block, std::move(gathered));
}

void ParameterGatherer::finish_start(std::size_t block, Gathered gathered) {
  resident_[block] = gathered.buffer;
  live_bytes_ += block_bytes(layout_.blocks[block], param_shard_.dtype());
  peak_live_bytes_ = std::max(peak_live_bytes_, live_bytes_);
  gathered_[block] = std::move(gathered);
}

void ParameterGatherer::prefetch(std::size_t block) {
  if (block >= gathered_.size() || gathered_[block]) return;
  if (live_bytes_ + block_bytes(layout_.blocks[block], param_shard_.dtype()) >
      config_.max_live_parameters_bytes)
    return;
  start(block);
}

void ParameterGatherer::wait_ready(std::size_t block) {
  if (!gathered_.at(block)) start(block);
  Gathered& gathered = *gathered_[block];
  if (gathered.ready) return;
  for (const auto& work : gathered.works) work->wait();
  gathered.works.clear();
  for (QuantizedGather& quantized : gathered.quantized) quantized.finish();
  gathered.quantized.clear();
  gathered.staged = Tensor();
  if (gathered.fills_secondary) secondary_->keep(block, gathered.buffer);
  gathered.ready = true;
}

const std::vector<Tensor>& ParameterGatherer::acquire(std::size_t block) {
  wait_ready(block);
  for (std::size_t source : tie_sources(layout_, block)) wait_ready(source);
  Gathered& gathered = *gathered_[block];
  if (gathered.views.empty()) gathered.views = block_local_views(layout_, block, resident_);
  return gathered.views;
}

void ParameterGatherer::release(std::size_t block) {
  if (!gathered_.at(block) || persistent(block)) return;
  Gathered& gathered = *gathered_[block];
  // An in-flight gather still writes into the buffer: finish it before freeing.
  for (const auto& work : gathered.works) work->wait();
  live_bytes_ -= block_bytes(layout_.blocks[block], param_shard_.dtype());
  gathered_[block].reset();
  resident_[block] = Tensor();
}

void ParameterGatherer::release_all() {
  for (std::size_t block = 0; block < gathered_.size(); ++block) {
    if (!gathered_[block]) continue;
    for (const auto& work : gathered_[block]->works) work->wait();
    live_bytes_ -= block_bytes(layout_.blocks[block], param_shard_.dtype());
    gathered_[block].reset();
    resident_[block] = Tensor();
  }
  if (secondary_) secondary_->invalidate();
}

}  // namespace zt::zero

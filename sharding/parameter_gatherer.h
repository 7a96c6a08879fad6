// ParameterGatherer (ZeRO-3): all-gathers a block's parameters from every rank's shard
// before the block computes, prefetches the blocks that come next so communication overlaps
// compute, and releases gathered copies after use. Blocks up to the persistence threshold
// stay gathered until the optimizer changes them; prefetching stops at the live cap.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "comm/communicator.h"
#include "core/config/config.h"
#include "core/device/device_context.h"
#include "sharding/quantized_gather.h"
#include "sharding/secondary_shard.h"
#include "sharding/shard_plan.h"

namespace zt::zero {

class ParameterGatherer {
 public:
  // With `shard_on_host` (offload.params = "cpu") the shard lies in host memory: each gather
  // first copies the block's slices into a device buffer (comm_buffers) that lives until
  // the gather is done. With `secondary` (hpZ: the rank's group of hpz_partition_size ranks)
  // the gatherer keeps a secondary shard and gathers from it wherever it is fresh (Note [The
  // secondary shard]). With config.quantized_weights the gathers from the primary shards send
  // int8 blocks (Note [Quantized weight gathers]).
  ParameterGatherer(comm::Communicator& comm, const FlatLayout& layout, const ShardPlan& plan,
                    Tensor param_shard, DeviceContext& device, const ZeroConfig& config,
                    bool shard_on_host = false, comm::Communicator* secondary = nullptr);
  ParameterGatherer(const ParameterGatherer&) = delete;
  ParameterGatherer& operator=(const ParameterGatherer&) = delete;
  // Waits for gathers still in flight (a prefetch for a step that never came).
  ~ParameterGatherer();

  // Starts gathering `block` unless it is gathered or in flight, or the cap forbids it.
  void prefetch(std::size_t block);
  // The block's parameter views, gathering now if needed; valid until release.
  const std::vector<Tensor>& acquire(std::size_t block);
  // Frees the gathered copy unless the block persists.
  void release(std::size_t block);
  // Frees every gathered copy, persistent ones too, and forgets the secondary shard: both are
  // stale once the shards change.
  void release_all();

  bool persistent(std::size_t block) const;
  std::int64_t live_bytes() const { return live_bytes_; }
  // The most bytes ever gathered at once (persistent blocks included): what
  // zero.max_live_parameters bounds, apart from a block gathered because compute needs it.
  std::int64_t peak_live_bytes() const { return peak_live_bytes_; }

 private:
  struct Gathered {
    Tensor buffer;  // the block's padded region
    Tensor staged;  // shard on the host: the block's slices on the device, until gathered
    std::vector<std::shared_ptr<comm::Work>> works;
    std::vector<QuantizedGather> quantized;  // qwZ: dequantized once `works` are done
    std::vector<Tensor> views;
    bool ready = false;
    bool fills_secondary = false;  // a gather from the primary shards of a kept block
  };
  void start(std::size_t block);
  // Accounts for a gather just started and holds it until release.
  void finish_start(std::size_t block, Gathered gathered);
  void wait_ready(std::size_t block);

  comm::Communicator& comm_;
  const FlatLayout& layout_;
  const ShardPlan& plan_;
  Tensor param_shard_;
  DeviceContext& device_;  // gathered copies come from its tracker
  const ZeroConfig config_;
  const bool shard_on_host_;
  std::vector<std::optional<Gathered>> gathered_;
  std::vector<bool> tie_source_;  // blocks whose parameters a later block ties to
  std::vector<Tensor> resident_;  // each gathered block's buffer (undefined when released)
  std::unique_ptr<SecondaryShard> secondary_;  // hpZ; null without it
  std::int64_t live_bytes_ = 0;
  std::int64_t peak_live_bytes_ = 0;
};

}  // namespace zt::zero

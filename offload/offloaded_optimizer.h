// OffloadedOptimizer (ZeRO-Offload): one rank's fp32 master weights and optimizer states
// live in host memory (the device's host staging allocator: pinned on CUDA, pooled host
// memory on the CPU), counted as host_offload by a host tracker of their own, so the device
// keeps only compute-dtype parameters and gradients. A step brings the reduced gradient shard
// over slice by slice, updates every master on the host in sub-groups spread over the CPU
// threads, and sends the updated parameters back in the compute dtype. Adam and AdamW run on
// the vectorized CPU Adam (the best path this CPU has), fused with the conversion to the
// compute dtype; other optimizers run their own CPU loop. With offload.optimizer = "nvme"
// (ZeRO-Infinity) the optimizer states live on NVMe instead (NvmeStateSwapper) and only the
// sub-groups in flight are in host memory; the fp32 masters and gradients stay in host
// memory, as ZeRO-Infinity keeps them when only the optimizer goes to NVMe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/device/cpu_streams.h"
#include "core/device/device_context.h"
#include "core/memory_tracker.h"
#include "core/tensor.h"
#include "offload/async_file_io.h"
#include "offload/nvme_state_swapper.h"
#include "optim/adam.h"
#include "optim/cpu_adam/cpu_adam_pool.h"
#include "optim/optimizer.h"

namespace zt::offload {

class OffloadedOptimizer {
 public:
  // `shard_numel`: this rank's shard, whose every slice is addressed by its shard offset.
  // Threads: offload.cpu_threads (0 counts as 1: the engine resolves 0 to cores per local
  // rank before it gets here). `nvme_io` picks the NVMe I/O path (tests force the thread).
  OffloadedOptimizer(DeviceContext& device, const optim::Optimizer& optimizer,
                     std::int64_t shard_numel, DType compute_dtype, const OffloadConfig& config,
                     FileIoPath nvme_io = FileIoPath::kBest);
  ~OffloadedOptimizer();
  OffloadedOptimizer(const OffloadedOptimizer&) = delete;
  OffloadedOptimizer& operator=(const OffloadedOptimizer&) = delete;

  // The host side: its tracker (category host_offload) and a CPU context over it.
  MemoryTracker& host_tracker() { return *host_tracker_; }
  DeviceContext& host() { return *host_; }
  // (shard_numel) f32 master weights, in host memory.
  const Tensor& master() const { return master_; }
  // (shard_numel) the masters in the compute dtype, in host memory, current after update()
  // and convert_masters(): the master itself in f32. Stage 3's offloaded parameter shard.
  const Tensor& host_parameters() const {
    return compute_dtype_ == DType::kF32 ? master_ : compute_params_;
  }
  // The NVMe side, when offload.optimizer = "nvme".
  const NvmeStateSwapper* nvme() const { return nvme_.get(); }

  // One step: stage every slice's f32 gradients (on the device) at its shard offset, as each
  // is reduced; then update, then send every slice's parameters back and wait for the sends.
  // The copy runs on the device's copy stream after what the compute stream has enqueued so
  // far. With `source_reused` (a workspace the next slice overwrites) the compute stream
  // waits for the copy before going on.
  void stage_gradients(std::int64_t shard_offset, const Tensor& grads, bool source_reused);
  // Multiplies the staged gradients by `factor` (unscaling, clipping), once all are staged.
  void scale_gradients(float factor);
  void update(std::int64_t step, float lr);
  // Writes master[shard_offset, + n) in the compute dtype into `params` (n elements on the
  // device) on the copy stream; after update() the compute-dtype copy is already made.
  // wait_for_sends() orders the compute stream after every send.
  void send_parameters(std::int64_t shard_offset, const Tensor& params);
  void wait_for_sends();
  // Blocks until every copy to the host has landed (before the host reads or rewrites them).
  void wait_for_copies();
  // Before any update (initialization): converts the masters, then send_parameters works.
  void convert_masters();

  // Updates during backward, when nothing can veto the step (no clipping, no loss scaling):
  // the update of master[shard_offset, + n) runs on the update worker once the range's
  // gradients (staged just before) have landed, and the worker then sends the range's
  // parameters into `params` (n elements on the device) on the copy stream, while the
  // caller goes on with backward. finish_early_updates() waits for every one and orders
  // the compute stream after the sends. Host states only (not with NVMe).
  bool supports_early_updates() const { return !nvme_states_; }
  void update_early(std::int64_t shard_offset, const Tensor& params, std::int64_t step, float lr);
  void finish_early_updates();
  // Waits for anything in flight (updates, copies): before the gradients are rewritten.
  void quiesce();

  // Checkpoints: copies the optimizer states (states_per_element tensors of shard_numel
  // elements) into out[i], or overwrites them from in[i]; NVMe states come from (go to) their
  // file sub-group by sub-group. Waits for anything in flight first.
  void export_states(std::span<float* const> out);
  void import_states(std::span<const float* const> in);

  // offload.overlap_step (ZeRO-Offload's delayed parameter update): the update of this
  // step's gradients runs on the update worker while the next step's forward and backward
  // run on parameters one update behind; the next step's gradients land in a second host
  // buffer meanwhile. finish_delayed_update() waits for it (false when none is pending);
  // then send_parameters() sends its result.
  void start_delayed_update(std::int64_t step, float lr);
  bool finish_delayed_update();
  // Checkpoints of overlap_step: waits for the update in flight without taking it (the
  // next finish_delayed_update() still returns true and its parameters are sent then); and,
  // resuming such a checkpoint, marks its landed update as that pending one.
  void wait_for_delayed_update();
  void resume_landed_update() { delayed_pending_ = true; }

 private:
  // Sub-group [first, first + elements) of the vectorized CPU Adam over these states.
  // `grads`: the buffer the update reads (null: grads_).
  optim::CpuAdamGroup adam_group(std::int64_t first, std::int64_t elements, float* exp_avg,
                                 float* exp_avg_sq, const Tensor* grads = nullptr);
  // Visits every sub-group's NVMe states in order (fn(first, count, states)), writing them
  // back afterwards.
  void visit_nvme_states(
      const std::function<void(std::int64_t, std::int64_t, std::span<float* const>)>& fn);
  // Every sub-group in order, its states brought in from NVMe and written back.
  void update_from_nvme(std::int64_t step, float lr);
  // The host states' update of [begin, begin + count) in sub-groups, with its compute copy.
  void update_host_range(std::int64_t begin, std::int64_t count, std::int64_t step, float lr);
  void update_host_range(const Tensor& grads, std::int64_t begin, std::int64_t count,
                         std::int64_t step, float lr);
  // The compute-dtype copy of the masters [first, first + piece) that a step writes with
  // them; undefined in fp32 (the master is sent itself).
  Tensor compute_copy(std::int64_t first, const Shape& piece) const;

  DeviceContext& device_;
  const optim::Optimizer& optimizer_;
  const DType compute_dtype_;
  const std::int64_t sub_group_size_;
  std::unique_ptr<MemoryTracker> host_tracker_;
  std::unique_ptr<DeviceContext> host_;
  Tensor master_;                      // (shard) f32
  std::vector<Tensor> states_;         // (shard) f32 each; none with NVMe
  Tensor grads_;                       // (shard) f32: the reduced gradients, brought over
  Tensor compute_params_;              // (shard) compute dtype, unless f32: going back
  Tensor spare_grads_;                 // (shard) f32, overlap_step only: the other buffer
  bool delayed_pending_ = false;       // overlap_step: an update runs on the update worker
  const optim::Adam* adam_ = nullptr;  // set for Adam and AdamW: the vectorized CPU Adam
  optim::CpuAdamPath path_ = optim::CpuAdamPath::kScalar;
  int threads_ = 1;
  std::unique_ptr<optim::CpuAdamPool> pool_;  // when threads_ > 1
  bool nvme_states_ = false;                  // offload.optimizer = "nvme"
  std::unique_ptr<NvmeStateSwapper> nvme_;    // offload.optimizer = "nvme", off the meta host
  Allocation nvme_meta_buffers_;              // on the meta host: the swapper's in-flight bytes
  // Early updates run here, off the thread that runs backward. Last member: its thread is
  // joined first, before anything its tasks touch is destroyed.
  CpuWorkerStream update_worker_{"offload-update"};
};

}  // namespace zt::offload

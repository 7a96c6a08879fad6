// CpuAdamPool: a fixed set of threads that runs the CPU Adam over many sub-groups, or one
// large one, in aligned chunks. The update is elementwise, so every element's result is the
// same whatever the thread count or the order in which threads take chunks.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "optim/cpu_adam/cpu_adam.h"

namespace zt::optim {

class CpuAdamPool {
 public:
  // Elements per chunk a thread takes at a time: a multiple of every vector width (and of 16
  // floats, one 64-byte line), so chunks of a 64-byte-aligned group start on cache lines; 4
  // buffers x 256 KiB keep a chunk's streams short enough to balance two busy cores.
  static constexpr std::size_t kChunkElements = std::size_t{1} << 16;

  // Starts `threads` (>= 1) threads that live until destruction.
  explicit CpuAdamPool(int threads);
  CpuAdamPool(const CpuAdamPool&) = delete;
  CpuAdamPool& operator=(const CpuAdamPool&) = delete;
  ~CpuAdamPool();  // joins the threads

  int threads() const { return static_cast<int>(workers_.size()); }

  // Updates every group with `path` and returns when all are done. Checks each group first
  // (internal errors, as cpu_adam_step). Callers are served one at a time.
  void step(CpuAdamPath path, std::span<const CpuAdamGroup> groups,
            const math::AdamStepScalars& scalars);
  void step(CpuAdamPath path, const CpuAdamGroup& group, const math::AdamStepScalars& scalars) {
    step(path, std::span<const CpuAdamGroup>(&group, 1), scalars);
  }

 private:
  void work();
  // Takes chunks until none is left; the chunk -> (group, offset) map is chunk_starts_.
  void run_chunks();

  std::mutex step_mutex_;  // held by the one caller inside step()

  // The current step, written by step() before it wakes the workers (under mutex_) and
  // only read by them until they report done: no lock needed while chunks run.
  CpuAdamPath path_ = CpuAdamPath::kScalar;
  std::span<const CpuAdamGroup> groups_;
  math::AdamStepScalars scalars_{};
  std::vector<std::size_t> chunk_starts_;  // first chunk of each group, then the total
  std::atomic<std::size_t> next_chunk_{0};

  std::mutex mutex_;  // guards generation_, busy_workers_, stopping_
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::uint64_t generation_ = 0;  // bumped once per step: the workers' signal to start
  int busy_workers_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;  // last member: threads start after the state exists
};

}  // namespace zt::optim

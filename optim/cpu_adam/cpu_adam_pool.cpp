// CpuAdamPool: one generation counter wakes the threads for a step; each then claims chunks
// from an atomic counter until none is left, and the last to finish wakes the caller.
#include "optim/cpu_adam/cpu_adam_pool.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "optim/cpu_adam/cpu_adam_internal.h"

namespace zt::optim {

CpuAdamPool::CpuAdamPool(int threads) {
  ZT_CHECK(threads >= 1, "CpuAdamPool: needs at least one thread, got " + std::to_string(threads));
  workers_.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) workers_.emplace_back([this] { work(); });
}

CpuAdamPool::~CpuAdamPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void CpuAdamPool::step(CpuAdamPath path, std::span<const CpuAdamGroup> groups,
                       const math::AdamStepScalars& scalars) {
  std::lock_guard step_lock(step_mutex_);
  for (const CpuAdamGroup& group : groups) detail::check_cpu_adam_group(path, group);
  // chunk_starts_ keeps its capacity from step to step: steady-state steps allocate nothing.
  chunk_starts_.clear();
  std::size_t chunks = 0;
  for (const CpuAdamGroup& group : groups) {
    chunk_starts_.push_back(chunks);
    chunks += (group.elements + kChunkElements - 1) / kChunkElements;
  }
  chunk_starts_.push_back(chunks);
  if (chunks == 0) return;
  path_ = path;
  groups_ = groups;
  scalars_ = scalars;
  next_chunk_.store(0, std::memory_order_relaxed);
  std::unique_lock lock(mutex_);
  busy_workers_ = threads();
  ++generation_;
  work_cv_.notify_all();
  done_cv_.wait(lock, [this] { return busy_workers_ == 0; });
}

void CpuAdamPool::work() {
  std::uint64_t seen_generation = 0;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      work_cv_.wait(lock, [&] { return stopping_ || generation_ != seen_generation; });
      if (stopping_) return;
      seen_generation = generation_;
    }
    run_chunks();
    std::lock_guard lock(mutex_);
    if (--busy_workers_ == 0) done_cv_.notify_one();
  }
}

void CpuAdamPool::run_chunks() {
  const std::size_t total = chunk_starts_.back();
  while (true) {
    const std::size_t chunk = next_chunk_.fetch_add(1, std::memory_order_relaxed);
    if (chunk >= total) return;
    // The group whose chunk range holds `chunk`: the last start <= chunk.
    const auto after = std::upper_bound(chunk_starts_.begin(), chunk_starts_.end() - 1, chunk);
    const auto group_index = static_cast<std::size_t>(after - chunk_starts_.begin()) - 1;
    const CpuAdamGroup& group = groups_[group_index];
    const std::size_t first = (chunk - chunk_starts_[group_index]) * kChunkElements;
    const std::size_t count = std::min(kChunkElements, group.elements - first);
    detail::run_cpu_adam_path(path_, detail::slice_cpu_adam_group(group, first, count), scalars_);
  }
}

}  // namespace zt::optim

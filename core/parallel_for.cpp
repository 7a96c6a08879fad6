// The pool behind parallel_for: parallel_threads() - 1 workers, and the calling thread, which
// takes chunks too. Between loops a worker first waits by yielding (Note [Yield before
// sleeping]), then sleeps on a condition variable; it never spins without yielding.
#include "core/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.h"

namespace zt {
namespace {

// Whether this thread is inside a chunk (Note [Chunks fixed by size]); confined to its thread.
thread_local bool t_in_chunk = false;

// Sets t_in_chunk for a scope and restores the value it found.
class InChunkScope {
 public:
  InChunkScope() : outer_(t_in_chunk) { t_in_chunk = true; }
  InChunkScope(const InChunkScope&) = delete;
  InChunkScope& operator=(const InChunkScope&) = delete;
  ~InChunkScope() { t_in_chunk = outer_; }

  // Whether the thread was in a chunk already when the scope began.
  bool outer() const { return outer_; }

 private:
  bool outer_;
};

struct Job {
  std::int64_t count = 0;
  std::int64_t grain = 1;
  std::int64_t chunks = 0;
  const void* context = nullptr;
  detail::ChunkFn fn = nullptr;

  void run_chunk(std::int64_t chunk) const {
    const std::int64_t begin = chunk * grain;
    fn(context, chunk, begin, std::min(count, begin + grain));
  }
};

// Note [Yield before sleeping]
// A step runs ~80 of these loops between its GEMMs. Waking a thread that sleeps on a futex
// costs the waker tens of microseconds on a virtual machine (perf: try_to_wake_up; the idle
// vCPU has halted and must be brought back; instrumented on a busy 2-core VM, notify_all
// averaged ~80 us), about as long as a small loop itself. So a waiter first polls for up to
// kYieldWait, calling sched_yield between polls: a thread that has work on its core (the
// GEMM's OpenMP thread, another rank, a build) runs instead of it, which a spinning wait would
// not allow (nn/kernels/cpu/gemm_cpu.cpp), while a core with nothing else to run stays awake
// for the next loop. Only then does it sleep, and the owner notifies only when someone
// sleeps. kYieldWait covers the gap of a GEMM between two loops. Measured quiet, 2 threads,
// alternating: the 3.3M GPT step 94.4 -> 93.3 ms (median of 5), the 20M one 482 -> 470 ms.
constexpr std::chrono::microseconds kYieldWait{2000};

// Polls `ready` with sched_yield between polls until it holds or kYieldWait has passed.
template <typename Ready>
bool yield_until(const Ready& ready) {
  const auto deadline = std::chrono::steady_clock::now() + kYieldWait;
  for (int poll = 0;; ++poll) {
    if (ready()) return true;
    // The clock is read every 64 polls: a poll is a yield, far cheaper than the clock read.
    if (poll % 64 == 63 && std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::yield();
  }
}

// One loop at a time: the caller that wins busy_ owns the pool until its loop is done, and
// callers that find it busy run their loops alone. The owner publishes a job under mutex_ by
// bumping generation_ (mirrored in published_ for waiters that poll); a worker that sees it
// while the job is open joins it (active_) and the owner returns only when active_ is back
// to 0, so no worker touches a job (or the caller's stack it points into) after its loop
// returned. mutex_ guards job_, generation_, open_, stopping_, error_ and the sleeper counts,
// and every write of active_ and published_ (which are also read without it, to poll);
// next_chunk_ is the lock-free claim counter of the open job; workers_ is touched by the
// owner (and the destructor) only.
class ChunkPool {
 public:
  ChunkPool() = default;
  ChunkPool(const ChunkPool&) = delete;
  ChunkPool& operator=(const ChunkPool&) = delete;
  ~ChunkPool() { resize(0); }

  void set_threads(int threads) { wanted_threads_.store(threads, std::memory_order_relaxed); }
  int threads() const { return wanted_threads_.load(std::memory_order_relaxed); }

  // False when another caller owns the pool.
  bool try_acquire() { return !busy_.exchange(true, std::memory_order_acquire); }
  void release() { busy_.store(false, std::memory_order_release); }

  // Owner only: runs every chunk of `job` on the workers and this thread.
  void run(const Job& job) {
    resize(threads() - 1);
    bool workers_sleep = false;
    {
      const std::lock_guard lock(mutex_);
      job_ = job;
      next_chunk_.store(0, std::memory_order_relaxed);
      error_ = nullptr;
      open_ = true;
      ++generation_;
      published_.store(generation_, std::memory_order_release);
      workers_sleep = sleeping_workers_ > 0;
    }
    if (workers_sleep) wake_.notify_all();
    work_on(job);
    {
      const std::lock_guard lock(mutex_);
      open_ = false;  // a worker arriving from now on sits this loop out
    }
    // The workers still in the loop are finishing their last chunks (Note [Yield before
    // sleeping]).
    yield_until([this] { return active_.load(std::memory_order_acquire) == 0; });
    std::exception_ptr error;
    {
      std::unique_lock lock(mutex_);
      ++sleeping_owners_;
      done_.wait(lock, [this] { return active_.load(std::memory_order_relaxed) == 0; });
      --sleeping_owners_;
      std::swap(error, error_);
    }
    if (error) std::rethrow_exception(error);
  }

 private:
  // Claims chunks of `job` until none is left; the first exception stops further claims.
  void work_on(const Job& job) {
    for (;;) {
      const std::int64_t chunk = next_chunk_.fetch_add(1, std::memory_order_relaxed);
      if (chunk >= job.chunks) return;
      try {
        job.run_chunk(chunk);
      } catch (...) {
        const std::lock_guard lock(mutex_);
        if (!error_) error_ = std::current_exception();
        next_chunk_.store(job.chunks, std::memory_order_relaxed);
      }
    }
  }

  // `seen`: the generation current when the worker started, which it must not run.
  void worker_loop(std::uint64_t seen) {
    t_in_chunk = true;  // a pool thread only ever runs chunks
    for (;;) {
      yield_until([&] { return published_.load(std::memory_order_acquire) != seen; });
      Job job;
      {
        std::unique_lock lock(mutex_);
        ++sleeping_workers_;
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        --sleeping_workers_;
        if (stopping_) return;
        seen = generation_;
        if (!open_) continue;
        job = job_;
        active_.fetch_add(1, std::memory_order_relaxed);
      }
      work_on(job);
      bool owner_sleeps = false;
      {
        const std::lock_guard lock(mutex_);
        owner_sleeps = active_.fetch_sub(1, std::memory_order_release) == 1 && sleeping_owners_ > 0;
      }
      if (owner_sleeps) done_.notify_all();
    }
  }

  // Owner only (or the destructor): `workers` threads, all restarted when the count changes
  // (a rank sets it once, so this happens once per process in practice).
  void resize(int workers) {
    workers = std::max(0, workers);
    if (static_cast<int>(workers_.size()) == workers) return;
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
      ++generation_;  // ends the workers' polling
      published_.store(generation_, std::memory_order_release);
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
    workers_.clear();
    std::uint64_t generation = 0;
    {
      const std::lock_guard lock(mutex_);
      stopping_ = false;
      generation = generation_;
    }
    for (int i = 0; i < workers; ++i) {
      workers_.emplace_back([this, generation] { worker_loop(generation); });
    }
  }

  std::atomic<int> wanted_threads_{1};
  std::atomic<bool> busy_{false};
  std::atomic<std::int64_t> next_chunk_{0};
  std::mutex mutex_;
  std::condition_variable wake_;  // workers: a new generation, or stopping_
  std::condition_variable done_;  // the owner: active_ fell to 0
  Job job_;
  std::uint64_t generation_ = 0;
  std::atomic<std::uint64_t> published_{0};  // generation_, for workers that poll
  bool open_ = false;
  std::atomic<int> active_{0};
  int sleeping_workers_ = 0;  // workers in wake_.wait: the owner notifies only if any
  int sleeping_owners_ = 0;   // 0 or 1: the owner in done_.wait
  bool stopping_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> workers_;
};

ChunkPool& pool() {
  static ChunkPool instance;
  return instance;
}

}  // namespace

void set_parallel_threads(int threads) {
  ZT_CHECK(threads >= 1, "parallel thread count must be positive, got " + std::to_string(threads));
  pool().set_threads(threads);
}

int parallel_threads() { return pool().threads(); }

bool in_parallel_chunk() { return t_in_chunk; }

std::int64_t parallel_chunk_count(std::int64_t count, std::int64_t grain) {
  ZT_CHECK(count >= 0 && grain >= 1, "parallel_for over " + std::to_string(count) +
                                         " iterations with grain " + std::to_string(grain));
  return (count + grain - 1) / grain;
}

std::int64_t parallel_sum_grain(std::int64_t count, std::int64_t grain) {
  ZT_CHECK(count >= 0 && grain >= 1, "parallel_sum over " + std::to_string(count) +
                                         " iterations with grain " + std::to_string(grain));
  return std::max(grain, (count + kMaxSumChunks - 1) / kMaxSumChunks);
}

namespace detail {

void run_chunks(std::int64_t count, std::int64_t grain, const void* context, ChunkFn fn) {
  const Job job{count, grain, parallel_chunk_count(count, grain), context, fn};
  const InChunkScope in_chunk;
  ChunkPool& chunk_pool = pool();
  // t_in_chunk was set by the scope above: read what the caller had.
  const bool nested = in_chunk.outer();
  if (job.chunks <= 1 || nested || chunk_pool.threads() <= 1 || !chunk_pool.try_acquire()) {
    for (std::int64_t chunk = 0; chunk < job.chunks; ++chunk) job.run_chunk(chunk);
    return;
  }
  struct Release {
    ChunkPool& pool;
    ~Release() { pool.release(); }
  } release{chunk_pool};
  chunk_pool.run(job);
}

}  // namespace detail
}  // namespace zt

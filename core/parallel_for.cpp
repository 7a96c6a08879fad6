// The pool behind parallel_for: parallel_threads() - 1 workers that sleep on a condition
// variable between loops (never spinning: on a 2-core machine shared by ranks, a spinning
// waiter steals the core its peer needs), and the calling thread, which works too.
#include "core/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.h"

namespace zt {
namespace {

thread_local bool t_in_chunk = false;

struct Job {
  std::int64_t count = 0;
  std::int64_t grain = 1;
  std::int64_t chunks = 0;
  const void* context = nullptr;
  detail::ChunkFn fn = nullptr;
};

// One loop at a time: the caller that wins `busy_` owns the pool until its loop is done;
// others run their loops alone. The job, generation, open/active counts, error and worker
// list are guarded by mutex_; next_chunk_ is the lock-free claim counter of the open job.
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

  // Owner only: runs `job` on the workers and this thread.
  void run(const Job& job) {
    resize(threads() - 1);
    {
      const std::lock_guard lock(mutex_);
      job_ = job;
      next_chunk_.store(0, std::memory_order_relaxed);
      error_ = nullptr;
      open_ = true;
      ++generation_;
    }
    wake_.notify_all();
    work_on(job);
    std::exception_ptr error;
    {
      std::unique_lock lock(mutex_);
      open_ = false;  // a worker waking from now on sits this loop out
      done_.wait(lock, [this] { return active_ == 0; });
      error = error_;
    }
    if (error) std::rethrow_exception(error);
  }

 private:
  // Claims chunks of `job` until none are left; the first exception stops further claims.
  void work_on(const Job& job) {
    for (;;) {
      const std::int64_t chunk = next_chunk_.fetch_add(1, std::memory_order_relaxed);
      if (chunk >= job.chunks) return;
      const std::int64_t begin = chunk * job.grain;
      try {
        job.fn(job.context, chunk, begin, std::min(job.count, begin + job.grain));
      } catch (...) {
        const std::lock_guard lock(mutex_);
        if (!error_) error_ = std::current_exception();
        next_chunk_.store(job.chunks, std::memory_order_relaxed);
      }
    }
  }

  void worker_loop() {
    t_in_chunk = true;
    std::uint64_t seen = 0;
    for (;;) {
      Job job;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        if (!open_) continue;
        job = job_;
        ++active_;
      }
      work_on(job);
      {
        const std::lock_guard lock(mutex_);
        if (--active_ == 0) done_.notify_all();
      }
    }
  }

  // Owner only (or the destructor): `workers` threads, joining or starting the difference.
  void resize(int workers) {
    workers = std::max(0, workers);
    if (static_cast<int>(workers_.size()) == workers) return;
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
    workers_.clear();
    {
      const std::lock_guard lock(mutex_);
      stopping_ = false;
    }
    for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { worker_loop(); });
  }

  std::atomic<int> wanted_threads_{1};
  std::atomic<bool> busy_{false};
  std::atomic<std::int64_t> next_chunk_{0};
  std::mutex mutex_;
  std::condition_variable wake_;  // workers: a new generation or stopping_
  std::condition_variable done_;  // the owner: active_ fell to 0
  Job job_;
  std::uint64_t generation_ = 0;
  bool open_ = false;
  int active_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> workers_;  // touched by the owner only
};

ChunkPool& pool() {
  static ChunkPool instance;
  return instance;
}

// Runs every chunk on this thread, in order.
void run_inline(const Job& job) {
  for (std::int64_t chunk = 0; chunk < job.chunks; ++chunk) {
    const std::int64_t begin = chunk * job.grain;
    job.fn(job.context, chunk, begin, std::min(job.count, begin + job.grain));
  }
}

}  // namespace

void set_parallel_threads(int threads) {
  ZT_CHECK(threads >= 1, "parallel thread count must be positive");
  pool().set_threads(threads);
}

int parallel_threads() { return pool().threads(); }

bool in_parallel_chunk() { return t_in_chunk; }

std::int64_t parallel_chunk_count(std::int64_t count, std::int64_t grain) {
  ZT_CHECK(count >= 0 && grain >= 1, "parallel_for over a negative count or grain");
  return (count + grain - 1) / grain;
}

namespace detail {

void run_chunks(std::int64_t count, std::int64_t grain, const void* context, ChunkFn fn) {
  const Job job{count, grain, parallel_chunk_count(count, grain), context, fn};
  ChunkPool& chunk_pool = pool();
  if (job.chunks <= 1 || t_in_chunk || chunk_pool.threads() <= 1 || !chunk_pool.try_acquire()) {
    run_inline(job);
    return;
  }
  struct Release {
    ChunkPool& pool;
    ~Release() {
      t_in_chunk = false;
      pool.release();
    }
  } release{chunk_pool};
  t_in_chunk = true;
  chunk_pool.run(job);
}

}  // namespace detail
}  // namespace zt
